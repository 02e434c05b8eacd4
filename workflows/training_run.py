"""The TrainingRun workflow: one per training run, alive until the run completes or gives up.

It submits an attempt, watches it, and when an attempt fails it diagnoses, decides (pure
`decide`), records the advice, waits while paused, carries the advice out through idempotent
activities and verifies the successor runs. Workflow code only decides, waits and records;
everything that touches the scheduler is an activity.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from datetime import datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from recovery.activities.actions import ActionActivities, attempt_from
    from recovery.activities.diagnose import DiagnoseActivities
    from recovery.activities.hangstacks.collect import StackActivities
    from recovery.activities.notify import NotifyActivities
    from recovery.activities.watch import WatchActivities
    from recovery.workflows import run_node_history
    from recovery.workflows import search_attributes as sa
    from recovery.workflows.decide import DecisionInput, budget_key, decide, no_progress_streak
    from recovery.workflows.history import history_full
    from recovery.workflows.models import (
        FINAL_MILESTONE,
        TRAINING_RUN,
        Action,
        ActionKind,
        AdoptInput,
        Advice,
        AdviceStatus,
        Attempt,
        AttemptEndInput,
        AwaitRequeueInput,
        CancelInput,
        CancelRequest,
        DiagnoseInput,
        DiagnoseResult,
        HangStacks,
        HangStacksInput,
        JobActionInput,
        JobObservation,
        MilestoneName,
        NotifyInput,
        RecordAdviceInput,
        RestartPlan,
        RestartPlanInput,
        RunInput,
        RunRecord,
        RunState,
        RunStatus,
        SubmitInput,
        Symptom,
        VerifyInput,
        VerifyResult,
        WatchInput,
        WatchResult,
    )
    from recovery.workflows.node_history.models import SuspectRule
    from recovery.workflows.retries import BOUNDED, FOREVER, NOTIFY, TWICE
    from recovery.workflows.status import build_status, public_state

# Errors of requeue_hold after which a restart resubmits the script as a new job.
RESUBMIT_WHEN = ("NotRequeueable", "JobNotFound")
# The error of an activity a worker of another scheduler refused (worker/scheduler_guard.py).
WRONG_SCHEDULER = "WrongScheduler"
# Histories from before hung attempts' stacks were collected replay without that activity.
HANG_STACKS_PATCH = "hang-stacks"
WAIT_FOR_CANCEL = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
# Histories from before the worker's observer replay their watches as they were: a heartbeat
# timeout shared with the other activities, no safety timer, cancellation waited for.
OBSERVER_PATCH = "observer-watch"
# Histories from before recoveries saved round trips replay as they were: suspect_nodes as an
# activity of its own, the node-history report awaited before the advice is recorded.
ROUND_TRIPS_PATCH = "fewer-round-trips"
# Histories from before diagnose asked the suspects itself replay as they were: suspect_nodes as a
# local activity in the task that found the failure, before diagnose was scheduled.
SUSPECTS_PATCH = "suspects-in-diagnose"
# Histories from before the diagnosis ran inside the workflow task that found the failure replay
# with diagnose as an activity of its own, and one more workflow task before the advice.
DIAGNOSE_PATCH = "diagnose-in-task"


@workflow.defn(name=TRAINING_RUN)
class TrainingRun:
    @workflow.init
    def __init__(self, inp: RunInput) -> None:
        self.spec = inp.spec
        self.rec = inp.record or RunRecord()
        self.tuning = inp.spec.tuning
        self._cancel: CancelRequest | None = None
        self._published: dict[str, Any] = {}
        self._log_end = 0
        self._budget_key = "unknown"
        self._fewer_trips = False  # this recovery saves round trips (ROUND_TRIPS_PATCH)
        self._report: workflow.ActivityHandle[str] | None = None  # the node-history report in flight

    # --- signals and query ---------------------------------------------------------------

    @workflow.signal
    def pause(self) -> None:
        self.rec.paused = True
        self._publish()

    @workflow.signal
    def resume(self) -> None:
        self.rec.paused = False
        self._publish()

    @workflow.signal
    def cancel(self, request: CancelRequest | None = None) -> None:
        self._cancel = request or CancelRequest()

    @workflow.query
    def status(self) -> RunStatus:
        return build_status(self.spec, self.rec, workflow.now())

    # --- the run -------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: RunInput) -> RunStatus:
        try:
            if not self.rec.attempts:
                await self._first_attempt()
            while not self.rec.state.finished:
                if history_full(self.tuning.history_events_limit):
                    await self._continue_as_new()
                await self._follow(self.rec.attempts[-1])
        except asyncio.CancelledError:
            # Cancelled from Temporal itself (UI or CLI): stop recovering, leave the job alone.
            self._finish(RunState.CANCELLED, "cancelled from Temporal")
            raise
        except (ActivityError, ApplicationError) as e:
            refused = wrong_scheduler(e)
            if refused is None:
                raise
            # A worker of another scheduler refused to touch the run's job: say so, stop.
            self._finish(RunState.GAVE_UP, refused.message)
        return self.status()

    async def _first_attempt(self) -> None:
        if self.spec.adopt_job_id is not None:
            attempt = await workflow.execute_activity_method(
                ActionActivities.adopt_attempt,
                AdoptInput(run_id=self.spec.run_id, job_id=self.spec.adopt_job_id),
                start_to_close_timeout=self._quick(),
                retry_policy=FOREVER,
            )
        else:
            attempt = await self._submit(0, [])
        self.rec.own_excluded_nodes = list(attempt.excluded_nodes)
        self.rec.attempts.append(attempt)
        self._set_state(RunState.RUNNING)

    async def _submit(self, index: int, excluded: list[str], kept: Attempt | None = None) -> Attempt:
        """Submit the run's script as attempt `index`; the token makes a retry find its job. A
        resubmission keeps the output file of the attempt it follows (`kept`) and the owner."""
        spec = self.spec
        output = ""
        if kept is not None and kept.output_path:
            output = str(PurePosixPath(spec.workdir, kept.output_path))  # a relative one is the workdir's
        request = spec.submit_request(index, excluded, output, spec.owner if kept is not None else "")
        attempt: Attempt = await workflow.execute_activity_method(
            ActionActivities.submit_attempt,
            SubmitInput(run_id=spec.run_id, attempt_index=index, request=request),
            start_to_close_timeout=self._quick(),
            retry_policy=BOUNDED if index else FOREVER,
        )
        return attempt

    async def _follow(self, attempt: Attempt) -> None:
        """Watch one attempt to its end, then complete the run or recover it."""
        result = await self._watch(attempt)
        if result is None:
            await self._cancel_run(attempt)
            return
        self._update_attempt(attempt, result.observation)
        if result.event == "progress":
            self._progress_made(attempt, result)
            return
        known = self.rec.attempt(attempt.index)
        self.rec.revise_attempt(
            attempt.index,
            last_step=known.last_step if result.last_step is None else result.last_step,
            step_seconds=result.step_seconds or known.step_seconds,
        )
        if result.symptom is None:
            self._milestone("completed", result.observation.ended_at, attempt.index)
            self._finish(RunState.COMPLETED, "")
            return
        self._log_end = result.log_offset  # the successor's output starts here
        await self._recover(attempt, result)
        await self._reported()

    async def _watch(self, attempt: Attempt) -> WatchResult | None:
        """The watch result, or None when a cancel signal arrived first."""
        if workflow.patched(OBSERVER_PATCH):
            return await self._await_news(attempt)
        watch = self._start_watch(attempt, self.tuning.heartbeat_timeout_seconds, WAIT_FOR_CANCEL)
        await workflow.wait_condition(lambda: watch.done() or self._cancel is not None)
        if watch.done():
            return await watch
        watch.cancel()
        with contextlib.suppress(ActivityError):
            await watch  # the watch acknowledges before the run says it stopped watching
        return None

    async def _await_news(self, attempt: Attempt) -> WatchResult | None:
        """Wait for the worker's observer to wake the run with news of its attempt. A durable
        timer is the safety net: a watch quiet for `watch_rearm_seconds` (to 1.5 times it,
        `rearm_delay`) is re-armed, and the observer (of whichever worker takes it) judges the
        attempt from the scheduler's state now. A cancelled watch is not waited for: it only
        ever reads."""
        tuning = self.tuning
        beat = tuning.watch_heartbeat_timeout_seconds or tuning.heartbeat_timeout_seconds
        arming = 0  # how many times this attempt's watch was re-armed
        while True:
            watch = self._start_watch(attempt, beat, ActivityCancellationType.TRY_CANCEL)
            wait = rearm_delay(tuning.watch_rearm_seconds, self.spec.run_id, attempt.index, arming)
            try:
                await workflow.wait_condition(
                    lambda w=watch: w.done() or self._cancel is not None,  # type: ignore[misc]
                    timeout=timedelta(seconds=wait),
                )
            except TimeoutError:
                _let_go(watch)
                arming += 1
                continue
            if not watch.done():
                _let_go(watch)
                return None
            return await watch

    def _start_watch(
        self, attempt: Attempt, heartbeat_seconds: float, cancellation: ActivityCancellationType
    ) -> workflow.ActivityHandle[WatchResult]:
        return workflow.start_activity_method(
            WatchActivities.watch_attempt,
            WatchInput(
                run_id=self.spec.run_id,
                attempt=self.rec.attempt(attempt.index),
                poll_seconds=self.tuning.poll_seconds,
                policy=self.spec.policy,
            ),
            start_to_close_timeout=timedelta(days=30),
            heartbeat_timeout=timedelta(seconds=heartbeat_seconds),
            retry_policy=FOREVER,
            cancellation_type=cancellation,
        )

    def _progress_made(self, attempt: Attempt, result: WatchResult) -> None:
        """An attempt's first progress: training runs (again); a restart is only done now."""
        self.rec.revise_attempt(attempt.index, first_step=result.first_step, log_offset=result.log_offset)
        name: MilestoneName = "progress_restored" if attempt.index > 0 else "progress_started"
        self._milestone(name, result.first_step_at, attempt.index, f"step {result.first_step}")

    async def _recover(self, attempt: Attempt, result: WatchResult) -> None:
        assert result.symptom is not None
        symptom = result.symptom
        # The symptom first: the state change publishes it, so a run found by
        # RecoveryState="recovering" shows in RecoveryLastSymptom what it recovers from.
        self.rec.symptoms.append(symptom)
        self._set_state(RunState.RECOVERING)
        self._milestone("failure_observed", symptom.failed_at or symptom.detected_at, attempt.index)
        self._milestone("symptom_detected", symptom.detected_at, attempt.index)
        # Each activity the advice waits for is one workflow task through the server and back:
        # seconds under load. Diagnose asks the suspects itself, the report is not waited for.
        self._fewer_trips = workflow.patched(ROUND_TRIPS_PATCH)
        stacks = await self._hang_stacks(attempt, result)
        asked = workflow.patched(SUSPECTS_PATCH)
        suspects = [] if asked else await self._suspects()
        found = await self._diagnose(attempt, result, suspects, stacks, asked)
        suspects = suspects if found.suspect_nodes is None else found.suspect_nodes
        advice = self._decide(attempt, symptom, found, suspects)
        act = await self._record_advice(attempt, advice)
        await self._notify(advice)
        if act and self.spec.policy.suspect_nodes.drain:
            await self._drain_suspects(attempt, advice, found.diagnosis.implicated_nodes)
        if advice.operation != "restart":
            self._resolve(advice, "converged", "run stopped as advised")
            self._finish(RunState.GAVE_UP, advice.explanation)
            return
        if not act:
            await self._observe_only(attempt, advice)
            return
        if await self._wait_to_act(advice):
            await self._restart(attempt, advice)

    async def _diagnose(
        self, attempt: Attempt, result: WatchResult, suspects: list[str], stacks: HangStacks | None, ask: bool
    ) -> DiagnoseResult:
        """The diagnosis (with the suspects, when `ask`), recorded and told to the cluster's node history."""
        inp = DiagnoseInput(
            run_id=self.spec.run_id,
            attempt=attempt,
            observation=result.observation,
            symptom=self.rec.last_symptom,
            log_diagnosis=result.log_diagnosis,
            suspect_nodes=suspects,
            hang_stacks=stacks,
            excluded_nodes=self.rec.excluded_nodes,
            suspect_rule=self.spec.policy.suspect_nodes if ask else None,
        )
        found: DiagnoseResult
        if workflow.patched(DIAGNOSE_PATCH):
            # A local activity: it only reads (the scheduler's nodes, the node history), and run
            # inside this workflow task the advice is decided in it too, not one task later
            # (about a second through a busy server in a burst). The UI shows it as a marker.
            found = await workflow.execute_local_activity_method(
                DiagnoseActivities.diagnose, inp, start_to_close_timeout=self._quick(), retry_policy=FOREVER
            )
        else:
            found = await workflow.execute_activity_method(
                DiagnoseActivities.diagnose, inp, start_to_close_timeout=self._quick(), retry_policy=FOREVER
            )
        self.rec.diagnoses.append(found.diagnosis)
        if found.failed_run is not None:
            self._close_requeued(attempt, found.failed_run)
        report = (self.spec.run_id, attempt.index, found.diagnosis, workflow.now(), self._quick())
        if self._fewer_trips:
            self._report = run_node_history.start_report(*report)
        else:
            await run_node_history.report_failure(*report)
        return found

    def _decide(self, attempt: Attempt, symptom: Symptom, found: DiagnoseResult, suspects: list[str]) -> Advice:
        """The pure decision, with what the run has spent so far; recorded as pending."""
        context = DecisionInput(
            generation=len(self.rec.advice) + 1,
            attempt_index=attempt.index,
            job_id=attempt.job_id,
            restarts_done=self.rec.restarts_done,
            excluded_nodes=self.rec.excluded_nodes,
            nodes_needed=self.spec.nodes,
            usable_nodes=found.usable_nodes,
            usable_count=found.usable_count,
            symptom_kind=symptom.kind,
            spent=self.rec.spent,
            no_progress_streak=no_progress_streak(self.rec.attempts[: attempt.index + 1]),
            suspect_nodes=suspects,
        )
        self._budget_key = budget_key(symptom.kind, found.diagnosis)
        advice = decide(context, found.diagnosis, self.spec.policy, workflow.now())
        self.rec.advice.append(advice)
        return advice

    async def _record_advice(self, attempt: Attempt, advice: Advice) -> bool:
        """Record the advice through its activity (its input, read in the UI); whether this
        worker acts on it (`act` mode) or only observes."""
        recorded = await workflow.execute_activity_method(
            ActionActivities.record_advice,
            RecordAdviceInput(
                run_id=self.spec.run_id,
                advice=advice,
                partition=attempt.partition,
                failed_at=self._failed_at(),
                job_id=attempt.job_id,
            ),
            start_to_close_timeout=self._quick(),
            retry_policy=FOREVER,
        )
        self._milestone("advice_recorded", workflow.now(), attempt.index)
        return recorded.act

    async def _hang_stacks(self, attempt: Attempt, result: WatchResult) -> HangStacks | None:
        """A hung attempt still holds its nodes: read its ranks' stacks now, before the restart
        stops them. They join the symptom's evidence and may name the culprit. Advisory: when
        the activity fails, the run carries on without them."""
        assert result.symptom is not None
        if result.symptom.kind != "hang" or not workflow.patched(HANG_STACKS_PATCH):
            return None
        inp = HangStacksInput(
            run_id=self.spec.run_id,
            attempt_index=attempt.index,
            job_id=attempt.job_id,
            nodes=result.observation.nodes or attempt.nodes,
        )
        try:
            stacks: HangStacks = await workflow.execute_activity_method(
                StackActivities.collect_hang_stacks,
                inp,
                # The worker bounds the collection by its own config; this only catches a lost one.
                start_to_close_timeout=timedelta(minutes=10),
                heartbeat_timeout=timedelta(seconds=self.tuning.heartbeat_timeout_seconds),
                retry_policy=TWICE,
            )
        except ActivityError:
            return None
        if stacks.evidence:
            self.rec.revise_last_symptom(evidence=[*self.rec.last_symptom.evidence, *stacks.evidence])
        return stacks

    async def _notify(self, advice: Advice) -> None:
        """Restarts are announced without waiting; a give-up is sent before the run ends."""
        notify = self.spec.policy.notify
        if advice.operation not in notify.on or not (notify.webhook or notify.command):
            return
        inp = NotifyInput(
            run_id=self.spec.run_id,
            run_name=self.spec.name,
            advice=advice,
            webhook=notify.webhook,
            command=notify.command,
        )
        sent = workflow.start_activity_method(
            NotifyActivities.notify,
            inp,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=NOTIFY,
        )
        if advice.operation == "give_up":
            with contextlib.suppress(ActivityError):  # a dead receiver never changes the outcome
                await sent

    def _close_requeued(self, attempt: Attempt, failed: JobObservation) -> None:
        """The scheduler requeued the job by itself (Slurm on NODE_FAIL): the watch only saw the
        requeued job, so the failed attempt takes its end from the scheduler's history."""
        self._update_attempt(attempt, failed)
        if failed.ended_at is None:
            return
        self.rec.move_milestone("failure_observed", attempt.index, failed.ended_at)
        self.rec.revise_last_symptom(failed_at=failed.ended_at)

    async def _reported(self) -> None:
        """Wait for this recovery's node-history report, if one is in flight: mostly long done."""
        await run_node_history.reported(self._report)
        self._report = None

    async def _suspects(self) -> list[str]:
        rule = SuspectRule.of(self.spec.policy.suspect_nodes)
        return await run_node_history.suspects(rule, workflow.now(), self._quick(), local=self._fewer_trips)

    async def _drain_suspects(self, attempt: Attempt, advice: Advice, implicated: list[str]) -> None:
        """Policy `suspect_nodes.drain`: take out of rotation, for everyone, the nodes this failure
        implicated that are suspect now (counting it). Only this run's own evidence: a run never
        drains nodes it did not see fail. Advisory, like the history it comes from."""
        if not implicated:
            return
        await self._reported()  # the suspects asked now count this failure
        suspects = [n for n in await self._suspects() if n in implicated]
        if not suspects:
            return
        rule = SuspectRule.of(self.spec.policy.suspect_nodes)
        done = await run_node_history.drain(self.spec.run_id, suspects, rule, workflow.now(), self._quick())
        # Straight into the record: a drain is not the restart, so it is no `first_action`.
        for node, reason in done.drained.items():
            self.rec.actions.append(_action(advice, "drain_node", attempt.job_id, True, f"drained {node}: {reason}"))
        if done.refused:
            detail = f"not drained ({', '.join(suspects)}): {done.refused}"
            self.rec.actions.append(_action(advice, "drain_node", attempt.job_id, False, detail))

    async def _observe_only(self, attempt: Attempt, advice: Advice) -> None:
        """Observe mode: nothing is carried out; follow the job if someone else runs it again."""
        self._resolve(advice, "abandoned", "observe mode: recorded, not carried out")
        obs = await workflow.execute_activity_method(
            WatchActivities.await_requeue,
            AwaitRequeueInput(
                run_id=self.spec.run_id,
                attempt=attempt,
                timeout_seconds=self.tuning.verify_timeout_seconds,
                poll_seconds=self.tuning.poll_seconds,
            ),
            start_to_close_timeout=timedelta(seconds=self.tuning.verify_timeout_seconds + 60),
            heartbeat_timeout=timedelta(seconds=self.tuning.heartbeat_timeout_seconds),
            retry_policy=FOREVER,
        )
        if obs is None:
            self._finish(RunState.GAVE_UP, "observe mode: advice recorded; the job did not run again")
            return
        self.rec.attempts.append(attempt_from(obs, attempt.index + 1))
        self._set_state(RunState.RUNNING)

    async def _wait_to_act(self, advice: Advice) -> bool:
        """Wait out pause and backoff; False if the run was cancelled meanwhile."""
        await workflow.wait_condition(lambda: not self.rec.paused or self._cancel is not None)
        if advice.not_before is not None and self._cancel is None:
            delay = (advice.not_before - workflow.now()).total_seconds()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await workflow.wait_condition(lambda: self._cancel is not None, timeout=delay)
        if self._cancel is not None:
            self._resolve(advice, "abandoned", "run cancelled before the restart")
            await self._cancel_run(self.rec.attempts[-1])
            return False
        return True

    async def _restart(self, attempt: Attempt, advice: Advice) -> None:
        """As policy `restart_via` and the world allow: requeue-hold, set exclusions, release (the
        job keeps its id); or cancel what is left and resubmit the script as a new job of the
        run. A job that cannot be requeued is resubmitted either way."""
        plan = await self._plan_restart(attempt, advice)
        if plan is not None and plan.via == "resubmit":
            await self._resubmit(attempt, advice, plan.reason, cancel_first=True)
            return
        step = JobActionInput(
            run_id=self.spec.run_id,
            advice_generation=advice.generation,
            job_id=attempt.job_id,
            restart_count=attempt.restart_count,
            excluded_nodes=self._exclusions(advice),
            attempt_index=attempt.index,
        )
        try:
            requeued = await self._act(ActionActivities.requeue_hold, step)
            if plan is not None:  # the policy asked for a resubmission: the one line why not
                requeued = requeued.model_copy(update={"detail": f"{requeued.detail}; {plan.reason}"})
            self._record_action(requeued, attempt.index)
        except ActivityError as e:
            if _error_type(e) in RESUBMIT_WHEN:
                await self._resubmit(attempt, advice, _cause(e))
            else:
                self._abandon_restart(advice, e)
            return
        await self._read_to_end(attempt)
        successor = Attempt(
            index=attempt.index + 1,
            job_id=attempt.job_id,
            restart_count=attempt.restart_count + 1,
            excluded_nodes=step.excluded_nodes,
            log_offset=self._log_end,
        )
        verify: workflow.ActivityHandle[VerifyResult] | None = None
        try:
            self._record_action(await self._act(ActionActivities.set_excluded_nodes, step), attempt.index)
            if self._fewer_trips:  # it only reads: started beside the release, it waits for it
                verify = self._start_verify(successor)
            self._record_action(await self._act(ActionActivities.release, step), attempt.index)
        except ActivityError as e:
            if verify is not None:
                verify.cancel()
            self._abandon_restart(advice, e)
            return
        await self._start_successor(attempt, successor, advice, verify)

    async def _read_to_end(self, attempt: Attempt) -> None:
        """A hang or a straggler was still running when it was detected: what it wrote until the
        restart stopped it is its own, not its successor's, and its last step counts (goodput)."""
        if not self.rec.symptoms or self.rec.last_symptom.kind == "crash":
            return
        known = self.rec.attempt(attempt.index)
        inp = AttemptEndInput(
            run_id=self.spec.run_id,
            attempt=known,
            log_offset=self._log_end,
            last_step=known.last_step,
            timeout_seconds=min(self.tuning.action_timeout_seconds, 20.0),
            poll_seconds=self.tuning.poll_seconds,
        )
        try:
            end = await workflow.execute_activity_method(
                WatchActivities.attempt_end,
                inp,
                start_to_close_timeout=timedelta(seconds=inp.timeout_seconds + 30),
                heartbeat_timeout=timedelta(seconds=self.tuning.heartbeat_timeout_seconds),
                retry_policy=BOUNDED,
            )
        except ActivityError:
            return  # advisory: the successor's watch then starts where this attempt's stopped
        self._log_end = end.log_offset
        self.rec.revise_attempt(attempt.index, last_step=end.last_step)

    async def _plan_restart(self, attempt: Attempt, advice: Advice) -> RestartPlan | None:
        """None for `restart_via: requeue` (no activity: runs from before the key replay as
        they were); else the worker's answer, or a requeue when it cannot give one."""
        via = self.spec.policy.restart_via
        if via == "requeue":
            return None
        if not self.spec.script:
            return RestartPlan(via="requeue", reason="not resubmitted: the batch script was not captured")
        inp = RestartPlanInput(
            run_id=self.spec.run_id,
            job_id=attempt.job_id,
            restart_via=via,
            owner=self.spec.owner,
            nodes=self.spec.nodes,
            partition=attempt.partition,
            excluded_nodes=self._exclusions(advice),
            released_nodes=attempt.nodes,
        )
        try:
            plan: RestartPlan = await workflow.execute_activity_method(
                ActionActivities.plan_restart, inp, start_to_close_timeout=self._quick(), retry_policy=BOUNDED
            )
        except ActivityError as e:
            return RestartPlan(via="requeue", reason=f"not resubmitted: {_cause(e)}")
        return plan

    async def _resubmit(self, attempt: Attempt, advice: Advice, why: str, *, cancel_first: bool = False) -> None:
        """The run continues as a new job: the same script, options, working directory, output
        file and owner, the job's exclusions plus the advice's. Chosen by `restart_via`
        (`cancel_first`: end what is left of the failed job), or because the job cannot be
        requeued (purged, --no-requeue)."""
        if not self.spec.script:
            self._abandon_restart(advice, f"cannot resubmit ({why}): the batch script was not captured")
            return
        if cancel_first and not await self._cancel_rest(attempt, advice):
            return
        try:
            successor = await self._submit(attempt.index + 1, self._exclusions(advice), kept=attempt)
        except ActivityError as e:
            self._abandon_restart(advice, e)
            return
        if successor.output_path and successor.output_path == attempt.output_path:
            successor = successor.model_copy(update={"log_offset": self._log_end})  # appended to
        detail = f"resubmitted as job {successor.job_id} ({why})"
        self._record_action(_action(advice, "submit", successor.job_id, True, detail), attempt.index)
        await self._start_successor(attempt, successor, advice)

    async def _cancel_rest(self, attempt: Attempt, advice: Advice) -> bool:
        """Cancel what is left of the failed job (a hung or straggling one still runs; one that
        Slurm requeued by itself waits); False if that failed and the restart was abandoned."""
        try:
            cancelled: bool = await workflow.execute_activity_method(
                ActionActivities.cancel_job,
                CancelInput(run_id=self.spec.run_id, job_id=attempt.job_id),
                start_to_close_timeout=self._quick(),
                retry_policy=BOUNDED,
            )
        except ActivityError as e:
            self._abandon_restart(advice, e)
            return False
        if cancelled:
            detail = "cancelled what was left of the job, to resubmit"
            self._record_action(_action(advice, "cancel", attempt.job_id, True, detail), attempt.index)
        await self._read_to_end(attempt)
        return True

    async def _start_successor(
        self,
        failed: Attempt,
        successor: Attempt,
        advice: Advice,
        verify: workflow.ActivityHandle[VerifyResult] | None = None,
    ) -> None:
        self.rec.mark_acted(advice.generation)
        self.rec.excluded_nodes = list(advice.excluded_nodes)
        self.rec.count_restart(self._budget_key)
        self.rec.attempts.append(successor)
        await self._verify(failed, successor, advice, verify)

    def _exclusions(self, advice: Advice) -> list[str]:
        """What the successor must avoid: the job's own exclusions and the advice's."""
        return list(dict.fromkeys([*self.rec.own_excluded_nodes, *advice.excluded_nodes]))

    def _abandon_restart(self, advice: Advice, error: ActivityError | str) -> None:
        why = _cause(error) if isinstance(error, ActivityError) else error
        reason = f"could not carry out the restart: {why}"
        self._resolve(advice, "abandoned", reason)
        self._finish(RunState.GAVE_UP, reason)

    async def _act(self, method: Any, step: JobActionInput) -> Action:
        result: Action = await workflow.execute_activity_method(
            method,
            step,
            start_to_close_timeout=timedelta(seconds=self.tuning.action_timeout_seconds),
            retry_policy=BOUNDED,
        )
        return result

    async def _verify(
        self,
        failed: Attempt,
        successor: Attempt,
        advice: Advice,
        started: workflow.ActivityHandle[VerifyResult] | None = None,
    ) -> None:
        """Wait for the successor to run (`started`: the verification already under way)."""
        result = await (self._start_verify(successor) if started is None else started)
        if result.observation is not None:
            self._update_attempt(successor, result.observation)
        if not result.ok:
            # The job stays queued; the watch that follows picks it up whenever it runs.
            self._resolve(advice, "abandoned", result.reason)
            self._set_state(RunState.RUNNING)
            return
        assert result.observation is not None
        detail = f"attempt {successor.index} {result.reason}"
        self._milestone("successor_running", result.observation.started_at, failed.index, detail)
        self._resolve(advice, "converged", result.reason)
        self._set_state(RunState.RUNNING)

    def _start_verify(self, successor: Attempt) -> workflow.ActivityHandle[VerifyResult]:
        return workflow.start_activity_method(
            ActionActivities.verify_successor,
            VerifyInput(
                run_id=self.spec.run_id,
                job_id=successor.job_id,
                successor_restart_count=successor.restart_count,
                excluded_nodes=successor.excluded_nodes,
                timeout_seconds=self.tuning.verify_timeout_seconds,
                poll_seconds=self.tuning.poll_seconds,
                failed_at=self._failed_at(),
                attempt_index=successor.index,
            ),
            start_to_close_timeout=timedelta(seconds=self.tuning.verify_timeout_seconds + 60),
            heartbeat_timeout=timedelta(seconds=self.tuning.heartbeat_timeout_seconds),
            retry_policy=FOREVER,
        )

    async def _cancel_run(self, attempt: Attempt) -> None:
        request = self._cancel or CancelRequest()
        if request.kill_job:
            await workflow.execute_activity_method(
                ActionActivities.cancel_job,
                CancelInput(run_id=self.spec.run_id, job_id=attempt.job_id),
                start_to_close_timeout=self._quick(),
                retry_policy=BOUNDED,
            )
        how = "recovery cancelled; job cancelled" if request.kill_job else "recovery cancelled"
        self._finish(RunState.CANCELLED, how)

    async def _continue_as_new(self) -> None:
        await workflow.wait_condition(workflow.all_handlers_finished)
        self.rec.continued += 1
        workflow.continue_as_new(RunInput(spec=self.spec, record=self.rec))

    # --- bookkeeping ---------------------------------------------------------------------

    def _quick(self) -> timedelta:
        """Timeout of a short activity: a killed worker's activity is retried after this long."""
        return timedelta(seconds=self.tuning.action_timeout_seconds)

    def _failed_at(self) -> datetime:
        """When the attempt being recovered failed (as its failure_observed milestone says)."""
        symptom = self.rec.last_symptom
        return symptom.failed_at or symptom.detected_at

    def _update_attempt(self, attempt: Attempt, obs: JobObservation) -> None:
        if obs.restart_count != attempt.restart_count:
            return  # the observation already describes a later attempt
        known = self.rec.attempt(attempt.index)
        fresh = attempt_from(obs, attempt.index).model_copy(
            update={
                "excluded_nodes": obs.excluded_nodes or known.excluded_nodes,
                "log_offset": known.log_offset,
                "first_step": known.first_step,
                "last_step": known.last_step,
                "step_seconds": known.step_seconds,
            }
        )
        self.rec.refresh_attempt(fresh)

    def _record_action(self, action: Action, attempt_index: int) -> None:
        if self.rec.add_action(action):
            self._milestone("first_action", action.at, attempt_index, action.kind)

    def _resolve(self, advice: Advice, status: AdviceStatus, reason: str) -> None:
        self.rec.resolve_advice(advice.generation, status, reason, workflow.now())

    def _milestone(self, name: MilestoneName, at: datetime | None, attempt_index: int | None, detail: str = "") -> None:
        self.rec.add_milestone(name, at or workflow.now(), attempt_index, detail)

    def _finish(self, state: RunState, detail: str) -> None:
        """End the run. A completed run's milestone is the scheduler's end time, added by the
        caller; the others end now."""
        if state is not RunState.COMPLETED:
            last = self.rec.attempts[-1].index if self.rec.attempts else None
            self._milestone(FINAL_MILESTONE[state], None, last, detail)
        self._set_state(state)

    def _set_state(self, state: RunState) -> None:
        self.rec.state = state
        self._publish()

    def _publish(self) -> None:
        """Keep the search attributes current, upserting only what changed."""
        rec = self.rec
        wanted: list[SearchAttributeUpdate[Any]] = [
            sa.STATE.value_set(public_state(rec).value),
            sa.SCHEDULER.value_set(self.spec.scheduler),
            sa.JOB_IDS.value_set(list(dict.fromkeys(a.job_id for a in rec.attempts))),
            sa.ATTEMPTS.value_set(len(rec.attempts)),
            sa.LAST_SYMPTOM.value_set(rec.symptoms[-1].kind if rec.symptoms else ""),
            sa.EXCLUDED_NODES.value_set(list(rec.excluded_nodes)),
        ]
        changed = [u for u in wanted if self._published.get(u.key.name) != u.value]
        if changed:
            workflow.upsert_search_attributes(changed)
            self._published.update({u.key.name: u.value for u in changed})


