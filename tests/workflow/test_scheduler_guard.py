"""A worker of one scheduler refuses a run of another: nothing is submitted, and the run gives up
with one line saying why (worker/scheduler_guard.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from recovery.client.config import WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.worker.scheduler_guard import SchedulerGuard
from recovery.workflows.models import RunInput, RunStatus
from recovery.workflows.training_run import wrong_scheduler
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


@dataclass
class _Spec:
    scheduler: str


@activity.defn(name="touch_job")
async def touch_job() -> str:
    return "touched"


@workflow.defn(name="LocalActivityRun", sandboxed=False)
class LocalActivityRun:
    """Like a run diagnosing (a local activity since `diagnose-in-task`): its spec names its
    scheduler, and it says what reached it when the activity was refused."""

    def __init__(self) -> None:
        self.spec = _Spec(scheduler="local")

    @workflow.run
    async def run(self) -> str:
        try:
            return str(await workflow.execute_local_activity(touch_job, start_to_close_timeout=timedelta(seconds=10)))
        except (ActivityError, ApplicationError) as e:
            refused = wrong_scheduler(e)
            return f"refused: {refused.message}" if refused is not None else f"other: {e!r}"


async def test_a_local_activity_is_refused_too(skipping_env: WorkflowEnvironment) -> None:
    """A local activity runs on whichever worker has the workflow task: it carries the run's
    scheduler as an activity does, and the run reads the refusal as one (`wrong_scheduler`)."""
    queue = f"q-{uuid.uuid4().hex[:8]}"
    for managed, expected in (("slurm", "refused: refused: run"), ("local", "touched")):
        async with Worker(
            skipping_env.client,
            task_queue=queue,
            workflows=[LocalActivityRun],
            activities=[touch_job],
            interceptors=[SchedulerGuard(managed)],
        ):
            said = await skipping_env.client.execute_workflow(
                LocalActivityRun.run, id=f"la-{uuid.uuid4().hex[:8]}", task_queue=queue
            )
        assert said.startswith(expected), said
