"""Watching an attempt: the activities a run waits in while its job runs.

- `watch_attempt` waits for news of one attempt from the worker's one observer
  (`activities/observer/`), which looks at every watched job and log for all runs at once. It
  returns at the attempt's first progress step (for the `progress_started`/`progress_restored`
  milestone), when the log shows a hang (no progress for longer than the learned timeout) or,
  if the policy enables it, a sustained slowdown (`straggler`), both while the job still runs;
  or when the attempt is over: the scheduler says it ended, or the job's restart count moved on
  without us (the scheduler requeued it by itself). A failed end is a `crash` symptom whose
  evidence is the log's own diagnosis first, then what the scheduler reported.
- `await_requeue` (observe mode) waits, bounded, for someone else to run the job again.
- `attempt_end` reads a stopped hang's or straggler's output to its real end, for goodput.

A scheduler that is away is waited for: the watch keeps heartbeating and the observer looks again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from recovery.activities import metrics
from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.observer.loop import HandedOn, Observer
from recovery.activities.observer.news import forgotten
from recovery.activities.schedulers.base import JobNotFound, Scheduler, SchedulerUnavailable
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import (
    Attempt,
    AttemptEnd,
    AttemptEndInput,
    AwaitRequeueInput,
    JobObservation,
    JobState,
    WatchInput,
    WatchResult,
)
from recovery.workflows.policy import Policy

log = structlog.get_logger("recovery.watch")


class WatchActivities:
    def __init__(
        self,
        scheduler: Scheduler,
        reading: LogReading | None = None,
        window: float = 0.05,
        quiet: Callable[[], bool] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.reading = reading or LogReading()
        self.coalescer = CoalescingObserver(scheduler, window)
        self.observer = Observer(self.coalescer, self.reading, quiet)  # the worker's one observer

    @activity.defn
    async def watch_attempt(self, inp: WatchInput) -> WatchResult:
        """Wait for the observer's news of this attempt. The watch itself only heartbeats, as
        seldom as its heartbeat timeout allows: an idle run wakes nothing else."""
        waiter = self.observer.attach(inp, activity.info().attempt)
        activity.heartbeat("watching")
        beat = _beat(activity.info().heartbeat_timeout)
        try:
            while True:
                done, _ = await asyncio.wait({waiter}, timeout=beat)
                if done:
                    return waiter.result()
                activity.heartbeat("watching")
        except HandedOn as e:
            # Retried by Temporal on whichever worker polls first (worker/sharing.py); expected,
            # so logged as benign, not as a failed activity.
            raise ApplicationError(str(e), type="HandedOn", category=ApplicationErrorCategory.BENIGN) from None
        finally:
            self.observer.detach(inp.run_id, waiter)

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
            found = await self.coalescer.observe([attempt.job_id])
        except SchedulerUnavailable as e:
            # The watch outlives scheduler restarts: keep heartbeating and look again.
            metrics.scheduler_error("SchedulerUnavailable")
            log.warning("scheduler unavailable", job_id=attempt.job_id, error=str(e))
            return None
        except JobNotFound:
            found = {}
        return found.get(attempt.job_id) or forgotten(attempt)


def _beat(heartbeat_timeout: timedelta | None) -> float | None:
    """Seconds between a watch's heartbeats: half its timeout, so a beat the server hears late
    still arrives in time (the worker lets each through, worker/run_worker.py); none without a
    timeout."""
    return heartbeat_timeout.total_seconds() / 2 if heartbeat_timeout else None


def _still_running(obs: JobObservation, attempt: Attempt) -> bool:
    """The attempt's processes may still write: running at its restart count, or completing
    (Slurm shows a job requeued in held state as COMPLETING until its processes are gone)."""
    if obs.restart_count > attempt.restart_count:
        return obs.scheduler_state.upper().startswith("COMPLETING")
    return obs.state is JobState.RUNNING or obs.scheduler_state.upper().startswith("COMPLETING")
