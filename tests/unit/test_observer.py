"""The observer on its own (activities/observer/): level-triggered first looks, wake-ups only on
news, an attempt's read state carried from one watch to the next, a run's newer watch
superseding its older one. Against the scripted scheduler and a real log file."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from recovery.activities.logwatch import LogReading
from recovery.activities.observer import loop
from recovery.activities.observer.loop import Observer
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import (
    Attempt,
    JobObservation,
    JobState,
    SubmitRequest,
    TaskResult,
    WatchInput,
    WatchResult,
)
from recovery.workflows.policy import Hang, Policy
from tests.fakes import ScriptedScheduler

FAST_HANG = Policy(hang=Hang(min_timeout=timedelta(seconds=0.5), max_timeout=timedelta(seconds=0.5)))


async def a_job(scheduler: ScriptedScheduler, log: Path | None = None) -> Attempt:
    job = await scheduler.submit(SubmitRequest(script="", name="t", nodes=1, workdir="/tmp", token="t"))
    if log is not None:
        scheduler.jobs[job.job_id] = job.model_copy(update={"output_path": str(log)})
    return Attempt(index=0, job_id=job.job_id, nodes=job.nodes)


def watch(attempt: Attempt, run_id: str = "run", policy: Policy | None = None) -> WatchInput:
    return WatchInput(run_id=run_id, attempt=attempt, poll_seconds=0.01, policy=policy or Policy())


def observer_of(scheduler: ScriptedScheduler) -> Observer:
    return Observer(CoalescingObserver(scheduler, 0.001), LogReading())


async def news(observer: Observer, inp: WatchInput, timeout: float = 10.0) -> WatchResult:
    waiter = observer.attach(inp)
    try:
        return await asyncio.wait_for(waiter, timeout)
    finally:
        observer.detach(inp.run_id, waiter)


async def looks(observer: Observer, more: int) -> None:
    """Until the observer has looked `more` times again."""
    target = observer.looks + more
    while observer.looks < target:
        await asyncio.sleep(0.01)


async def test_a_job_that_failed_before_anyone_watched_wakes_its_run_on_the_first_look() -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempt = await a_job(scheduler)
    job = scheduler.jobs[attempt.job_id]
    failed = TaskResult(node="node1", exit_code=1)
    scheduler.jobs[attempt.job_id] = job.model_copy(update={"state": JobState.FAILED, "tasks": [failed]})
    observer = observer_of(scheduler)
    result = await news(observer, watch(attempt))
    assert result.event == "ended" and result.symptom is not None and result.symptom.kind == "crash"
    assert observer.looks == 1 and observer.wakes == 1


async def test_a_running_job_wakes_nobody_and_one_read_serves_every_run() -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempts = [await a_job(scheduler) for _ in range(3)]
    observer = observer_of(scheduler)
    waiters = [observer.attach(watch(a, run_id=f"run{i}")) for i, a in enumerate(attempts)]
    while observer.looks < 20:
        await asyncio.sleep(0.01)
    assert not any(w.done() for w in waiters) and observer.wakes == 0
    assert observer.coalescer.polls <= observer.looks, "one scheduler read per look, for all three"
    for i, w in enumerate(waiters):
        observer.detach(f"run{i}", w)
    assert observer.watching == 0


async def test_first_progress_then_a_hang_on_the_state_carried_from_watch_to_watch(tmp_path: Path) -> None:
    log = tmp_path / "job.out"
    log.write_text("recovery-progress step=1\n")
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempt = await a_job(scheduler, log)
    observer = observer_of(scheduler)
    first = await news(observer, watch(attempt, policy=FAST_HANG))
    assert first.event == "progress" and first.first_step == 1
    # The run records the first step and watches the same attempt again: the observer carries
    # on from what it read (the hang detector is already trained) and finds the silence.
    again = attempt.model_copy(update={"first_step": 1})
    hung = await news(observer, watch(again, policy=FAST_HANG))
    assert hung.event == "hang" and hung.symptom is not None
    assert "no progress" in hung.symptom.evidence[0].text
    assert hung.log_offset == len(log.read_bytes()), "the successor's output starts where this one stopped"


async def test_a_newer_watch_of_a_run_supersedes_the_older_one() -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempt = await a_job(scheduler)
    observer = observer_of(scheduler)
    old = observer.attach(watch(attempt))
    new = observer.attach(watch(attempt))
    await asyncio.sleep(0)
    assert old.cancelled() and not new.done()
    observer.detach("run", old)  # the old watch's late goodbye leaves the new one attached
    assert observer.watching == 1
    observer.detach("run", new)


class SlowReads(ScriptedScheduler):
    """A scheduler whose reads take their time: each answers with the jobs as they were when it
    began, after a gate opens, so the world can change while a read is on its way."""

    def __init__(self) -> None:
        super().__init__(["run"], later=["run"])
        self.reading = asyncio.Event()
        self.gate = asyncio.Event()

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        found = await super().observe(job_ids)
        self.reading.set()
        await self.gate.wait()
        return found


def failed(scheduler: ScriptedScheduler, attempt: Attempt) -> None:
    job = scheduler.jobs[attempt.job_id]
    bad = TaskResult(node="node1", exit_code=1)
    scheduler.jobs[attempt.job_id] = job.model_copy(update={"state": JobState.FAILED, "tasks": [bad]})


async def test_a_successor_is_not_judged_on_a_read_from_before_its_requeue() -> None:
    """The run's next attempt keeps the job id after a requeue: a read begun while its
    predecessor lay FAILED must not end the successor (once, under CI load, a third 'crash')."""
    scheduler = SlowReads()
    first = await a_job(scheduler)
    failed(scheduler, first)
    observer = observer_of(scheduler)
    old = observer.attach(watch(first))
    await scheduler.reading.wait()  # a read of the FAILED job is on its way
    await scheduler.requeue_hold(first.job_id)
    successor = first.model_copy(update={"index": 1, "restart_count": 1})
    new = observer.attach(watch(successor))
    scheduler.gate.set()
    looks = observer.looks
    while observer.looks < looks + 5:
        await asyncio.sleep(0.01)
    assert old.cancelled() and not new.done(), "the successor, held in the queue, has no news"
    observer.detach("run", new)


async def test_a_read_that_lags_behind_the_attempt_is_no_news() -> None:
    """A scheduler's answer that still shows the previous attempt (restart count below the
    attempt's: a cache, a replica behind) waits for one that has caught up."""
    scheduler = ScriptedScheduler(["run"], later=["run"])
    first = await a_job(scheduler)
    failed(scheduler, first)  # the scheduler still shows attempt 0's end
    successor = first.model_copy(update={"index": 1, "restart_count": 1})
    observer = observer_of(scheduler)
    waiter = observer.attach(watch(successor))
    while observer.looks < 5:
        await asyncio.sleep(0.01)
    assert not waiter.done()
    job = scheduler.jobs[first.job_id]
    scheduler.jobs[first.job_id] = job.model_copy(update={"restart_count": 1})  # caught up: it failed again
    result = await asyncio.wait_for(waiter, 10)
    observer.detach("run", waiter)
    assert result.symptom is not None and result.symptom.kind == "crash"
    assert result.symptom.attempt_index == 1


