"""A worker of one scheduler refuses a run of another: nothing is submitted, and the run gives up
with one line saying why (worker/scheduler_guard.py)."""

from __future__ import annotations

import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from recovery.client.config import WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import RunInput, RunStatus
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec


async def run_on(
    env: WorkflowEnvironment, config: WorkerConfig, scheduler: ScriptedScheduler
) -> tuple[RunStatus, list[str]]:
    spec = make_spec()  # a run of the local scheduler
    queue = f"q-{uuid.uuid4().hex[:8]}"
    async with build_worker(env.client, scheduler, config, task_queue=queue):
        handle = await env.client.start_workflow(
            "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
        )
        status = await handle.result()
        failures = [
            e.activity_task_failed_event_attributes.failure.message
            async for e in handle.fetch_history_events()
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
        ]
    return status, failures


async def test_a_slurm_worker_refuses_a_local_run(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    status, failures = await run_on(skipping_env, WorkerConfig(scheduler="slurm", mode="act"), scheduler)
    assert scheduler.calls == []  # not even a lookup: nothing submitted
    assert status.run.state == "gave_up"
    assert status.attempts == []
    (line,) = failures  # one failed activity, not retried
    assert "is on the local scheduler and this worker manages slurm" in line
    assert status.milestones[-1].name == "gave_up" and status.milestones[-1].detail == line


async def test_a_worker_of_the_run_s_scheduler_acts(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    status, failures = await run_on(skipping_env, WorkerConfig(scheduler="local"), scheduler)
    assert status.run.state == "completed" and failures == []
    assert [c[0] for c in scheduler.calls] == ["submit"]
