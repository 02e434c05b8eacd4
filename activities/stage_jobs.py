"""A pipeline's own actions on its stages' held jobs: `dag_release` lets a stage's job run once
what it needs has completed; `dag_cancel` takes away the held job of a stage that will never run.

On a scheduler with holds the pipeline submits every stage that needs another one at the start,
held (`submit_attempt` with a held request), so operators see the whole pipeline in the queue.
Temporal retries these activities and a worker may die right after the command went through, so
each observes the job first and acts only while it is still the stage's held job: the run's
token, at the restart count it was submitted with. A retry finds the work done and does nothing.
"""

from __future__ import annotations

import structlog
from temporalio import activity

from recovery.activities import failpoints
from recovery.activities.errors import PermanentActionError, scheduler_errors
from recovery.activities.schedulers.base import Scheduler, SchedulerError
from recovery.workflows.models import JobObservation
from recovery.workflows.pipeline_models import StageJobInput, StageJobResult

log = structlog.get_logger("recovery.activities")


class StageJobActivities:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    @activity.defn
    async def dag_release(self, inp: StageJobInput) -> StageJobResult:
        obs = await self._stage_job(inp)
        if obs is None:
            return _result(inp, False, "job no longer known: the stage's run submits it again")
        if obs.restart_count != inp.restart_count:
            return _result(inp, False, f"not released: restart count {obs.restart_count}, not {inp.restart_count}")
        if not obs.held:
            return _result(inp, False, f"not held ({obs.state}): already released")
        with scheduler_errors():
            await self.scheduler.release(inp.job_id)
        failpoints.hit("after:dag_release")
        return _result(inp, True, f"job {inp.job_id} released")

    @activity.defn
    async def dag_cancel(self, inp: StageJobInput) -> StageJobResult:
        """Cancel the job of a stage that will not run (a need gave up, the pipeline was
        cancelled), then check that the scheduler ended it: no held job is left in the queue."""
        obs = await self._stage_job(inp)
        if obs is None or obs.state.ended:
            return _result(inp, False, "job already ended" if obs else "job no longer known")
        with scheduler_errors():
            await self.scheduler.cancel(inp.job_id)
        failpoints.hit("after:dag_cancel")
        after = await self._stage_job(inp)
        if after is not None and not after.state.ended:
            # Temporal retries the activity, which observes again first.
            raise SchedulerError(f"job {inp.job_id} still {after.state} after the cancel")
        return _result(inp, True, f"job {inp.job_id} cancelled")

    async def _stage_job(self, inp: StageJobInput) -> JobObservation | None:
        """The stage's job as the scheduler shows it now; refused when the id names another job."""
        with scheduler_errors():
            obs = (await self.scheduler.observe([inp.job_id])).get(inp.job_id)
        if obs is not None and obs.token != inp.token:
            raise PermanentActionError(f"job {inp.job_id} is not stage {inp.stage}'s job (token {obs.token!r})")
        return obs


def _result(inp: StageJobInput, changed: bool, detail: str) -> StageJobResult:
    log.info("stage job", run_id=inp.run_id, job_id=inp.job_id, changed=changed, detail=detail)
    return StageJobResult(changed=changed, detail=detail)
