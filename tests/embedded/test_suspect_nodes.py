"""Node history in the loop: a node implicated in failures of two different runs is excluded
from a third run's restart advice; clearing it stops that; where policy and worker allow, it is
drained."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import ActivityEnvironment

from recovery.activities.node_history import NodeHistoryActivities
from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.client import runs
from recovery.client.config import WorkerConfig
from recovery.client.submit import build_spec
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import RunInput, RunStatus
from recovery.workflows.node_history import NodeHistory, history_id
from recovery.workflows.node_history.models import (
    DrainInput,
    NodeFailure,
    NodeFailureReport,
    NodeHistoryInput,
    NodeHistoryLimits,
    NodeQuery,
    SuspectQuery,
    SuspectRule,
)
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import FAST
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec


async def test_node_failing_two_runs_is_excluded_from_a_third_until_cleared(client: Client) -> None:
    # On the real dev server: the run asks its cluster's history with a query, and only the real
    # server answers a query after the signals sent before it (the time-skipping one may not).
    scheduler = ScriptedScheduler([], nodes=6)
    scheduler.name = f"fake-{uuid.uuid4().hex[:6]}"  # the node history is per cluster: this test's own
    scheduler.plans = [["fail:node2", "complete"]] * 2 + [["fail:node3", "complete"]] * 2
    queue = f"q-{scheduler.name}"

    async def one_run() -> RunStatus:
        spec = make_spec()
        result: RunStatus = await client.execute_workflow(
            "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
        )
        return result

    async with build_worker(client, scheduler, WorkerConfig(), task_queue=queue):
        for _ in range(2):
            assert (await one_run()).advice[0].excluded_nodes == ["node2"]
        third = await one_run()
        assert sorted(third.advice[0].excluded_nodes) == ["node2", "node3"], "node2 is suspect after two runs"
        assert "node2" not in third.attempts[1].nodes
        await client.get_workflow_handle(f"recovery-nodes-{scheduler.name}").signal("clear", "node2")
        fourth = await one_run()
    assert fourth.advice[0].excluded_nodes == ["node3"]


@pytest.mark.timeout(180)
async def test_suspect_node_is_drained_where_policy_and_worker_allow(
    embedded: Embedded, client: Client, tmp_path: Path
) -> None:
    """node2 failing a second run makes it suspect (sooner if earlier tests failed it too): the
    policy says drain and the worker's config consents, so node2 is drained (its work goes on,
    nothing new starts there) with its failures as the reason, and the run records the action."""
    config = tmp_path / "worker.yaml"
    config.write_text("drain_suspect_nodes: true\n")
    policy = tmp_path / "drain.yaml"
    policy.write_text("name: drain\nsuspect_nodes: {failures: 2, window: 7d, drain: true}\n")
    embedded.stop_workers()  # only a worker with the consent may take these runs
    embedded.start_worker("--config", str(config))
    try:
        finished = [
            await _run_to_end(client, embedded.job_script(f"drain-{i}", fault_node="node2"), policy) for i in (0, 1)
        ]
        node2 = {n.name: n for n in await LocalScheduler().nodes()}["node2"]
    finally:
        embedded.stop_workers()
        for node in ("node1", "node2", "node3", "node4"):
            local_cluster.node_up(node)  # give back what this test drained (earlier tests' suspects too)
    drains = [(s.run.id, a) for s in finished for a in s.actions if a.kind == "drain_node" and "node2" in a.detail]
    assert drains, [[(a.kind, a.detail) for a in s.actions] for s in finished]
    run_id, action = drains[0]
    assert action.changed and action.detail.startswith("drained node2: recovery: failed in ")
    assert node2.state in ("drained", "draining") and node2.reason.startswith("recovery: failed in ")
    assert run_id in node2.reason


async def _run_to_end(client: Client, script: Path, policy: Path) -> RunStatus:
    spec = build_spec(str(script), [], "local", str(policy), None, None, script.parent)
    spec.tuning = FAST
    await runs.start_run(client, spec)
    # Our own timeout, inside pytest's: a test timeout abandons the coroutine, and its `finally`
    # (which gives the drained nodes back) would never run, starving every later test.
    status = await asyncio.wait_for(runs.wait_result(client, spec.run_id), timeout=90)
    assert status is not None and status.run.state == "completed"
    return status


async def test_drain_is_refused_without_the_workers_consent(embedded: Embedded, client: Client) -> None:
    """A job's policy alone cannot take a node from every user of the cluster."""
    acts = NodeHistoryActivities(client, LocalScheduler(), "local")
    inp = DrainInput(run_id="r", nodes=["node4"], now=datetime.now(UTC))
    before = await LocalScheduler().nodes()
    result = await ActivityEnvironment(client).run(acts.drain_nodes, inp)
    assert not result.drained
    assert result.refused is not None and "drain_suspect_nodes" in result.refused
    assert await LocalScheduler().nodes() == before, "nothing changed"


@pytest.mark.timeout(240)
async def test_a_hundred_failures_at_once_are_all_recorded_across_continue_as_new(client: Client) -> None:
    """A burst as ten workers see it: 100 reports and 100 questions at the same moment, on the
    real dev server, while the entity continues as new every few updates. None fails (a query
    here met "Workflow is busy"), and the ledger holds every failure."""
    cluster = f"burst-{uuid.uuid4().hex[:6]}"
    queue = f"q-{cluster}"
    now = datetime.now(UTC)
    rule = SuspectRule(failures=2, window=timedelta(days=7))
    workers = [NodeHistoryActivities(client, ScriptedScheduler([]), cluster) for _ in range(10)]
    info = dataclasses.replace(ActivityEnvironment.default_info(), task_queue=queue)

    async def run(acts: NodeHistoryActivities, call: str, inp: Any) -> Any:
        env = ActivityEnvironment(client)
        env.info = info
        return await env.run(getattr(acts, call), inp)

    def report(i: int) -> NodeFailureReport:
        failure = NodeFailure(node=f"n{i % 20}", run_id=f"run-{i}", attempt_index=0, category="hardware", at=now)
        return NodeFailureReport(failures=[failure], cluster=cluster)

    ask = SuspectQuery(rule=rule, now=now, cluster=cluster)
    handle = client.get_workflow_handle_for(NodeHistory.run, history_id(cluster))
    async with build_worker(client, ScriptedScheduler([]), WorkerConfig(), task_queue=queue):
        # Small history limit: the entity continues as new many times during the burst.
        first = await client.start_workflow(
            NodeHistory.run,
            NodeHistoryInput(cluster=cluster, limits=NodeHistoryLimits(history_events_limit=20)),
            id=history_id(cluster),
            task_queue=queue,
        )
        calls = [run(workers[i % 10], "report_failure", report(i)) for i in range(100)]
        calls += [run(workers[i % 10], "suspect_nodes", ask) for i in range(100)]
        results = await asyncio.gather(*calls)
        assert results[:100] == [cluster] * 100
        assert all(set(found) <= {f"n{i}" for i in range(20)} for found in results[100:])
        assert await run(workers[0], "suspect_nodes", ask) == sorted(f"n{i}" for i in range(20))
        report_now = await handle.query(NodeHistory.nodes, NodeQuery(rule=rule, now=now))
        first_run = client.get_workflow_handle(history_id(cluster), run_id=first.result_run_id)
        first_status = (await first_run.describe()).status
        await handle.terminate("test over")
    assert sum(n.failures for n in report_now.nodes) == 100
    assert sorted(r for n in report_now.nodes for r in n.runs) == sorted(f"run-{i}" for i in range(100))
    assert first_status == WorkflowExecutionStatus.CONTINUED_AS_NEW
