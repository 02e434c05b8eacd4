"""Activities between a run and its cluster's NodeHistory entity: report failures, ask for suspects.

Both go through the entity's `report_failure` update, batched per worker (`node_history_batch`):
a report with update-with-start, so the first failure on a cluster creates the entity; a
question as a plain update, so asking creates nothing. Both are safe to retry: the entity counts
a failure once per (run, attempt, node), and a question changes nothing.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Protocol, runtime_checkable

import structlog
from temporalio import activity
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import Priority, WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from recovery.activities.errors import scheduler_errors
from recovery.activities.node_history_batch import UpdateBatcher
from recovery.activities.schedulers.base import Drainable, Scheduler, out_of_rotation
from recovery.workflows.node_history import NodeHistory, history_id
from recovery.workflows.node_history.models import (
    DrainInput,
    DrainResult,
    NodeFailure,
    NodeFailureReport,
    NodeHistoryInput,
    NodeHistoryUpdate,
    NodeQuery,
    NodeSummary,
    SuspectQuery,
)

QUERY_TIMEOUT = timedelta(seconds=10)
# One update round trip, queued behind a burst's others at the entity; inside every activity's timeout.
UPDATE_TIMEOUT = timedelta(seconds=60)
# The entity's workflow tasks go ahead of the runs' on the shared task queue (default key 3): in a
# burst, every run's advice waits for the entity's answer, and behind a hundred recovering runs'
# tasks that answer took a second or more.
ENTITY_PRIORITY = Priority(priority_key=1)
UPDATE_ERRORS = (RPCError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, TimeoutError)
log = structlog.get_logger("recovery.activities")


class NodeHistoryUnavailable(ApplicationError):
    """The cluster's node history did not answer in time (no worker runs it, or it is swamped)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, type="NodeHistoryUnavailable", non_retryable=True)


@runtime_checkable
class NamedCluster(Protocol):
    """A scheduler that knows its cluster's name (Slurm's ClusterName)."""

    async def cluster_name(self) -> str: ...


