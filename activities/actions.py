"""Activities that change the world: submit, requeue-hold, exclude, release, cancel, and the
check that the successor really runs.

Temporal retries each of these, so each observes the job first and acts only if the job is
still where the advice found it: a retry after a worker crash finds the work done and does
nothing. Attempt identity is (job id, restart count).
"""

from __future__ import annotations

import asyncio
import getpass
import time
from typing import Protocol

import structlog
from temporalio import activity

from recovery.activities import failpoints, metrics
from recovery.activities.clock import utcnow
from recovery.activities.errors import PermanentActionError, scheduler_errors
from recovery.activities.schedulers.base import Partitioned, Scheduler, SubmitsAs, free_now, out_of_rotation
from recovery.workflows.models import (
    Action,
    ActionKind,
    AdoptInput,
    Attempt,
    CancelInput,
    JobActionInput,
    JobObservation,
    JobState,
    RecordAdviceInput,
    RecordAdviceResult,
    RestartPlan,
    RestartPlanInput,
    SubmitInput,
    VerifyInput,
    VerifyResult,
)

log = structlog.get_logger("recovery.activities")


def attempt_from(observation: JobObservation, index: int) -> Attempt:
    return Attempt(
        index=index,
        job_id=observation.job_id,
        restart_count=observation.restart_count,
        state=observation.state,
        exit_code=observation.exit_code,
        signal=observation.signal,
        nodes=observation.nodes,
        excluded_nodes=observation.excluded_nodes,
        submitted_at=observation.submitted_at,
        started_at=observation.started_at,
        ended_at=observation.ended_at,
        output_path=observation.output_path,
        partition=observation.partition,
    )


class Scope(Protocol):
    """Where this worker may act: the worker's config answers (`recovery.client.config.WorkerConfig`)."""

    def mode_for(self, partition: str | None) -> str: ...

    def manages(self, partition: str | None) -> bool: ...


class ActEverywhere:
    def mode_for(self, partition: str | None) -> str:
        return "act"

    def manages(self, partition: str | None) -> bool:
        return True


