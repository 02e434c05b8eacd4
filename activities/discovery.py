"""Discovery: jobs submitted with plain `sbatch --comment=recovery[:policy=NAME]` become runs.

Each opted-in job is adopted exactly once: its run id is derived from the cluster and job id
(or is the run a `recovery submit` already named in the job's token), and Temporal refuses a
second workflow with that id, even after the first one closed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

import structlog
from temporalio import activity
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from recovery.activities.clock import utcnow
from recovery.activities.errors import scheduler_errors
from recovery.activities.schedulers.slurm_comment import parse_comment
from recovery.workflows.models import (
    AdoptJobsInput,
    AdoptJobsResult,
    JobObservation,
    JobState,
    JobSubmission,
    RunSpec,
    Tuning,
)
from recovery.workflows.policy_files import PolicyError, load_policy

log = structlog.get_logger("recovery.discovery")

# Jobs a run's own submit is about to adopt are left to it for this long.
SUBMITTER_GRACE = timedelta(seconds=60)
NOT_ADOPTED = (JobState.COMPLETED, JobState.CANCELLED)

# Starts a run's TrainingRun on a task queue: the client's own start (`recovery.client.runs`),
# handed in by the worker so that activities never import the client.
StartRun = Callable[[RunSpec, str, WorkflowIDReusePolicy], Awaitable[object]]


@runtime_checkable
class Discoverable(Protocol):
    async def opted_in_jobs(self, partitions: list[str] | None = None) -> list[JobObservation]: ...

    async def submission(self, job_id: str) -> JobSubmission: ...

    async def cluster_name(self) -> str: ...


class DiscoveryActivities:
    def __init__(self, scheduler: Discoverable, start: StartRun, partitions: list[str] | None, tuning: Tuning) -> None:
        self.scheduler = scheduler
        self.start = start
        self.partitions = partitions
        self.tuning = tuning
        self._handled: set[str] = set()  # a cache only: Temporal's workflow ids are the truth

    @activity.defn
    async def adopt_opted_in_jobs(self, inp: AdoptJobsInput) -> AdoptJobsResult:
        with scheduler_errors():
            cluster = await self.scheduler.cluster_name()
            jobs = await self.scheduler.opted_in_jobs(self.partitions)
        result = AdoptJobsResult(seen=len(jobs))
        # A job that ended before we could have seen it was never watched: leave it alone.
        recent = utcnow() - max(2 * timedelta(seconds=inp.interval_seconds), SUBMITTER_GRACE)
        for job in jobs:
            if job.job_id in self._handled or job.state in NOT_ADOPTED or _ended_before(job, recent):
                continue
            run_id = await self._adopt(job, cluster, inp.task_queue, result)
            if run_id is not None:
                self._handled.add(job.job_id)
        return result

    async def _adopt(self, job: JobObservation, cluster: str, task_queue: str, result: AdoptJobsResult) -> str | None:
        comment = parse_comment(job.comment)
        if comment.pipeline:
            return comment.run_id  # a pipeline's stage: its pipeline starts the run, however long it waits
        if comment.run_id and _younger_than(job, SUBMITTER_GRACE):
            return None  # `recovery submit` starts this run itself, with the user's policy
        run_id = comment.run_id or f"{cluster}-{job.job_id}"
        try:
            policy = load_policy(comment.policy or "default")
        except PolicyError as e:
            log.error("opted-in job not adopted", job_id=job.job_id, error=str(e))
            result.refused.append(f"job {job.job_id}: {e}")
            return run_id  # never retried: the comment will not change
        with scheduler_errors():
            submission = await self.scheduler.submission(job.job_id)
        spec = adopted_spec(run_id, submission, policy, self.tuning)
        if await self._start(spec, task_queue):
            result.started.append(run_id)
            log.info("adopted", job_id=job.job_id, run_id=run_id, policy=policy.name)
        return run_id

    async def _start(self, spec: RunSpec, task_queue: str) -> bool:
        """False when the run exists, or existed: a job is adopted once, ever."""
        try:
            await self.start(spec, task_queue, WorkflowIDReusePolicy.REJECT_DUPLICATE)
        except WorkflowAlreadyStartedError:
            return False
        return True


def adopted_spec(run_id: str, job: JobSubmission, policy: object, tuning: Tuning) -> RunSpec:
    return RunSpec.model_validate(
        {
            "run_id": run_id,
            "name": job.name or f"job {job.job_id}",
            "scheduler": "slurm",
            "script_path": f"<batch script of Slurm job {job.job_id}>",
            "script": job.script,
            "nodes": job.nodes,
            "workdir": job.workdir,
            "owner": job.user,
            "policy": policy,
            "submitted_at": utcnow(),
            "tuning": tuning,
            "adopt_job_id": job.job_id,
        }
    )


def _ended_before(job: JobObservation, moment: datetime) -> bool:
    return job.state.ended and (job.ended_at is None or job.ended_at < moment)


def _younger_than(job: JobObservation, age: timedelta) -> bool:
    return job.submitted_at is not None and utcnow() - job.submitted_at < age