async def test_the_loop_ends_with_the_last_watch_and_the_next_watch_starts_it() -> None:
    """No loop is left pending for a worker's shutdown (asyncio's 'Task was destroyed but it is
    pending!' on CI), and a watch after a quiet spell is served as the first was."""
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempt = await a_job(scheduler)
    observer = observer_of(scheduler)
    waiter = observer.attach(watch(attempt))
    while observer.looks < 2:
        await asyncio.sleep(0.01)
    observer.detach("run", waiter)
    for _ in range(500):
        if not observer.looking:
            break
        await asyncio.sleep(0.01)
    assert not observer.looking
    failed(scheduler, attempt)
    result = await news(observer, watch(attempt))
    assert result.symptom is not None and result.symptom.kind == "crash"


async def test_a_look_at_many_attempts_gives_the_event_loop_back_between_slices() -> None:
    """A look judging thousands of attempts held the worker's event loop for it all: every
    activity completion and workflow task waited. It judges them in slices."""
    from recovery.activities.observer.loop import JUDGE_SLICE

    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempts = [await a_job(scheduler) for _ in range(2 * JUDGE_SLICE + 50)]
    for attempt in attempts:
        failed(scheduler, attempt)
    observer = observer_of(scheduler)
    waiters = [observer.attach(watch(a, run_id=f"run{i}")) for i, a in enumerate(attempts)]
    first = await asyncio.wait_for(waiters[0], 10)
    assert first.event == "ended"
    assert not waiters[-1].done(), "the first run heard its news while the look went on with the others"
    results = await asyncio.wait_for(asyncio.gather(*waiters), 10)
    assert all(r.event == "ended" for r in results) and observer.looks == 1
    for i, w in enumerate(waiters):
        observer.detach(f"run{i}", w)