class ActionActivities:
    def __init__(self, scheduler: Scheduler, scope: Scope | None = None) -> None:
        self.scheduler = scheduler
        self.config = scope or ActEverywhere()

    @activity.defn
    async def submit_attempt(self, inp: SubmitInput) -> Attempt:
        with scheduler_errors():
            found = await self.scheduler.find(inp.request.token)
            if found is None:
                found = await self.scheduler.submit(inp.request)
                metrics.attempt_started("submit")
                log.info("submitted", run_id=inp.run_id, job_id=found.job_id)
        failpoints.hit("after:submit_attempt")
        if inp.attempt_index > 0:
            failpoints.hit("after:resubmit")  # a restart's submission, not the run's first
        return attempt_from(found, inp.attempt_index)

    @activity.defn
    async def adopt_attempt(self, inp: AdoptInput) -> Attempt:
        """The first attempt of a run whose job was submitted outside the workflow."""
        obs = await self._observe_or_none(inp.job_id)
        if obs is None:
            raise PermanentActionError(f"job {inp.job_id} is not known to the scheduler", "JobNotFound")
        metrics.attempt_started("adopt")
        return attempt_from(obs, 0)

    @activity.defn
    async def record_advice(self, inp: RecordAdviceInput) -> RecordAdviceResult:
        advice = inp.advice
        mode = self.config.mode_for(inp.partition)
        log.info(
            "advice",
            run_id=inp.run_id,
            generation=advice.generation,
            attempt=advice.attempt_index,
            operation=advice.operation,
            excluded_nodes=advice.excluded_nodes,
            explanation=advice.explanation,
            mode=mode,
        )
        failpoints.hit("after:record_advice")
        _advice_metrics(inp, mode)
        return RecordAdviceResult(act=mode == "act")

    @activity.defn
    async def requeue_hold(self, inp: JobActionInput) -> Action:
        obs = await self._observe_for_action(inp.job_id, "NotRequeueable")
        if obs.restart_count > inp.restart_count:
            return self._done(inp, "requeue_hold", False, f"already requeued ({obs.restart_count})")
        with scheduler_errors():
            await self.scheduler.requeue_hold(inp.job_id)
        metrics.attempt_started("requeue")
        failpoints.hit("after:requeue_hold")
        return self._done(inp, "requeue_hold", True, f"restart count {inp.restart_count + 1}")

    @activity.defn
    async def set_excluded_nodes(self, inp: JobActionInput) -> Action:
        obs = await self._observe_for_action(inp.job_id)
        self._require_requeued(obs, inp)
        if set(obs.excluded_nodes) == set(inp.excluded_nodes):
            return self._done(inp, "set_excluded_nodes", False, "exclusions already set")
        if obs.state is not JobState.PENDING:
            return self._done(inp, "set_excluded_nodes", False, f"job already {obs.state}")
        with scheduler_errors():
            await self.scheduler.set_excluded_nodes(inp.job_id, inp.excluded_nodes)
        failpoints.hit("after:set_excluded_nodes")
        detail = ", ".join(inp.excluded_nodes) or "none"
        return self._done(inp, "set_excluded_nodes", True, f"excluded: {detail}")

    @activity.defn
    async def release(self, inp: JobActionInput) -> Action:
        obs = await self._observe_for_action(inp.job_id)
        self._require_requeued(obs, inp)
        if not obs.held:
            return self._done(inp, "release", False, "not held (already released)")
        with scheduler_errors():
            await self.scheduler.release(inp.job_id)
        failpoints.hit("after:release")
        return self._done(inp, "release", True, "released")

    @activity.defn
    async def cancel_job(self, inp: CancelInput) -> bool:
        """Cancel the run's job; returns whether a cancel was issued (False: already ended)."""
        obs = await self._observe_or_none(inp.job_id)
        if obs is None or obs.state.ended:
            return False
        self._require_managed(obs)
        with scheduler_errors():
            await self.scheduler.cancel(inp.job_id)
        failpoints.hit("after:cancel_job")
        return True

    @activity.defn
    async def plan_restart(self, inp: RestartPlanInput) -> RestartPlan:
        """Policy `restart_via` against the world: resubmit only as the job's owner, and for
        `auto` only when the allocation fits on nodes free now; else requeue, saying why."""
        failpoints.hit("before:plan_restart")
        if (why := self._cannot_submit_as(inp.owner)) is not None:
            log.warning("requeue instead of resubmit", run_id=inp.run_id, job_id=inp.job_id, why=why)
            return RestartPlan(via="requeue", reason=f"not resubmitted: {why}")
        if inp.restart_via == "resubmit":
            return RestartPlan(via="resubmit", reason="policy restart_via: resubmit")
        with scheduler_errors():
            free = await self._free_nodes(inp)
        if len(free) >= inp.nodes:
            return RestartPlan(via="resubmit", reason=f"{inp.nodes} of {len(free)} free node(s) fit now")
        return RestartPlan(via="requeue", reason=f"only {len(free)} free node(s) now, {inp.nodes} needed")

    def _cannot_submit_as(self, owner: str) -> str | None:
        if isinstance(self.scheduler, SubmitsAs):
            return self.scheduler.submit_as_refusal(owner)
        me = getpass.getuser()
        return None if owner in ("", me) else f"the worker ({me}) cannot submit as the job's owner ({owner})"

    async def _free_nodes(self, inp: RestartPlanInput) -> list[str]:
        """Nodes a new job could start on now: idle ones, and the failed job's own (its cancel
        frees them), less the exclusions and outside the job's partition."""
        nodes = await self.scheduler.nodes()
        usable = {n.name for n in nodes if free_now(n)}
        usable |= {n.name for n in nodes if n.name in inp.released_nodes and not out_of_rotation(n)}
        if inp.partition and isinstance(self.scheduler, Partitioned):
            usable &= set(await self.scheduler.partition_nodes(inp.partition))
        return sorted(usable - set(inp.excluded_nodes))

    @activity.defn
    async def verify_successor(self, inp: VerifyInput) -> VerifyResult:
        """Wait, bounded, for the job to run again at the next restart count, off excluded nodes."""
        deadline = time.monotonic() + inp.timeout_seconds
        last: JobObservation | None = None
        while time.monotonic() < deadline:
            last = await self._observe_or_none(inp.job_id)
            activity.heartbeat(last.state if last else "unknown")
            if last is not None and last.restart_count >= inp.successor_restart_count and last.started_at:
                return _counted(_judge_successor(last, inp), inp)
            await asyncio.sleep(inp.poll_seconds)
        where = f"{last.state} ({last.reason})" if last else "job unknown to the scheduler"
        reason = f"successor not running after {inp.timeout_seconds:g}s: {where}"
        return _counted(VerifyResult(ok=False, observation=last, reason=reason), inp)

    async def _observe_for_action(self, job_id: str, missing: str = "JobNotFound") -> JobObservation:
        obs = await self._observe_or_none(job_id)
        if obs is None:
            raise PermanentActionError(f"job {job_id} is no longer known to the scheduler", missing)
        self._require_managed(obs)
        return obs

    async def _observe_or_none(self, job_id: str) -> JobObservation | None:
        with scheduler_errors():
            return (await self.scheduler.observe([job_id])).get(job_id)

    def _require_managed(self, obs: JobObservation) -> None:
        """The last guard before a mutating command: act mode, opted in, allowed partition."""
        if not self.scheduler.opted_in(obs):
            raise PermanentActionError(f"job {obs.job_id} did not opt in to recovery")
        if not self.config.manages(obs.partition):
            raise PermanentActionError(f"job {obs.job_id} is in partition {obs.partition!r}, not managed here")
        if self.config.mode_for(obs.partition) != "act":
            raise PermanentActionError("this worker only observes here: no scheduler changes")

    @staticmethod
    def _require_requeued(obs: JobObservation, inp: JobActionInput) -> None:
        if obs.restart_count <= inp.restart_count:
            raise PermanentActionError(f"job {inp.job_id} was not requeued (restart count {obs.restart_count})")

    @staticmethod
    def _done(inp: JobActionInput, kind: ActionKind, changed: bool, detail: str) -> Action:
        log.info("action", run_id=inp.run_id, job_id=inp.job_id, kind=kind, changed=changed)
        metrics.action_done(kind, changed)
        return Action(
            advice_generation=inp.advice_generation,
            kind=kind,
            job_id=inp.job_id,
            at=utcnow(),
            changed=changed,
            detail=detail,
        )


