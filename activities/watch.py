"""Watching an attempt: a long-running activity that heartbeats and returns when the attempt ends.

In this version an attempt is over when the scheduler says it ended, or when the job's restart
count moved on without us (the scheduler requeued it by itself). A failure becomes a `crash`
symptom whose evidence is what the scheduler reported.
"""

from __future__ import annotations

import asyncio
import time

import structlog
from temporalio import activity

from activities.clock import utcnow
from activities.schedulers.base import JobNotFound, Scheduler, SchedulerUnavailable
from workflows.models import (
    Attempt,
    AwaitRequeueInput,
    Evidence,
    JobObservation,
    JobState,
    Symptom,
    TaskResult,
    WatchInput,
    WatchResult,
)

log = structlog.get_logger("recovery.watch")


class WatchActivities:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    @activity.defn
    async def watch_attempt(self, inp: WatchInput) -> WatchResult:
        attempt = inp.attempt
        while True:
            obs = await self._look(attempt)
            activity.heartbeat(obs.state if obs else "scheduler unavailable")
            if obs is not None and attempt_over(obs, attempt):
                return WatchResult(observation=obs, symptom=symptom_of(obs, attempt))
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

    async def _look(self, attempt: Attempt) -> JobObservation | None:
        """The job now, UNKNOWN if the scheduler forgot it, None if the scheduler is away."""
        try:
            found = await self.scheduler.observe([attempt.job_id])
        except SchedulerUnavailable as e:
            # The watch outlives scheduler restarts: keep heartbeating and look again.
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
    evidence += [
        Evidence(source="scheduler", text=f"node {node} failed", node=node) for node in obs.failed_nodes
    ]
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
