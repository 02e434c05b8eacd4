"""NodeHistory on Temporal's time-skipping test server: suspects across runs, the window, clear,
duplicate reports, continue-as-new, and the activities runs use to report and ask."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment

from recovery.activities.node_history import NodeHistoryActivities
from recovery.client.config import WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.workflows.node_history import NodeHistory, history_id
from recovery.workflows.node_history.models import (
    NodeFailure,
    NodeFailureReport,
    NodeHistoryInput,
    NodeHistoryLimits,
    NodeQuery,
    NodeReport,
    SuspectQuery,
    SuspectRule,
)
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import at_rest

RULE = SuspectRule(failures=2, window=timedelta(days=7))
QUERY_TIMEOUT = timedelta(seconds=3)


@dataclass
class Entity:
    env: WorkflowEnvironment
    cluster: str
    queue: str
    limits: NodeHistoryLimits

    @property
    def handle(self) -> WorkflowHandle[NodeHistory, None]:
        return self.env.client.get_workflow_handle_for(NodeHistory.run, history_id(self.cluster))

    async def report(self, failure: NodeFailure) -> None:
        """Signal-with-start, as the report_failure activity does."""
        await self.env.client.start_workflow(
            NodeHistory.run,
            NodeHistoryInput(cluster=self.cluster, limits=self.limits),
            id=history_id(self.cluster),
            task_queue=self.queue,
            start_signal="record_failure",
            start_signal_args=[failure],
        )

    async def report_at(self, now: datetime) -> NodeReport:
        return await self.handle.query(NodeHistory.nodes, NodeQuery(rule=RULE, now=now), rpc_timeout=QUERY_TIMEOUT)

    async def suspects(self, now: datetime) -> list[str]:
        return await self.handle.query(NodeHistory.suspects, NodeQuery(rule=RULE, now=now))

    async def eventually(self, now: datetime, check: Callable[[NodeReport], bool], timeout: float = 10) -> NodeReport:
        """Poll the query until `check` holds: a signal's effect shows once its task ran."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                report = await self.report_at(now)
            except RPCError:
                # The test server can leave a query unanswered when the run it went to
                # continues as new meanwhile; ask again, now of the latest run.
                if time.monotonic() > deadline:
                    raise
                continue
            if check(report) or time.monotonic() > deadline:
                return report
            await asyncio.sleep(0.05)


@asynccontextmanager
async def entity(env: WorkflowEnvironment, limits: NodeHistoryLimits | None = None) -> AsyncIterator[Entity]:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    ent = Entity(env, f"c-{uuid.uuid4().hex[:8]}", queue, limits or NodeHistoryLimits())
    async with build_worker(env.client, ScriptedScheduler([]), WorkerConfig(), task_queue=queue):
        try:
            yield ent
        finally:
            with contextlib.suppress(RPCError):  # never started when the test failed early
                await ent.handle.terminate("test over")


