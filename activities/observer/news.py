"""What is worth waking a run for: the pure judgement of one look at an attempt.

Given the scheduler's view of the job and the attempt's log as read so far, `while_running`
says whether the attempt made its first progress, hangs or straggles, and `ended` turns an
attempt that is over into its `WatchResult` (a `crash` symptom whose evidence is the log's own
diagnosis first, then what the scheduler reported). The observer (`loop.py`) calls them for
every watched attempt on each of its looks; nothing here sleeps, polls or heartbeats.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from recovery.activities.clock import utcnow
from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.progress import ProgressRecord
from recovery.workflows.models import (
    Attempt,
    Evidence,
    JobObservation,
    JobState,
    Symptom,
    TaskResult,
    WatchInput,
    WatchResult,
)


def open_log(obs: JobObservation, inp: WatchInput, now: float, reading: LogReading) -> AttemptLog | None:
    """Start reading once the attempt has started and the scheduler named its output file."""
    if obs.output_path is None or obs.started_at is None or obs.restart_count != inp.attempt.restart_count:
        return None
    trained = inp.attempt.first_step is not None
    return AttemptLog(obs.output_path, inp.attempt.log_offset, obs.nodes, inp.policy, now, trained, reading)


def while_running(obs: JobObservation, inp: WatchInput, log: AttemptLog, now: float) -> WatchResult | None:
    """News worth a decision while the attempt still runs: first progress, a hang, a slowdown."""
    attempt = inp.attempt
    if inp.report_progress and attempt.first_step is None and log.first is not None:
        return WatchResult(
            event="progress",
            observation=obs,
            # Where this attempt's output starts, not where this read stopped: the next watch
            # reads the attempt again from there, so a failure already read (a fast job can
            # print its first step and its fatal error in one read) is not lost with this reader.
            log_offset=attempt.log_offset,
            first_step=log.first.step,
            first_step_at=log.first_at,
        )
    hung = log.hung(now)
    if hung is not None:
        text = hung.describe()  # "no progress for 10s (>...)": it says what it is itself
        evidence = Evidence(source=log.path, text=text, line=_line(hung.last))
        # A hang failed when its progress stopped: that is where its detection delay starts.
        return _stuck("hang", obs, attempt, log, evidence, hung.silent_for)
    if inp.policy.straggler.enabled and log.slow is not None:
        text = f"straggling: {log.slow.describe()}"
        evidence = Evidence(source=log.path, text=text, line=log.slow.ref)
        # A straggler failed when its slowdown began; until detected it lost that share of its pace.
        return _stuck("straggler", obs, attempt, log, evidence, now - log.slow.since, slowdown=log.slow.drop)
    return None


def _stuck(
    kind: Literal["hang", "straggler"],
    obs: JobObservation,
    attempt: Attempt,
    log: AttemptLog,
    evidence: Evidence,
    failed_ago: float,
    slowdown: float | None = None,
) -> WatchResult:
    detected = utcnow()
    failed = detected - timedelta(seconds=max(0.0, failed_ago))
    symptom = Symptom(
        attempt_index=attempt.index,
        kind=kind,
        detected_at=detected,
        failed_at=failed,
        evidence=[evidence],
        slowdown=slowdown,
    )
    return WatchResult(
        event=kind,
        observation=obs,
        symptom=symptom,
        log_diagnosis=log.diagnosis(attempt.index, straggling=kind == "straggler"),
        log_offset=log.offset,
        last_step=log.last_step,
        step_seconds=log.step_seconds,
    )


def _line(record: ProgressRecord | None) -> int | None:
    return record.line if record is not None else None


def ended(obs: JobObservation, attempt: Attempt, log: AttemptLog | None, now: float) -> WatchResult:
    if log is not None:
        log.finish(now)
    symptom = symptom_of(obs, attempt)
    found = log.diagnosis(attempt.index) if log is not None else None
    if symptom is not None and found is not None:
        symptom.evidence = found.evidence[:5] + symptom.evidence
    return WatchResult(
        observation=obs,
        symptom=symptom,
        log_diagnosis=found if symptom is not None else None,
        log_offset=log.offset if log is not None else attempt.log_offset,
        last_step=log.last_step if log is not None else None,
        step_seconds=log.step_seconds if log is not None else None,
    )


def attempt_over(obs: JobObservation, attempt: Attempt) -> bool:
    return obs.state.ended or obs.restart_count > attempt.restart_count


def symptom_of(obs: JobObservation, attempt: Attempt) -> Symptom | None:
    """A crash symptom for an attempt that did not complete; None when it completed."""
    if obs.state is JobState.COMPLETED and obs.restart_count == attempt.restart_count:
        return None
    return Symptom(
        attempt_index=attempt.index,
        kind="crash",
        detected_at=utcnow(),
        failed_at=obs.ended_at,
        evidence=scheduler_evidence(obs, attempt),
    )


def scheduler_evidence(obs: JobObservation, attempt: Attempt) -> list[Evidence]:
    if obs.restart_count > attempt.restart_count:
        text = f"job {obs.job_id} was requeued by the scheduler (restart count {obs.restart_count})"
        return [Evidence(source="scheduler", text=text)]
    summary = f"job {obs.job_id} ended {obs.state}{describe_exit(obs.exit_code, obs.signal)}"
    if obs.reason:
        summary += f": {obs.reason}"
    evidence = [Evidence(source="scheduler", text=summary)]
    evidence += [Evidence(source="scheduler", text=f"node {node} failed", node=node) for node in obs.failed_nodes]
    evidence += [
        Evidence(
            source="scheduler",
            text=f"task on {t.node}{describe_exit(t.exit_code, t.signal)}",
            node=t.node,
        )
        for t in failed_tasks(obs)
    ]
    return evidence


def failed_tasks(obs: JobObservation) -> list[TaskResult]:
    """Tasks that failed, the first to fail first."""
    bad = [t for t in obs.tasks if (t.exit_code or 0) != 0 or t.signal is not None]
    return sorted(bad, key=lambda t: (t.ended_at is None, t.ended_at))


def describe_exit(exit_code: int | None, signal: int | None) -> str:
    if signal is not None:
        return f" (killed by signal {signal})"
    if exit_code is not None:
        return f" (exit {exit_code})"
    return ""


def forgotten(attempt: Attempt) -> JobObservation:
    """The job as it is when the scheduler no longer knows it."""
    return JobObservation(
        job_id=attempt.job_id,
        state=JobState.UNKNOWN,
        restart_count=attempt.restart_count,
        reason="the scheduler no longer knows this job",
    )
