"""Client-side operations on a cluster's node history: read it, clear a node."""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from recovery.activities.clock import utcnow
from recovery.workflows.node_history import NodeHistory, history_id
from recovery.workflows.node_history.models import NodeQuery, NodeReport, SuspectRule


class NodesError(RuntimeError):
    """Node history that cannot be read or changed; the message is one line."""


async def node_report(client: Client, cluster: str, rule: SuspectRule, now: datetime | None = None) -> NodeReport:
    """The cluster's node history; an empty report while no failure has implicated a node."""
    query = NodeQuery(rule=rule, now=now or utcnow())
    try:
        report: NodeReport = await _handle(client, cluster).query(
            NodeHistory.nodes, query, rpc_timeout=timedelta(seconds=10)
        )
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return NodeReport(cluster=cluster, rule=rule, now=query.now)
        raise NodesError(
            f"the node history of cluster {cluster!r} did not answer ({e.message}); is `recovery worker` running?"
        ) from None
    return report


async def clear_node(client: Client, cluster: str, node: str) -> int:
    """Clear one node's failures; returns how many were on record. A node with none is an error."""
    report = await node_report(client, cluster, SuspectRule())
    found = next((n for n in report.nodes if n.node == node), None)
    if found is None:
        raise NodesError(f"node {node!r} has no failures on record on cluster {cluster!r}")
    try:
        await _handle(client, cluster).signal(NodeHistory.clear, node)
    except RPCError as e:
        raise NodesError(f"cannot clear {node!r} on cluster {cluster!r}: {e.message}") from None
    return found.failures


def _handle(client: Client, cluster: str) -> WorkflowHandle[NodeHistory, None]:
    return client.get_workflow_handle_for(NodeHistory.run, history_id(cluster))
