"""Goodput per run: productive time vs time lost to detection, restart and recomputed steps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recovery.workflows.models import Attempt, Milestone, RunRecord, RunState, Symptom
from recovery.workflows.status import goodput, recomputed

T0 = datetime(2026, 11, 29, 1, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def failed_once(
    *, last_step: int | None = 34, first_step: int | None = 31, step_seconds: float | None = 2.0
) -> RunRecord:
    """Attempt 0 ran from 0 s, reached step 34 (checkpoint at 30) and failed at 100 s; the
    symptom came at 110 s, the successor ran at 130 s and its first progress line was step 31."""
    return RunRecord(
        state=RunState.RUNNING,
        attempts=[
            Attempt(index=0, job_id="7", started_at=at(0), last_step=last_step, step_seconds=step_seconds),
            Attempt(index=1, job_id="7", restart_count=1, started_at=at(130), first_step=first_step),
        ],
        milestones=[
            Milestone(name="failure_observed", at=at(100), attempt_index=0),
            Milestone(name="symptom_detected", at=at(110), attempt_index=0),
            Milestone(name="successor_running", at=at(130), attempt_index=0),
        ],
    )


def test_the_lost_parts_and_ettr() -> None:
    g = goodput(failed_once(), at(200))
    assert g.elapsed_seconds == 200
    assert g.failures == 1
    assert g.lost_detection_seconds == 10 and g.lost_restart_seconds == 20
    # resumed from step 30 (first line: step 31), the failed attempt had reached 34: 4 steps of 2 s
    assert g.recomputed_steps == 4 and g.lost_recompute_seconds == 8
    assert g.lost_seconds == 38 and g.productive_seconds == 162
    assert g.ettr == pytest.approx(162 / 200)


def test_parts_add_up_and_ettr_stays_within_0_and_1() -> None:
    for now in (50, 100, 105, 120, 131, 500, 5000):
        g = goodput(failed_once(), at(now))
        assert g.productive_seconds + g.lost_seconds == pytest.approx(g.elapsed_seconds)
        assert g.ettr is not None and 0 <= g.ettr <= 1


def test_a_successor_that_started_from_zero_recomputes_everything() -> None:
    assert recomputed(failed_once(first_step=1).attempts, 0) == (34, 68.0)


def test_a_successor_that_skipped_ahead_recomputes_nothing() -> None:
    assert recomputed(failed_once(first_step=40).attempts, 0) == (0, 0.0)


def test_recompute_is_unknown_until_both_sides_reported_progress() -> None:
    assert recomputed(failed_once(first_step=None).attempts, 0) == (0, 0.0)
    assert recomputed(failed_once(last_step=None).attempts, 0) == (0, 0.0)
    assert recomputed(failed_once().attempts[:1], 0) == (0, 0.0)


def test_the_successors_step_time_stands_in_for_a_failed_attempt_without_one() -> None:
    rec = failed_once(step_seconds=None)
    rec.attempts[1] = rec.attempts[1].model_copy(update={"step_seconds": 3.0})
    assert recomputed(rec.attempts, 0) == (4, 12.0)


def test_a_recovery_in_progress_counts_up_to_now() -> None:
    rec = failed_once()
    rec.milestones = rec.milestones[:2]  # detected, successor not running yet
    g = goodput(rec, at(120))
    assert g.lost_detection_seconds == 10 and g.lost_restart_seconds == 10
    assert g.recomputed_steps == 4  # the successor's first step is already known in this record


def test_lost_time_never_exceeds_elapsed() -> None:
    rec = failed_once(step_seconds=1000.0)
    g = goodput(rec, at(200))
    assert g.lost_seconds == g.elapsed_seconds == 200 and g.productive_seconds == 0 and g.ettr == 0


def test_a_completed_run_stops_the_clock() -> None:
    rec = failed_once()
    rec.milestones.append(Milestone(name="completed", at=at(300), attempt_index=1))
    g = goodput(rec, at(10_000))
    assert g.elapsed_seconds == 300 and g.lost_seconds == 38
    assert g.ettr == pytest.approx(262 / 300)


def test_two_failures_add_up() -> None:
    rec = failed_once()
    rec.attempts[1] = rec.attempts[1].model_copy(update={"last_step": 50, "step_seconds": 2.0})
    rec.attempts.append(Attempt(index=2, job_id="7", restart_count=2, started_at=at(260), first_step=46))
    rec.milestones += [
        Milestone(name="failure_observed", at=at(200), attempt_index=1),
        Milestone(name="symptom_detected", at=at(230), attempt_index=1),
        Milestone(name="successor_running", at=at(260), attempt_index=1),
    ]
    g = goodput(rec, at(400))
    assert g.failures == 2
    assert (g.lost_detection_seconds, g.lost_restart_seconds) == (40, 50)
    assert g.recomputed_steps == 4 + 5 and g.lost_recompute_seconds == 18
    assert g.lost_seconds == 108


def test_no_goodput_before_the_first_attempt_started() -> None:
    g = goodput(RunRecord(attempts=[Attempt(index=0, job_id="1")]), at(10))
    assert g.ettr is None and g.elapsed_seconds == 0


def test_the_successors_step_time_is_the_redoing_pace_once_known() -> None:
    rec = failed_once(step_seconds=1.25)  # a straggler's slow steps
    rec.attempts[1] = rec.attempts[1].model_copy(update={"step_seconds": 0.25})
    assert recomputed(rec.attempts, 0) == (4, 1.0)


def test_a_straggler_loses_only_the_share_of_its_pace_until_detected() -> None:
    rec = failed_once()
    # slow from 80 s on at a fifth of its pace (80% lost), detected at 110 s
    rec.milestones[0] = rec.milestones[0].model_copy(update={"at": at(80)})
    rec.symptoms = [
        Symptom(attempt_index=0, kind="straggler", detected_at=at(110), failed_at=at(80), slowdown=0.8),
    ]
    g = goodput(rec, at(200))
    assert g.lost_detection_seconds == pytest.approx(24)  # 30 s slow x 0.8
    assert g.lost_restart_seconds == 20 and g.lost_recompute_seconds == 8


def test_a_hang_or_crash_loses_all_the_time_until_detected() -> None:
    rec = failed_once()
    rec.symptoms = [Symptom(attempt_index=0, kind="hang", detected_at=at(110), failed_at=at(100))]
    assert goodput(rec, at(200)).lost_detection_seconds == 10
