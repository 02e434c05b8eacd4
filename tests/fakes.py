"""A scripted in-memory scheduler for workflow tests on Temporal's time-skipping server.

It runs the real workflow and the real activities; only the scheduler is scripted. Each job
follows a list of outcomes, one per restart count: "complete", "fail:NODE", "node_fail:NODE",
"cancelled", "requeued" (the scheduler restarts it by itself) or "run" (stays running).
Jobs submitted after the first (resubmissions) follow `later` instead. Fidelity gaps against the local scheduler and Slurm:
no processes, no output files, jobs start instantly on release, outcomes happen on the first
observation after the job started, and there is no queueing for lack of nodes beyond a
simple count.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from recovery.activities.schedulers.base import JobNotFound, JobNotRequeueable, SchedulerError
from recovery.workflows.models import JobObservation, JobState, NodeInfo, SubmitRequest, TaskResult


def _now() -> datetime:
    return datetime.now(UTC)


class ScriptedScheduler:
    name = "fake"  # each instance gets its own name below: node history is kept per cluster

    def __init__(
        self, outcomes: list[str], nodes: int = 4, requeueable: bool = True, later: list[str] | None = None
    ) -> None:
        # Its own cluster name: node history is kept per cluster, and one test's failures
        # must not make another test's nodes suspect.
        self.name = f"fake-{uuid.uuid4().hex[:8]}"
        self.requeueable = requeueable
        self.later = later or ["complete"]
        self.plans: list[list[str]] = []  # when set, the n-th submitted job follows plans[n]
        self.outcomes = outcomes
        self.node_names = [f"node{i}" for i in range(1, nodes + 1)]
        self.jobs: dict[str, JobObservation] = {}
        self.calls: list[tuple[str, str]] = []
        self.submits = 0
        self.by_name: dict[str, list[str]] = {}  # when a job's name is here, it follows this plan
        self.events: list[str] = []  # "submit NAME" and "end NAME STATE", in the order they happened
        self.sizes: dict[str, int] = {}

    async def submit(self, request: SubmitRequest) -> JobObservation:
        self.submits += 1
        job_id = str(100 + self.submits)
        obs = JobObservation(
            job_id=job_id, name=request.name, state=JobState.PENDING, token=request.token,
            excluded_nodes=list(request.excluded_nodes),
        )  # fmt: skip
        self.sizes[job_id] = request.nodes
        if request.hold:  # a pipeline's stage: queued held until the pipeline releases it
            self.events.append(f"hold {request.name}")
            self.jobs[job_id] = obs.model_copy(update={"held": True})
        else:
            self.events.append(f"submit {request.name}")
            self.jobs[job_id] = self._start(obs, request.nodes)
        self.calls.append(("submit", job_id))
        return self.jobs[job_id]

    async def find(self, token: str) -> JobObservation | None:
        return next((j for j in self.jobs.values() if j.token == token), None)

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        for job_id in job_ids:
            if job_id in self.jobs:
                self._advance(job_id)
        return {j: self.jobs[j].model_copy(deep=True) for j in job_ids if j in self.jobs}

    async def requeue_hold(self, job_id: str) -> None:
        job = self._job(job_id)
        if not self.requeueable:
            raise JobNotRequeueable("Requeue of JobId is presently disabled")
        if job.state is JobState.PENDING:
            raise SchedulerError("requeuehold refused on a pending job")
        self.calls.append(("requeue_hold", job_id))
        self.jobs[job_id] = job.model_copy(
            update={
                "state": JobState.PENDING, "held": True, "restart_count": job.restart_count + 1,
                "nodes": [], "tasks": [], "failed_nodes": [], "exit_code": None,
                "started_at": None, "ended_at": None,
            }
        )  # fmt: skip

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        job = self._job(job_id)
        if job.state is not JobState.PENDING:
            raise SchedulerError("only pending jobs")
        self.calls.append(("set_excluded_nodes", job_id))
        self.jobs[job_id] = job.model_copy(update={"excluded_nodes": list(nodes)})

    async def release(self, job_id: str) -> None:
        job = self._job(job_id)
        if not job.held:
            raise SchedulerError("not held")
        self.calls.append(("release", job_id))
        if job.restart_count == 0:
            self.events.append(f"release {job.name}")
        self.jobs[job_id] = self._start(job.model_copy(update={"held": False}), self.sizes[job_id])

    async def cancel(self, job_id: str) -> None:
        job = self._job(job_id)
        self.calls.append(("cancel", job_id))
        self.jobs[job_id] = job.model_copy(update={"state": JobState.CANCELLED, "ended_at": _now()})

    def opted_in(self, observation: JobObservation) -> bool:
        return True

    async def nodes(self) -> list[NodeInfo]:
        return [NodeInfo(name=n, state="idle") for n in self.node_names]

    def _job(self, job_id: str) -> JobObservation:
        if job_id not in self.jobs:
            raise JobNotFound(job_id)
        return self.jobs[job_id]

    def _start(self, job: JobObservation, count: int) -> JobObservation:
        free = [n for n in self.node_names if n not in job.excluded_nodes][:count]
        return job.model_copy(update={"state": JobState.RUNNING, "nodes": free, "started_at": _now()})

    def _advance(self, job_id: str) -> None:
        job = self.jobs[job_id]
        if job.state is not JobState.RUNNING:
            return
        number = int(job_id) - 101
        if job.name in self.by_name:
            plan = self.by_name[job.name]
        elif self.plans:
            plan = self.plans[min(number, len(self.plans) - 1)]
        else:
            plan = self.outcomes if number == 0 else self.later
        outcome = plan[min(job.restart_count, len(plan) - 1)]
        kind, _, node = outcome.partition(":")
        ended = {"ended_at": _now()}
        if kind == "complete":
            update = {"state": JobState.COMPLETED, "exit_code": 0, **ended}
        elif kind == "fail":
            task = TaskResult(node=node, exit_code=1, ended_at=_now())
            update = {"state": JobState.FAILED, "exit_code": 1, "tasks": [task], **ended}
        elif kind == "node_fail":
            update = {"state": JobState.NODE_FAIL, "failed_nodes": [node], **ended}
        elif kind == "cancelled":
            update = {"state": JobState.CANCELLED, **ended}
        elif kind == "preempted":
            update = {"state": JobState.PREEMPTED, **ended}
        elif kind == "requeued":  # the scheduler requeued it by itself (Slurm on NODE_FAIL)
            update = {"restart_count": job.restart_count + 1, "started_at": _now()}
        else:
            return
        self.jobs[job_id] = job.model_copy(update=update)
        if "ended_at" in update:
            self.events.append(f"end {job.name} {self.jobs[job_id].state.value}")
