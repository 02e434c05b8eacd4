"""One watched attempt, as the observer holds it in memory: what the run asked for, its log as
read so far (with its hang and straggler detectors), and the run's waiting watch to wake."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.observer.news import attempt_over, ended, open_log, while_running
from recovery.workflows.models import JobObservation, JobState, WatchInput, WatchResult


@dataclass
class Watched:
    inp: WatchInput
    waiter: asyncio.Future[WatchResult]
    log: AttemptLog | None = None
    seq: int = 0  # the order watches were attached in: a look judges only those attached before it
    next_read: float = 0.0  # monotonic time of the log's next read
    idle_since: float = 0.0  # when the last watch let go of it (kept state only)
    tries: int = 1  # the watch activity's attempt number: a retry's next wait is longer
    waited: bool = False  # its due read was put off once (a recovery under way): the next is made
    job_id: str = field(init=False)  # asked 10,000 times a look: kept, not looked up

    def __post_init__(self) -> None:
        self.job_id = self.inp.attempt.job_id

    def same_attempt(self, inp: WatchInput) -> bool:
        """A later watch of the attempt this state was read for: it may carry on from it."""
        mine, theirs = self.inp.attempt, inp.attempt
        return (mine.index, mine.job_id, mine.restart_count, mine.log_offset) == (
            theirs.index,
            theirs.job_id,
            theirs.restart_count,
            theirs.log_offset,
        )

    def movable(self, now: float, recent: float) -> bool:
        """Whether another worker could take this watch over losing nothing but a re-read: no log
        read yet, or a log whose last progress came within `recent` seconds (a hang's clock
        starts again where the log is next read)."""
        if self.log is None:
            return True
        last = self.log.hang.last_progress_at if self.log.first is not None else None
        return last is not None and now - last < recent

    def read_by(self, defer: float) -> float | None:
        """How late its due log read may be made while the worker is busy: `defer` past due, never
        past the hang deadline. None: now (no log read yet, the first progress not yet recorded,
        a slowdown being followed, or put off once already)."""
        log = self.log
        if log is None or self.waited or self.inp.attempt.first_step is None or log.straggler.suspecting:
            return None
        return min(self.next_read + defer, log.hang.deadline())

    def look(self, obs: JobObservation | None, now: float, read_log: bool, reading: LogReading) -> WatchResult | None:
        """One look at the attempt (`obs` None: the scheduler is away): the news, if any."""
        if obs is not None and obs.restart_count < self.inp.attempt.restart_count:
            # A read from before this attempt began (a stale cache, a slow read): its FAILED is
            # the previous attempt's end, not this one's. No news until the scheduler catches up.
            return None
        if obs is not None and self.log is None:
            self.log = open_log(obs, self.inp, now, reading)
        over = obs is not None and attempt_over(obs, self.inp.attempt)
        read = self.log is not None and (read_log or over)
        if self.log is not None and read:
            self.log.poll(now)
        if obs is None:
            return None
        if over:
            return ended(obs, self.inp.attempt, self.log, now)
        # Judged only right after a read: a log read less often must not look silent.
        if self.log is not None and read and obs.state is JobState.RUNNING:
            return while_running(obs, self.inp, self.log, now)
        return None
