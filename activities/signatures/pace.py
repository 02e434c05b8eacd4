"""A log's own pace: its progress records as a throughput series, for straggler detection."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from recovery.activities.progress import ProgressRecord
from recovery.activities.signatures.prefixes import node_name
from recovery.activities.signatures.result import EVIDENCE_TEXT, EvidenceLine, Implicating, LogDiagnosis, add_once
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.straggler import RankStepTimes, StragglerConfig, StragglerDetector, short_series_slowdown
from recovery.activities.text import clip

MAX_SERIES = 8  # progress bars and series followed at once; more are ignored


@dataclass
class _Series:
    """One progress series: the training loop's, or an evaluation bar's, with its own clock.
    Without step times the log has no clock: steps count as its seconds (the detector waits
    for evidence anyway; only its `sustain` bound is counted in them)."""

    detector: StragglerDetector
    clock: bool
    t: float = 0.0
    last_step: int | None = None
    samples: int = 0
    # (rate, line) of the first samples outside checkpoints: a series too short for the
    # detector is judged whole from them (`LogPace.verdict`).
    first: list[tuple[float, int | None]] = field(default_factory=list)

    def add(self, record: ProgressRecord, rate: float) -> None:
        steps = self._steps(record.step)
        self.t += record.step_time * steps if self.clock and record.step_time is not None else steps
        self.samples += 1
        saving = record.checkpoint == "saving"
        self.detector.add(self.t, rate, ref=record.line, checkpoint=saving, steps=steps)
        if not saving and len(self.first) <= self.detector.config.short_series:
            self.first.append((rate, record.line))

    def short(self) -> bool:
        """Too few samples for the detector to have judged (warm-up, baseline, persistence)."""
        return len(self.first) <= self.detector.config.short_series

    def _steps(self, step: int | None) -> int:
        """The steps a record covers: a line every N steps covers N; one when steps go back."""
        last = self.last_step
        if step is None:
            return 1
        self.last_step = step
        return step - last if last is not None and step > last else 1


class LogPace:
    """The log's own progress as a throughput series, for straggler detection.

    One rank's records are the run's pace (in synchronous training the others repeat it). Its
    records fall into series by format and total: Lightning's validation bar, or the Trainer's
    evaluation bar between its training bar's redraws, is not the training loop's pace. The
    series with the most samples speaks for the run."""

    def __init__(self, config: StragglerConfig, whole: bool = False) -> None:
        self.config = config
        # The log is finished (a file given to `recovery diagnose`): a series too short for the
        # change-point statistic is judged whole, after the fact. A live log is not: its
        # slowdowns are the watch's detector's to find as they happen.
        self.whole = whole
        self._series: dict[tuple[str, int | None], _Series] = {}
        self._rank: int | None = None
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
        if not self._series:
            self._rank = record.rank
        if record.rank != self._rank:
            return  # one rank's series is the run's pace; the others repeat it
        series = self._series.get((record.format, record.total))
        if series is None:
            if len(self._series) >= MAX_SERIES:
                return
            series = _Series(StragglerDetector(self.config), clock=record.step_time is not None)
            self._series[(record.format, record.total)] = series
        if record.line is not None:
            self._lines[record.line] = record
            if len(self._lines) > 20000:
                self._lines.popitem(last=False)
        series.add(record, rate)

    def verdict(self) -> Slowdown | None:
        if not self._series:
            return None
        main = max(self._series.values(), key=lambda series: series.samples)
        verdict = main.detector.verdict
        if verdict is not None:
            return Slowdown(verdict.describe(), verdict.ref, self._lines, self._ranks)
        if not (self.whole and main.short()):
            return None
        found = short_series_slowdown([rate for rate, _ in main.first], self.config.min_drop)
        if found is None:
            return None
        return Slowdown(found.describe(self.config.min_drop), main.first[found.start][1], self._lines, self._ranks)

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
                EvidenceLine(line=record.line or 0, signature="straggler", text=clip(record.text, EVIDENCE_TEXT))
            )
        where = f" ({found.where()})" if found.where() else ""
        return _straggler(found, evidence, f"sustained slowdown: {self.description}{where}")


def _straggler(found: Implicating, evidence: list[EvidenceLine], explanation: str) -> LogDiagnosis:
    """A straggler verdict: the cause of a slowdown is not in the log, and a rerun (without the
    slow nodes where the log names them) may well run at full pace."""
    return LogDiagnosis(
        symptom="straggler",
        category="unknown",
        retryable=True,
        implicated=found.implicated(),
        evidence=evidence,
        explanation=explanation,
    )


# A straggler detector's own verdict. NVIDIA Resiliency Extension's StragglerDetectionCallback
# (nvidia_resiliency_ext/ptl_resiliency/straggler_det_callback.py, used by NeMo) logs the ranks
# whose GPU scores fall under its thresholds as a set of `StragglerId(rank=.., node=..)` (the
# dataclass in nvidia_resiliency_ext/attribution/straggler/reporting.py), relative to the best
# rank or to the rank's own earlier pace; with `stop_if_detected` it then logs `Detected
# stragglers. Terminating training...`, saves the last checkpoint and exits with code 1, so the
# launcher reports a worker that failed with exit code 1 (the sequence NVRx's functional tests
# check for in their logs).
REPORT_PATTERNS = [
    (
        "straggler:named",
        r"STRAGGLER DETECTION WARNING: Some GPUs (?:have worse relative performance|performance dropped)\. "
        r"Affected ranks: ",
    ),
    ("straggler:stop", r"Detected stragglers\. Terminating training\.\.\."),
]
_STRAGGLER_ID = re.compile(r"StragglerId\(rank=(\d+), node='([^']*)'\)")
MAX_NAMED = 64  # ranks and nodes kept from the reports


class ReportedStragglers:
    """The ranks a straggler detector named, and whether it stopped the run for them."""

    def __init__(self) -> None:
        self.ranks: list[int] = []
        self.nodes: list[str] = []
        self.named: LineMatch | None = None  # the latest report that named some
        self.stop: LineMatch | None = None

    def line(self, match: LineMatch) -> None:
        if match.pattern == "straggler:stop":
            self.stop = self.stop or match
            return
        found = _STRAGGLER_ID.findall(match.text)
        if not found:
            return
        self.named = match
        for rank, node in found:
            if len(self.ranks) < MAX_NAMED:
                add_once(self.ranks, int(rank))
            if node and len(self.nodes) < MAX_NAMED:
                add_once(self.nodes, node_name(node))

    def explains(self, line: int, category: str, cascade: bool) -> bool:
        """Whether the detector's stop explains a failure on `line`: the exit that follows it is
        the stop itself (an exit code of unknown cause), or another rank's follow-on error."""
        return self.stop is not None and line > self.stop.line and (category == "unknown" or cascade)

    def diagnosis(self, layout: Mapping[int, str]) -> LogDiagnosis:
        assert self.stop is not None
        found = Implicating()
        for rank in self.ranks:
            add_once(found.ranks, rank)
        for node in self.nodes:
            add_once(found.nodes, node)
        found.map_ranks(layout)
        evidence = [
            EvidenceLine(line=m.line, signature=m.pattern, text=clip(m.text, EVIDENCE_TEXT))
            for m in (self.named, self.stop)
            if m is not None
        ]
        where = f": slower GPUs on {found.where()}" if found.where() else ""
        evidence.sort(key=lambda e: e.line)
        return _straggler(
            found, evidence, f"the straggler detector stopped the run{where} (NVIDIA Resiliency Extension)"
        )
