"""Straggler detection quality: recall by drop size, false alarms, delay, against the old detector.

    .venv/bin/python benchmarks/straggler_quality.py               # 300 runs per cell
    .venv/bin/python benchmarks/straggler_quality.py --seeds 100 --noise 0.03,0.05
    .venv/bin/python benchmarks/straggler_quality.py --no-unwrap  # without console unwrapping

Generates training logs (the generators of tests/unit/test_straggler_formats.py: every progress
format the project reads, heavy-tailed step-time jitter at several levels, a slow warm-up,
checkpoint and evaluation spikes, short dips of 10-30 steps in healthy runs), reads each one with
`LogDiagnoser` (scanner, progress parsing and the progress sampling of long logs), and runs the
records it found through today's detector (`LogPace`) and through the previous one (copied below
as `BaselineStragglerDetector`, with the timing the previous `LogPace` gave it). Each cell has
`--seeds` runs; run i is printed in format i mod the number of formats.

- recall: a run with a sustained drop whose log ends, `sustain` (the policy's 10m) after the drop
  began, in a straggler verdict (as `recovery diagnose` reports it);
- false alarms: healthy runs with any verdict at any point (as the live watch would act on);
  drop runs with a verdict before their drop are counted there too;
- delay: steps from the first slow step to the first verdict after it (median of found runs);
- where: found runs whose verdict points within 100 steps of the first slow step.

Targets: recall >= 0.8 at 10 %, >= 0.95 from 15 %, no false alarm.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import deque
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recovery.activities.progress import ProgressParser, ProgressRecord  # noqa: E402
from recovery.activities.signatures import unwrap  # noqa: E402
from recovery.activities.signatures.diagnosis import LogDiagnoser  # noqa: E402
from recovery.activities.signatures.pace import LogPace  # noqa: E402
from recovery.activities.straggler import StragglerConfig, robust_center  # noqa: E402
from tests.unit.test_straggler_formats import FORMATS, SUSTAIN, Log, generate  # noqa: E402

DROPS = (0.10, 0.15, 0.25, 0.40)
WHERE = 100  # steps: a verdict pointing this close to the first slow step points at it
LONG = 30_000  # healthy steps of a long log


# --- the previous detector, as it was before the change-point statistic ----------------------


@dataclass(frozen=True)
class BaselineConfig:
    """The previous `StragglerConfig`, with its defaults (min_drop 0.15 then)."""

    min_drop: float = 0.15
    sustain: float = 600.0
    min_samples: int = 5
    slow_fraction: float = 0.8
    baseline_window: float = 1800.0
    baseline_min_samples: int = 10
    baseline_max_samples: int = 1000
    noise_k: float = 3.0


@dataclass(frozen=True)
class BaselineVerdict:
    since: float
    ref: int | None
    baseline: float
    current: float
    threshold: float


class BaselineStragglerDetector:
    """The previous `StragglerDetector`, unchanged: a median baseline, "slow" samples below
    baseline * (1 - max(min_drop, noise_k * noise)), a verdict when `slow_fraction` of the
    samples over the last `sustain` seconds are slow and slowness began 0.8 * sustain ago."""

    RECOMPUTE_EVERY = 8

    def __init__(self, config: BaselineConfig | None = None) -> None:
        self.config = config or BaselineConfig()
        self._healthy: deque[tuple[float, float]] = deque()
        self._window: deque[tuple[float, float, bool, int | None]] = deque()
        self._slow: deque[tuple[float, int | None]] = deque()
        self._base: tuple[float, float] | None = None
        self._stale = 0
        self.verdict: BaselineVerdict | None = None

    def baseline(self) -> tuple[float, float] | None:
        if len(self._healthy) < self.config.baseline_min_samples:
            return None
        if self._base is None or self._stale >= max(self.RECOMPUTE_EVERY, len(self._healthy) // 16):
            center, spread = robust_center(rate for _, rate in self._healthy)
            noise = spread / center if center > 0 else 0.0
            self._base = center, center * (1.0 - max(self.config.min_drop, self.config.noise_k * noise))
            self._stale = 0
        return self._base

    def add(self, t: float, rate: float, *, ref: int | None = None, checkpoint: bool = False) -> BaselineVerdict | None:
        if checkpoint or not math.isfinite(rate) or rate <= 0:
            return self.verdict
        base = self.baseline()
        if base is None:
            self._remember_healthy(t, rate)
            return None
        center, threshold = base
        slow = rate < threshold
        if slow:
            self._slow.append((t, ref))
        else:
            self._remember_healthy(t, rate)
        self._window.append((t, rate, slow, ref))
        while self._window and self._window[0][0] <= t - self.config.sustain:
            self._window.popleft()
        while self._slow and self._slow[0][0] <= t - self.config.sustain:
            self._slow.popleft()
        self.verdict = self._judge(t, center, threshold)
        return self.verdict

    def _remember_healthy(self, t: float, rate: float) -> None:
        cfg = self.config
        self._healthy.append((t, rate))
        self._stale += 1
        while len(self._healthy) > cfg.baseline_max_samples or (
            len(self._healthy) > cfg.baseline_min_samples and self._healthy[0][0] < t - cfg.baseline_window
        ):
            self._healthy.popleft()

    def _judge(self, now: float, center: float, threshold: float) -> BaselineVerdict | None:
        cfg = self.config
        slow = len(self._slow)
        if slow < cfg.min_samples or slow < cfg.slow_fraction * len(self._window):
            return None
        first_t, first_ref = self._slow[0]
        if now - first_t < cfg.slow_fraction * cfg.sustain:
            return None
        if self.verdict is not None and self.verdict.since <= first_t:
            first_t, first_ref = self.verdict.since, self.verdict.ref
        current = statistics.median(rate for _, rate, _, _ in self._window)
        return BaselineVerdict(since=first_t, ref=first_ref, baseline=center, current=current, threshold=threshold)


class BaselinePace:
    """The previous `LogPace`'s timing: the first rate record's rank, a clock from step times,
    and without them 10 samples as the sustain window."""

    def __init__(self, config: BaselineConfig) -> None:
        self.config = config
        self.detector: BaselineStragglerDetector | None = None
        self._rank: int | None = None
        self._t = 0.0
        self._last_step: int | None = None

    def add(self, record: ProgressRecord) -> None:
        rate = record.rate
        if rate is None:
            return
        if self.detector is None:
            self._rank = record.rank
            self.detector = BaselineStragglerDetector(self._timing(record))
        if record.rank != self._rank:
            return
        self._t += self._elapsed(record)
        self.detector.add(self._t, rate, ref=record.line, checkpoint=record.checkpoint == "saving")

    def _timing(self, first: ProgressRecord) -> BaselineConfig:
        if first.step_time is not None:
            return self.config
        samples = float(max(self.config.min_samples * 2, 10))
        return BaselineConfig(
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

    def judged(self) -> tuple[float, int | None] | None:
        verdict = self.detector.verdict if self.detector is not None else None
        return (verdict.since, verdict.ref) if verdict is not None else None


class NewPace:
    """Today's `LogPace`, with its verdict's line."""

    def __init__(self, config: StragglerConfig) -> None:
        self.pace = LogPace(config)

    def add(self, record: ProgressRecord) -> None:
        self.pace.add(record)

    def judged(self) -> tuple[float, int | None] | None:
        slowdown = self.pace.verdict()
        return (0.0, slowdown.ref) if slowdown is not None else None


class Pace(Protocol):
    def add(self, record: ProgressRecord) -> None: ...
    def judged(self) -> tuple[float, int | None] | None: ...


# --- one run -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    detector: str
    drop: float
    noise: float
    fmt: str
    found: bool  # a verdict at the end of the log
    early: bool  # a verdict before the drop began (any verdict, for a healthy run)
    delay: int | None  # steps from the first slow step to the first verdict after it
    where: bool  # the verdict points within WHERE steps of the first slow step
    long: bool = False  # a long log: the progress lines LogDiagnoser reads are a sample


def records(log: Log, fmt: str) -> list[ProgressRecord]:
    """The progress records `LogDiagnoser` reads from the log (a sample, in a long log)."""
    patterns = FORMATS[fmt].patterns
    diagnoser = LogDiagnoser(progress=ProgressParser(patterns) if patterns else None)
    data = log.text.encode()
    found: list[ProgressRecord] = []
    for i in range(0, len(data), 1 << 16):
        found += diagnoser.feed(data[i : i + (1 << 16)])
    return found + diagnoser.finish()


def judge(name: str, pace: Pace, log: Log, found: Iterable[ProgressRecord], fmt: str, noise: float) -> Outcome:
    drop_at = log.pace.drop_at
    early, first, step = False, None, 0
    for record in found:
        pace.add(record)
        step = log.steps.get(record.line or 0, step)  # an evaluation bar's line: the step it follows
        if pace.judged() is None:
            continue
        if drop_at is None or step < drop_at:
            early = True
        elif first is None:
            first = step
    verdict = pace.judged()
    where = False
    if verdict is not None and drop_at is not None and verdict[1] in log.steps:
        where = abs(log.steps[verdict[1]] - drop_at) <= WHERE
    delay = first - drop_at if first is not None and drop_at is not None else None
    return Outcome(name, log.pace.drop, noise, fmt, verdict is not None, early, delay, where)


def run(args: tuple[str, int, float, float, int | None]) -> list[Outcome]:
    fmt, seed, drop, noise, healthy_steps = args
    log = generate(fmt, seed, drop=drop, noise=noise, healthy_steps=healthy_steps)
    found = records(log, fmt)
    outcomes = [
        judge("change-point (now)", NewPace(StragglerConfig()), log, found, fmt, noise),
        judge("baseline (before)", BaselinePace(BaselineConfig()), log, found, fmt, noise),
        # the previous detector at the new policy default, for a fair comparison at 10 %
        judge("baseline, min_drop 0.10", BaselinePace(BaselineConfig(min_drop=0.10)), log, found, fmt, noise),
    ]
    return [replace(o, long=healthy_steps is not None) for o in outcomes]


# --- the table -------------------------------------------------------------------------------


def _rate(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


def table(outcomes: list[Outcome], noises: list[float]) -> str:
    detectors = list(dict.fromkeys(o.detector for o in outcomes))
    head = ["detector", "noise", *[f"recall {d:.0%}" for d in DROPS], "false alarms", "median delay (steps)", "where"]
    rows = [head]
    for name in detectors:
        for noise in [*noises, None]:
            mine = [o for o in outcomes if o.detector == name and (noise is None or o.noise == noise)]
            drops = [o for o in mine if o.drop > 0]
            recall = [_rate([o.found and not o.early for o in drops if o.drop == d]) for d in DROPS]
            alarms = [o for o in mine if o.early]
            healthy = [o for o in mine if o.drop == 0]
            delays = [o.delay for o in drops if o.delay is not None and o.found]
            rows.append(
                [
                    name,
                    "all" if noise is None else f"{noise:.0%}",
                    *recall,
                    f"{len(alarms)} ({sum(o.early for o in healthy)}/{len(healthy)} healthy)",
                    " / ".join(
                        f"{statistics.median(dd):.0f}"
                        if (dd := [o.delay for o in drops if o.drop == d and o.delay is not None and o.found])
                        else "-"
                        for d in DROPS
                    )
                    if delays
                    else "-",
                    _rate([o.where for o in drops if o.found]),
                ]
            )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines)


def by_format(outcomes: list[Outcome]) -> str:
    lines = ["recall at 10 % / false alarms, by format (change-point detector):"]
    for fmt in FORMATS:
        mine = [o for o in outcomes if o.detector.startswith("change-point") and o.fmt == fmt]
        ten = [o.found and not o.early for o in mine if o.drop == 0.10]
        lines.append(f"  {fmt:<11} {_rate(ten)}  {sum(o.early for o in mine)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=200, help="runs per drop size and noise level")
    parser.add_argument("--noise", default="0.03,0.05,0.08", help="step-time jitter levels (relative)")
    parser.add_argument("--long-seeds", type=int, default=28, help="long logs (sampled progress) per drop size")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument(
        "--no-unwrap",
        action="store_true",
        help="read the logs without console unwrapping (activities/signatures/unwrap.py), to tell its effect apart",
    )
    args = parser.parse_args()
    if args.no_unwrap:
        unwrap.wrap_width = lambda block: 0  # the worker processes are forked with it
    noises = [float(n) for n in args.noise.split(",")]
    names = list(FORMATS)
    jobs: list[tuple[str, int, float, float, int | None]] = [
        (names[seed % len(names)], seed + 100_000 * k, drop, noise, None)
        for noise in noises
        for k, drop in enumerate((0.0, *DROPS))
        for seed in range(args.seeds)
    ]
    jobs += [
        (names[seed % len(names)], seed + 100_000 * k + 50_000, drop, 0.05, LONG)
        for k, drop in enumerate((0.0, *DROPS))
        for seed in range(args.long_seeds)
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        outcomes = [o for batch in pool.map(run, jobs, chunksize=4) for o in batch]
    short = [o for o in outcomes if not o.long]
    print(f"{args.seeds} runs per cell; {len(names)} formats; drops last sustain = {SUSTAIN:g} s of the log's clock")
    print(table(short, noises))
    print()
    print(
        f"long logs ({LONG} healthy steps before the drop; LogDiagnoser samples their progress lines), {args.long_seeds} runs per cell:"
    )
    print(table([o for o in outcomes if o.long], [0.05]))
    print()
    print(by_format(short))


if __name__ == "__main__":
    main()
