"""A log's own pace: its progress records as a throughput series, for straggler detection."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from activities.progress import ProgressRecord
from activities.signatures.result import EVIDENCE_TEXT, EvidenceLine, Implicating, LogDiagnosis, add_once
from activities.straggler import RankStepTimes, StragglerConfig, StragglerDetector


class LogPace:
    """The log's own progress as a throughput series, for straggler detection."""

    def __init__(self, config: StragglerConfig) -> None:
        self.config = config
        self._detector: StragglerDetector | None = None
        self._rank: int | None = None
        self._t = 0.0
        self._last_step: int | None = None
        self._ranks = RankStepTimes()
        # The records the verdict may point at: recent ones only, so memory stays flat.
        self._lines: OrderedDict[int, ProgressRecord] = OrderedDict()

    def add(self, record: ProgressRecord) -> None:
        own = record.compute_time if record.compute_time is not None else record.step_time
        if record.rank is not None and own is not None:
            self._ranks.add(record.rank, own)
        rate = record.rate
        if rate is None:
            return
        if self._detector is None:
            self._rank = record.rank
            self._detector = StragglerDetector(self._timing(record))
        if record.rank != self._rank:
            return  # one rank's series is the run's pace; the others repeat it
        self._t += self._elapsed(record)
        if record.line is not None:
            self._lines[record.line] = record
            if len(self._lines) > 20000:
                self._lines.popitem(last=False)
        self._detector.add(self._t, rate, ref=record.line, checkpoint=record.checkpoint == "saving")

    def _timing(self, first: ProgressRecord) -> StragglerConfig:
        if first.step_time is not None:
            return self.config
        # Without step times the log has no clock: count samples instead of seconds.
        samples = float(max(self.config.min_samples * 2, 10))
        return StragglerConfig(
            min_drop=self.config.min_drop,
            sustain=samples,
            min_samples=self.config.min_samples,
            slow_fraction=self.config.slow_fraction,
            baseline_window=samples * 3,
            baseline_min_samples=self.config.baseline_min_samples,
            noise_k=self.config.noise_k,
        )

    def _elapsed(self, record: ProgressRecord) -> float:
        steps = 1
        if record.step is not None and self._last_step is not None and record.step > self._last_step:
            steps = record.step - self._last_step
        self._last_step = record.step if record.step is not None else self._last_step
        return record.step_time * steps if record.step_time is not None else 1.0

    def verdict(self) -> Slowdown | None:
        if self._detector is None or self._detector.verdict is None:
            return None
        verdict = self._detector.verdict
        return Slowdown(verdict.describe(), verdict.ref, self._lines, self._ranks)

    def slowdown(self, description: str, ref: int | None = None) -> Slowdown:
        """A slowdown someone else judged (the watch's own detector, on read times), explained
        with this log's per-rank times: the two clocks need not agree to the sample."""
        return Slowdown(description, ref, self._lines, self._ranks)


@dataclass
class Slowdown:
    description: str
    ref: int | None
    lines: Mapping[int, ProgressRecord]
    ranks: RankStepTimes

    def diagnosis(self, layout: Mapping[int, str]) -> LogDiagnosis:
        found = Implicating()
        for slow in self.ranks.slow_ranks():
            add_once(found.ranks, slow.rank)
        found.map_ranks(layout)
        record = self.lines.get(self.ref) if self.ref is not None else None
        evidence = []
        if record is not None:
            evidence.append(
                EvidenceLine(line=record.line or 0, signature="straggler", text=record.text[:EVIDENCE_TEXT])
            )
        where = f" ({found.where()})" if found.where() else ""
        return LogDiagnosis(
            symptom="straggler",
            category="unknown",
            retryable=True,
            implicated=found.implicated(),
            evidence=evidence,
            explanation=f"sustained slowdown: {self.description}{where}",
        )
