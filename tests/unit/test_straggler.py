"""Straggler detection: sustained drops are found within the sustain window, noise is not."""

from __future__ import annotations

import random

import pytest

from activities.straggler import RankStepTimes, StragglerConfig, StragglerDetector, slow_ranks

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


def test_a_noisy_run_needs_a_bigger_drop() -> None:
    def noisy(t: float, rnd: random.Random) -> tuple[float, bool]:
        return 1000.0 * (1 + 0.15 * rnd.gauss(0, 1)) * (0.8 if t >= 1800 else 1.0), False

    assert run(StragglerDetector(), 7200.0, 10.0, noisy, 3) is None


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
