"""Straggler detection: a sustained drop in throughput, found by a change-point statistic.

The rate (throughput, or steps per second from `step_time`) is followed as its logarithm, so
a drop of `d` is a shift down by `-log(1 - d)` whatever the run's unit, and the statistic waits
for evidence rather than for a fixed window:

- **Baseline**: the median and the robust spread (1.4826 x MAD) of the run's recent healthy
  log-rates, once the first `warmup_samples` (compiling, warming caches) are left out. A sample
  joins the baseline only when the statistic below has come back to zero after it: a slowdown
  never becomes the new normal while it lasts.
- **Evidence**: a one-sided CUSUM of the shortfall below the baseline, tuned to the smallest drop
  to detect (`min_drop`, a shift `delta = -log(1 - min_drop)`):
  `S = max(0, S + clip(median - log rate) - delta / 2 - margin)`. Each shortfall is clipped at
  `clip x max(delta, spread)`, so a checkpoint step ten times slower weighs no more than a
  couple of slow steps; `margin` is two standard errors of the baseline's median (a young
  baseline that came out high by chance is no slowdown). S must reach
  `evidence x spread^2 / delta` (the log-likelihood ratio, in nats, of a drop of min_drop
  against none: a noisy run needs more samples), and never less than `min_evidence x delta`.
- **Where it began**: the sample after which S last left zero (the CUSUM's change-point
  estimate), refined once the drop's size is known to the start that maximises the evidence
  for that size. The verdict's `since` and `ref` are that sample's.
- **Persistence**: the slowdown has lasted `min_steps` steps in at least `min_samples` samples
  (or 3/4 of `sustain`, when steps are long), and over the most recent such span at least
  `slow_fraction` of the steps are more than half a min_drop below the baseline, their median
  at least 3/4 of min_drop below it, and the last few samples still slow. Warm-up, a dip of 30 steps
  that ends, or checkpoint and evaluation spikes, even next to each other, never qualify.
- **Bound**: once a slowdown has lasted `sustain`, the floor evidence (`min_evidence`) is
  enough, so a drop of min_drop that lasts `sustain` is declared by then (in a run whose samples
  scatter by up to about 8 %; a noisier one needs a bigger drop).
- Samples taken while a checkpoint is saving are left out. A verdict lasts until S is back at
  zero (the run regained its pace); the slow samples never join the baseline.

Where ranks report their own step times (`compute_time`, else `step_time`), `slow_ranks` says
which rank is slow: its median is well above the median across ranks; with two ranks, well
above the other's, by more than their own step-to-step noise.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution times this is its standard deviation
MEDIAN_ERROR = 1.2533  # a median's standard error is this times sigma / sqrt(n) (normal data)


@dataclass(frozen=True)
class StragglerConfig:
    """Seconds (steps, for a log without a clock) and fractions. `min_drop` and `sustain` are the
    policy's `straggler` keys: the smallest drop to detect, and the longest it may take."""

    min_drop: float = 0.10
    sustain: float = 600.0
    min_samples: int = 10
    min_steps: int = 150
    slow_fraction: float = 0.7
    warmup_samples: int = 5
    baseline_window: float = 1800.0
    baseline_min_samples: int = 10
    baseline_max_samples: int = 1000
    evidence: float = 14.0
    min_evidence: float = 3.0
    clip: float = 2.0

    def __post_init__(self) -> None:
        if not (0 < self.min_drop < 1 and 0 < self.slow_fraction <= 1 and self.sustain > 0):
            raise ValueError("straggler: need 0 < min_drop < 1, 0 < slow_fraction <= 1 and sustain > 0")
        if self.evidence <= 0 or self.min_evidence <= 0 or self.clip < 1:
            raise ValueError("straggler: need evidence > 0, min_evidence > 0 and clip >= 1")

    @property
    def short_series(self) -> int:
        """The samples the statistic needs before it can speak: fewer, and a finished log's
        series is judged whole (`short_series_slowdown`)."""
        return self.warmup_samples + self.baseline_min_samples + self.min_samples

    @property
    def shift(self) -> float:
        """min_drop as a shift of the log-rate."""
        return -math.log1p(-self.min_drop)


