"""The worker's one observer (activities/observer/): many runs on one worker cost nothing while
their jobs run quietly (no watch completes, no heartbeat, one scheduler read for all of them),
a run is woken only when its own job fails, and the run's safety timer re-arms a quiet watch.

Real workflow and activities on the time-skipping server, against the scripted scheduler."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from temporalio import activity
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from recovery.client.config import WorkerConfig
from recovery.worker.gc_pauses import Quiet
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import (
    JobObservation,
    JobState,
    RunInput,
    RunSpec,
    RunStatus,
    SubmitRequest,
    TaskResult,
)
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec

RUNS = 20
WINDOW = 3.0  # seconds of quiet looked at: 150 polls at the test tuning's 0.02 s


class Counts(Interceptor):
    """What the watch activities did, per run: heartbeats sent and watches that returned."""

    def __init__(self) -> None:
        self.heartbeats: Counter[str] = Counter()
        self.watches: Counter[str] = Counter()  # watch_attempt started
        self.woken: Counter[str] = Counter()  # watch_attempt returned a result

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next, self)


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, counts: Counts) -> None:
        super().__init__(next)
        self.counts = counts

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        super().init(_Outbound(outbound, self.counts))

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        watch = info.activity_type == "watch_attempt"
        if watch:
            self.counts.watches[info.workflow_id or ""] += 1
        result = await super().execute_activity(input)
        if watch:
            self.counts.woken[info.workflow_id or ""] += 1
        return result


class _Outbound(ActivityOutboundInterceptor):
    def __init__(self, next: ActivityOutboundInterceptor, counts: Counts) -> None:
        super().__init__(next)
        self.counts = counts

    def heartbeat(self, *details: Any) -> None:
        info = activity.info()
        if info.activity_type == "watch_attempt":
            self.counts.heartbeats[info.workflow_id or ""] += 1
        super().heartbeat(*details)


class CountingScheduler(ScriptedScheduler):
    """The scripted scheduler, remembering how many jobs each read asked about."""

    def __init__(self, outcomes: list[str], nodes: int) -> None:
        super().__init__(outcomes, nodes=nodes)
        self.reads: list[int] = []

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        self.reads.append(len(job_ids))
        return await super().observe(job_ids)

    def fail(self, job_id: str, node: str) -> None:
        """The job fails now, as a node dying under it would make it."""
        job = self.jobs[job_id]
        task = TaskResult(node=node, exit_code=1)
        self.jobs[job_id] = job.model_copy(update={"state": JobState.FAILED, "exit_code": 1, "tasks": [task]})


@asynccontextmanager
async def runs_on_one_worker(
    env: WorkflowEnvironment,
    scheduler: ScriptedScheduler,
    specs: list[RunSpec],
    counts: Counts,
    config: WorkerConfig | None = None,
) -> AsyncIterator[list[WorkflowHandle[object, RunStatus]]]:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    async with build_worker(env.client, scheduler, config or WorkerConfig(), task_queue=queue, interceptors=[counts]):
        handles = [
            await env.client.start_workflow(
                "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
            )
            for spec in specs
        ]
        yield handles


async def until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.05)


async def status_of(handle: WorkflowHandle[object, RunStatus]) -> RunStatus:
    return await handle.query("status", result_type=RunStatus)


async def test_idle_runs_cost_nothing_and_only_the_failed_ones_are_woken(skipping_env: WorkflowEnvironment) -> None:
    scheduler = CountingScheduler(["run"], nodes=2 * RUNS + 4)
    scheduler.later = ["run"]
    specs = [make_spec(nodes=1, watch_heartbeat_timeout_seconds=600) for _ in range(RUNS)]
    counts = Counts()
    async with runs_on_one_worker(skipping_env, scheduler, specs, counts) as handles:
        ids = [s.run_id for s in specs]
        await until(lambda: all(counts.heartbeats[i] >= 1 for i in ids))  # every watch is attached
        await until(lambda: scheduler.reads[-1:] == [RUNS])  # and a look began since (a read is coalesced late)
        heartbeats, woken, reads = counts.heartbeats.copy(), counts.woken.copy(), len(scheduler.reads)
        await asyncio.sleep(WINDOW)
        # Quiet: no watch returned, none heartbeat (the old watch beat and read every poll) ...
        assert counts.woken == woken, "an idle run's watch must not return"
        assert counts.heartbeats == heartbeats, "an idle run's watch must not heartbeat within its sized interval"
        # ... and the observer read the scheduler once per look for all the runs' jobs together.
        window_reads = scheduler.reads[reads:]
        assert window_reads, "the observer keeps looking"
        assert all(n == RUNS for n in window_reads), f"each read covers every watched job: {window_reads}"

        await three_fail_and_only_they_recover(handles, scheduler, counts)


async def three_fail_and_only_they_recover(
    handles: list[WorkflowHandle[object, RunStatus]], scheduler: CountingScheduler, counts: Counts
) -> None:
    """The first three runs' jobs fail: each is recovered exactly once, the others never woken.
    Then every run is cancelled."""
    failed = handles[:3]
    for handle in failed:
        attempt = (await status_of(handle)).attempts[0]
        scheduler.fail(attempt.job_id, attempt.nodes[0])
    for handle in failed:
        await until_recovered(handle)
    for handle in handles[3:]:
        status = await status_of(handle)
        assert status.run.state == "running" and not status.symptoms
        assert counts.woken[handle.id] == 0, "a run whose job runs on is never woken"
    for handle in failed:
        status = await status_of(handle)
        assert len(status.symptoms) == 1 and len(status.advice) == 1, "recovered exactly once"
        assert [a.restart_count for a in status.attempts] == [0, 1]
    for handle in handles:
        await handle.cancel()


async def until_recovered(handle: WorkflowHandle[object, RunStatus], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        status = await status_of(handle)
        if status.advice and status.advice[0].status == "converged":
            return
        assert time.monotonic() < deadline, f"{handle.id} was not recovered: {status.run.state}"
        await asyncio.sleep(0.05)


async def test_the_safety_timer_re_arms_a_quiet_watch_and_a_failure_is_still_found(
    skipping_env: WorkflowEnvironment, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = CountingScheduler(["run"], nodes=4)
    scheduler.later = ["run"]
    spec = make_spec(nodes=1, watch_rearm_seconds=1)
    counts = Counts()
    async with runs_on_one_worker(skipping_env, scheduler, [spec], counts) as (handle,):
        await until(lambda: counts.watches[spec.run_id] >= 3)  # re-armed twice, nothing woke it
        status = await status_of(handle)
        assert status.run.state == "running" and not status.symptoms
        assert counts.woken[spec.run_id] == 0
        attempt = status.attempts[0]
        scheduler.fail(attempt.job_id, attempt.nodes[0])
        await until_recovered(handle)
        status = await status_of(handle)
        assert len(status.symptoms) == 1 and len(status.advice) == 1
        await handle.cancel()
    unretrieved = [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]
    assert not unretrieved, "a re-armed watch's cancelled end is taken, not logged as an error"


async def test_runs_the_worker_let_go_of_are_replayed_and_recovered_once(
    skipping_env: WorkflowEnvironment, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="temporalio.worker._workflow")
    # `cached_runs: 1`: with six runs, each run's wake (its failure, the watch's end) finds its
    # workflow evicted and replays it from history; the observer keeps watching them all.
    scheduler = CountingScheduler(["run"], nodes=20)
    scheduler.later = ["run"]
    specs = [make_spec(nodes=1, watch_heartbeat_timeout_seconds=600) for _ in range(6)]
    counts = Counts()
    config = WorkerConfig(cached_runs=1)
    async with runs_on_one_worker(skipping_env, scheduler, specs, counts, config) as handles:
        await until(lambda: all(counts.heartbeats[s.run_id] >= 1 for s in specs))
        await three_fail_and_only_they_recover(handles, scheduler, counts)
    assert any("cache full" in r.getMessage() for r in caplog.records), "the runs were let go of and replayed"


class SlowSubmits(CountingScheduler):
    """Its submits wait at a gate: a run's start held half-done, for the test to look at."""

    def __init__(self, outcomes: list[str], nodes: int) -> None:
        super().__init__(outcomes, nodes=nodes)
        self.gate = asyncio.Event()
        self.waiting = 0

    async def submit(self, request: SubmitRequest) -> JobObservation:
        self.waiting += 1
        await self.gate.wait()
        return await super().submit(request)


