"""Watching an attempt: long-running activities that heartbeat while they observe the job.

- `watch_attempt` follows one attempt: the scheduler's view (coalesced with the other watches)
  and its output, read as it grows. It returns at the attempt's first progress step (for the
  `progress_started`/`progress_restored` milestone), when the log shows a hang (no progress
  for longer than the learned timeout) or, if the policy enables it, a sustained slowdown
  (`straggler`), both while the job still runs; or when the attempt is over: the scheduler says
  it ended, or the job's restart count moved on without us (the scheduler requeued it by
  itself). A failed end is a `crash` symptom whose evidence is the log's own diagnosis first,
  then what the scheduler reported.
- `await_requeue` (observe mode) waits, bounded, for someone else to run the job again.
- `attempt_end` reads a stopped hang's or straggler's output to its real end, for goodput.

A scheduler that is away is waited for: the watch keeps heartbeating and looks again.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Literal

import structlog
from temporalio import activity

from recovery.activities import metrics
from recovery.activities.clock import utcnow
from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.progress import ProgressRecord
from recovery.activities.schedulers.base import JobNotFound, Scheduler, SchedulerUnavailable
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import (
    Attempt,
    AttemptEnd,
    AttemptEndInput,
    AwaitRequeueInput,
    Evidence,
    JobObservation,
    JobState,
    Symptom,
    TaskResult,
    WatchInput,
    WatchResult,
)
from recovery.workflows.policy import Policy

log = structlog.get_logger("recovery.watch")


class WatchActivities:
    def __init__(self, scheduler: Scheduler, reading: LogReading | None = None, window: float = 0.05) -> None:
        self.scheduler = scheduler
        self.reading = reading or LogReading()
        self.observer = CoalescingObserver(scheduler, window)

    @activity.defn
    async def watch_attempt(self, inp: WatchInput) -> WatchResult:
        attempt = inp.attempt
        log: AttemptLog | None = None
        while True:
            obs = await self._look(attempt)
            activity.heartbeat(obs.state if obs else "scheduler unavailable")
            now = time.monotonic()
            if obs is not None and log is None:
                log = _open_log(obs, inp, now, self.reading)
            if log is not None:
                log.poll(now)
            if obs is not None and attempt_over(obs, attempt):
                return _ended(obs, attempt, log, now)
            if obs is not None and log is not None and obs.state is JobState.RUNNING:
                news = _while_running(obs, inp, log, now)
                if news is not None:
                    return news
            await asyncio.sleep(inp.poll_seconds)

    @activity.defn
    async def await_requeue(self, inp: AwaitRequeueInput) -> JobObservation | None:
        """Observe mode: the job's next attempt if something else runs it again in time."""
        deadline = time.monotonic() + inp.timeout_seconds
        while time.monotonic() < deadline:
            obs = await self._look(inp.attempt)
            activity.heartbeat(obs.state if obs else "scheduler unavailable")
            if obs is not None and obs.restart_count > inp.attempt.restart_count:
                return obs
            if obs is not None and obs.state is JobState.UNKNOWN:
                return None
            await asyncio.sleep(inp.poll_seconds)
        return None

    @activity.defn
    async def attempt_end(self, inp: AttemptEndInput) -> AttemptEnd:
        """Wait (bounded) until the stopped attempt's processes are gone, then read the rest of
        its output: the steps it made between detection and its end, and where the successor's
        output will start in an output file kept across requeues."""
        deadline = time.monotonic() + inp.timeout_seconds
        while time.monotonic() < deadline:
            obs = await self._look(inp.attempt)
            activity.heartbeat(obs.state if obs else "scheduler unavailable")
            if obs is not None and not _still_running(obs, inp.attempt):
                break
            await asyncio.sleep(inp.poll_seconds)
        known = AttemptEnd(log_offset=inp.log_offset, last_step=inp.last_step)
        path = inp.attempt.output_path
        if path is None:
            return known
        rest = AttemptLog(path, inp.log_offset, inp.attempt.nodes, Policy(), time.monotonic(), True, self.reading)
        rest.finish(time.monotonic())
        steps = [s for s in (inp.last_step, rest.last_step) if s is not None]
        return AttemptEnd(log_offset=rest.offset, last_step=max(steps) if steps else None)

    async def _look(self, attempt: Attempt) -> JobObservation | None:
        """The job now, UNKNOWN if the scheduler forgot it, None if the scheduler is away."""
        try:
            found = await self.observer.observe([attempt.job_id])
        except SchedulerUnavailable as e:
            # The watch outlives scheduler restarts: keep heartbeating and look again.
            metrics.scheduler_error("SchedulerUnavailable")
            log.warning("scheduler unavailable", job_id=attempt.job_id, error=str(e))
            return None
        except JobNotFound:
            found = {}
        return found.get(attempt.job_id) or JobObservation(
            job_id=attempt.job_id,
            state=JobState.UNKNOWN,
            restart_count=attempt.restart_count,
            reason="the scheduler no longer knows this job",
        )


def _open_log(obs: JobObservation, inp: WatchInput, now: float, reading: LogReading) -> AttemptLog | None:
    """Start reading once the attempt has started and the scheduler named its output file."""
    if obs.output_path is None or obs.started_at is None or obs.restart_count != inp.attempt.restart_count:
        return None
    trained = inp.attempt.first_step is not None
    return AttemptLog(obs.output_path, inp.attempt.log_offset, obs.nodes, inp.policy, now, trained, reading)


def _while_running(obs: JobObservation, inp: WatchInput, log: AttemptLog, now: float) -> WatchResult | None:
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


def _ended(obs: JobObservation, attempt: Attempt, log: AttemptLog | None, now: float) -> WatchResult:
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


def _still_running(obs: JobObservation, attempt: Attempt) -> bool:
    """The attempt's processes may still write: running at its restart count, or completing
    (Slurm shows a job requeued in held state as COMPLETING until its processes are gone)."""
    if obs.restart_count > attempt.restart_count:
        return obs.scheduler_state.upper().startswith("COMPLETING")
    return obs.state is JobState.RUNNING or obs.scheduler_state.upper().startswith("COMPLETING")


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
