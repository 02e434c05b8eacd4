"""Following one attempt's output while it runs: signatures, progress, hangs and stragglers.

The watch activity owns one `AttemptLog` per attempt. It reads only what the attempt wrote
(from the byte offset where the previous attempt's reading stopped, since output files are
appended across requeues), feeds the detectors with the times it read things, and turns what
they found into the shared models.
"""

from __future__ import annotations

import functools
import statistics
from collections import deque
from dataclasses import dataclass
from datetime import datetime

from recovery.activities.clock import utcnow
from recovery.activities.hang import HangConfig, HangDetector, HangVerdict
from recovery.activities.progress import ProgressParser, ProgressRecord
from recovery.activities.signatures.catalog import Catalog
from recovery.activities.signatures.diagnosis import LogDiagnoser, scanner_patterns
from recovery.activities.signatures.result import LogDiagnosis
from recovery.activities.signatures.scanner import FileFollower, PatternSet
from recovery.activities.straggler import StragglerConfig, StragglerDetector, StragglerVerdict
from recovery.workflows.models import Diagnosis, Evidence, ImplicatedNode
from recovery.workflows.policy import Policy

STEP_TIMES_KEPT = 2000  # the step times the typical one is taken from: a straggler's slow end does not move it


@dataclass(frozen=True)
class LogReading:
    """Site settings for reading logs: signature overrides and extra progress patterns."""

    catalog: Catalog | None = None
    progress_patterns: tuple[str, ...] = ()

    def diagnoser(self, layout: dict[int, str]) -> LogDiagnoser:
        progress = self._progress()
        return LogDiagnoser(self.catalog, layout=layout, progress=progress, patterns=self.patterns)

    def _progress(self) -> ProgressParser | None:
        return ProgressParser(self.progress_patterns) if self.progress_patterns else None

    @functools.cached_property
    def patterns(self) -> PatternSet:
        """One compiled pattern set for every log read with these settings: a worker watching
        thousands of attempts holds one, not one each."""
        return scanner_patterns(self.catalog, self._progress())


class AttemptLog:
    def __init__(
        self,
        path: str,
        offset: int,
        nodes: list[str],
        policy: Policy,
        now: float,
        trained: bool,
        reading: LogReading | None = None,
    ) -> None:
        self.path = path
        self.layout = dict(enumerate(nodes))  # one task per node: rank i runs on the i-th node
        self.reading = reading or LogReading()
        self.follower = FileFollower(path)
        self.follower.offset = offset
        self.diagnoser = self.reading.diagnoser(self.layout)
        self.hang = HangDetector(hang_config(policy), started_at=now)
        if trained:  # a later watch of an attempt that already made progress: no startup grace
            self.hang.progress(ProgressRecord(), now)
        sustain = policy.straggler.sustain.total_seconds()
        self.straggler = StragglerDetector(StragglerConfig(min_drop=policy.straggler.min_drop, sustain=sustain))
        self._rate_step: int | None = None  # the step of the detector's previous sample
        self.first: ProgressRecord | None = None
        self.last_step: int | None = None
        self.first_at: datetime | None = None
        self.slow: StragglerVerdict | None = None
        self._step_times: deque[tuple[float, float]] = deque(maxlen=STEP_TIMES_KEPT)  # (read at, seconds)
        self._paced: tuple[float, int, float, int] | None = None  # (first read, its step, last read, its step)

    @property
    def offset(self) -> int:
        return self.follower.offset

    def poll(self, now: float) -> None:
        while (chunk := self.follower.poll()) is not None:
            if chunk.reset:  # truncated or replaced: what we knew of it is gone
                self.diagnoser = self.reading.diagnoser(self.layout)
            if chunk.data:
                self.hang.output(now)
            for record in self.diagnoser.feed(chunk.data):
                self._progress(record, now)

    def finish(self, now: float) -> None:
        self.poll(now)
        for record in self.diagnoser.finish():
            self._progress(record, now)

    def _progress(self, record: ProgressRecord, now: float) -> None:
        self.hang.progress(record, now)
        if record.step is not None:
            self.last_step = max(record.step, self.last_step or record.step)
        if self.first is None and record.step is not None:
            self.first, self.first_at = record, utcnow()
        self._pace(record, now)
        # Synchronous training runs at the pace of its slowest rank: one rank's rate tells it.
        if record.rate is not None and record.rank in (None, 0):
            saving = record.checkpoint is not None
            steps = self._rate_steps(record.step)
            verdict = self.straggler.add(now, record.rate, ref=record.line, checkpoint=saving, steps=steps)
            self.slow = verdict or self.slow

    def _rate_steps(self, step: int | None) -> int:
        """The steps a rate sample covers (a line every N steps covers N): a backlog read at once
        has one read time, and the detector then judges persistence by steps."""
        last = self._rate_step
        if step is None:
            return 1
        self._rate_step = step
        return step - last if last is not None and step > last else 1

    def _pace(self, record: ProgressRecord, now: float) -> None:
        if record.step_time is not None and record.step_time > 0 and record.rank in (None, 0):
            self._step_times.append((now, record.step_time))
        if record.step is None:
            return
        if self._paced is None:
            self._paced = (now, record.step, now, record.step)
        elif record.step > self._paced[3]:
            self._paced = (self._paced[0], self._paced[1], now, record.step)

    @property
    def step_seconds(self) -> float | None:
        """The attempt's typical step time: the median of the step times it reported (rank 0's,
        recent ones, before a slowdown if it straggles), else its average pace between the
        progress lines read so far."""
        healthy = [t for at, t in self._step_times if self.slow is None or at < self.slow.since]
        if healthy or self._step_times:
            return statistics.median(healthy or [t for _, t in self._step_times])
        if self._paced is not None and self._paced[3] > self._paced[1]:
            first_at, first, last_at, last = self._paced
            return (last_at - first_at) / (last - first)
        return None

    def hung(self, now: float) -> HangVerdict | None:
        return self.hang.check(now)

    def diagnosis(self, attempt_index: int, straggling: bool = False) -> Diagnosis | None:
        """The log's account; `straggling`: this watch judged the attempt slow (see `slow`)."""
        described = self.slow.describe() if straggling and self.slow is not None else None
        return to_diagnosis(self.diagnoser.diagnosis(described), attempt_index, self.path)


def hang_config(policy: Policy) -> HangConfig:
    hang = policy.hang
    return HangConfig(
        min_timeout=hang.min_timeout.total_seconds(),
        max_timeout=max(hang.max_timeout, hang.min_timeout).total_seconds(),
        startup_grace=hang.startup_grace.total_seconds(),
        checkpoint_grace=hang.checkpoint_grace.total_seconds(),
    )


def to_diagnosis(found: LogDiagnosis, attempt_index: int, source: str) -> Diagnosis | None:
    """The log's own account, as a Diagnosis the decide step can use; None for a healthy log."""
    if found.symptom == "none" or found.category == "none":
        return None
    first = found.evidence[0] if found.evidence else None
    where = f"{first.signature} at {source}:{first.line}" if first else source
    return Diagnosis(
        attempt_index=attempt_index,
        category=found.category,
        retryable=True if found.retryable is None else found.retryable,
        # A failure that is not the node's fault (the program's bug, a GPU fault the program
        # caused) names where it happened but gives no reason to avoid those nodes.
        implicated=[ImplicatedNode(node=n, reason=f"named by {where}") for n in found.implicated.nodes]
        if found.exclude
        else [],
        explanation=found.explanation or where,
        provider="log",
        evidence=[Evidence(source=source, line=e.line, text=e.text, signature=e.signature) for e in found.evidence],
        peers=found.implicated.peers,
    )