def reads_of(observer: Observer, run_id: str) -> list[float]:
    """The times the run's log is read from now on."""
    log = observer._watched[run_id].log
    assert log is not None
    times: list[float] = []
    poll = log.poll

    def counted(now: float) -> None:
        times.append(now)
        poll(now)

    log.poll = counted  # type: ignore[method-assign]
    return times


async def test_while_a_recovery_is_under_way_an_idle_runs_log_reads_wait_but_nothing_is_found_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a burst of failures the log reads of 10,000 idle runs held the event loop the
    recoveries' tasks wait on. While the worker is not quiet, an idle run's due read waits (up
    to BUSY_DEFER_SECONDS), but never past its hang deadline: the hang is found as late as ever.
    A first progress is read at the usual pace, and a job that ends is judged at once."""
    monkeypatch.setattr(loop, "BUSY_DEFER_SECONDS", 5.0)
    logs = {name: tmp_path / f"{name}.out" for name in ("idle", "hanging", "starting")}
    logs["idle"].write_text("recovery-progress step=1\n")
    logs["hanging"].write_text("recovery-progress step=1\n")
    logs["starting"].write_text("")
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempts = {name: await a_job(scheduler, log) for name, log in logs.items()}
    ending = await a_job(scheduler)
    calm = {"quiet": True}
    observer = Observer(CoalescingObserver(scheduler, 0.001), LogReading(), lambda: calm["quiet"])
    slow = Policy(hang=Hang(min_timeout=timedelta(seconds=60), max_timeout=timedelta(seconds=60)))
    policies = {"idle": slow, "hanging": FAST_HANG}
    for name in policies:
        first = await news(observer, watch(attempts[name], run_id=name, policy=policies[name]))
        assert first.event == "progress"
    calm["quiet"] = False  # a recovery is under way on this worker
    waiters = {
        name: observer.attach(watch(attempts[name].model_copy(update={"first_step": 1}), run_id=name, policy=policy))
        for name, policy in policies.items()
    }
    waiters["starting"] = observer.attach(watch(attempts["starting"], run_id="starting", policy=slow))
    waiters["ending"] = observer.attach(watch(ending, run_id="ending"))
    await looks(observer, 2)
    idle_reads = reads_of(observer, "idle")
    hung = await asyncio.wait_for(waiters["hanging"], 2)
    assert hung.event == "hang", "found by its deadline, not 5 s later"
    logs["starting"].write_text("recovery-progress step=1\n")
    started = await asyncio.wait_for(waiters["starting"], 2)
    assert started.event == "progress"
    failed(scheduler, ending)
    ended = await asyncio.wait_for(waiters["ending"], 2)
    assert ended.event == "ended" and ended.symptom is not None
    assert not idle_reads, "the idle run's log waits while the recovery goes on"
    await asyncio.sleep(5.5)
    assert idle_reads, "and is read at most BUSY_DEFER_SECONDS late"
    assert not waiters["idle"].done()
    for name, waiter in waiters.items():
        observer.detach(name, waiter)