def _judge_successor(obs: JobObservation, inp: VerifyInput) -> VerifyResult:
    on_excluded = sorted(set(obs.nodes) & set(inp.excluded_nodes))
    if on_excluded:
        reason = f"successor runs on excluded node(s) {', '.join(on_excluded)}"
        return VerifyResult(ok=False, observation=obs, reason=reason)
    return VerifyResult(ok=True, observation=obs, reason=f"running on {', '.join(obs.nodes)}")


def _advice_metrics(inp: RecordAdviceInput, mode: str) -> None:
    """Count the advice; advice that is settled the moment it is recorded is resolved too."""
    operation = inp.advice.operation
    metrics.advice_recorded(operation, mode, metrics.seconds_between(inp.failed_at, utcnow()))
    if operation != "restart":
        metrics.advice_resolved(operation, "converged", acted=False)  # the run stops as advised
    elif mode != "act":
        metrics.advice_resolved(operation, "abandoned", acted=False)  # observe: recorded only


def _counted(result: VerifyResult, inp: VerifyInput) -> VerifyResult:
    """The successor check settles a restart that was carried out: converged or abandoned."""
    metrics.advice_resolved("restart", "converged" if result.ok else "abandoned", acted=True)
    if result.ok and result.observation is not None:
        metrics.successor_running(metrics.seconds_between(inp.failed_at, result.observation.started_at))
    return result