@dataclass(frozen=True)
class StragglerVerdict:
    since: float  # time of the first sample of this slowdown (the change-point estimate)
    ref: int | None  # what the caller attached to that sample (a log line number)
    baseline: float
    current: float  # median rate over the slowdown's most recent span
    threshold: float  # the baseline less min_drop: the smallest drop detected
    steps: int = 0  # steps the slowdown has lasted so far

    @property
    def drop(self) -> float:
        return 1.0 - self.current / self.baseline

    def describe(self) -> str:
        return (
            f"throughput {self.drop:.0%} below the run's recent baseline "
            f"({self.current:.4g} vs {self.baseline:.4g}, for {self.steps} steps; "
            f"detects drops from {1.0 - self.threshold / self.baseline:.0%})"
        )


def robust_center(values: Iterable[float]) -> tuple[float, float]:
    """(median, robust standard deviation from the median absolute deviation)."""
    data = list(values)
    center = statistics.median(data)
    spread = MAD_TO_SIGMA * statistics.median(abs(v - center) for v in data)
    return center, spread


def weighted_median(pairs: Sequence[tuple[float, int]]) -> float:
    """The median of values each counted `weight` times."""
    ordered = sorted(pairs)
    half = sum(weight for _, weight in ordered) / 2
    seen = 0
    for value, weight in ordered:
        seen += weight
        if seen >= half:
            return value
    return ordered[-1][0]


