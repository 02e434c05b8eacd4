"""The Pipeline workflow: dependent stages, each a child TrainingRun, recovered as one.

A stage starts (its `dag_release`) once every stage it needs has completed, so a stage that was
recovered as a new job still releases what waits for it: the dependency is owned here, not by the
scheduler's job ids. A stage whose need gave up or was cancelled is cancelled or held, as the
file says; a held stage waits for the `release` or `cancel` signal. `pause`, `resume` and
`cancel` reach every running stage. Workflow code only: it decides, waits and records; each
stage's run does its own scheduler work.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate
from temporalio.exceptions import ActivityError, CancelledError, ChildWorkflowError, FailureError
from temporalio.workflow import ActivityCancellationType, ChildWorkflowHandle, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from recovery.activities.actions import ActionActivities
    from recovery.activities.run_waits import RunWaitActivities
    from recovery.activities.stage_jobs import StageJobActivities
    from recovery.workflows import search_attributes as sa
    from recovery.workflows.models import Attempt, CancelRequest, RunInput, RunState, RunStatus, SubmitInput
    from recovery.workflows.pipeline_models import (
        HOLDING_SCHEDULERS,
        PIPELINE,
        AwaitRunsInput,
        PipelineAction,
        PipelineInput,
        PipelineStage,
        PipelineStatus,
        PipelineSummary,
        ReleaseRequest,
        StageJobInput,
        StageState,
        StageStatus,
    )
    from recovery.workflows.retries import BOUNDED, FOREVER
    from recovery.workflows.training_run import TrainingRun

# A stage's end, from its run's final state.
_ENDED = {RunState.COMPLETED: StageState.COMPLETED, RunState.GAVE_UP: StageState.GAVE_UP}
# Pipelines started before stages were submitted held replay without those submissions.
HELD_STAGES_PATCH = "pipeline-held-stages"


@workflow.defn(name=PIPELINE)
class Pipeline:
    @workflow.init
    def __init__(self, inp: PipelineInput) -> None:
        self.inp = inp
        self.stages = {s.name: StageStatus(name=s.name, run=s.spec.run_id, state=StageState.WAITING, needs=s.needs)
                       for s in inp.stages}  # fmt: skip
        self.actions: list[PipelineAction] = []
        self.paused = False
        self._cancel: CancelRequest | None = None
        self._released: list[str] = []  # held stages an operator let go
        self._handles: dict[str, ChildWorkflowHandle[Any, RunStatus]] = {}
        self._outbox: list[tuple[str, CancelRequest | None]] = []  # signals to pass on to running stages
        self._published: dict[str, Any] = {}
        self._held: dict[str, Attempt] = {}  # stage -> its job, submitted held at the start

    # --- signals and query ---------------------------------------------------------------

    @workflow.signal
    def pause(self) -> None:
        self.paused = True
        self._outbox.append(("pause", None))
        self._publish()

    @workflow.signal
    def resume(self) -> None:
        self.paused = False
        self._outbox.append(("resume", None))
        self._publish()

    @workflow.signal
    def cancel(self, request: CancelRequest | None = None) -> None:
        self._cancel = request or CancelRequest()
        self._outbox.append(("cancel", self._cancel))

    @workflow.signal
    def release(self, request: ReleaseRequest | None = None) -> None:
        """Start held stages anyway (the named ones, or all): an operator decided they may run."""
        held = [s.name for s in self.stages.values() if s.state is StageState.HELD]
        self._released += [name for name in held if not request or not request.stages or name in request.stages]

    @workflow.query
    def status(self) -> PipelineStatus:
        inp = self.inp
        summary = PipelineSummary(
            id=inp.pipeline_id,
            name=inp.name,
            state=self._state(),
            paused=self.paused,
            owner=inp.owner,
            scheduler=inp.scheduler,
        )
        return PipelineStatus(
            pipeline=summary, stages=list(self.stages.values()), actions=self.actions, after=inp.after
        )

    # --- the pipeline --------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: PipelineInput) -> PipelineStatus:
        self._publish()
        if inp.scheduler in HOLDING_SCHEDULERS and workflow.patched(HELD_STAGES_PATCH):
            await self._submit_held_stages()
        try:
            if inp.after:
                await self._wait_for_after()
            while not all(s.state.finished for s in self.stages.values()):
                await self._forward_signals()
                if self._cancel is not None:
                    self._cancel_unstarted()
                else:
                    self._follow_failures()
                    for stage in self._ready():
                        await self._start(stage)
                await self._cancel_held_jobs()
                await workflow.wait_condition(self._something_to_do)
        except asyncio.CancelledError:
            # Cancelled from Temporal itself: the stages that never ran leave no held job behind.
            self._cancel_unstarted()
            await self._cancel_held_jobs()
            raise
        self._publish()
        return self.status()

    def _something_to_do(self) -> bool:
        """Wake on a signal to pass on, a stage to start or stop, or the end."""
        if self._outbox or all(s.state.finished for s in self.stages.values()):
            return True
        if self._cancel is not None:
            return any(s.state in (StageState.WAITING, StageState.HELD) for s in self.stages.values())
        return bool(self._ready()) or any(self._failed_need(s) is not None for s in self._waiting())

    def _waiting(self) -> list[PipelineStage]:
        return [s for s in self.inp.stages if self.stages[s.name].state in (StageState.WAITING, StageState.HELD)]

    def _ready(self) -> list[PipelineStage]:
        """Stages whose needs all completed (or that an operator released), in file order;
        none while the pipeline is paused: a release is an action like any other."""
        if self.paused:
            return []
        ready = []
        for stage in self._waiting():
            state = self.stages[stage.name].state
            needs_done = all(self.stages[n].state is StageState.COMPLETED for n in stage.needs)
            if (state is StageState.WAITING and needs_done) or stage.name in self._released:
                ready.append(stage)
        return ready

    def _failed_need(self, stage: PipelineStage) -> str | None:
        """The first need that gave up or was cancelled, for a stage not yet held for it."""
        if self.stages[stage.name].state is not StageState.WAITING:
            return None
        return next((n for n in stage.needs if self.stages[n].state.failed), None)

    def _follow_failures(self) -> None:
        """Cancel or hold, as each stage's file says, the waiting stages whose need failed."""
        for stage in self._waiting():
            need = self._failed_need(stage)
            if need is None:
                continue
            detail = f"needs {need}, which {self.stages[need].state.value.replace('_', ' ')}"
            if stage.on_dependency_failure == "hold":
                self._set(stage.name, StageState.HELD, detail)
                self._record("hold", stage, detail)
            else:
                self._set(stage.name, StageState.CANCELLED, detail)
                self._record("cancel", stage, detail)

    def _cancel_unstarted(self) -> None:
        for stage in self._waiting():
            self._set(stage.name, StageState.CANCELLED, "the pipeline was cancelled")
            self._record("cancel", stage, "the pipeline was cancelled")

    async def _start(self, stage: PipelineStage) -> None:
        """Release a stage: start its TrainingRun as a child. Its workflow id is its run id, so a
        start that is retried finds the child already there rather than starting a second."""
        spec = stage.spec
        released = await self._release_held(stage)
        handle = await workflow.start_child_workflow(
            TrainingRun.run,
            RunInput(spec=spec),
            id=spec.run_id,
            # A pipeline cancelled from Temporal itself cancels its stages' runs (they leave
            # their jobs alone, as a cancelled run does), rather than terminating them.
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            memo=stage.memo,
            search_attributes=sa.at_start(spec.scheduler, spec.owner, self.inp.pipeline_id),
            static_summary=f"stage {stage.name} of pipeline {self.inp.name} ({self.inp.pipeline_id})",
        )
        self._handles[stage.name] = handle
        self._set(stage.name, StageState.RUNNING, "")
        why = "released by an operator" if stage.name in self._released else self._why_released(stage)
        self._record("dag_release", stage, f"{why}; {released}" if released else why)
        asyncio.create_task(self._await_stage(stage.name, handle))  # noqa: RUF006 (the run loop outlives it)
        if self.paused:
            await handle.signal("pause")

    # --- held stages (schedulers with holds: every stage that needs another is queued at the start)

    async def _submit_held_stages(self) -> None:
        """Submit every stage that needs another one now, held, so that the whole pipeline is in
        the queue; each stage's run adopts its job later (the same token: `submit_attempt`
        finds it). A stage whose held submission fails is submitted by its run when released."""
        waiting = [stage for stage in self.inp.stages if stage.needs or self.inp.after]
        held = await asyncio.gather(*(self._submit_held(stage) for stage in waiting))
        for stage, attempt in zip(waiting, held, strict=True):
            if attempt is None:
                continue
            self._held[stage.name] = attempt
            self._set(
                stage.name,
                StageState.WAITING,
                f"job {attempt.job_id} held until {' and '.join(self._needs(stage))} complete",
            )

    async def _submit_held(self, stage: PipelineStage) -> Attempt | None:
        request = stage.spec.submit_request(0, [])
        request.hold = True
        request.labels = {"pipeline": self.inp.pipeline_id, "stage": stage.name, "after": "+".join(self._needs(stage))}
        try:
            attempt: Attempt = await workflow.execute_activity_method(
                ActionActivities.submit_attempt,
                SubmitInput(run_id=stage.spec.run_id, attempt_index=0, request=request),
                start_to_close_timeout=self._quick(stage),
                # Bounded: a stage whose script sbatch refuses must not keep the whole pipeline
                # from starting; it is submitted by its run when released, and gives up there.
                retry_policy=BOUNDED,
            )
        except ActivityError as e:
            workflow.logger.warning("stage %s not submitted held: %s", stage.name, e.cause or e)
            return None
        return attempt

    async def _release_held(self, stage: PipelineStage) -> str:
        """`dag_release` of the stage's held job (checked first: still held, still the stage's);
        what it did, or "" for a stage without one."""
        attempt = self._held.pop(stage.name, None)
        if attempt is None:
            return ""
        try:
            result = await workflow.execute_activity_method(
                StageJobActivities.dag_release,
                self._stage_job(stage, attempt),
                start_to_close_timeout=self._quick(stage),
                retry_policy=FOREVER,
            )
        except ActivityError as e:
            return f"job {attempt.job_id} not released: {e.cause or e}"
        return result.detail

    async def _cancel_held_jobs(self) -> None:
        """Cancelled stages leave no held job in the queue (`dag_cancel`: checked, then confirmed)."""
        for stage in self.inp.stages:
            if stage.name not in self._held or self.stages[stage.name].state is not StageState.CANCELLED:
                continue
            attempt = self._held.pop(stage.name)
            try:
                result = await workflow.execute_activity_method(
                    StageJobActivities.dag_cancel,
                    self._stage_job(stage, attempt),
                    start_to_close_timeout=self._quick(stage),
                    retry_policy=FOREVER,
                )
                detail = result.detail
            except ActivityError as e:
                detail = f"held job {attempt.job_id} not cancelled: {e.cause or e}"
            self._tell(stage.name, detail)

    def _stage_job(self, stage: PipelineStage, attempt: Attempt) -> StageJobInput:
        return StageJobInput(
            pipeline_id=self.inp.pipeline_id,
            stage=stage.name,
            run_id=stage.spec.run_id,
            job_id=attempt.job_id,
            token=stage.spec.token(0),
            restart_count=attempt.restart_count,
        )

    def _tell(self, name: str, detail: str) -> None:
        """Add what was done to the stage's job to its last recorded action."""
        action = next((a for a in reversed(self.actions) if a.stage == name), None)
        if action is not None:
            action.detail = f"{action.detail}; {detail}" if action.detail else detail

    @staticmethod
    def _quick(stage: PipelineStage) -> timedelta:
        return timedelta(seconds=stage.spec.tuning.action_timeout_seconds)

    def _needs(self, stage: PipelineStage) -> list[str]:
        """What the stage waits for: the outside runs the pipeline follows, then its own needs."""
        return [*self.inp.after, *stage.needs]

    def _why_released(self, stage: PipelineStage) -> str:
        needs = self._needs(stage)
        return f"{', '.join(needs)} completed" if needs else "needs nothing"

    # --- runs it follows (`submit --after`) ----------------------------------------------

    async def _wait_for_after(self) -> None:
        """Release nothing before the outside runs it follows completed (an activity reads them:
        a workflow cannot await one that is not its child). One that gave up or was cancelled
        cancels every stage, which says why; a cancel signal ends the wait."""
        before = {name: stage.detail for name, stage in self.stages.items()}  # a held job's, say
        for name in self.stages:
            held = f" (job {self._held[name].job_id} held)" if name in self._held else ""
            self._set(name, StageState.WAITING, f"waits for {', '.join(self.inp.after)} to complete{held}")
        tuning = self.inp.stages[0].spec.tuning  # the scheduler's: how often to look
        wait = workflow.start_activity_method(
            RunWaitActivities.await_runs,
            AwaitRunsInput(runs=self.inp.after, poll_seconds=tuning.poll_seconds),
            start_to_close_timeout=timedelta(days=30),
            heartbeat_timeout=timedelta(seconds=tuning.heartbeat_timeout_seconds),
            retry_policy=FOREVER,
            cancellation_type=ActivityCancellationType.TRY_CANCEL,
        )
        await workflow.wait_condition(lambda: wait.done() or self._cancel is not None)
        if not wait.done():
            wait.cancel()
            with contextlib.suppress(ActivityError):
                await wait
            return  # the run loop cancels the stages
        failed = next((end for end in await wait if end.state is not RunState.COMPLETED), None)
        if failed is None:
            for name in self.stages:
                self._set(name, StageState.WAITING, before[name])
            return
        detail = f"follows {failed.run}, which {'gave up' if failed.state is RunState.GAVE_UP else 'was cancelled'}"
        detail += f" ({failed.detail})" if failed.detail else ""
        for stage in self._waiting():
            self._set(stage.name, StageState.CANCELLED, detail)
            self._record("cancel", stage, detail)
        self._cancel = CancelRequest()  # the pipeline ends cancelled, as its stages
        await self._cancel_held_jobs()  # no held job left behind (the run loop will not run)

    async def _await_stage(self, name: str, handle: ChildWorkflowHandle[Any, RunStatus]) -> None:
        try:
            result: RunStatus = await handle
        except ChildWorkflowError as e:
            # Its workflow failed, was terminated, or was cancelled from Temporal.
            cancelled = isinstance(e.cause, CancelledError)
            self._set(name, StageState.CANCELLED if cancelled else StageState.GAVE_UP, str(e.cause or e))
            return
        self._set(name, _ENDED.get(result.run.state, StageState.CANCELLED), "")

    async def _forward_signals(self) -> None:
        """Pass the pipeline's signals on to every stage that runs, in the order they came."""
        while self._outbox:
            name, arg = self._outbox.pop(0)
            for stage, handle in self._handles.items():
                if self.stages[stage].state.finished:
                    continue
                try:
                    await (handle.signal(name) if arg is None else handle.signal(name, arg))
                except FailureError as e:
                    # The stage ended between its last report and this signal: nothing to pass on.
                    workflow.logger.info("signal %s not passed to stage %s: %s", name, stage, e)

    # --- records -------------------------------------------------------------------------

    def _set(self, name: str, state: StageState, detail: str) -> None:
        stage = self.stages[name]
        stage.state = state
        stage.detail = detail
        self._publish()

    def _record(self, kind: str, stage: PipelineStage, detail: str) -> None:
        action = PipelineAction.model_validate(
            {"kind": kind, "stage": stage.name, "run": stage.spec.run_id, "at": workflow.now(), "detail": detail}
        )
        self.actions.append(action)

    def _state(self) -> RunState:
        states = [s.state for s in self.stages.values()]
        if not all(s.finished for s in states):
            if self.paused:
                return RunState.PAUSED
            return RunState.PENDING if all(s is StageState.WAITING for s in states) else RunState.RUNNING
        if self._cancel is not None:
            return RunState.CANCELLED
        if all(s is StageState.COMPLETED for s in states):
            return RunState.COMPLETED
        return RunState.GAVE_UP

    def _publish(self) -> None:
        """`RecoveryState` (and the stage count as `RecoveryAttempts`), upserted when they change."""
        wanted: list[SearchAttributeUpdate[Any]] = [
            sa.STATE.value_set(self._state().value),
            sa.ATTEMPTS.value_set(sum(1 for s in self.stages.values() if s.state is not StageState.WAITING)),
        ]
        changed = [u for u in wanted if self._published.get(u.key.name) != u.value]
        if changed:
            workflow.upsert_search_attributes(changed)
            self._published.update({u.key.name: u.value for u in changed})