async def settled(handle: WorkflowHandle[Any, Any], timeout: float = 10) -> WorkflowExecutionStatus | None:
    """The run's status once it is no longer running (or after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        status = (await handle.describe()).status
        if status != WorkflowExecutionStatus.RUNNING or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.05)


def failure(node: str, run: str, at: datetime, attempt: int = 0) -> NodeFailure:
    return NodeFailure(node=node, run_id=run, attempt_index=attempt, category="hardware", at=at, reason="xid 79")


def total(report: NodeReport, node: str) -> int:
    return next((n.failures for n in report.nodes if n.node == node), 0)


async def test_failures_of_two_runs_make_a_node_suspect(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env) as ent:
        await ent.report(failure("n1", "run-a", now - timedelta(days=2)))
        await ent.report(failure("n1", "run-b", now - timedelta(hours=1)))
        await ent.report(failure("n2", "run-b", now - timedelta(hours=1)))
        report = await ent.eventually(now, lambda r: total(r, "n1") == 2 and total(r, "n2") == 1)
        assert await ent.suspects(now) == ["n1"]
    first, second = report.nodes
    assert (first.node, first.suspect, first.runs_in_window) == ("n1", True, ["run-a", "run-b"])
    assert first.last_failure_at == now - timedelta(hours=1)
    assert [f.run_id for f in first.history] == ["run-a", "run-b"]
    assert (second.node, second.suspect) == ("n2", False)


async def test_the_same_run_failing_twice_is_not_enough(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env) as ent:
        await ent.report(failure("n1", "run-a", now - timedelta(hours=2), attempt=0))
        await ent.report(failure("n1", "run-a", now - timedelta(hours=1), attempt=1))
        report = await ent.eventually(now, lambda r: total(r, "n1") == 2)
        assert await ent.suspects(now) == []
    (node,) = report.nodes
    assert (node.failures, node.runs, node.suspect) == (2, ["run-a"], False)


async def test_failures_outside_the_window_do_not_count(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env) as ent:
        await ent.report(failure("n1", "run-a", now - timedelta(days=8)))
        await ent.report(failure("n1", "run-b", now - timedelta(hours=1)))
        report = await ent.eventually(now, lambda r: total(r, "n1") == 2)
        assert await ent.suspects(now) == []
        assert report.nodes[0].runs_in_window == ["run-b"]
        # Two recent runs make it suspect; a week later, the same failures no longer do.
        await ent.report(failure("n1", "run-c", now))
        await ent.eventually(now, lambda r: total(r, "n1") == 3)
        assert await ent.suspects(now) == ["n1"]
        assert await ent.suspects(now + timedelta(days=7, hours=2)) == []


async def test_clear_resets_a_node(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env) as ent:
        old_a = failure("n1", "run-a", now - timedelta(hours=2))
        await ent.report(old_a)
        await ent.report(failure("n1", "run-b", now - timedelta(hours=1)))
        await ent.eventually(now, lambda r: total(r, "n1") == 2)
        await ent.handle.signal(NodeHistory.clear, "n1")
        report = await ent.eventually(now, lambda r: not r.nodes)
        assert report.nodes == []
        assert await ent.suspects(now) == []
        # A late (retried) report of a failure from before the clear does not bring it back...
        await ent.report(old_a)
        await skipping_env.sleep(timedelta(minutes=1))
        later = await skipping_env.get_current_time()
        # ...but new failures after the clear count again, from zero.
        await ent.report(failure("n1", "run-c", later))
        report = await ent.eventually(later, lambda r: total(r, "n1") >= 1)
    assert [f.run_id for f in report.nodes[0].history] == ["run-c"]
    assert report.nodes[0].suspect is False


async def test_a_repeated_report_is_counted_once(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    same = failure("n1", "run-a", now - timedelta(hours=1))
    async with entity(skipping_env) as ent:
        for _ in range(3):
            await ent.report(same)
        await ent.report(failure("n1", "run-a", now - timedelta(minutes=5), attempt=1))
        report = await ent.eventually(now, lambda r: total(r, "n1") >= 2)
        await asyncio.sleep(0.3)  # give any extra (wrong) count time to show
        report = await ent.report_at(now)
    assert report.nodes[0].failures == 2
    assert report.nodes[0].suspect is False


async def test_continue_as_new_keeps_the_history(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env, NodeHistoryLimits(history_events_limit=10)) as ent:
        await ent.report(failure("n0", "run-0", now))
        first_run = (await ent.handle.describe()).run_id
        for i in range(1, 8):
            await ent.report(failure(f"n{i % 2}", f"run-{i}", now - timedelta(minutes=i)))
        first = skipping_env.client.get_workflow_handle(history_id(ent.cluster), run_id=first_run)
        status = await settled(first)
        # Query only once the chain of runs is at rest: the test server can leave a query that
        # races a continue-as-new unanswered, and an unanswered query stops its time skipping
        # for every later test.
        await at_rest(skipping_env.client, history_id(ent.cluster))
        report = await ent.report_at(now)
    assert status == WorkflowExecutionStatus.CONTINUED_AS_NEW
    assert sorted(n.node for n in report.nodes if n.suspect) == ["n0", "n1"]
    assert sum(n.failures for n in report.nodes) == 8


async def test_activities_report_and_ask(skipping_env: WorkflowEnvironment) -> None:
    now = await skipping_env.get_current_time()
    async with entity(skipping_env) as ent:
        scheduler = ScriptedScheduler([])
        acts = NodeHistoryActivities(skipping_env.client, scheduler)
        activity_env = ActivityEnvironment(skipping_env.client)
        activity_env.info = dataclasses.replace(ActivityEnvironment.default_info(), task_queue=ent.queue)
        ask = SuspectQuery(rule=RULE, now=now, cluster=ent.cluster)
        assert await activity_env.run(acts.suspect_nodes, ask) == []  # no entity yet: nothing is suspect
        for run in ("run-a", "run-b"):
            inp = NodeFailureReport(cluster=ent.cluster, failures=[failure("n7", run, now)])
            assert await activity_env.run(acts.report_failure, inp) == ent.cluster
        await ent.eventually(now, lambda r: total(r, "n7") == 2)
        assert await activity_env.run(acts.suspect_nodes, ask) == ["n7"]
        assert await acts.cluster() == scheduler.name  # the scheduler's own when none is configured
