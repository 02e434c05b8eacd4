"""Hang detection: no progress for longer than the run itself makes plausible.

The timeout is learned from the run's own intervals between progress reports: the larger of
`factor` times their median and `gap_factor` times the longest gap the run already came back
from (an evaluation pass, a slow data shard), bounded by the policy's `min_timeout` and
`max_timeout`. Before the first step the limit is `startup_grace` (loading, compiling and
connecting take long), counted from the last output line; while a checkpoint is being saved
(`checkpoint=saving` until `saved` or the next step) it is at least `checkpoint_grace`.

Pure and clock-free: the caller passes the time of each observation and of each check.

    detector = HangDetector(HangConfig(), started_at=now())
    detector.output(now())                   # any log line: alive before the first step
    detector.progress(record, now())         # a parsed progress record
    verdict = detector.check(now())          # a HangVerdict when silent too long, else None
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass

from recovery.activities.progress import ProgressRecord


@dataclass(frozen=True)
class HangConfig:
    """Seconds. Defaults follow the policy's `hang` keys (5m, 60m, 30m, 20m)."""

    min_timeout: float = 300.0
    max_timeout: float = 3600.0
    startup_grace: float = 1800.0
    checkpoint_grace: float = 1200.0
    factor: float = 10.0
    gap_factor: float = 2.0
    history: int = 200  # intervals remembered

    def __post_init__(self) -> None:
        if not 0 < self.min_timeout <= self.max_timeout:
            raise ValueError("hang timeouts need 0 < min_timeout <= max_timeout")


@dataclass(frozen=True)
class HangVerdict:
    silent_for: float
    timeout: float
    phase: str  # "startup", "training" or "checkpoint"
    last: ProgressRecord | None

    def describe(self) -> str:
        what = {
            "startup": "no first progress",
            "training": "no progress",
            "checkpoint": "checkpoint not done",
        }
        seen = "nothing yet"
        if self.last is not None:
            step = f"step {self.last.step}" if self.last.step is not None else "progress"
            where = f" (line {self.last.line})" if self.last.line is not None else ""
            seen = f"{step}{where}: {self.last.text[:200]}"
        limit = f"{_duration(self.timeout)} {self.phase} timeout"
        return f"{what[self.phase]} for {_duration(self.silent_for)} (>{limit}); last seen {seen}"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class HangDetector:
    def __init__(self, config: HangConfig, started_at: float) -> None:
        self.config = config
        self.started_at = started_at
        self.last_output_at = started_at
        self.last: ProgressRecord | None = None
        self.last_progress_at: float | None = None
        self._max_step = -1
        self._saving_since: float | None = None
        self._skip_interval = False
        self._intervals: deque[float] = deque(maxlen=config.history)
        # learned_timeout, until the next interval: the observer checks every watched run each
        # poll, and a median per check per run was 5 % of a worker's time at 5,000 runs (py-spy).
        self._learned: float | None = None

    def output(self, at: float) -> None:
        """Any log output. Before the first step it shows the job is alive; after, only progress does."""
        self.last_output_at = max(self.last_output_at, at)

    def progress(self, record: ProgressRecord, at: float) -> None:
        self.output(at)
        if record.checkpoint is not None:
            # A save starting or ending is news: silence counts from here, and the interval
            # around a save says nothing about how long a step takes.
            self._saving_since = at if record.checkpoint == "saving" else None
            self._skip_interval = True
            self._max_step = max(self._max_step, -1 if record.step is None else record.step)
            self.last, self.last_progress_at = record, at
            return
        if record.step is not None and record.step <= self._max_step:
            return  # another rank's copy of a step already counted
        if self.last_progress_at is not None and not self._skip_interval:
            self._intervals.append(at - self.last_progress_at)
            self._learned = None
        self._skip_interval = False
        self._saving_since = None  # a new step: any save is over, even if nobody said so
        self._max_step = self._max_step if record.step is None else record.step
        self.last, self.last_progress_at = record, at

    def learned_timeout(self) -> float:
        """The timeout between steps, from the intervals seen so far (min_timeout until then)."""
        if self._learned is None:
            cfg = self.config
            if not self._intervals:
                return cfg.min_timeout
            learned = max(cfg.factor * statistics.median(self._intervals), cfg.gap_factor * max(self._intervals))
            self._learned = min(cfg.max_timeout, max(cfg.min_timeout, learned))
        return self._learned

    def phase(self) -> str:
        if self.last_progress_at is None:
            return "startup"
        return "checkpoint" if self._saving_since is not None else "training"

    def timeout(self) -> float:
        phase = self.phase()
        if phase == "startup":
            return self.config.startup_grace
        if phase == "checkpoint":
            return max(self.learned_timeout(), self.config.checkpoint_grace)
        return self.learned_timeout()

    def deadline(self) -> float:
        """When, without news, the job counts as hung (for scheduling the next check)."""
        since = self.last_output_at if self.last_progress_at is None else self.last_progress_at
        return since + self.timeout()

    def check(self, now: float) -> HangVerdict | None:
        since = self.last_output_at if self.last_progress_at is None else self.last_progress_at
        silent = now - since
        timeout = self.timeout()
        if silent <= timeout:
            return None
        return HangVerdict(silent_for=silent, timeout=timeout, phase=self.phase(), last=self.last)
