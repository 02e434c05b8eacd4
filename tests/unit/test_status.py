from __future__ import annotations

from datetime import UTC, datetime, timedelta

from recovery.workflows.models import Attempt, Milestone, RunRecord, RunSpec, RunState
from recovery.workflows.policy import Policy
from recovery.workflows.status import build_status, goodput, public_state

T0 = datetime(2026, 11, 29, 1, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def record() -> RunRecord:
    return RunRecord(
        state=RunState.RUNNING,
        attempts=[
            Attempt(index=0, job_id="1", started_at=at(0)),
            Attempt(index=1, job_id="1", restart_count=1),
        ],
        milestones=[
            Milestone(name="failure_observed", at=at(100), attempt_index=0),
            Milestone(name="symptom_detected", at=at(101), attempt_index=0),
            Milestone(name="successor_running", at=at(104), attempt_index=0),
        ],
    )


def test_goodput_splits_lost_time() -> None:
    g = goodput(record(), at(200))
    assert g.elapsed_seconds == 200
    assert g.lost_detection_seconds == 1 and g.lost_restart_seconds == 3
    assert g.productive_seconds == 196
    assert g.ettr == 196 / 200


def test_goodput_counts_an_unfinished_recovery_up_to_now() -> None:
    rec = record()
    rec.milestones = rec.milestones[:2]
    g = goodput(rec, at(150))
    assert g.lost_restart_seconds == 49


def test_goodput_stops_at_completion() -> None:
    rec = record()
    rec.milestones.append(Milestone(name="completed", at=at(300), attempt_index=1))
    assert goodput(rec, at(10_000)).elapsed_seconds == 300


def test_no_goodput_before_start() -> None:
    assert goodput(RunRecord(), T0).ettr is None


def test_paused_shows_unless_finished() -> None:
    assert public_state(RunRecord(state=RunState.RECOVERING, paused=True)) is RunState.PAUSED
    assert public_state(RunRecord(state=RunState.COMPLETED, paused=True)) is RunState.COMPLETED


def test_status_summary() -> None:
    spec = RunSpec(
        run_id="r-1", name="r", scheduler="local", script_path="/j.sbatch", script="", nodes=2,
        workdir="/", owner="me", policy=Policy(name="p"), submitted_at=T0,
    )  # fmt: skip
    status = build_status(spec, record(), at(200))
    assert status.run.attempts == 2 and status.run.job_id == "1" and status.run.policy == "p"
    dumped = status.model_dump(mode="json")
    assert dumped["attempts"][0]["started_at"] == "2026-11-29T01:00:00Z"
