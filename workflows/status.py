"""Building the `status` answer from what a run has recorded. Pure: `now` is passed in."""

from __future__ import annotations

from datetime import datetime

from recovery.workflows.models import (
    FINAL_MILESTONE,
    Attempt,
    Goodput,
    Milestone,
    RunRecord,
    RunSpec,
    RunState,
    RunStatus,
    RunSummary,
    Symptom,
)


def public_state(record: RunRecord) -> RunState:
    """`RecoveryState`: a paused run that is not finished shows as paused."""
    if record.paused and not record.state.finished:
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
    """Time since the first attempt started, split into productive time and time lost to each
    failure: detection, restart, and the steps the successor recomputed (see `Goodput`)."""
    started = next((a.started_at for a in record.attempts if a.started_at), None)
    if started is None:
        return Goodput()
    end = next((m.at for m in record.milestones if m.name in FINAL_MILESTONE.values()), now)
    elapsed = max(0.0, (end - started).total_seconds())
    detection = restart = recompute = 0.0
    steps = failures = 0
    for index, failed, detected, running in _recoveries(record.milestones, min(now, end)):
        failures += 1
        detection += (detected - failed).total_seconds() * _share_lost(record.symptoms, index)
        restart += (running - detected).total_seconds()
        redone, seconds = recomputed(record.attempts, index)
        steps += redone
        recompute += seconds
    lost = min(elapsed, detection + restart + recompute)
    productive = elapsed - lost
    return Goodput(
        elapsed_seconds=elapsed,
        productive_seconds=productive,
        lost_seconds=lost,
        lost_detection_seconds=detection,
        lost_restart_seconds=restart,
        lost_recompute_seconds=recompute,
        recomputed_steps=steps,
        failures=failures,
        ettr=productive / elapsed if elapsed > 0 else None,
    )


def _share_lost(symptoms: list[Symptom], attempt_index: int) -> float:
    """How much of the time between failure and detection was lost: all of it, except for a
    straggler, which still made progress, at the pace it had left (its slow steps after the last
    checkpoint are redone, and counted as recomputed at the healthy pace)."""
    symptom = next((s for s in symptoms if s.attempt_index == attempt_index), None)
    if symptom is None or symptom.kind != "straggler" or symptom.slowdown is None:
        return 1.0
    return min(1.0, max(0.0, symptom.slowdown))


def recomputed(attempts: list[Attempt], failed_index: int) -> tuple[int, float]:
    """(steps, seconds) the successor of attempt `failed_index` redid: progress lines report
    completed steps, so a successor whose first line is step F resumed from step F-1, and redid
    every step up to the last one the failed attempt reached, at the successor's step time (the
    failed attempt's until the successor's is known). Unknown (0) until the successor
    reported progress, or when either side reported none."""
    if failed_index + 1 >= len(attempts) or failed_index < 0:
        return 0, 0.0
    failed, successor = attempts[failed_index], attempts[failed_index + 1]
    if failed.last_step is None or successor.first_step is None:
        return 0, 0.0
    steps = max(0, failed.last_step - (successor.first_step - 1))
    step_seconds = successor.step_seconds or failed.step_seconds or 0.0  # the redoing pace, once known
    return steps, steps * step_seconds


def _recoveries(milestones: list[Milestone], now: datetime) -> list[tuple[int, datetime, datetime, datetime]]:
    """(attempt, failure observed, symptom detected, successor running or now) per failed attempt."""
    out = []
    for m in milestones:
        if m.name != "failure_observed" or m.attempt_index is None:
            continue
        failed = min(m.at, now)
        detected = min(_milestone(milestones, "symptom_detected", m.attempt_index) or now, now)
        running = min(_milestone(milestones, "successor_running", m.attempt_index) or now, now)
        out.append((m.attempt_index, failed, max(failed, detected), max(failed, detected, running)))
    return out


def _milestone(milestones: list[Milestone], name: str, attempt: int | None = None) -> datetime | None:
    for m in milestones:
        if m.name == name and (attempt is None or m.attempt_index == attempt):
            return m.at
    return None
