"""`dag_release` and `dag_cancel` check the world before they act: only the stage's own held job
(its token, its restart count) is released or cancelled, and a retry finds the work done."""

from __future__ import annotations

import pytest

from recovery.activities.errors import PermanentActionError
from recovery.activities.stage_jobs import StageJobActivities
from recovery.workflows.models import JobState, SubmitRequest
from recovery.workflows.pipeline_models import StageJobInput
from tests.fakes import ScriptedScheduler


async def held_job(scheduler: ScriptedScheduler, token: str = "recovery:p.eval:0") -> str:
    request = SubmitRequest(script="#!/bin/bash\n", name="eval", nodes=1, workdir="/tmp", token=token, hold=True)
    return (await scheduler.submit(request)).job_id


def stage_job(job_id: str, restart_count: int = 0) -> StageJobInput:
    return StageJobInput(
        pipeline_id="p", stage="eval", run_id="p.eval", job_id=job_id, token="recovery:p.eval:0",
        restart_count=restart_count,
    )  # fmt: skip


async def test_release_once_then_a_retry_does_nothing() -> None:
    scheduler = ScriptedScheduler(["run"])
    job = await held_job(scheduler)
    stages = StageJobActivities(scheduler)
    first = await stages.dag_release(stage_job(job))
    assert first.changed and first.detail == f"job {job} released"
    again = await stages.dag_release(stage_job(job))
    assert not again.changed and "already released" in again.detail
    assert [c for c in scheduler.calls if c[0] == "release"] == [("release", job)]


async def test_another_restart_count_is_not_released() -> None:
    scheduler = ScriptedScheduler(["run"])
    job = await held_job(scheduler)
    result = await StageJobActivities(scheduler).dag_release(stage_job(job, restart_count=1))
    assert not result.changed and "restart count 0, not 1" in result.detail
    assert scheduler.jobs[job].held


async def test_a_job_of_another_run_is_never_touched() -> None:
    scheduler = ScriptedScheduler(["run"])
    job = await held_job(scheduler, token="recovery:someone-else:0")
    stages = StageJobActivities(scheduler)
    for action in (stages.dag_release, stages.dag_cancel):
        with pytest.raises(PermanentActionError, match="is not stage eval's job"):
            await action(stage_job(job))
    assert scheduler.jobs[job].held and not any(c[0] in ("release", "cancel") for c in scheduler.calls)


async def test_cancel_takes_the_held_job_away_once() -> None:
    scheduler = ScriptedScheduler(["run"])
    job = await held_job(scheduler)
    stages = StageJobActivities(scheduler)
    assert (await stages.dag_cancel(stage_job(job))).changed
    assert scheduler.jobs[job].state is JobState.CANCELLED
    again = await stages.dag_cancel(stage_job(job))
    assert not again.changed and again.detail == "job already ended"
    assert [c for c in scheduler.calls if c[0] == "cancel"] == [("cancel", job)]
