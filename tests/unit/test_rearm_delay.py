"""The watch's re-arm delay: spread per run so that runs started together re-arm apart, and the
same on every replay (a timer's duration comes from it)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from recovery.workflows.training_run import rearm_delay


def test_a_delay_is_within_one_to_one_and_a_half_times_the_setting() -> None:
    delays = [rearm_delay(3600.0, f"run-{i}", 0, 0) for i in range(2000)]
    assert all(3600.0 <= d < 5400.0 for d in delays)


def test_runs_started_together_re_arm_apart() -> None:
    delays = [rearm_delay(3600.0, f"run-{i}", 0, 0) for i in range(2000)]
    # Spread over the whole half-hour, evenly enough that no minute takes a crowd.
    assert 4400.0 < statistics.mean(delays) < 4600.0
    per_minute = statistics.multimode(int(d // 60) for d in delays)
    busiest = max(sum(1 for d in delays if int(d // 60) == m) for m in per_minute)
    assert busiest < 2000 / 30 * 2


def test_a_run_s_next_re_arm_and_next_attempt_get_their_own_delay() -> None:
    first = rearm_delay(3600.0, "run-a", 0, 0)
    assert rearm_delay(3600.0, "run-a", 0, 1) != first
    assert rearm_delay(3600.0, "run-a", 1, 0) != first


def test_the_delay_is_the_same_in_another_worker_process() -> None:
    # A replay on another worker computes it again; hash() would differ there (PYTHONHASHSEED).
    code = "from recovery.workflows.training_run import rearm_delay; print(rearm_delay(1800.0, 'run-a', 2, 3))"
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        assert float(out.stdout) == rearm_delay(1800.0, "run-a", 2, 3)