class _Excursion:
    """The samples since the CUSUM last left zero: a slowdown in the making, or noise."""

    def __init__(self, start: float, since: float, ref: int | None, keep: int) -> None:
        self.start = start  # when the last healthy sample was taken: the slowdown's span counts from it
        self.since, self.ref = since, ref
        self.steps = 0
        self.samples = 0
        self.declared = False
        # (time, log-rate, ref, steps): they join the baseline if this turns out to be noise.
        self.pending: deque[tuple[float, float, int | None, int]] = deque(maxlen=keep)
        # (time, steps, shortfall, slow) of the most recent span that shows persistence. Its
        # fraction and median weigh each sample by its steps: in a long log the diagnoser reads
        # every k-th progress line, but all of a short stretch's, and a dip read line by line
        # must not outweigh the sparse lines around it.
        self.recent: deque[tuple[float, int, float, bool]] = deque()
        self.recent_steps = 0
        self.recent_slow = 0  # steps

    def add(self, t: float, x: float, ref: int | None, steps: int, shortfall: float, slow: bool) -> None:
        self.steps += steps
        self.samples += 1
        self.pending.append((t, x, ref, steps))
        self.recent.append((t, steps, shortfall, slow))
        self.recent_steps += steps
        self.recent_slow += steps if slow else 0

    def trim(self, t: float, min_steps: int, span: float, min_samples: int) -> None:
        """Keep the shortest recent run of samples that still covers `min_steps` or `span`."""
        while len(self.recent) > min_samples:
            first_t, first_steps, _, first_slow = self.recent[0]
            if self.recent_steps - first_steps < min_steps and t - first_t < span:
                return
            self.recent.popleft()
            self.recent_steps -= first_steps
            self.recent_slow -= first_steps if first_slow else 0

    def persisted(self, t: float, min_steps: int, span: float, min_samples: int) -> bool:
        """Lasted `min_steps` steps in `min_samples` samples or more (a sampled or coarse log's
        few lines each stand for many steps: a dip and a spike must not be most of them), or
        `span` of time, long steps, in half as many."""
        if self.steps >= min_steps and self.samples >= min_samples:
            return True
        return t - self.start >= span and self.samples >= max(3, min_samples // 2)

    def slow_share(self) -> float:
        """The share of the recent span's steps that were slow."""
        return self.recent_slow / self.recent_steps if self.recent_steps else 0.0

    def shortfall(self, last: int | None = None) -> float:
        """The median shortfall (in log-rate) over the recent span's steps, or its `last` samples'."""
        recent = list(self.recent)[-last:] if last else self.recent
        return weighted_median([(shortfall, steps) for _, steps, shortfall, _ in recent])

    def locate(self, center: float, shift: float, limit: float) -> None:
        """Where the drop now seen began: the start that maximises the evidence for a shift of
        `shift` (the likelihood's change-point estimate). Noise that had lifted S a little
        before the change moves the excursion's start early; a shift this large does not."""
        best, run, found = 0.0, 0.0, None
        for index in range(len(self.pending) - 1, -1, -1):
            run += min(max(center - self.pending[index][1], -limit), limit) - shift / 2
            if run > best:
                best, found = run, index
        if found is not None:
            self.since, _, self.ref, _ = self.pending[found]
            self.steps = sum(steps for _, _, _, steps in list(self.pending)[found:])


class StragglerDetector:
    """Feed it (time, rate) samples; `add` returns a verdict while a sustained slowdown lasts."""

    # The baseline's median is recomputed after this many new healthy samples (or an eighth of
    # the baseline), not every time: a log of a million steps stays cheap, and the baseline
    # moves slowly anyway.
    RECOMPUTE_EVERY = 8
    PERSIST = 0.75  # of `sustain`: a slowdown this long has persisted even in fewer than min_steps steps
    SIZE = 0.75  # the recent median shortfall, as a share of min_drop's, that a verdict needs
    LAST = 5  # the samples that must still be slow: a dip that ended is over

    def __init__(self, config: StragglerConfig | None = None) -> None:
        self.config = config or StragglerConfig()
        self._shift = self.config.shift
        self._healthy: deque[tuple[float, float]] = deque()  # (time, log-rate)
        self._base: tuple[float, float] | None = None  # (median log-rate, robust spread)
        self._stale = 0
        self._seen = 0
        self._last_t: float | None = None
        self._cusum = 0.0
        self._excursion: _Excursion | None = None
        self.verdict: StragglerVerdict | None = None

    @property
    def suspecting(self) -> bool:
        """Whether a slowdown is being followed (declared or not yet)."""
        return self._excursion is not None

    def baseline(self) -> tuple[float, float] | None:
        """(median rate, the rate min_drop below it), once enough healthy samples exist."""
        base = self._baseline()
        if base is None:
            return None
        return math.exp(base[0]), math.exp(base[0] - self._shift)

    def add(
        self, t: float, rate: float, *, ref: int | None = None, checkpoint: bool = False, steps: int = 1
    ) -> StragglerVerdict | None:
        """One sample: the rate at time `t`, covering `steps` steps (a line every N steps)."""
        if checkpoint or not math.isfinite(rate) or rate <= 0:
            return self.verdict
        x = math.log(rate)
        self._seen += 1
        previous, self._last_t = self._last_t, t
        if self._seen <= self.config.warmup_samples:
            return None  # compiling, warming caches: not the run's pace
        base = self._baseline()
        if base is None:
            self._remember(t, x)
            return None
        self._track(t, x, max(1, steps), ref, t if previous is None else previous, base)
        return self.verdict

    def _baseline(self) -> tuple[float, float] | None:
        if len(self._healthy) < self.config.baseline_min_samples:
            return None
        if self._base is None or self._stale >= max(self.RECOMPUTE_EVERY, len(self._healthy) // 8):
            self._base = robust_center(x for _, x in self._healthy)
            self._stale = 0
        return self._base

    def _remember(self, t: float, x: float) -> None:
        cfg = self.config
        self._healthy.append((t, x))
        self._stale += 1
        while len(self._healthy) > cfg.baseline_max_samples or (
            len(self._healthy) > cfg.baseline_min_samples and self._healthy[0][0] < t - cfg.baseline_window
        ):
            self._healthy.popleft()

    def _track(
        self, t: float, x: float, steps: int, ref: int | None, previous: float, base: tuple[float, float]
    ) -> None:
        """One CUSUM step, then the verdict it supports."""
        center, spread = base
        shortfall = center - x
        limit = self.config.clip * max(self._shift, spread)  # a spike weighs no more than this
        # The baseline is itself an estimate: until enough samples pin it down, a shortfall must
        # also exceed its uncertainty (two standard errors of a median), or a baseline that came
        # out high by chance would look like a slowdown forever.
        margin = 2 * MEDIAN_ERROR * spread / math.sqrt(len(self._healthy))
        self._cusum += min(max(shortfall, -limit), limit) - self._shift / 2 - margin
        if self._cusum <= 0:
            self._settle(t, x)
            return
        excursion = self._excursion
        if excursion is None:
            keep = self.config.baseline_max_samples
            excursion = self._excursion = _Excursion(previous, t, ref, keep)
        excursion.add(t, x, ref, steps, shortfall, slow=shortfall >= self._shift / 2 + margin)
        needed = self._needed(spread)
        self._cusum = min(self._cusum, 2 * needed)  # so that a recovery shows within a few samples
        self.verdict = self._judge(t, excursion, needed, center, limit, margin)

    def _settle(self, t: float, x: float) -> None:
        """S is back at zero: what looked slow was noise (it joins the baseline), or a slowdown
        that is over (its samples never do)."""
        self._cusum = 0.0
        if self._excursion is not None and not self._excursion.declared:
            for t_kept, x_kept, _, _ in self._excursion.pending:
                self._remember(t_kept, x_kept)
        self._excursion, self.verdict = None, None
        self._remember(t, x)

    def _needed(self, spread: float) -> float:
        """The evidence a verdict needs: the log-likelihood ratio of a drop of min_drop against
        none (`evidence` nats, in shortfall units), never less than the floor."""
        cfg = self.config
        return max(cfg.evidence * spread * spread / self._shift, cfg.min_evidence * self._shift)

    def _judge(
        self, t: float, excursion: _Excursion, needed: float, center: float, limit: float, margin: float
    ) -> StragglerVerdict | None:
        cfg = self.config
        span = self.PERSIST * cfg.sustain
        excursion.trim(t, cfg.min_steps, span, cfg.min_samples)
        if not excursion.declared:
            if t - excursion.start >= cfg.sustain:
                needed = cfg.min_evidence * self._shift  # the bound: sustained for `sustain`
            if self._cusum < needed or not excursion.persisted(t, cfg.min_steps, span, cfg.min_samples):
                return None
            if excursion.slow_share() < cfg.slow_fraction:
                return None  # not slow throughout: spikes, or a dip that is ending
            if excursion.shortfall() < self.SIZE * self._shift + margin:
                return None
            if excursion.shortfall(self.LAST) < self._shift / 2 + margin:
                return None  # slow for long enough, but not any more: a dip that ended
            excursion.declared = True
            shift = max(excursion.shortfall(), self._shift)
            excursion.locate(center, shift, limit)
        current = math.exp(center - excursion.shortfall())
        baseline = math.exp(center)
        return StragglerVerdict(
            since=excursion.since,
            ref=excursion.ref,
            baseline=baseline,
            current=current,
            threshold=baseline * (1.0 - cfg.min_drop),
            steps=excursion.steps,
        )


@dataclass(frozen=True)
class ShortSlowdown:
    """A slowdown found in a whole short series: its first slow sample, and the median rates
    before and after it."""

    start: int  # index into the series given
    baseline: float
    current: float

    @property
    def drop(self) -> float:
        return 1.0 - self.current / self.baseline

    def describe(self, min_drop: float) -> str:
        return (
            f"throughput {self.drop:.0%} below the run's earlier pace ({self.current:.4g} vs "
            f"{self.baseline:.4g}), every sample since slower than every one before (a short "
            f"series judged whole; detects drops from {min_drop:.0%})"
        )


SHORT_BEFORE = 3  # samples before a short series' slowdown, the first (warm-up) not counted
SHORT_AFTER = 4  # samples in it


def short_series_slowdown(rates: Sequence[float], min_drop: float) -> ShortSlowdown | None:
    """A slowdown (rates > 0) in a series too short for the change-point statistic (which needs warm-up, a
    baseline and persistence, `warmup_samples + baseline_min_samples + min_samples` samples): a
    finished log of a few epochs, judged whole after the fact. The first sample is warm-up; a
    slowdown is a point after which every sample is slower than every sample before it, by a
    median of `min_drop` or more, with `SHORT_BEFORE` samples before it and `SHORT_AFTER` after.
    Under noise alone such a clean split is rare (1 in 35 for 3 and 4 samples, less for more),
    and the size bound rules out small noise; a spike, a dip that ended or warm-up never splits
    a series cleanly. The split kept is the one with the largest drop (the earliest of equals)."""
    series = list(rates[1:])
    best: ShortSlowdown | None = None
    for k in range(SHORT_BEFORE, len(series) - SHORT_AFTER + 1):
        before, after = series[:k], series[k:]
        if max(after) >= min(before):
            continue
        found = ShortSlowdown(k + 1, statistics.median(before), statistics.median(after))
        if found.drop >= min_drop and (best is None or found.drop > best.drop):
            best = found
    return best


@dataclass(frozen=True)
class SlowRank:
    rank: int
    step_time: float  # its median
    typical: float  # the median across ranks
    excess: float  # step_time / typical - 1


def slow_ranks(
    step_times: Mapping[int, Sequence[float]],
    *,
    min_excess: float = 0.15,
    noise_k: float = 3.0,
    min_samples: int = 3,
) -> list[SlowRank]:
    """Ranks whose median step time stands out above the others', slowest first."""
    medians = {rank: statistics.median(times) for rank, times in step_times.items() if len(times) >= min_samples}
    if len(medians) == 2:
        return _slower_of_two(step_times, medians, min_excess=min_excess, noise_k=noise_k)
    if len(medians) < 3:
        return []
    typical, spread = robust_center(medians.values())
    if typical <= 0:
        return []
    limit = typical * (1.0 + max(min_excess, noise_k * spread / typical))
    found = [SlowRank(r, m, typical, m / typical - 1.0) for r, m in medians.items() if m > limit]
    return sorted(found, key=lambda s: -s.excess)


def _slower_of_two(
    step_times: Mapping[int, Sequence[float]], medians: dict[int, float], *, min_excess: float, noise_k: float
) -> list[SlowRank]:
    """Two ranks have no majority: the slower one stands out when its median exceeds the
    faster one's by more than `min_excess` and by more than `noise_k` times the ranks' own
    step-to-step spread (a noisy pair needs a bigger gap)."""
    (fast, fast_t), (slow, slow_t) = sorted(medians.items(), key=lambda item: item[1])
    if fast_t <= 0:
        return []
    noise = max(robust_center(step_times[r])[1] / medians[r] for r in (fast, slow) if medians[r] > 0)
    if slow_t <= fast_t * (1.0 + max(min_excess, noise_k * noise)):
        return []
    return [SlowRank(slow, slow_t, fast_t, slow_t / fast_t - 1.0)]


class RankStepTimes:
    """Recent step times per rank, for `slow_ranks`."""

    def __init__(self, window: int = 20) -> None:
        self.window = window
        self._times: dict[int, deque[float]] = {}

    def add(self, rank: int, step_time: float) -> None:
        if math.isfinite(step_time) and step_time > 0:
            self._times.setdefault(rank, deque(maxlen=self.window)).append(step_time)

    def slow_ranks(self, *, min_excess: float = 0.15, noise_k: float = 3.0) -> list[SlowRank]:
        times = {rank: list(t) for rank, t in self._times.items()}
        return slow_ranks(times, min_excess=min_excess, noise_k=noise_k)