class NodeHistoryActivities:
    def __init__(
        self, client: Client, scheduler: Scheduler, cluster: str | None = None, *, may_drain: bool = False
    ) -> None:
        self.client = client
        self.scheduler = scheduler
        self._cluster = cluster  # configured, or learned once from the scheduler
        self.may_drain = may_drain  # the operator's consent (config `drain_suspect_nodes`)
        self._batchers: dict[tuple[str, str], UpdateBatcher] = {}

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
        if inp.failures:
            now = max(failure.at for failure in inp.failures)
            try:
                async with asyncio.timeout(_query_timeout().total_seconds()):
                    await self._batcher(cluster).ask(inp.failures, None, now)
            except (WorkflowUpdateRPCTimeoutOrCancelledError, TimeoutError):
                await self._signal_failures(cluster, inp.failures)
        return cluster

    async def _signal_failures(self, cluster: str, failures: list[NodeFailure]) -> None:
        """An update needs a worker polling the entity's task queue; a signal is kept by the
        server without one. A worker on another queue than the one the entity was started on
        (or none polling it right now) still gets its failures recorded."""
        start = activity.info().task_queue
        for failure in failures:
            await self.client.start_workflow(
                NodeHistory.run,
                NodeHistoryInput(cluster=cluster),
                id=history_id(cluster),
                task_queue=start,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                priority=ENTITY_PRIORITY,
                start_signal="record_failure",
                start_signal_args=[failure],
            )

    @activity.defn
    async def suspect_nodes(self, inp: SuspectQuery) -> list[str]:
        """The cluster's suspect nodes at `inp.now`; none while it has no node history yet.
        (Runs recovering since patch `suspects-in-diagnose` have `diagnose` ask, by `suspects`.)"""
        return await self.suspects(inp)

    async def suspects(self, inp: SuspectQuery) -> list[str]:
        """`suspect_nodes`, for any activity of this worker to ask; raises
        `NodeHistoryUnavailable` when the history cannot say in time."""
        cluster = await self.cluster(inp.cluster)
        try:
            # Bounded by the asking activity's own timeout, not only the shared update's: a run
            # asks on its way to advice and goes on without suspects rather than wait for a retry.
            async with asyncio.timeout(_query_timeout().total_seconds()):
                return await self._batcher(cluster).ask([], inp.rule, inp.now)
        except (WorkflowUpdateRPCTimeoutOrCancelledError, TimeoutError) as e:
            # No worker runs the entity: asking again soon will not help.
            raise NodeHistoryUnavailable(f"the node history of cluster {cluster!r} did not answer: {e}") from e
        except (RPCError, WorkflowUpdateFailedError) as e:
            raise NodeHistoryUnavailable(f"the node history of cluster {cluster!r} refused the question: {e}") from e

    def _batcher(self, cluster: str) -> UpdateBatcher:
        """One per cluster and task queue (where the entity is started), for this worker."""
        key = (cluster, activity.info().task_queue)
        batcher = self._batchers.get(key)
        if batcher is None:
            batcher = self._batchers[key] = UpdateBatcher(lambda update: self._update(*key, update), UPDATE_ERRORS)
        return batcher

    async def _update(self, cluster: str, task_queue: str, update: NodeHistoryUpdate) -> list[list[str]]:
        """One `report_failure` update: with start when it carries failures (the first creates the
        entity), plain otherwise (a question creates nothing: no history, no suspects)."""
        async with asyncio.timeout(UPDATE_TIMEOUT.total_seconds()):
            if update.failures:
                start = WithStartWorkflowOperation(
                    NodeHistory.run,
                    NodeHistoryInput(cluster=cluster),
                    id=history_id(cluster),
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    task_queue=task_queue,
                    priority=ENTITY_PRIORITY,
                )
                return await self.client.execute_update_with_start_workflow(
                    NodeHistory.report_failure, update, start_workflow_operation=start
                )
            handle = self.client.get_workflow_handle_for(NodeHistory.run, history_id(cluster))
            try:
                return await handle.execute_update(NodeHistory.report_failure, update)
            except RPCError as e:
                if e.status == RPCStatusCode.NOT_FOUND:
                    return [[] for _ in update.rules]  # no failure has implicated a node here yet
                raise

    @activity.defn
    async def drain_nodes(self, inp: DrainInput) -> DrainResult:
        """Drain suspect nodes, each with its failures as the reason. A node already drained or
        down is left alone, so a retry (or another run draining it first) changes nothing."""
        refused = self._drain_refused()
        if refused:
            log.warning("drain refused", run_id=inp.run_id, nodes=inp.nodes, why=refused)
            return DrainResult(refused=refused)
        assert isinstance(self.scheduler, Drainable)
        with scheduler_errors():
            states = {n.name: n for n in await self.scheduler.nodes()}
        result = DrainResult(already=[n for n in inp.nodes if n in states and out_of_rotation(states[n])])
        todo = [n for n in inp.nodes if n not in result.already]
        reasons = await self._reasons(inp, todo)
        for node in todo:
            with scheduler_errors():
                await self.scheduler.drain(node, reasons[node])
            result.drained[node] = reasons[node]
            log.warning("node drained", run_id=inp.run_id, node=node, reason=reasons[node])
        return result

    def _drain_refused(self) -> str | None:
        if not self.may_drain:
            return "this worker's config does not allow draining (drain_suspect_nodes: false)"
        if not isinstance(self.scheduler, Drainable):
            return f"the {self.scheduler.name} scheduler cannot drain nodes"
        return None

    async def _reasons(self, inp: DrainInput, nodes: list[str]) -> dict[str, str]:
        """Why, per node, from its node history: the runs it failed and the last reason seen."""
        cluster = await self.cluster(inp.cluster)
        handle = self.client.get_workflow_handle_for(NodeHistory.run, history_id(cluster))
        query = NodeQuery(rule=inp.rule, now=inp.now)
        try:
            report = await handle.query(NodeHistory.nodes, query, rpc_timeout=_query_timeout())
        except RPCError:
            report = None  # the reason is a courtesy; the drain itself must not wait on it
        summaries = {n.node: n for n in report.nodes} if report else {}
        return {node: drain_reason(node, summaries.get(node), inp.run_id) for node in nodes}


def drain_reason(node: str, summary: NodeSummary | None, run_id: str) -> str:
    """`recovery: failed in runs A, B within 7d (last: xid 79)`: what an operator sees in sinfo -R."""
    if summary is None or not summary.runs_in_window:
        return f"recovery: suspect node (run {run_id})"
    last = summary.history[-1].reason if summary.history else ""
    runs = ", ".join(summary.runs_in_window[-3:])
    text = f"recovery: failed in {len(summary.runs_in_window)} runs ({runs})"
    return f"{text}; last: {last}" if last else text


def _query_timeout() -> timedelta:
    """Short, and inside the activity's own timeout, so a question never outlives the activity
    (the answer it waits for is shielded: a question given up leaves the batch's update alone)."""
    limit = activity.info().start_to_close_timeout
    return min(QUERY_TIMEOUT, limit * 0.8) if limit else QUERY_TIMEOUT
