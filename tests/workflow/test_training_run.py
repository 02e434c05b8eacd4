"""TrainingRun on Temporal's time-skipping test server, with the real activities against a
scripted scheduler (tests/fakes.py): policy, backoff, pause/resume/cancel, give-up and
continue-as-new."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from temporalio.client import WorkflowHandle
from temporalio.common import TypedSearchAttributes
from temporalio.testing import WorkflowEnvironment

from recovery.client.config import WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.workflows import search_attributes as sa
from recovery.workflows.models import CancelRequest, RunInput, RunSpec, RunStatus, SubmitRequest
from recovery.workflows.policy import Backoff, Budgets, CrashLoop, Policy
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec


def generous(**kw: object) -> Policy:
    """The scripted scheduler's failures carry no log, so they are `unknown` and make no progress:
    give them room, so a test can look at one mechanism at a time."""
    room = {"budgets": Budgets(unknown=10, hardware=10), "crash_loop": CrashLoop(max_attempts_without_progress=10)}
    return Policy.model_validate({**room, **kw})


@asynccontextmanager
async def running(
    env: WorkflowEnvironment, scheduler: ScriptedScheduler, spec: RunSpec, mode: str = "act", sandbox: bool = False
) -> AsyncIterator[WorkflowHandle[object, RunStatus]]:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    config = WorkerConfig(mode=mode, workflow_sandbox=sandbox)
    async with build_worker(env.client, scheduler, config, task_queue=queue):
        handle = await env.client.start_workflow(
            "TrainingRun",
            RunInput(spec=spec),
            id=spec.run_id,
            task_queue=queue,
            result_type=RunStatus,
        )
        yield handle


async def query(handle: WorkflowHandle[object, RunStatus]) -> RunStatus:
    return await handle.query("status", result_type=RunStatus)


async def eventually(handle: WorkflowHandle[object, RunStatus], check, timeout: float = 10.0) -> RunStatus:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        status = await query(handle)
        if check(status) or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.05)


# Workers run workflow code outside Temporal's sandbox unless `workflow_sandbox` asks for it:
# the restart path runs the same in both (a call the sandbox refuses would fail the second).
@pytest.mark.parametrize("sandbox", [False, True], ids=["unsandboxed", "sandboxed"])
async def test_failure_is_restarted_excluding_the_failed_node(skipping_env: WorkflowEnvironment, sandbox: bool) -> None:
    scheduler = ScriptedScheduler(["fail:node2", "complete"])
    async with running(skipping_env, scheduler, make_spec(), sandbox=sandbox) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert [a.restart_count for a in status.attempts] == [0, 1]
    assert status.attempts[1].nodes == ["node1", "node3"]
    (advice,) = status.advice
    assert advice.operation == "restart"
    assert advice.excluded_nodes == ["node2"]
    assert advice.status == "converged" and advice.acted
    assert "node2" in advice.explanation
    kinds = [c[0] for c in scheduler.calls]
    assert kinds == ["submit", "requeue_hold", "set_excluded_nodes", "release"]
    names = [m.name for m in status.milestones]
    for name in (
        "failure_observed",
        "symptom_detected",
        "advice_recorded",
        "first_action",
        "successor_running",
        "completed",
    ):
        assert name in names
    assert status.goodput.ettr is not None and 0 <= status.goodput.ettr <= 1


async def test_node_fail_implicates_the_node_the_scheduler_names(
    skipping_env: WorkflowEnvironment,
) -> None:
    scheduler = ScriptedScheduler(["node_fail:node1", "complete"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        status = await handle.result()
    assert status.advice[0].excluded_nodes == ["node1"]
    assert status.diagnoses[0].category == "hardware"
    assert "node1" not in status.attempts[1].nodes


async def test_gives_up_when_restarts_are_used(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node1", "fail:node2", "fail:node3"])
    spec = make_spec(Policy(max_restarts=1))
    async with running(skipping_env, scheduler, spec) as handle:
        status = await handle.result()
    assert status.run.state == "gave_up"
    assert [a.operation for a in status.advice] == ["restart", "give_up"]
    assert "all 1 restarts" in status.advice[-1].explanation
    assert len(status.attempts) == 2


async def test_backoff_waits_on_a_durable_timer(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node1", "fail:node2", "complete"])
    policy = generous(backoff=Backoff(first=timedelta(0), initial=timedelta(hours=2), factor=2, max=timedelta(hours=3)))
    started = time.monotonic()
    async with running(skipping_env, scheduler, make_spec(policy)) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    first, second = status.advice
    assert first.not_before == first.created_at
    assert second.not_before is not None
    assert second.not_before - second.created_at == timedelta(hours=2)
    assert second.excluded_nodes == ["node1", "node2"]
    assert time.monotonic() - started < 60, "the 2 h backoff must be a skipped timer, not a sleep"


async def test_search_attributes_name_the_symptom_while_recovering(skipping_env: WorkflowEnvironment) -> None:
    """An operator filtering on RecoveryState="recovering" sees what the run recovers from."""
    scheduler = ScriptedScheduler(["fail:node2", "complete"])
    policy = generous(
        backoff=Backoff(first=timedelta(hours=1), initial=timedelta(hours=1), factor=2, max=timedelta(hours=2))
    )
    async with running(skipping_env, scheduler, make_spec(policy)) as handle:
        # No one awaits the result, so the test server does not skip the hour: the run waits.
        status = await eventually(handle, lambda s: s.advice)
        attrs = await eventually_attrs(handle, lambda a: a.get(sa.STATE) == "recovering")
        assert attrs.get(sa.STATE) == "recovering"
        assert attrs.get(sa.LAST_SYMPTOM) == status.symptoms[-1].kind
        assert attrs.get(sa.LAST_SYMPTOM)  # the failed attempt's symptom, not the empty default
        status = await handle.result()
    assert status.run.state == "completed"
    attrs = (await handle.describe()).typed_search_attributes
    assert attrs.get(sa.STATE) == "completed" and attrs.get(sa.LAST_SYMPTOM) == status.symptoms[-1].kind


async def eventually_attrs(
    handle: WorkflowHandle[object, RunStatus], check: Callable[[TypedSearchAttributes], bool], timeout: float = 10.0
) -> TypedSearchAttributes:
    deadline = time.monotonic() + timeout
    while True:
        attrs = (await handle.describe()).typed_search_attributes
        if check(attrs) or time.monotonic() > deadline:
            return attrs
        await asyncio.sleep(0.05)


async def test_pause_holds_actions_until_resume(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        await eventually(handle, lambda s: s.attempts)
        await handle.signal("pause")
        status = await eventually(handle, lambda s: s.run.paused)
        assert status.run.state == "paused"
        scheduler.outcomes = ["fail:node2", "complete"]
        status = await eventually(handle, lambda s: s.advice)
        await asyncio.sleep(0.5)
        status = await query(handle)
        assert status.advice[0].status == "pending"
        assert status.actions == []
        assert [c[0] for c in scheduler.calls] == ["submit"]
        await handle.signal("resume")
        status = await handle.result()
    assert status.run.state == "completed"
    assert status.advice[0].status == "converged"


async def test_cancel_stops_recovery_and_leaves_the_job(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        await eventually(handle, lambda s: s.attempts)
        await handle.signal("cancel")
        status = await handle.result()
    assert status.run.state == "cancelled"
    assert [c[0] for c in scheduler.calls] == ["submit"]


async def test_cancel_with_kill_job_cancels_the_job(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["run"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        await eventually(handle, lambda s: s.attempts)
        await handle.signal("cancel", CancelRequest(kill_job=True))
        status = await handle.result()
    assert status.run.state == "cancelled"
    assert [c[0] for c in scheduler.calls] == ["submit", "cancel"]


async def test_job_cancelled_outside_recovery_is_not_restarted(
    skipping_env: WorkflowEnvironment,
) -> None:
    scheduler = ScriptedScheduler(["cancelled"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        status = await handle.result()
    assert status.run.state == "gave_up"
    assert status.advice[0].operation == "give_up"
    assert [c[0] for c in scheduler.calls] == ["submit"]


async def test_continue_as_new_keeps_the_whole_record(skipping_env: WorkflowEnvironment) -> None:
    outcomes = ["fail:node1", "fail:node2", "fail:node3", "complete"]
    scheduler = ScriptedScheduler(outcomes, nodes=6)
    spec = make_spec(generous(max_restarts=5), history_events_limit=10)
    async with running(skipping_env, scheduler, spec) as handle:
        status = await handle.result()
        first_run = skipping_env.client.get_workflow_handle(spec.run_id, run_id=handle.first_execution_run_id)
        history = await first_run.fetch_history()
    assert status.run.state == "completed"
    assert len(status.attempts) == 4
    assert [a.status for a in status.advice] == ["converged"] * 3
    assert scheduler.submits == 1
    last = history.events[-1]
    assert last.HasField("workflow_execution_continued_as_new_event_attributes")


async def test_job_that_cannot_be_requeued_is_resubmitted_into_the_same_run(
    skipping_env: WorkflowEnvironment,
) -> None:
    scheduler = ScriptedScheduler(["fail:node2"], requeueable=False, later=["complete"])
    async with running(skipping_env, scheduler, make_spec()) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert [a.job_id for a in status.attempts] == ["101", "102"]
    assert "node2" not in status.attempts[1].nodes
    (advice,) = status.advice
    assert advice.status == "converged" and advice.acted
    submit = [a for a in status.actions if a.kind == "submit"]
    assert len(submit) == 1 and "resubmitted as job 102" in submit[0].detail
    assert scheduler.submits == 2


async def test_observe_mode_records_advice_and_changes_nothing(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node2"])
    async with running(skipping_env, scheduler, make_spec(), mode="observe") as handle:
        status = await handle.result()
    assert [c[0] for c in scheduler.calls] == ["submit"]
    (advice,) = status.advice
    assert advice.operation == "restart" and advice.excluded_nodes == ["node2"]
    assert advice.acted is False and advice.status == "abandoned"
    assert status.run.state == "gave_up"


async def test_observe_mode_follows_a_job_the_scheduler_requeues(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["requeued", "complete"])
    async with running(skipping_env, scheduler, make_spec(), mode="observe") as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert [a.restart_count for a in status.attempts] == [0, 1]
    assert status.advice[0].acted is False
    assert [c[0] for c in scheduler.calls] == ["submit"]


async def test_preemption_resumes_without_spending_the_budget(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["preempted", "preempted", "fail:node1", "complete"])
    async with running(skipping_env, scheduler, make_spec(Policy(max_restarts=1))) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert [a.operation for a in status.advice] == ["restart"] * 3
    assert [d.category for d in status.diagnoses] == ["scheduler", "scheduler", "unknown"]


async def test_crash_loop_gives_up_and_says_so(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node1", "fail:node2", "fail:node3", "complete"], nodes=6)
    policy = generous(crash_loop=CrashLoop(max_attempts_without_progress=3))
    async with running(skipping_env, scheduler, make_spec(policy)) as handle:
        status = await handle.result()
    assert status.run.state == "gave_up"
    assert [a.operation for a in status.advice] == ["restart", "restart", "give_up"]
    assert status.advice[-1].reason == "crash_loop"
    assert "crash loop: 3 attempts in a row made no progress" in status.advice[-1].explanation


async def adopted_with_own_exclusion(scheduler: ScriptedScheduler) -> RunSpec:
    """A job the user submitted with `--exclude=node4`, adopted as a run."""
    request = SubmitRequest(
        script="#!/bin/bash\n", name="own", nodes=2, workdir="/tmp", token="t", excluded_nodes=["node4"]
    )
    job = await scheduler.submit(request)
    return make_spec().model_copy(update={"adopt_job_id": job.job_id})


async def test_a_restart_keeps_the_jobs_own_exclusions(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node2", "complete"])
    spec = await adopted_with_own_exclusion(scheduler)
    async with running(skipping_env, scheduler, spec) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert status.advice[0].excluded_nodes == ["node2"]  # recovery's own decision
    assert scheduler.jobs["101"].excluded_nodes == ["node4", "node2"]  # what the job got
    assert status.attempts[1].nodes == ["node1", "node3"]


async def test_a_resubmission_keeps_the_jobs_own_exclusions(skipping_env: WorkflowEnvironment) -> None:
    scheduler = ScriptedScheduler(["fail:node2"], requeueable=False, later=["complete"])
    spec = await adopted_with_own_exclusion(scheduler)
    async with running(skipping_env, scheduler, spec) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
    assert [a.job_id for a in status.attempts] == ["101", "102"]
    assert scheduler.jobs["102"].excluded_nodes == ["node4", "node2"]
