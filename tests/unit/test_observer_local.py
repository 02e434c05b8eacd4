"""The observer on the embedded local scheduler, a real daemon: a list-and-watch that reads every
watched job once and then only the jobs that changed, and still wakes each run on its news
(an end, a requeued successor's end, a daemon restart)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from recovery.activities.logwatch import LogReading
from recovery.activities.observer import loop
from recovery.activities.observer.loop import Observer
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.workflows.models import Attempt, JobObservation, JobState, WatchInput, WatchResult
from recovery.workflows.policy import Policy
from tests.unit.test_local_cluster import SLEEPER, ended, home, request, sched, wait_files, wait_for, workdir
from tests.unit.test_observer import looks

__all__ = ["home", "sched", "workdir"]  # the real daemon's fixtures


def attempt_of(job: JobObservation, index: int = 0) -> Attempt:
    return Attempt(index=index, job_id=job.job_id, nodes=job.nodes, restart_count=job.restart_count)


def watch(attempt: Attempt, run_id: str) -> WatchInput:
    return WatchInput(run_id=run_id, attempt=attempt, poll_seconds=0.02, policy=Policy())


async def three_running(sched: LocalScheduler, workdir: Path) -> list[JobObservation]:
    """Three sleeping jobs, each on its node, once the daemon says they run."""
    jobs = []
    for i in range(3):
        (workdir / str(i)).mkdir()
        jobs.append(await sched.submit(request(workdir / str(i), SLEEPER)))
    await wait_files(*(workdir / str(i) / f"pid.node{i + 1}" for i in range(3)))
    return [await wait_for(sched, j.job_id, lambda o: o.state is JobState.RUNNING) for j in jobs]


async def test_idle_jobs_are_read_once_then_only_what_changed_wakes_a_run(sched: LocalScheduler, workdir: Path) -> None:
    running = await three_running(sched, workdir)
    observer = Observer(CoalescingObserver(sched, 0.001), LogReading())
    waiters = [observer.attach(watch(attempt_of(job), f"run{i}")) for i, job in enumerate(running)]
    await looks(observer, 20)
    assert observer.wakes == 0 and not any(w.done() for w in waiters)
    assert observer.coalescer.polls == 1, "every watched job read once; since then only changes"

    await sched.cancel(running[1].job_id)
    result: WatchResult = await asyncio.wait_for(waiters[1], 10)
    assert result.observation.state is JobState.CANCELLED and result.symptom is not None
    await looks(observer, 5)
    assert not waiters[0].done() and not waiters[2].done() and observer.coalescer.polls == 1
    for i, w in enumerate(waiters):
        observer.detach(f"run{i}", w)


async def test_a_requeued_successor_is_judged_on_its_own_attempt(sched: LocalScheduler, workdir: Path) -> None:
    """The successor keeps the job id: its watch must see the requeue and its own end, never the
    predecessor's FAILED kept in the observer's memory."""
    script = '[ "$SLURM_RESTART_COUNT" = 0 ] && exit 3\nexit 0\n'
    job = await sched.submit(request(workdir, script))
    observer = Observer(CoalescingObserver(sched, 0.001), LogReading())
    first = await asyncio.wait_for(observer.attach(watch(attempt_of(job), "run")), 10)
    assert first.observation.state is JobState.FAILED and first.symptom is not None

    await sched.requeue_hold(job.job_id)
    held = await wait_for(sched, job.job_id, lambda o: o.restart_count == 1)
    successor = observer.attach(watch(attempt_of(held, index=1), "run"))
    await looks(observer, 10)
    assert not successor.done(), "held in the queue: no news"
    await sched.release(job.job_id)
    second = await asyncio.wait_for(successor, 10)
    assert (second.observation.state, second.observation.restart_count) == (JobState.COMPLETED, 1)
    assert second.symptom is None
    observer.detach("run", successor)


async def test_after_a_daemon_restart_the_observer_reads_everything_again(sched: LocalScheduler, workdir: Path) -> None:
    """A restarted daemon cannot say what changed since an old cursor: the next look reads every
    watched job, and the job the restart ended wakes its run."""
    job = await sched.submit(request(workdir, SLEEPER))
    await wait_files(workdir / "pid.node1")
    running = await wait_for(sched, job.job_id, lambda o: o.state is JobState.RUNNING)
    observer = Observer(CoalescingObserver(sched, 0.001), LogReading())
    waiter = observer.attach(watch(attempt_of(running), "run"))
    await looks(observer, 5)
    daemon = local_cluster.daemon_pid()
    assert daemon is not None
    os.kill(daemon, signal.SIGKILL)
    assert local_cluster.start(nodes=4).started
    result = await asyncio.wait_for(waiter, 20)
    assert result.observation.state is JobState.NODE_FAIL
    assert observer.coalescer.polls >= 2, "a full read after the restart"
    observer.detach("run", waiter)
    assert (await wait_for(sched, job.job_id, ended)).reason == "local cluster daemon restarted"


async def test_the_periodic_read_of_every_job_is_a_slice_a_look_and_misses_nothing(
    sched: LocalScheduler, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read in one go, the periodic read of 10,000 jobs held up the look that should have seen a
    burst of failures. It is read a slice a look, and what changes meanwhile still wakes its run."""
    monkeypatch.setattr(loop, "FULL_READ_SLICE", 1)
    monkeypatch.setattr(loop, "FULL_READ_SECONDS", 0.1)
    running = await three_running(sched, workdir)
    observer = Observer(CoalescingObserver(sched, 0.001), LogReading())
    reads: list[int] = []  # the look each read of jobs was made in
    real = observer.coalescer.observe

    async def observe(job_ids: list[str]) -> dict[str, JobObservation]:
        reads.append(observer.looks)
        return await real(job_ids)

    monkeypatch.setattr(observer.coalescer, "observe", observe)
    waiters = [observer.attach(watch(attempt_of(job), f"run{i}")) for i, job in enumerate(running)]
    await looks(observer, 30)
    again = [look for look in reads if look > 0]
    assert len(again) >= 6, "every job read again, more than once"
    assert len(set(again)) == len(again), "at most one slice a look"
    assert observer.wakes == 0, "a read again is no news"

    await sched.cancel(running[1].job_id)
    result: WatchResult = await asyncio.wait_for(waiters[1], 10)
    assert result.observation.state is JobState.CANCELLED
    await looks(observer, 10)
    assert not waiters[0].done() and not waiters[2].done()
    for i, w in enumerate(waiters):
        observer.detach(f"run{i}", w)
