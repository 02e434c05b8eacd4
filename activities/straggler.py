"""Straggler detection: a sustained drop in throughput against the run's recent healthy pace.

Robust statistics, and never one slow sample:

- The baseline is the median rate of recent healthy samples (the last `baseline_window`
  seconds, at least `baseline_min_samples` of them). Slow samples never enter it, so a
  slowdown cannot become the new normal while it lasts.
- A sample is slow when it is below `baseline * (1 - max(min_drop, noise_k * noise))`, where
  noise is the baseline's own relative spread (1.4826 * MAD / median): a noisy run needs a
  bigger drop before one sample counts as slow.
- A straggler is declared when, over the last `sustain` seconds, at least `slow_fraction` of
  the samples (and `min_samples` of them) are slow, and slowness began at least
  `slow_fraction * sustain` ago. A checkpoint spike or a few slow steps are far from that.
- Samples taken while a checkpoint is saving are ignored.

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


@dataclass(frozen=True)
class StragglerConfig:
    """Seconds and fractions. `min_drop` and `sustain` are the policy's `straggler` keys."""

    min_drop: float = 0.15
    sustain: float = 600.0
    min_samples: int = 5
    slow_fraction: float = 0.8
    baseline_window: float = 1800.0
    baseline_min_samples: int = 10
    baseline_max_samples: int = 1000
    noise_k: float = 3.0

    def __post_init__(self) -> None:
        if not (0 < self.min_drop < 1 and 0 < self.slow_fraction <= 1 and self.sustain > 0):
            raise ValueError("straggler: need 0 < min_drop < 1, 0 < slow_fraction <= 1 and sustain > 0")


@dataclass(frozen=True)
class StragglerVerdict:
    since: float  # time of the first slow sample of this slowdown
    ref: int | None  # what the caller attached to that sample (a log line number)
    baseline: float
    current: float  # median rate over the sustain window
    threshold: float

    @property
    def drop(self) -> float:
        return 1.0 - self.current / self.baseline

    def describe(self) -> str:
        return (
            f"throughput {self.drop:.0%} below the run's recent baseline "
            f"({self.current:.4g} vs {self.baseline:.4g}; slow below {self.threshold:.4g})"
        )


def robust_center(values: Iterable[float]) -> tuple[float, float]:
    """(median, robust standard deviation from the median absolute deviation)."""
    data = list(values)
    center = statistics.median(data)
    spread = MAD_TO_SIGMA * statistics.median(abs(v - center) for v in data)
    return center, spread


class StragglerDetector:
    """Feed it (time, rate) samples; `add` returns a verdict while a sustained slowdown lasts."""

    # The baseline's median is recomputed after this many new healthy samples (or a sixteenth of
    # the baseline), not every time: a log of a million steps stays cheap, and the baseline
    # moves slowly anyway.
    RECOMPUTE_EVERY = 8

    def __init__(self, config: StragglerConfig | None = None) -> None:
        self.config = config or StragglerConfig()
        self._healthy: deque[tuple[float, float]] = deque()
        self._window: deque[tuple[float, float, bool, int | None]] = deque()
        self._slow: deque[tuple[float, int | None]] = deque()  # the slow samples in the window
        self._base: tuple[float, float] | None = None
        self._stale = 0
        self.verdict: StragglerVerdict | None = None

    def baseline(self) -> tuple[float, float] | None:
        """(median rate, threshold below which a sample is slow), once enough samples exist."""
        if len(self._healthy) < self.config.baseline_min_samples:
            return None
        if self._base is None or self._stale >= max(self.RECOMPUTE_EVERY, len(self._healthy) // 16):
            center, spread = robust_center(rate for _, rate in self._healthy)
            noise = spread / center if center > 0 else 0.0
            self._base = center, center * (1.0 - max(self.config.min_drop, self.config.noise_k * noise))
            self._stale = 0
        return self._base

    def add(
        self, t: float, rate: float, *, ref: int | None = None, checkpoint: bool = False
    ) -> StragglerVerdict | None:
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

    def reset_baseline(self) -> None:
        """Forget the baseline (after a restart, or when a new pace is accepted as normal)."""
        self._healthy.clear()
        self._window.clear()
        self._slow.clear()
        self._base, self.verdict = None, None

    def _remember_healthy(self, t: float, rate: float) -> None:
        cfg = self.config
        self._healthy.append((t, rate))
        self._stale += 1
        while len(self._healthy) > cfg.baseline_max_samples or (
            len(self._healthy) > cfg.baseline_min_samples and self._healthy[0][0] < t - cfg.baseline_window
        ):
            self._healthy.popleft()

    def _judge(self, now: float, center: float, threshold: float) -> StragglerVerdict | None:
        cfg = self.config
        slow = len(self._slow)
        if slow < cfg.min_samples or slow < cfg.slow_fraction * len(self._window):
            return None
        first_t, first_ref = self._slow[0]
        if now - first_t < cfg.slow_fraction * cfg.sustain:
            return None
        if self.verdict is not None and self.verdict.since <= first_t:
            first_t, first_ref = self.verdict.since, self.verdict.ref  # the same slowdown goes on
        current = statistics.median(rate for _, rate, _, _ in self._window)
        return StragglerVerdict(since=first_t, ref=first_ref, baseline=center, current=current, threshold=threshold)


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
