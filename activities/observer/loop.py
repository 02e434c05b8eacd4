"""The worker's one observer: a single loop that looks at every watched attempt, so an idle run
costs no wake-ups of its own.

Each `watch_attempt` activity attaches its attempt and waits, heartbeating only as often as its
heartbeat timeout needs. The loop looks, every `poll_seconds` (the smallest any watch asked
for; longer past 2,500 watches, see JOB_READS_PER_SECOND), at the scheduler once for all
watched jobs (through the coalescer, so the other activities' reads share that call) and reads
the logs that are due, incrementally, keeping each attempt's hang and straggler state in
memory. It wakes a watch (completes its future, so the activity returns and the run's workflow
runs) only on news: the attempt ended or was requeued, made its first progress, hangs or
straggles.

It is level-triggered: each look judges what is true now (the scheduler's state, the log read
from the attempt's recorded offset), not which events it saw. A watch attached after a worker
loss (Temporal retries the lost activity on a live worker) or after the run's safety timer is
judged on its first look, so a job that ended meanwhile wakes its run at once.

A scheduler that can say what changed (`Watchable`: the local one) is read as a list-and-watch:
every watched job once, then only the jobs that changed since the last answer, applied to the
jobs held in memory, and every job again each FULL_READ_SECONDS. Reading all 1,000 watched jobs
four times a second was most of an idle worker's CPU (parsing 4,000 observations a second).
A look then judges only the attempts something can have changed for: those whose job changed,
those whose log is due (a heap, by when), those attached since the last look; every one after
a full read. An attempt none of that touched would be judged as it was last time: no news. So
at 10,000 watches a look costs what changed, and the loop keeps its pace (a failure is seen
within `poll_seconds`), where walking every watch each look made it look once a second.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from recovery.activities import metrics
from recovery.activities.logwatch import LogReading
from recovery.activities.observer.news import forgotten
from recovery.activities.observer.watched import Watched
from recovery.activities.schedulers.base import JobNotFound, SchedulerUnavailable, Watchable
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import JobObservation, WatchInput, WatchResult

log = structlog.get_logger("recovery.observer")

# Log reads a second, at most: a few runs are read every poll, 10,000 runs each every 5 s (a
# hang's timeout is minutes; the scheduler, which tells of ended jobs, is still polled each time).
LOG_READS_PER_SECOND = 2000.0
# Jobs asked about a second, at most: one read of every job each poll up to 2,500 runs at the
# local tuning's 0.25 s, then each read covers them all a little less often (10,000: every 1 s).
JOB_READS_PER_SECOND = 10000.0
# How long an attempt's read state outlives its watch, for the run's next watch of the same
# attempt (after its first progress, after the safety timer) to carry on without a re-read.
KEEP_SECONDS = 600.0
# A list-and-watch reads every watched job again this often (what a missed change would cost),
# one slice of FULL_READ_SLICE jobs a look: the looks between go on finding what changed. Read
# in one go, the 20 slices of 10,000 jobs held up the look that should have seen a burst of
# failures (the watches of 100 failed jobs woke 1.3 s after the failure, not 0.2 s).
FULL_READ_SECONDS = 60.0
FULL_READ_SLICE = 500
IDLE_POLL_SECONDS = 1.0  # the pace when nothing asks: the last watch let go (the loop then ends)
# A look gives the event loop back after judging this many attempts. At 5,000 watches a look
# reads 500-2,000 logs (about 70 us each) in one go, and every activity completion and workflow
# task of the worker waited behind it: in a burst of failures the observer held 58 % of a
# worker's samples (py-spy), each recovery's ten hops through the loop waiting on it.
JUDGE_SLICE = 100
# While the worker recovers runs (its `quiet()` is false), a due log read may wait up to this
# long: the recoveries' workflow tasks and activities run on the event loop the reads hold. At
# 10,000 watches the reads are 2,000 a second, about a seventh of that loop, all through a burst
# of failures. Only an attempt whose first progress is recorded waits, never past its hang
# deadline nor while a slowdown is followed (`Watched.read_by`); an ended job is judged at once.
BUSY_DEFER_SECONDS = 15.0
# A watch handed on to another worker (`hand_on`) starts its hang clock afresh there: only one
# whose log showed progress this recently is handed on (its hang is then found at most this much
# later), or one not reading a log yet.
HAND_ON_QUIET_SECONDS = 60.0
# Nor a watch on its third try or later: Temporal waits 1 s before a watch's second try, 2 s
# before its third and twice as long each time after (to 30 s), and the run is watched by no one
# meanwhile.
HAND_ON_MAX_TRY = 2


@dataclass
class _Reread:
    """A read of every watched job, a slice a look: from `cursor` on, `at` of `job_ids` read."""

    cursor: str
    job_ids: list[str]
    at: int = 0
    jobs: dict[str, JobObservation] = field(default_factory=dict)


class HandedOn(Exception):
    """This worker let go of the watch for another worker of its task queue to take."""


class Observer:
    def __init__(
        self, coalescer: CoalescingObserver, reading: LogReading, quiet: Callable[[], bool] | None = None
    ) -> None:
        self.coalescer = coalescer
        self.reading = reading
        # Whether no recovery is under way on this worker (worker/gc_pauses.Quiet); none: always.
        self.quiet = quiet
        self.looks = 0  # looks taken, each at every watched attempt: for tests and metrics
        self.wakes = 0  # watches woken with news
        self._watched: dict[str, Watched] = {}  # by run id: a run has one watch at a time
        self._kept: dict[str, Watched] = {}  # let go of, kept for the run's next watch
        # How many watches asked for each poll interval: the pace without a walk of 10,000 watches.
        self._polls: Counter[float] = Counter()
        self._task: asyncio.Task[None] | None = None
        # The list-and-watch (a Watchable scheduler): the jobs as of `_cursor`, each current.
        scheduler = coalescer.scheduler
        self._watchable: Watchable | None = scheduler if isinstance(scheduler, Watchable) else None
        self._jobs: dict[str, JobObservation] = {}
        self._cursor: str | None = None
        self._full_read_at = 0.0
        self._reread: _Reread | None = None  # the periodic read of every watched job, under way
        # What a look judges without walking every watch: the runs watching each job, the logs
        # by when they are due next (entries of a watch gone or read since are skipped), and the
        # watches attached since the last look began.
        self._by_job: dict[str, set[str]] = {}
        self._due: list[tuple[float, int, Watched]] = []
        self._pushes = itertools.count()  # the heap's tie-break: never compare two Watched
        self._fresh: list[Watched] = []
        self._attached = itertools.count(1)

    @property
    def watching(self) -> int:
        return len(self._watched)

    @property
    def looking(self) -> bool:
        """Whether its loop runs (it does while anything is watched)."""
        return self._task is not None and not self._task.done()

    def attach(self, inp: WatchInput, tries: int = 1) -> asyncio.Future[WatchResult]:
        """Watch the run's attempt from now on; its news completes the returned future. A run's
        new watch supersedes its old one (a retry, or a re-arm whose cancel is still on its way).
        `tries`: the watch activity's attempt number (a retry after a lost worker, a hand-on)."""
        waiter: asyncio.Future[WatchResult] = asyncio.get_running_loop().create_future()
        old = self._unwatch(inp.run_id) or self._kept.pop(inp.run_id, None)
        watched = Watched(inp, waiter, seq=next(self._attached), tries=tries)
        if old is not None:
            if not old.waiter.done():
                old.waiter.cancel()
            if old.same_attempt(inp):
                watched.log = old.log  # carry on where the last watch stopped reading
        self._watched[inp.run_id] = watched
        self._polls[inp.poll_seconds] += 1
        self._by_job.setdefault(watched.job_id, set()).add(inp.run_id)
        self._fresh.append(watched)
        self._schedule_read(watched)  # due now: its first look reads the log and judges it
        self._start()
        return waiter

    def detach(self, run_id: str, waiter: asyncio.Future[WatchResult]) -> None:
        """The watch is over (woken, cancelled or failed): keep what was read for its next one."""
        watched = self._watched.get(run_id)
        if watched is None or watched.waiter is not waiter:
            return
        self._unwatch(run_id)
        watched.idle_since = time.monotonic()
        self._kept[run_id] = watched

    def hand_on(self, count: int) -> list[str]:
        """End up to `count` watches with `HandedOn`, so that Temporal retries them on whichever
        worker of the queue polls first; the runs whose watch was. Only those that lose nothing by moving:
        not reading a log yet, or a log whose last progress is recent (`HAND_ON_QUIET_SECONDS`),
        and not retried twice already (`HAND_ON_MAX_TRY`)."""
        now = time.monotonic()
        handed: list[str] = []
        for watched in list(self._watched.values()):
            if len(handed) >= count:
                break
            if watched.waiter.done() or watched.tries > HAND_ON_MAX_TRY:
                continue
            if not watched.movable(now, HAND_ON_QUIET_SECONDS):
                continue
            watched.waiter.set_exception(HandedOn(f"handed on to another worker (attempt {watched.inp.attempt.index})"))
            handed.append(watched.inp.run_id)
        return handed

    def _unwatch(self, run_id: str) -> Watched | None:
        watched = self._watched.pop(run_id, None)
        if watched is not None:
            poll = watched.inp.poll_seconds
            self._polls[poll] -= 1
            if not self._polls[poll]:
                del self._polls[poll]
            runs = self._by_job[watched.job_id]
            runs.discard(run_id)
            if not runs:
                del self._by_job[watched.job_id]
        return watched

    def _schedule_read(self, watched: Watched) -> None:
        heapq.heappush(self._due, (watched.next_read, next(self._pushes), watched))

    def _start(self) -> None:
        """Started by the first watch of the worker, and again should it ever have stopped."""
        if self._task is None or self._task.done():
            # A context of its own: not the first watch's (its activity info, its run's log fields).
            self._task = asyncio.create_task(self._run(), name="recovery-observer", context=contextvars.Context())
            self._task.add_done_callback(self._stopped)

    def _stopped(self, task: asyncio.Task[None]) -> None:
        """The loop failed: every waiting watch fails with its error, so Temporal retries them
        (and their retries start the loop again). Nothing waits on a loop that is gone."""
        if task is not self._task:
            return  # a loop that ended idle, and a watch since started the next one
        error = None if task.cancelled() else task.exception()
        for watched in self._watched.values():
            if not watched.waiter.done():
                if error is None:
                    watched.waiter.cancel()
                else:
                    watched.waiter.set_exception(error)

    async def _run(self) -> None:
        # Ends once nothing is watched (the next watch starts it again): no task is left pending
        # for a worker's shutdown to find, and an idle worker runs no loop at all.
        while self._watched:
            await self.look()
            await asyncio.sleep(self._pace())

    def _pace(self) -> float:
        """Seconds between looks: the shortest poll any watch asked for; longer at scale when
        each look reads every watched job (a scheduler that cannot say what changed)."""
        asked = min(self._polls, default=IDLE_POLL_SECONDS)
        if self._watchable is not None:
            return asked
        return max(asked, len(self._watched) / JOB_READS_PER_SECOND)

    async def look(self) -> None:
        """One look: one scheduler read, then a judgement of every watched attempt it or a due
        log read can have news for. None attached after the read began is judged on it."""
        horizon = next(self._attached)  # every watch attached from now on has a higher seq
        fresh, self._fresh = self._fresh, []
        found, changed = await self._observe(fresh)
        now = time.monotonic()
        self.looks += 1
        spacing = max(self._pace(), len(self._watched) / LOG_READS_PER_SECOND)
        due = self._postponing(self._due_reads(now, horizon), now)
        if changed is None:  # a full read: every watch, the due ones (taken off the heap) among them
            judged = [w for w in self._watched.values() if w.seq < horizon]
        else:
            # A changed job whose log is not due (or whose read waits) is judged too, on the
            # scheduler's news: an ended job's log is read anyway.
            mine = (self._watched[run] for job in changed for run in self._by_job.get(job, ()))
            judged = [*due, *(w for w in mine if w.seq < horizon and now < w.next_read)]
        for i, watched in enumerate(judged):
            if i and i % JUDGE_SLICE == 0:
                await asyncio.sleep(0)
            # Woken already, or superseded while the read was on its way (or while this look gave
            # the loop back): a newer watch of the run (its successor attempt keeps the job id
            # after a requeue) is judged on the next look, never on a read from before it attached.
            if watched.waiter.done() or self._watched.get(watched.inp.run_id) is not watched:
                continue
            obs = None if found is None else found.get(watched.job_id) or forgotten(watched.inp.attempt)
            read = now >= watched.next_read
            if read:
                watched.next_read, watched.waited = now + spacing, False
                self._schedule_read(watched)
            try:
                news = watched.look(obs, now, read, self.reading)
            except OSError as e:  # this run's log alone: its watch fails and is retried
                watched.waiter.set_exception(e)
                continue
            if news is not None:
                self.wakes += 1
                watched.waiter.set_result(news)
        self._forget(now)

    def _postponing(self, due: list[Watched], now: float) -> list[Watched]:
        """The due log reads to make now. While a recovery is under way on this worker, those
        that may wait (`Watched.read_by`) are put off, once each, and the rest read."""
        if self.quiet is None or self.quiet():
            return due
        now_due: list[Watched] = []
        for watched in due:
            later = watched.read_by(BUSY_DEFER_SECONDS)
            if later is None or later <= now:
                now_due.append(watched)
                continue
            watched.next_read, watched.waited = later, True
            self._schedule_read(watched)
        return now_due

    def _due_reads(self, now: float, horizon: int) -> list[Watched]:
        """The watches whose log is due, taken off the heap (each is pushed again once read);
        one attached after the look's read began stays due, for the next look."""
        due: list[Watched] = []
        later: list[Watched] = []
        while self._due and self._due[0][0] <= now:
            when, _, watched = heapq.heappop(self._due)
            if watched.next_read != when or self._watched.get(watched.inp.run_id) is not watched:
                continue  # read since (a newer entry stands for it), or no longer watched
            (due if watched.seq < horizon else later).append(watched)
        for watched in later:
            self._schedule_read(watched)
        return due

    async def _observe(self, fresh: list[Watched]) -> tuple[dict[str, JobObservation] | None, set[str] | None]:
        """The jobs now (a job missing: the scheduler forgot it; None: the scheduler is away),
        and the ids of those that may have changed since the last look (None: any of them)."""
        try:
            if self._watchable is not None:
                return await self._changed(self._watchable, fresh)
            return await self.coalescer.observe(sorted(self._by_job)), None
        except SchedulerUnavailable as e:
            # The watches outlive scheduler restarts: they keep heartbeating, the loop looks again.
            self._cursor, self._reread = None, None
            metrics.scheduler_error("SchedulerUnavailable")
            log.warning("scheduler unavailable", jobs=len(self._watched), error=str(e))
            return None, set()  # nothing to judge but the logs that are due
        except JobNotFound:
            return {}, None

    async def _changed(
        self, scheduler: Watchable, fresh: list[Watched]
    ) -> tuple[dict[str, JobObservation], set[str] | None]:
        """The watched jobs as they are now, from what changed since the last read. Every job in
        `_jobs` is kept current (a job watched again later, a requeued job's successor, finds
        its latest state there); the job of a watch attached since the last look that is not
        there yet is read on its own. Every FULL_READ_SECONDS every watched job is read again, a
        slice a look (`_reread_slice`); the look that reads the last slice judges every watch."""
        if self._cursor is None:
            return await self._read_all(scheduler, sorted(self._by_job)), None
        changed = await self._apply_changes(scheduler)
        if changed is None:  # the scheduler restarted, or we fell too far behind
            return await self._read_all(scheduler, sorted(self._by_job)), None
        new = sorted({w.job_id for w in fresh if w.job_id not in self._jobs})
        if new:
            self._jobs.update(await self.coalescer.observe(new))
            changed.update(new)
        if await self._reread_slice(scheduler) and await self._apply_changes(scheduler) is not None:
            return self._jobs, None
        return self._jobs, changed

    async def _apply_changes(self, scheduler: Watchable) -> set[str] | None:
        """Apply what changed since the cursor to the jobs held; the ids of those jobs (None: the
        scheduler cannot answer for the cursor, and every job is to be read again)."""
        assert self._cursor is not None
        changes = await scheduler.changes(self._cursor)
        if not changes.complete:
            return None
        self._cursor = changes.cursor
        self._jobs.update(changes.jobs)
        for job_id in changes.gone:
            self._jobs.pop(job_id, None)
        return {*changes.jobs, *changes.gone}

    async def _reread_slice(self, scheduler: Watchable) -> bool:
        """One slice of the periodic read of every watched job, begun once it is due; whether it
        was the last. The read's cursor is taken first, and once every slice is in, the held
        jobs are the read ones (plus any read on their own meanwhile) as of that cursor: what
        changed while the slices were read is read again as a change, never missed."""
        if self._reread is None:
            if time.monotonic() < self._full_read_at:
                return False
            cursor = (await scheduler.changes(None)).cursor
            self._reread = _Reread(cursor, sorted(self._by_job))
        reread = self._reread
        ids = reread.job_ids[reread.at : reread.at + FULL_READ_SLICE]
        reread.jobs.update(await self.coalescer.observe(ids))
        reread.at += FULL_READ_SLICE
        if reread.at < len(reread.job_ids):
            return False
        # Jobs attached since the read began were read on their own; jobs no longer watched go.
        watched = {job_id: obs for job_id, obs in self._jobs.items() if job_id in self._by_job}
        self._jobs = {**watched, **reread.jobs}
        self._cursor, self._reread = reread.cursor, None
        self._full_read_at = time.monotonic() + FULL_READ_SECONDS
        return True

    async def _read_all(self, scheduler: Watchable, job_ids: list[str]) -> dict[str, JobObservation]:
        """Every watched job, read afresh. The cursor is taken first: whatever changes while the
        slices are read is read again as a change, never missed."""
        self._cursor, self._reread = None, None
        cursor = (await scheduler.changes(None)).cursor
        jobs: dict[str, JobObservation] = {}
        for at in range(0, len(job_ids), FULL_READ_SLICE):
            jobs.update(await self.coalescer.observe(job_ids[at : at + FULL_READ_SLICE]))
        self._jobs, self._cursor = jobs, cursor
        self._full_read_at = time.monotonic() + FULL_READ_SECONDS
        return jobs

    def _forget(self, now: float) -> None:
        stale = [run_id for run_id, kept in self._kept.items() if now - kept.idle_since > KEEP_SECONDS]
        for run_id in stale:
            del self._kept[run_id]
