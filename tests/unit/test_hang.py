"""Adaptive hang timeout: learned from step intervals, bounded, with startup and checkpoint grace."""

from __future__ import annotations

import pytest

from recovery.activities.hang import HangConfig, HangDetector
from recovery.activities.progress import ProgressRecord

CFG = HangConfig(min_timeout=60, max_timeout=3600, startup_grace=600, checkpoint_grace=900)


def step(n: int, **kw: object) -> ProgressRecord:
    return ProgressRecord(step=n, text=f"recovery-progress step={n}", line=n, **kw)  # type: ignore[arg-type]


def steady(detector: HangDetector, steps: int, every: float, start: float = 0.0) -> float:
    t = start
    for n in range(1, steps + 1):
        t += every
        detector.progress(step(n), t)
    return t


def test_startup_grace_counts_from_the_last_output() -> None:
    d = HangDetector(CFG, started_at=0)
    assert d.phase() == "startup" and d.timeout() == 600
    assert d.check(599) is None
    d.output(500)  # still loading, and saying so
    assert d.check(1000) is None
    verdict = d.check(1101)
    assert verdict is not None and verdict.phase == "startup" and verdict.last is None
    assert "no first progress for 10m01s" in verdict.describe()


def test_timeout_is_learned_from_step_intervals_and_bounded() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 50, every=30.0)
    assert d.learned_timeout() == pytest.approx(300.0)  # 10 x the 30 s median
    assert d.check(t + 299) is None
    verdict = d.check(t + 301)
    assert verdict is not None and verdict.phase == "training" and verdict.last is not None
    assert verdict.last.step == 50 and "last seen step 50 (line 50)" in verdict.describe()

    fast = HangDetector(CFG, started_at=0)
    steady(fast, 50, every=0.5)
    assert fast.learned_timeout() == 60  # never below min_timeout
    slow = HangDetector(CFG, started_at=0)
    steady(slow, 10, every=900.0)
    assert slow.learned_timeout() == 3600  # never above max_timeout


def test_a_gap_the_run_came_back_from_widens_the_timeout() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 40, every=10.0)
    d.progress(step(41), t + 250)  # an evaluation pass
    assert d.learned_timeout() == pytest.approx(500.0)  # 2 x the longest gap


def test_output_without_progress_does_not_reset_the_clock_once_training() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 20, every=1.0)
    d.output(t + 50)  # warnings printed by a stuck job
    assert d.check(t + 61) is not None


def test_other_ranks_repeating_a_step_are_not_progress() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 20, every=1.0)
    d.progress(step(20, rank=5), t + 59)
    assert d.check(t + 61) is not None


def test_checkpoint_grace_while_saving_and_the_save_is_not_a_step_interval() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 50, every=1.0)
    d.progress(step(50, checkpoint="saving"), t + 1)
    assert d.phase() == "checkpoint" and d.timeout() == 900
    assert d.check(t + 800) is None
    d.progress(step(50, checkpoint="saved"), t + 850)
    assert d.phase() == "training"
    d.progress(step(51), t + 851)
    assert d.learned_timeout() == 60  # the 850 s save did not teach it that steps are slow
    assert d.check(t + 851 + 59) is None and d.check(t + 851 + 61) is not None


def test_a_new_step_ends_a_save_nobody_reported_finished() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 5, every=1.0)
    d.progress(step(5, checkpoint="saving"), t)
    d.progress(step(6), t + 100)
    assert d.phase() == "training"


def test_deadline_matches_check() -> None:
    d = HangDetector(CFG, started_at=0)
    t = steady(d, 30, every=2.0)
    assert d.check(d.deadline()) is None and d.check(d.deadline() + 0.01) is not None
    assert d.deadline() == t + d.timeout()


def test_config_is_validated() -> None:
    with pytest.raises(ValueError):
        HangConfig(min_timeout=10, max_timeout=5)