def _action(advice: Advice, kind: ActionKind, job_id: str, changed: bool, detail: str) -> Action:
    """An action the workflow itself records (the scheduler's own come back from activities)."""
    return Action(
        advice_generation=advice.generation,
        kind=kind,
        job_id=job_id,
        at=workflow.now(),
        changed=changed,
        detail=detail,
    )


def _error_type(error: ActivityError) -> str | None:
    cause = error.cause
    return cause.type if isinstance(cause, ApplicationError) else None


def wrong_scheduler(error: ActivityError | ApplicationError) -> ApplicationError | None:
    """A worker of another scheduler's refusal: an activity's comes wrapped in an ActivityError,
    a local activity's (diagnose) is the activity's error itself."""
    cause = error.cause if isinstance(error, ActivityError) else error
    return cause if isinstance(cause, ApplicationError) and cause.type == WRONG_SCHEDULER else None


def _cause(error: ActivityError) -> str:
    """The innermost message: the scheduler's words rather than Temporal's wrapping."""
    root: BaseException = error
    while isinstance(root, TemporalError) and root.cause is not None:
        root = root.cause
    return str(root)


def rearm_delay(rearm_seconds: float, run_id: str, attempt: int, arming: int) -> float:
    """How long a watch may stay quiet before it is re-armed: `rearm_seconds` to 1.5 times it,
    spread by the run, the attempt and the re-arming. Runs started or restarted together (a
    burst, a worker's start) would otherwise re-arm together, each re-arm two workflow tasks
    through the server at once. crc32, not hash(): the same on every replay and every worker."""
    spread = zlib.crc32(f"{run_id}/{attempt}/{arming}".encode()) / 2**32
    return rearm_seconds * (1.0 + spread / 2)


def _let_go(watch: workflow.ActivityHandle[WatchResult]) -> None:
    """Cancel a watch the run no longer waits for. Its end (cancelled) is taken when it comes,
    so that asyncio does not log an unretrieved error for every re-armed watch (seen at
    10,000 runs, when the safety timers fired). It issues no command: replays are unchanged."""
    watch.cancel()
    watch.add_done_callback(lambda done: done.cancelled() or done.exception())
