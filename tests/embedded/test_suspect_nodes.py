"""Node history in the loop: a node implicated in failures of two different runs is excluded
from a third run's restart advice; clearing it stops that."""

from __future__ import annotations

import uuid

from temporalio.client import Client

from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec
from worker.config import WorkerConfig
from worker.run_worker import build_worker
from workflows.models import RunInput, RunStatus


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
