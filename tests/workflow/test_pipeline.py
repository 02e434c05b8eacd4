"""The Pipeline workflow on Temporal's time-skipping test server, its stages real TrainingRun
children with the real activities against a scripted scheduler (tests/fakes.py): order of
release, what a failed need does to its dependants (cancel or hold), and the signals."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from recovery.activities.schedulers.base import JobNotFound
from recovery.client.config import WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import (
    TRAINING_RUN,
    CancelRequest,
    JobObservation,
    JobState,
    RunInput,
    RunStatus,
    SubmitRequest,
)
from recovery.workflows.pipeline_models import (
    AFTER_STAGE,
    PIPELINE,
    PipelineInput,
    PipelineStage,
    PipelineStatus,
    ReleaseRequest,
    stage_run_id,
)
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec

Handle = WorkflowHandle[object, PipelineStatus]


def pipeline(*stages: tuple[str, list[str], str]) -> PipelineInput:
    """A pipeline of (name, needs, on_dependency_failure) stages; each stage's job is named
    after it, so the scripted scheduler can give each its own plan."""
    pipeline_id = f"pipe-{uuid.uuid4().hex[:8]}"
    built = []
    for name, needs, on_failure in stages:
        spec = make_spec(nodes=1)
        spec.run_id = stage_run_id(pipeline_id, name)
        spec.name = name
        built.append(PipelineStage(name=name, needs=needs, on_dependency_failure=on_failure, spec=spec))  # type: ignore[arg-type]
    return PipelineInput(
        pipeline_id=pipeline_id, name="test", owner="tester", scheduler="local", file="/dev/null",
        submitted_at=datetime.now(UTC), stages=built,
    )  # fmt: skip


@asynccontextmanager
async def running(env: WorkflowEnvironment, scheduler: ScriptedScheduler, inp: PipelineInput) -> AsyncIterator[Handle]:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    async with build_worker(env.client, scheduler, WorkerConfig(), task_queue=queue):
        handle = await env.client.start_workflow(
            PIPELINE, inp, id=inp.pipeline_id, task_queue=queue, result_type=PipelineStatus
        )
        yield handle


async def eventually(handle: Handle, check: Callable[[PipelineStatus], bool], timeout: float = 20.0) -> PipelineStatus:
    deadline = time.monotonic() + timeout
    while True:
        status = await handle.query("status", result_type=PipelineStatus)
        if check(status) or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.05)


def states(status: PipelineStatus) -> dict[str, str]:
    return {s.name: s.state.value for s in status.stages}


async def test_stages_run_in_order_each_once_after_what_it_needs(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"prep": ["fail:node1", "complete"]}  # recovered once, then completes
    inp = pipeline(("prep", [], "cancel"), ("train", ["prep"], "cancel"), ("eval", ["train"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        status = await handle.result()
    assert status.pipeline.state == "completed"
    assert states(status) == {"prep": "completed", "train": "completed", "eval": "completed"}
    # train and eval are queued held at the start (the whole pipeline is visible), then released
    assert sorted(scheduler.events[:2]) == ["hold eval", "hold train"]
    assert scheduler.events[2:] == [
        "submit prep", "end prep FAILED", "end prep COMPLETED",
        "release train", "end train COMPLETED",
        "release eval", "end eval COMPLETED",
    ]  # fmt: skip
    releases = [(a.kind, a.stage, a.run) for a in status.actions]
    assert releases == [("dag_release", s.name, s.spec.run_id) for s in inp.stages]
    assert status.actions[1].detail.startswith("prep completed; job ") and status.actions[1].detail.endswith(
        " released"
    )
    assert scheduler.submits == 3, "each stage's run adopted the job its pipeline queued held"
    prep = await skipping_env.client.get_workflow_handle(inp.stages[0].spec.run_id, result_type=RunStatus).result()
    assert prep.run.state == "completed" and len(prep.attempts) == 2  # the stage kept its recovery


async def test_a_stage_waits_for_both_parallel_needs(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"b": ["fail:node1", "complete"]}  # b ends later: one recovery first
    inp = pipeline(("a", [], "cancel"), ("b", [], "cancel"), ("join", ["a", "b"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        status = await handle.result()
    assert status.pipeline.state == "completed"
    events = scheduler.events
    assert events[0] == "hold join" and "submit join" not in events
    assert events.index("release join") > events.index("end b COMPLETED")
    assert events.index("release join") > events.index("end a COMPLETED")
    assert events.count("release join") == 1


async def test_a_need_that_gives_up_cancels_or_holds_what_depends_on_it(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"bad": ["fail:node1"]}  # fails every time: gives up
    inp = pipeline(
        ("bad", [], "cancel"), ("good", [], "cancel"),
        ("after", ["bad", "good"], "cancel"), ("held", ["bad"], "hold"), ("later", ["held"], "cancel"),
    )  # fmt: skip
    async with running(skipping_env, scheduler, inp) as handle:
        status = await eventually(
            handle,
            lambda s: (
                states(s)["held"] == "held" and states(s)["good"] == "completed" and "; job" in s.actions[-2].detail
            ),
        )
        assert states(status) == {
            "bad": "gave_up", "good": "completed", "after": "cancelled", "held": "held", "later": "waiting",
        }  # fmt: skip
        assert status.pipeline.state == "running"  # a held stage keeps it open, for an operator
        assert [(a.kind, a.stage) for a in status.actions if a.kind != "dag_release"] == [
            ("cancel", "after"), ("hold", "held"),
        ]  # fmt: skip
        assert status.stages[2].detail == "needs bad, which gave up"
        # the cancelled stage's held job is gone; the held stage's job stays held, for an operator
        jobs = {job.name: job for job in scheduler.jobs.values()}
        assert jobs["after"].state is JobState.CANCELLED
        assert status.actions[-2].detail == f"needs bad, which gave up; job {jobs['after'].job_id} cancelled"
        assert jobs["held"].held and jobs["held"].state is JobState.PENDING
        await handle.signal("cancel", CancelRequest())
        status = await handle.result()
    assert status.pipeline.state == "cancelled"
    assert states(status)["held"] == "cancelled" and states(status)["later"] == "cancelled"
    assert not any(e.startswith(("submit ", "release ")) and e.split()[1] in ("after", "held", "later")
                   for e in scheduler.events)  # fmt: skip
    left = [job.name for job in scheduler.jobs.values() if not job.state.ended]
    assert left == [], "a cancelled pipeline leaves no held job behind"


async def test_a_released_held_stage_runs_and_the_pipeline_goes_on(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"bad": ["fail:node1"]}
    inp = pipeline(("bad", [], "cancel"), ("held", ["bad"], "hold"), ("last", ["held"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        await eventually(handle, lambda s: states(s)["held"] == "held")
        await handle.signal("release", ReleaseRequest(stages=["held"]))
        status = await handle.result()
    assert states(status) == {"bad": "gave_up", "held": "completed", "last": "completed"}
    assert status.pipeline.state == "gave_up"  # one stage did give up
    held_release = next(a for a in status.actions if a.kind == "dag_release" and a.stage == "held")
    assert held_release.detail.startswith("released by an operator; job ")


async def test_pause_resume_and_cancel_reach_every_running_stage(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])  # jobs run until cancelled
    inp = pipeline(("a", [], "cancel"), ("b", [], "cancel"), ("c", ["a"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        await eventually(handle, lambda s: states(s)["a"] == "running" and states(s)["b"] == "running")
        stages = [skipping_env.client.get_workflow_handle(s.spec.run_id, result_type=RunStatus) for s in inp.stages[:2]]

        async def all_paused(paused: bool) -> bool:
            found = [await h.query("status", result_type=RunStatus) for h in stages]
            return all(s.run.paused is paused for s in found)

        await handle.signal("pause")
        status = await eventually(handle, lambda s: s.pipeline.paused)
        assert status.pipeline.state == "paused"
        deadline = time.monotonic() + 20
        while not await all_paused(True) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert await all_paused(True)
        await handle.signal("resume")
        while not await all_paused(False) and time.monotonic() < deadline + 20:
            await asyncio.sleep(0.05)
        assert await all_paused(False)
        await handle.signal("cancel", CancelRequest(kill_job=True))
        status = await handle.result()
    assert status.pipeline.state == "cancelled"
    assert states(status) == {"a": "cancelled", "b": "cancelled", "c": "cancelled"}, status.stages
    # the running stages' jobs (--kill-job) and c's held job: every job the pipeline queued
    assert sorted(c for c in scheduler.calls if c[0] == "cancel") == [("cancel", j) for j in sorted(scheduler.jobs)]


async def test_a_pipeline_cancelled_from_temporal_leaves_no_held_job(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])  # the first stage runs until cancelled
    inp = pipeline(("a", [], "cancel"), ("b", ["a"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        await eventually(handle, lambda s: states(s)["a"] == "running")
        held = next(job for job in scheduler.jobs.values() if job.name == "b")
        assert held.held
        await handle.cancel()  # the UI's or `temporal workflow cancel`'s, not the cancel signal
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    assert scheduler.jobs[held.job_id].state is JobState.CANCELLED
    assert ("release", held.job_id) not in scheduler.calls


@asynccontextmanager
async def chained_after(
    env: WorkflowEnvironment, scheduler: ScriptedScheduler, names: list[str]
) -> AsyncIterator[tuple[list[str], Handle]]:
    """`submit --after`: runs named `names` started first, then a one-stage pipeline (its stage,
    `run`, is the chained run) that follows them."""
    queue = f"q-{uuid.uuid4().hex[:8]}"
    inp = pipeline((AFTER_STAGE, [], "cancel"))
    async with build_worker(env.client, scheduler, WorkerConfig(), task_queue=queue):
        followed = []
        for name in names:
            spec = make_spec(nodes=1)
            spec.name = name
            await env.client.start_workflow(TRAINING_RUN, RunInput(spec=spec), id=spec.run_id, task_queue=queue)
            followed.append(spec.run_id)
        inp.after = followed
        yield (
            followed,
            await env.client.start_workflow(
                PIPELINE, inp, id=inp.pipeline_id, task_queue=queue, result_type=PipelineStatus
            ),
        )


async def stop(run: WorkflowHandle[Any, Any]) -> None:
    """Cancel a followed run the test is done with, unless it already ended on its own: its job
    runs silent for ever, and while the test waits the test server skips time, so the run may
    have found it hung and given up first (the pipeline is cancelled either way)."""
    try:
        await run.signal("cancel", CancelRequest())
    except RPCError as e:
        if e.status is not RPCStatusCode.NOT_FOUND:  # "Completed workflow"
            raise


async def test_a_chained_run_starts_once_every_run_it_follows_completed(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"b": ["fail:node1", "complete"]}  # b is recovered (a new attempt) first
    async with chained_after(skipping_env, scheduler, ["a", "b"]) as (followed, handle):
        status = await handle.result()
    assert status.pipeline.state == "completed" and status.after == followed
    events = scheduler.events
    # queued held at the start (its job in the queue all along), released once both completed
    assert events.count("hold run") == 1 and "submit run" not in events and events.count("release run") == 1
    assert events.index("release run") > max(events.index("end a COMPLETED"), events.index("end b COMPLETED"))
    job = next(j for j in scheduler.jobs.values() if j.name == "run")
    assert [(a.kind, a.stage, a.detail) for a in status.actions] == [
        ("dag_release", AFTER_STAGE, f"{followed[0]}, {followed[1]} completed; job {job.job_id} released")
    ]


async def test_a_chained_run_is_cancelled_when_a_run_it_follows_gives_up(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"bad": ["fail:node1"]}  # fails every time: gives up
    async with chained_after(skipping_env, scheduler, ["good", "bad"]) as (followed, handle):
        status = await handle.result()
    assert status.pipeline.state == "cancelled"
    (stage,) = status.stages
    assert stage.state == "cancelled" and stage.detail == f"follows {followed[1]}, which gave up"
    job = next(j for j in scheduler.jobs.values() if j.name == "run")
    assert [(a.kind, a.stage, a.detail) for a in status.actions] == [
        ("cancel", AFTER_STAGE, f"follows {followed[1]}, which gave up; job {job.job_id} cancelled")
    ]
    assert job.state is JobState.CANCELLED  # its held job is not left in the queue
    assert "release run" not in scheduler.events and "submit run" not in scheduler.events


async def test_a_chained_run_cancelled_while_it_waits_starts_nothing(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"])  # the followed run's job runs until cancelled
    async with chained_after(skipping_env, scheduler, ["long"]) as (followed, handle):
        status = await eventually(handle, lambda s: s.stages[0].detail.startswith("waits for"))
        job = next(j for j in scheduler.jobs.values() if j.name == "run")
        assert status.stages[0].detail == f"waits for {followed[0]} to complete (job {job.job_id} held)"
        assert status.pipeline.state == "pending"
        await handle.signal("cancel", CancelRequest())
        # Wait for the cancel to take effect before `result()`, which lets the test server skip
        # time: skipped time can end the followed run (found hung) in the same workflow task that
        # cancels the wait for it, and the test server then refuses the task and never hands it
        # out again (temporalio/sdk-java#2391; the real server takes it). Queries skip no time.
        await eventually(handle, lambda s: s.pipeline.state == "cancelled")
        status = await handle.result()
        await stop(skipping_env.client.get_workflow_handle(followed[0]))
    assert status.pipeline.state == "cancelled" and states(status) == {AFTER_STAGE: "cancelled"}
    assert "release run" not in scheduler.events and scheduler.jobs[job.job_id].state is JobState.CANCELLED


async def test_a_run_chained_after_a_stage_not_started_yet_follows_it(skipping_env: WorkflowEnvironment) -> None:
    """`--after PIPELINE.STAGE` before that stage has a run: the chained run waits for it to
    start and complete; one chained after a stage that will never run is cancelled."""
    scheduler = ScriptedScheduler(["complete"])
    scheduler.by_name = {"bad": ["fail:node1"]}  # fails every time: gives up, and `never` with it
    inp = pipeline(("a", [], "cancel"), ("b", ["a"], "cancel"), ("bad", [], "cancel"), ("never", ["bad"], "cancel"))
    queue = f"q-{uuid.uuid4().hex[:8]}"
    chains = {stage: pipeline((AFTER_STAGE, [], "cancel")) for stage in ("b", "never")}
    async with build_worker(skipping_env.client, scheduler, WorkerConfig(), task_queue=queue):
        first = await skipping_env.client.start_workflow(
            PIPELINE, inp, id=inp.pipeline_id, task_queue=queue, result_type=PipelineStatus
        )
        handles = {}
        for stage, chain in chains.items():
            chain.after = [stage_run_id(inp.pipeline_id, stage)]
            chain.stages[0].spec.name = f"after-{stage}"
            handles[stage] = await skipping_env.client.start_workflow(
                PIPELINE, chain, id=chain.pipeline_id, task_queue=queue, result_type=PipelineStatus
            )
        after_b, after_never = await handles["b"].result(), await handles["never"].result()
        await first.result()
    assert after_b.pipeline.state == "completed"
    assert scheduler.events.index("release after-b") > scheduler.events.index("end b COMPLETED")
    assert after_never.pipeline.state == "cancelled"
    assert after_never.stages[0].detail == (
        f"follows {inp.pipeline_id}.never, which was cancelled"
        f" (a stage of {inp.pipeline_id} that never ran: needs bad, which gave up)"
    )
    assert "release after-never" not in scheduler.events


class RefusesHeld(ScriptedScheduler):
    """The scheduler refuses one stage's job for good (here: a job it says it does not know)."""

    async def submit(self, request: SubmitRequest) -> JobObservation:
        if request.name == "b":
            raise JobNotFound("refused for good")
        return await super().submit(request)


async def test_a_stage_that_cannot_be_queued_held_does_not_stop_the_others(skipping_env: WorkflowEnvironment) -> None:
    scheduler = RefusesHeld(["complete"])
    inp = pipeline(("a", [], "cancel"), ("b", ["a"], "cancel"), ("c", ["a"], "cancel"))
    async with running(skipping_env, scheduler, inp) as handle:
        status = await handle.result()
    # b is left to its run, which meets the refusal itself when released; a and c ran
    assert states(status) == {"a": "completed", "b": "gave_up", "c": "completed"}, status.stages
    assert "hold c" in scheduler.events and "release c" in scheduler.events
    assert not any(e.endswith(" b") for e in scheduler.events)
