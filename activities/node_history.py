"""Activities between a run and its cluster's NodeHistory entity: report failures, ask for suspects.

Reporting uses signal-with-start, so the entity is created by the first failure on a cluster
and simply signalled afterwards. Both are safe to retry: the entity counts a failure once per
(run, attempt, node), and a query changes nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, runtime_checkable

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities.errors import scheduler_errors
from activities.schedulers.base import Scheduler
from workflows.models import NodeFailureReport, NodeHistoryInput, NodeQuery, SuspectQuery
from workflows.node_history import NodeHistory, history_id

QUERY_TIMEOUT = timedelta(seconds=10)


@runtime_checkable
class NamedCluster(Protocol):
    """A scheduler that knows its cluster's name (Slurm's ClusterName)."""

    async def cluster_name(self) -> str: ...


class NodeHistoryActivities:
    def __init__(self, client: Client, scheduler: Scheduler, cluster: str | None = None) -> None:
        self.client = client
        self.scheduler = scheduler
        self._cluster = cluster  # configured, or learned once from the scheduler

    async def cluster(self, named: str | None = None) -> str:
        """The cluster a report is about: as named, else the configured one, else the
        scheduler's own (Slurm's cluster name; `local` for the embedded scheduler)."""
        if named:
            return named
        if self._cluster is None:
            if isinstance(self.scheduler, NamedCluster):
                with scheduler_errors():
                    self._cluster = await self.scheduler.cluster_name()
            else:
                self._cluster = self.scheduler.name
        return self._cluster

    @activity.defn
    async def report_failure(self, inp: NodeFailureReport) -> str:
        """Record each failure on the cluster's node history, creating it on first use.
        Returns the cluster it was recorded for."""
        cluster = await self.cluster(inp.cluster)
        for failure in inp.failures:
            await self.client.start_workflow(
                NodeHistory.run,
                NodeHistoryInput(cluster=cluster),
                id=history_id(cluster),
                task_queue=activity.info().task_queue,
                start_signal="record_failure",
                start_signal_args=[failure],
            )
        return cluster

    @activity.defn
    async def suspect_nodes(self, inp: SuspectQuery) -> list[str]:
        """The cluster's suspect nodes at `inp.now`; none while it has no node history yet."""
        cluster = await self.cluster(inp.cluster)
        handle = self.client.get_workflow_handle_for(NodeHistory.run, history_id(cluster))
        query = NodeQuery(rule=inp.rule, now=inp.now)
        try:
            return await handle.query(NodeHistory.suspects, query, rpc_timeout=_query_timeout())
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND:
                return []  # no failure has implicated a node on this cluster yet
            if e.status in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED):
                # No worker polls the entity's task queue: asking again soon will not help, and
                # a query left waiting would outlive the activity and hold up worker shutdown.
                raise ApplicationError(
                    f"the node history of cluster {cluster!r} did not answer: {e.message}",
                    type="NodeHistoryUnavailable",
                    non_retryable=True,
                ) from e
            raise


def _query_timeout() -> timedelta:
    """Short, and inside the activity's own timeout, so the query never outlives the activity."""
    limit = activity.info().start_to_close_timeout
    return min(QUERY_TIMEOUT, limit * 0.8) if limit else QUERY_TIMEOUT
