"""Straggler detection: sustained drops are found within the sustain window, noise is not."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from recovery.activities.straggler import (
    RankStepTimes,
    StragglerConfig,
    StragglerDetector,
    short_series_slowdown,
    slow_ranks,
)

SUSTAIN = 600.0  # the policy's default 10m


def run(detector: StragglerDetector, seconds: float, every: float, rate_at, seed: int):  # type: ignore[no-untyped-def]
    """Feed samples; return the time of the first verdict (or None)."""
    rnd = random.Random(seed)
    t = 0.0
    while t < seconds:
        rate, checkpoint = rate_at(t, rnd)
        if detector.add(t, rate, ref=int(t), checkpoint=checkpoint) is not None:
            return t
        t += every
    return None


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("every", [5.0, 30.0])
def test_a_sustained_25_percent_drop_is_found_within_the_sustain_window(seed: int, every: float) -> None:
    drop_at = 1800.0

    def rate_at(t: float, rnd: random.Random) -> tuple[float, bool]:
        return 1000.0 * (1 + 0.05 * rnd.gauss(0, 1)) * (0.75 if t >= drop_at else 1.0), False

    detector = StragglerDetector(StragglerConfig(sustain=SUSTAIN))
    found = run(detector, 4 * 3600, every, rate_at, seed)
    assert found is not None and drop_at < found <= drop_at + SUSTAIN
    verdict = detector.verdict
    assert verdict is not None and 0.2 < verdict.drop < 0.3
    assert drop_at <= verdict.since < drop_at + 2 * every  # points at the start of the slowdown


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("every", [5.0, 30.0])
def test_an_hour_of_noise_and_checkpoint_spikes_is_not_a_straggler(seed: int, every: float) -> None:
    def rate_at(t: float, rnd: random.Random) -> tuple[float, bool]:
        phase = t % 900.0  # a checkpoint every 15 minutes, lasting about a minute
        if phase < 60.0:
            flagged = phase < 30.0  # half of the spike is reported as saving, half is not
            return 1000.0 * rnd.uniform(0.05, 0.4), flagged
        return 1000.0 * (1 + 0.05 * rnd.gauss(0, 1)), False

    detector = StragglerDetector(StragglerConfig(sustain=SUSTAIN))
    assert run(detector, 3600.0, every, rate_at, seed) is None


def test_one_slow_sample_or_a_short_dip_is_never_enough() -> None:
    detector = StragglerDetector(StragglerConfig(sustain=SUSTAIN))
    for i in range(200):
        rate = 10.0 if i == 150 else 1000.0
        assert detector.add(i * 10.0, rate) is None
    for i in range(200, 230):  # five minutes at half speed: shorter than the window allows
        assert detector.add(i * 10.0, 500.0) is None


def heavy(rnd: random.Random, noise: float) -> float:
    """A rate factor with relative spread `noise` and heavy tails (Student's t, 3 degrees)."""
    t3 = rnd.gauss(0, 1) / math.sqrt(sum(rnd.gauss(0, 1) ** 2 for _ in range(3)) / 3)
    return max(0.3, 1.0 + noise * t3 / math.sqrt(3))


def first_verdict(detector: StragglerDetector, rates: list[float], every: float = 1.0, steps: int = 1) -> int | None:
    """Feed one rate per sample; the index of the first sample with a verdict."""
    for i, rate in enumerate(rates):
        if detector.add(i * every, rate, ref=i, steps=steps) is not None:
            return i
    return None


def drop_run(seed: int, noise: float, drop: float, healthy: int = 600, slow: int = 600) -> list[float]:
    rnd = random.Random(seed)
    return [1000.0 * heavy(rnd, noise) * (1 - drop if i >= healthy else 1.0) for i in range(healthy + slow)]


@pytest.mark.parametrize("seed", range(10))
def test_a_10_percent_drop_is_found_where_it_began(seed: int) -> None:
    detector = StragglerDetector()  # the defaults: min_drop 0.10, sustain 600 (samples a second apart)
    found = first_verdict(detector, drop_run(seed, 0.04, 0.10))
    assert found is not None and 600 < found <= 1200
    verdict = detector.verdict
    assert verdict is not None and 0.07 < verdict.drop < 0.13
    assert 590 <= verdict.since <= 620 and verdict.ref == int(verdict.since)
    assert "below the run's recent baseline" in verdict.describe()


def test_a_noisy_run_needs_more_evidence() -> None:
    """The statistic's threshold grows with the baseline's spread: the same drop takes more
    samples to be sure of in a noisy run, and is still found within `sustain`."""
    config = StragglerConfig(min_steps=5)  # persistence out of the way: evidence decides
    delays = {}
    for noise in (0.02, 0.25):
        found = [first_verdict(StragglerDetector(config), drop_run(seed, noise, 0.25)) for seed in range(8)]
        assert all(f is not None and 600 <= f <= 1200 for f in found)
        delays[noise] = statistics.median(f - 600 for f in found if f is not None)
    assert delays[0.25] > 2 * delays[0.02]


def test_a_drop_smaller_than_min_drop_is_never_declared() -> None:
    for seed in range(10):
        assert first_verdict(StragglerDetector(), drop_run(seed, 0.03, 0.05, slow=3000)) is None


def test_a_drop_lasting_sustain_is_declared_by_then_with_few_samples() -> None:
    """Long steps, a sample every 10 s: `sustain` (10 minutes) is 60 samples, fewer than
    `min_steps`; the slowdown still has to be declared within it."""
    for seed in range(10):
        rates = drop_run(seed, 0.05, 0.10, healthy=100, slow=60)
        found = first_verdict(StragglerDetector(), rates, every=10.0)
        assert found is not None and found >= 100, seed


@pytest.mark.parametrize("seed", range(20))
def test_warmup_spikes_and_dips_are_never_stragglers(seed: int) -> None:
    rnd = random.Random(seed)
    rates = [1000.0 * heavy(rnd, 0.05) for _ in range(3000)]
    rates[0] /= 30  # compiling
    for i in range(1, 30):
        rates[i] /= 1 + 2 * math.exp(-i / 5)  # warming up
    for start in range(100, 3000, 100):  # a checkpoint or an evaluation: a few steps 2-10x slower
        for i in range(start, start + rnd.randint(1, 3)):
            rates[i] /= rnd.uniform(2, 10)
    for start in (420, 1130, 1940, 2650):  # short dips: 10-30 steps 10-50 % slower, then back
        depth = rnd.uniform(0.1, 0.5)
        for i in range(start, start + rnd.randint(10, 30)):
            rates[i] *= 1 - depth
    assert first_verdict(StragglerDetector(), rates) is None


def test_a_line_every_n_steps_counts_its_steps() -> None:
    """Persistence is counted in steps: a log line every 10 steps needs a tenth of the lines."""
    rates = drop_run(1, 0.02, 0.25, healthy=100, slow=60)
    every_step = first_verdict(StragglerDetector(), rates, steps=1)
    every_ten = first_verdict(StragglerDetector(), rates, steps=10)
    assert every_step is None  # 60 steps are not yet a sustained slowdown
    assert every_ten is not None and every_ten - 100 < 20


def test_the_warmup_is_not_the_baseline() -> None:
    detector = StragglerDetector()
    for i in range(5):
        assert detector.add(i, 10.0) is None  # compiling: not even a baseline
    assert detector.baseline() is None
    for i in range(5, 100):
        detector.add(i, 1000.0)
    assert detector.baseline() == pytest.approx((1000.0, 900.0))


def test_recovery_clears_the_verdict() -> None:
    detector = StragglerDetector(StragglerConfig(sustain=100.0))
    for i in range(30):
        detector.add(i * 10.0, 1000.0)
    for i in range(30, 50):
        detector.add(i * 10.0, 600.0)
    assert detector.verdict is not None
    for i in range(50, 80):
        detector.add(i * 10.0, 1000.0)
    assert detector.verdict is None


def test_slow_ranks_names_the_outlier() -> None:
    times = {rank: [1.0, 1.02, 0.98, 1.01] for rank in range(8)}
    times[5] = [1.4, 1.38, 1.45, 1.41]
    found = slow_ranks(times)
    assert [s.rank for s in found] == [5]
    assert found[0].excess == pytest.approx(0.41, abs=0.02)
    # two ranks have no majority: the slower one is named when it stands out from the other
    assert [s.rank for s in slow_ranks({0: [1.0] * 5, 1: [2.0] * 5})] == [1]
    assert slow_ranks({0: [1.0] * 5, 1: [1.05] * 5}) == []


def test_rank_step_times_keeps_a_recent_window() -> None:
    tracker = RankStepTimes(window=5)
    for i in range(50):
        for rank in range(4):
            tracker.add(rank, 2.0 if rank == 2 and i >= 45 else 1.0)
    assert [s.rank for s in tracker.slow_ranks()] == [2]


# --- a finished log's short series, judged whole ---------------------------------------------


def test_a_short_series_that_steps_down_is_a_slowdown_from_where_it_began() -> None:
    # warm-up, four epochs at their pace, then five 20 % slower
    rates = [0.5, 1.0, 1.02, 0.98, 1.01, 0.8, 0.79, 0.81, 0.8, 0.78]
    found = short_series_slowdown(rates, 0.10)
    assert found is not None and found.start == 5
    assert found.drop == pytest.approx(0.2, abs=0.02)


def test_a_short_series_slowing_by_degrees_began_at_its_first_slower_sample() -> None:
    rates = [1.0, 1.0, 1.0, 1.0, 0.88, 0.86, 0.7, 0.7, 0.69, 0.7]
    found = short_series_slowdown(rates, 0.10)
    assert found is not None and found.start == 4 and found.drop == pytest.approx(0.3)


@pytest.mark.parametrize(
    "rates",
    [
        [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99],  # noise
        [0.3, 0.5, 0.8, 1.0, 1.0, 0.99, 1.01, 1.0],  # warm-up getting faster
        [1.0, 1.0, 1.01, 0.99, 0.5, 1.0, 1.0, 0.99, 1.01],  # one evaluation epoch
        [1.0, 1.0, 1.01, 0.99, 0.8, 0.8, 0.79, 1.0, 1.0],  # a dip that ended
        [1.0, 1.0, 1.01, 0.99, 0.95, 0.95, 0.94, 0.95],  # 5 %: under min_drop
        [1.0, 1.0, 1.0, 0.7, 0.7, 0.7],  # too few samples to say
        [1.0, 1.0, 1.01, 0.99, 0.8, 0.8, 1.0, 0.8, 0.79],  # not slow throughout
    ],
)
def test_a_short_series_without_a_clean_lasting_drop_is_no_slowdown(rates: list[float]) -> None:
    assert short_series_slowdown(rates, 0.10) is None


def test_a_short_series_honours_min_drop() -> None:
    rates = [1.0, 1.0, 1.0, 1.0, 0.85, 0.85, 0.85, 0.85]
    assert short_series_slowdown(rates, 0.10) is not None
    assert short_series_slowdown(rates, 0.20) is None