async def test_runs_starting_leave_a_worker_quiet(skipping_env: WorkflowEnvironment) -> None:
    """A run's first submit is no recovery: 10,000 starting must not keep the heap frozen."""
    scheduler = SlowSubmits(["run"], nodes=8)
    quiet = Quiet(after=0.5)
    queue = f"q-{uuid.uuid4().hex[:8]}"
    spec = make_spec(nodes=1)
    async with build_worker(skipping_env.client, scheduler, WorkerConfig(), task_queue=queue, interceptors=[quiet]):
        handle = await skipping_env.client.start_workflow(
            "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
        )
        await until(lambda: scheduler.waiting == 1)  # the first submit is under way
        assert quiet()
        scheduler.gate.set()
        await until(lambda: scheduler.submits == 1)
        await handle.cancel()


async def test_a_worker_is_quiet_while_its_runs_are_only_watched(skipping_env: WorkflowEnvironment) -> None:
    """The moment the worker walks its whole heap (worker/gc_pauses.py): not during a recovery."""
    scheduler = CountingScheduler(["run"], nodes=8)
    scheduler.later = ["run"]
    specs = [make_spec(nodes=1, watch_heartbeat_timeout_seconds=600) for _ in range(2)]
    counts, quiet = Counts(), Quiet(after=0.5)
    queue = f"q-{uuid.uuid4().hex[:8]}"
    async with build_worker(
        skipping_env.client, scheduler, WorkerConfig(), task_queue=queue, interceptors=[counts, quiet]
    ):
        handles = [
            await skipping_env.client.start_workflow(
                "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
            )
            for spec in specs
        ]
        await until(lambda: all(counts.heartbeats[s.run_id] >= 1 for s in specs))
        await until(quiet)  # submitted: only the watches run
        attempt = (await status_of(handles[0])).attempts[0]
        scheduler.fail(attempt.job_id, attempt.nodes[0])
        await until(lambda: not quiet())  # its recovery's activities
        await until_recovered(handles[0])
        await until(quiet)
        for handle in handles:
            await handle.cancel()
