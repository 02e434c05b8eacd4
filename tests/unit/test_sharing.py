"""Sharing watches among the workers of a task queue (worker/sharing.py): how many a worker hands
on, which workers count as live, and which watches the observer lets go of (only those that lose
nothing by moving). The move itself, between two real workers, is tests/embedded/test_watch_sharing.py."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from recovery.activities.observer.loop import HAND_ON_MAX_TRY, HAND_ON_QUIET_SECONDS, HandedOn
from recovery.worker.sharing import LIVE_SECONDS, MARGIN, PER_LOOK, live_workers, to_hand_on
from tests.fakes import ScriptedScheduler
from tests.unit.test_observer import a_job, observer_of, watch

HOST = socket.gethostname()


@pytest.mark.parametrize(
    ("held", "running", "workers", "handed"),
    [
        (10_000, 10_000, 1, 0),  # alone: nobody to hand to
        (5_000, 10_000, 2, 0),  # its share already
        (5_400, 10_000, 2, 0),  # within a tenth of its share
        (5_600, 10_000, 2, 600 if PER_LOOK >= 600 else PER_LOOK),
        (10_000, 10_000, 2, PER_LOOK),  # a second worker joined: the surplus goes a look at a time
        (12, 12, 2, 0),  # 6 over: within the margin
        (24, 24, 2, 12),
        (24, 24, 3, 16),
        (0, 24, 2, 0),
    ],
)
def test_a_worker_hands_on_what_it_holds_over_its_share_and_a_margin(
    held: int, running: int, workers: int, handed: int
) -> None:
    assert to_hand_on(held, running, workers) == handed


def test_the_margin_keeps_a_few_runs_where_they_are() -> None:
    assert to_hand_on(2 * MARGIN, 2 * MARGIN, 2) == 0
    assert to_hand_on(2 * MARGIN + 1, 2 * MARGIN + 1, 2) == 0  # MARGIN over its share
    assert to_hand_on(2 * MARGIN + 2, 2 * MARGIN + 2, 2) == MARGIN + 1


def test_live_workers_are_the_distinct_pollers_heard_from_lately_and_alive() -> None:
    now = 1_000_000.0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = f"{os.getpid()}@{HOST}"
    other = f"{os.getppid()}@{HOST}"
    pollers = [
        (me, now),
        (other, now - 5),
        (other, now - 1),  # one worker's several pollers count once
        (f"{dead.pid}@{HOST}", now),  # its process is gone
        ("4242@elsewhere", now - LIVE_SECONDS - 1),  # not heard from lately
        ("4343@elsewhere", now - 30),  # another host's: its polls say it lives
    ]
    assert live_workers(pollers, me, now, HOST) == 3
    assert live_workers([], me, now, HOST) == 1, "a worker not listed yet counts itself"


async def test_only_watches_that_lose_nothing_by_moving_are_handed_on(tmp_path: Path) -> None:
    scheduler = ScriptedScheduler(["run"], later=["run"])
    progressing = tmp_path / "progressing.out"
    progressing.write_text("recovery-progress step=1\n")
    silent = tmp_path / "silent.out"
    silent.write_text("loading the dataset\n")  # running, no step yet: its hang clock has begun
    trained = (await a_job(scheduler, progressing)).model_copy(update={"first_step": 1})
    starting = await a_job(scheduler, silent)
    pending = await a_job(scheduler)  # no output file yet: nothing read
    retried = await a_job(scheduler)  # the same, but its next retry would wait 4 s, unwatched
    observer = observer_of(scheduler)
    waiters = {
        name: observer.attach(watch(attempt, run_id=name), tries=tries)
        for name, attempt, tries in (
            ("trained", trained, 1),
            ("starting", starting, 1),
            ("pending", pending, HAND_ON_MAX_TRY),
            ("retried", retried, HAND_ON_MAX_TRY + 1),
        )
    }
    while observer.looks < 3:
        await asyncio.sleep(0.01)
    assert not any(w.done() for w in waiters.values())

    assert observer.hand_on(1) == ["trained"]
    assert observer.hand_on(10) == ["pending"], "two of the four could move"
    await asyncio.sleep(0)
    for name in ("trained", "pending"):
        with pytest.raises(HandedOn):
            waiters[name].result()
    assert not waiters["starting"].done() and not waiters["retried"].done()
    assert observer.hand_on(10) == [], "a watch handed on is not handed on twice"
    for name, waiter in waiters.items():
        observer.detach(name, waiter)


async def test_a_watch_silent_for_longer_than_the_quiet_limit_stays(tmp_path: Path) -> None:
    log = tmp_path / "job.out"
    log.write_text("recovery-progress step=1\n")
    scheduler = ScriptedScheduler(["run"], later=["run"])
    attempt = (await a_job(scheduler, log)).model_copy(update={"first_step": 1})
    observer = observer_of(scheduler)
    waiter = observer.attach(watch(attempt))
    while observer.looks < 3:
        await asyncio.sleep(0.01)
    assert observer.watching == 1
    watched = observer._watched["run"]  # the state a look keeps
    assert watched.log is not None and watched.log.hang.last_progress_at is not None
    now = watched.log.hang.last_progress_at
    assert watched.movable(now + HAND_ON_QUIET_SECONDS - 1, HAND_ON_QUIET_SECONDS)
    assert not watched.movable(now + HAND_ON_QUIET_SECONDS + 1, HAND_ON_QUIET_SECONDS)
    observer.detach("run", waiter)
