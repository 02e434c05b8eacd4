"""Discovery leaves a pipeline's held stage jobs to their pipeline: a stage may wait for hours,
and adopting its job would start the stage's run (its workflow id) before the pipeline does."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import WorkflowIDReusePolicy

from recovery.activities.clock import utcnow
from recovery.activities.discovery import DiscoveryActivities
from recovery.workflows.models import AdoptJobsInput, JobObservation, JobState, JobSubmission, RunSpec, Tuning

STAGE = "recovery:pipeline=p-1a2b,stage=eval,after=train,token=recovery:p-1a2b.eval:0"


class Cluster:
    def __init__(self, jobs: list[JobObservation]) -> None:
        self.jobs = jobs

    async def opted_in_jobs(self, partitions: list[str] | None = None) -> list[JobObservation]:
        return self.jobs

    async def submission(self, job_id: str) -> JobSubmission:
        job = next(j for j in self.jobs if j.job_id == job_id)
        return JobSubmission(
            job_id=job_id, name=job.name, user="u", workdir="/tmp", nodes=1, script="#!/bin/bash\n",
            comment=job.comment,
        )  # fmt: skip

    async def cluster_name(self) -> str:
        return "dev"


async def test_a_held_stage_job_is_not_adopted_however_old() -> None:
    an_hour_ago = utcnow() - timedelta(hours=1)
    jobs = [
        JobObservation(job_id="7", name="eval", state=JobState.PENDING, held=True, comment=STAGE,
                       submitted_at=an_hour_ago),
        JobObservation(job_id="8", name="mine", state=JobState.RUNNING, comment="recovery", submitted_at=an_hour_ago),
    ]  # fmt: skip
    started: list[str] = []

    async def start(spec: RunSpec, queue: str, reuse: WorkflowIDReusePolicy) -> None:
        started.append(spec.run_id)

    discovery = DiscoveryActivities(Cluster(jobs), start, None, Tuning())
    result = await discovery.adopt_opted_in_jobs(AdoptJobsInput(task_queue="q"))
    assert started == ["dev-8"] and result.started == ["dev-8"]
    again = await discovery.adopt_opted_in_jobs(AdoptJobsInput(task_queue="q"))
    assert again.started == [] and started == ["dev-8"]
