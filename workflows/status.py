"""Building the `status` answer from what a run has recorded. Pure: `now` is passed in."""

from __future__ import annotations

from datetime import datetime

from workflows.models import Goodput, Milestone, RunRecord, RunSpec, RunState, RunStatus, RunSummary

_FINAL = ("completed", "gave_up", "cancelled")


def public_state(record: RunRecord) -> RunState:
    """`RecoveryState`: a paused run that is not finished shows as paused."""
    finished = (RunState.COMPLETED, RunState.GAVE_UP, RunState.CANCELLED)
    if record.paused and record.state not in finished:
        return RunState.PAUSED
    return record.state


def summary(spec: RunSpec, record: RunRecord) -> RunSummary:
    last = record.attempts[-1] if record.attempts else None
    return RunSummary(
        id=spec.run_id,
        name=spec.name,
        state=public_state(record),
        paused=record.paused,
        owner=spec.owner,
        policy=spec.policy.name,
        attempts=len(record.attempts),
        scheduler=spec.scheduler,
        job_id=last.job_id if last else None,
        last_symptom=record.symptoms[-1].kind if record.symptoms else None,
        created_at=spec.submitted_at,
    )


def build_status(spec: RunSpec, record: RunRecord, now: datetime) -> RunStatus:
    return RunStatus(
        run=summary(spec, record),
        attempts=record.attempts,
        symptoms=record.symptoms,
        diagnoses=record.diagnoses,
        advice=record.advice,
        actions=record.actions,
        milestones=record.milestones,
        goodput=goodput(record, now),
    )


def goodput(record: RunRecord, now: datetime) -> Goodput:
    """Time since the first attempt started, split into productive time and time lost between
    a failure and its successor running (detection and restart)."""
    started = next((a.started_at for a in record.attempts if a.started_at), None)
    if started is None:
        return Goodput()
    end = next((m.at for m in record.milestones if m.name in _FINAL), now)
    elapsed = max(0.0, (end - started).total_seconds())
    detection = restart = 0.0
    for failed, detected, running in _recoveries(record.milestones, now):
        detection += (detected - failed).total_seconds()
        restart += (running - detected).total_seconds()
    productive = max(0.0, elapsed - detection - restart)
    return Goodput(
        elapsed_seconds=elapsed,
        productive_seconds=productive,
        lost_detection_seconds=detection,
        lost_restart_seconds=restart,
        ettr=productive / elapsed if elapsed > 0 else None,
    )


def _recoveries(milestones: list[Milestone], now: datetime) -> list[tuple[datetime, datetime, datetime]]:
    """(failure observed, symptom detected, successor running or now) per failed attempt."""
    out = []
    for m in milestones:
        if m.name != "failure_observed":
            continue
        detected = _milestone(milestones, "symptom_detected", m.attempt_index) or now
        running = _milestone(milestones, "successor_running", m.attempt_index) or now
        out.append((m.at, max(m.at, detected), max(m.at, detected, running)))
    return out


def _milestone(milestones: list[Milestone], name: str, attempt: int | None = None) -> datetime | None:
    for m in milestones:
        if m.name == name and (attempt is None or m.attempt_index == attempt):
            return m.at
    return None
