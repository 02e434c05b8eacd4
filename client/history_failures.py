"""The failures a TrainingRun recorded, read straight from its history's events.

Each failure is what `decide` saw when it made the run's advice: the run's context (restarts
and budgets spent, exclusions, attempts without progress, the cluster's suspect nodes), the
diagnosis and the time. All of it is in the history as activity inputs and results (the
workflow input and its continue-as-new record, `watch_attempt`'s results, `diagnose`'s input
and result, `record_advice`'s input), so nothing is replayed: the workflow's own bookkeeping
(`RunRecord`) is followed event by event, as the workflow code keeps it. Since the patch
`diagnose-in-task`, diagnose is a local activity: its marker holds the result and not the input,
which is then the one the workflow built from the watch that found the failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHistory
from temporalio.converter import DataConverter

from recovery.workflows.decide import DecisionInput, budget_key, no_progress_streak
from recovery.workflows.models import (
    Advice,
    Attempt,
    DiagnoseInput,
    DiagnoseResult,
    Diagnosis,
    JobObservation,
    Model,
    RecordAdviceInput,
    RunInput,
    RunRecord,
    WatchInput,
    WatchResult,
)
from recovery.workflows.policy import Policy


class HistoryError(ValueError):
    """A history that is not a TrainingRun's, or cannot be decoded; one line."""


class RecordedFailure(Model):
    """One failure of a run, as `decide` saw it, and the advice it made then."""

    run: str
    nodes: int
    policy: Policy  # the policy the run was decided under
    context: DecisionInput
    diagnosis: Diagnosis
    advice: Advice
    attempt_started_at: datetime | None = None
    failed_at: datetime


@dataclass
class RunFailures:
    """A run's failures in one history (one execution of its continue-as-new chain)."""

    run: str
    nodes: int
    started_at: datetime
    ended_at: datetime  # the history's last event: the run's end, or when it was read if open
    closed: bool
    failures: list[RecordedFailure] = field(default_factory=list)


@dataclass
class _Follow:
    """The workflow's bookkeeping, replayed from events (RunRecord's counters and attempts)."""

    record: RunRecord
    scheduled: dict[int, tuple[str, Any]] = field(default_factory=dict)
    diagnosing: DiagnoseInput | None = None
    diagnosed: DiagnoseResult | None = None
    failing: DiagnoseInput | None = None  # what a local diagnose was given: the last watch's failure
    last: RecordedFailure | None = None

    def attempt(self, index: int) -> Attempt:
        found = [a for a in self.record.attempts if a.index == index]
        if not found:
            self.record.attempts.append(Attempt(index=index, job_id=""))
            return self.record.attempts[-1]
        return found[0]

    def revise(self, index: int, **changes: Any) -> None:
        self.attempt(index)
        self.record.revise_attempt(index, **changes)


# The activities whose inputs or results the bookkeeping reads, and as what.
_INPUTS: dict[str, type] = {"watch_attempt": WatchInput, "diagnose": DiagnoseInput, "record_advice": RecordAdviceInput}
_RESULTS: dict[str, type] = {
    "watch_attempt": WatchResult,
    "diagnose": DiagnoseResult,
    "submit_attempt": Attempt,
    "adopt_attempt": Attempt,
    "await_requeue": JobObservation,
}
# Core's marker of a local activity: its type in `data` (JSON), its result in `result`.
LOCAL_ACTIVITY_MARKER = "core_local_activity"


async def failures_of(history: WorkflowHistory, converter: DataConverter) -> RunFailures:
    events = list(history.events)
    if not events or not events[0].HasField("workflow_execution_started_event_attributes"):
        raise HistoryError("it does not start with WorkflowExecutionStarted")
    started = events[0].workflow_execution_started_event_attributes
    if started.workflow_type.name != "TrainingRun":
        raise HistoryError(f"it is a {started.workflow_type.name} history, not a TrainingRun's")
    (inp,) = await _decode(converter, started.input.payloads, RunInput)
    assert isinstance(inp, RunInput)
    follow = _Follow(record=(inp.record or RunRecord()).model_copy(deep=True))
    run = RunFailures(
        run=inp.spec.run_id,
        nodes=inp.spec.nodes,
        started_at=_time(events[0]),
        ended_at=_time(events[-1]),
        closed=_closes(events[-1]),
    )
    for event in events[1:]:
        await _step(event, follow, converter, run, inp)
    return run


async def _step(
    event: HistoryEvent, follow: _Follow, converter: DataConverter, run: RunFailures, inp: RunInput
) -> None:
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        attrs = event.activity_task_scheduled_event_attributes
        name = attrs.activity_type.name
        value = None
        if name in _INPUTS:
            (value,) = await _decode(converter, attrs.input.payloads, _INPUTS[name])
        follow.scheduled[event.event_id] = (name, value)
        _scheduled(name, value, follow, run, inp, _time(event))
    elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        attrs_c = event.activity_task_completed_event_attributes
        name, given = follow.scheduled.get(attrs_c.scheduled_event_id, ("", None))
        if name in _RESULTS and attrs_c.result.payloads:
            (result,) = await _decode(converter, attrs_c.result.payloads, _RESULTS[name])
            if result is not None:
                _completed(name, given, result, follow)
    elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
        await _local_activity(event, follow, converter)


async def _local_activity(event: HistoryEvent, follow: _Follow, converter: DataConverter) -> None:
    """A local diagnose's result; other markers (patches, other local activities) say nothing here."""
    attrs = event.marker_recorded_event_attributes
    if local_activity_type(event) != "diagnose" or "result" not in attrs.details or follow.failing is None:
        return
    (result,) = await _decode(converter, attrs.details["result"].payloads, DiagnoseResult)
    follow.diagnosing, follow.failing = follow.failing, None
    _diagnosed(follow, result)


def local_activity_type(event: HistoryEvent) -> str | None:
    """The activity type of a local activity's marker (core's JSON in `data`); None for any
    other event or marker (patches)."""
    attrs = event.marker_recorded_event_attributes
    if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED or attrs.marker_name != LOCAL_ACTIVITY_MARKER:
        return None
    if "data" not in attrs.details:
        return None
    try:
        kind = json.loads(attrs.details["data"].payloads[0].data).get("activity_type")
    except (ValueError, IndexError, AttributeError) as e:
        raise HistoryError(f"cannot read a local activity's marker in it: {e}") from None
    return str(kind) if kind else None


def _scheduled(name: str, value: Any, follow: _Follow, run: RunFailures, inp: RunInput, at: datetime) -> None:
    if name == "diagnose":
        follow.diagnosing, follow.diagnosed = value, None
    elif name == "record_advice" and follow.diagnosing is not None and follow.diagnosed is not None:
        follow.last = _failure(follow, value.advice, inp)
        run.failures.append(follow.last)
    elif name == "verify_successor" and follow.last is not None:
        _restarted(follow, follow.last)


def _completed(name: str, given: Any, result: Any, follow: _Follow) -> None:
    on_result: dict[str, Callable[[], None]] = {
        "watch_attempt": lambda: _watched(follow, given, result),
        "diagnose": lambda: _diagnosed(follow, result),
        "submit_attempt": lambda: _joined(follow, result),
        "adopt_attempt": lambda: _joined(follow, result),
        "await_requeue": lambda: _joined(follow, _observed_attempt(follow, result)),
    }
    on_result[name]()


def _watched(follow: _Follow, given: WatchInput, result: WatchResult) -> None:
    """As TrainingRun._follow: the attempt's end state, and its last step unless it made none."""
    index = given.attempt.index
    if result.symptom is not None:
        follow.failing = DiagnoseInput(
            run_id=given.run_id,
            attempt=given.attempt,
            observation=result.observation,
            symptom=result.symptom,
            log_diagnosis=result.log_diagnosis,
        )
    if result.observation.restart_count == given.attempt.restart_count:
        follow.revise(index, state=result.observation.state)
    if result.event != "progress" and result.last_step is not None:
        follow.revise(index, last_step=result.last_step)


def _diagnosed(follow: _Follow, result: DiagnoseResult) -> None:
    follow.diagnosed = result
    failed = result.failed_run
    if failed is not None and follow.diagnosing is not None:
        follow.revise(follow.diagnosing.attempt.index, state=failed.state)


def _joined(follow: _Follow, attempt: Attempt) -> None:
    """A new attempt (submitted, adopted, or run again by someone else in observe mode)."""
    follow.record.attempts = [a for a in follow.record.attempts if a.index != attempt.index] + [attempt]


def _observed_attempt(follow: _Follow, obs: JobObservation) -> Attempt:
    index = max((a.index for a in follow.record.attempts), default=-1) + 1
    return Attempt(index=index, job_id=obs.job_id, restart_count=obs.restart_count, state=obs.state)


def _restarted(follow: _Follow, failure: RecordedFailure) -> None:
    """As TrainingRun._start_successor: the restart was carried out, and counts."""
    rec, advice = follow.record, failure.advice
    rec.excluded_nodes = list(advice.excluded_nodes)
    rec.count_restart(budget_key(failure.context.symptom_kind, failure.diagnosis))
    if not any(a.index == advice.attempt_index + 1 for a in rec.attempts):
        rec.attempts.append(Attempt(index=advice.attempt_index + 1, job_id=failure.context.job_id))
    follow.last = None


def _failure(follow: _Follow, advice: Advice, inp: RunInput) -> RecordedFailure:
    """The context TrainingRun._decide built for this advice, from the bookkeeping so far."""
    diag_in, found, rec = follow.diagnosing, follow.diagnosed, follow.record
    assert diag_in is not None and found is not None
    attempts = sorted(rec.attempts, key=lambda a: a.index)
    context = DecisionInput(
        generation=advice.generation,
        attempt_index=advice.attempt_index,
        job_id=diag_in.attempt.job_id,
        restarts_done=rec.restarts_done,
        excluded_nodes=list(rec.excluded_nodes),
        nodes_needed=inp.spec.nodes,
        usable_nodes=found.usable_nodes,
        usable_count=found.usable_count,
        symptom_kind=diag_in.symptom.kind,
        spent=dict(rec.spent),
        no_progress_streak=no_progress_streak([a for a in attempts if a.index <= advice.attempt_index]),
        suspect_nodes=list(diag_in.suspect_nodes if found.suspect_nodes is None else found.suspect_nodes),
    )
    follow.diagnosing = follow.diagnosed = None
    return RecordedFailure(
        run=inp.spec.run_id,
        nodes=inp.spec.nodes,
        policy=inp.spec.policy,
        context=context,
        diagnosis=found.diagnosis,
        advice=advice,
        attempt_started_at=diag_in.observation.started_at or diag_in.attempt.started_at,
        failed_at=diag_in.symptom.failed_at or diag_in.symptom.detected_at,
    )


async def _decode(converter: DataConverter, payloads: Sequence[Any], kind: type) -> list[Any]:
    try:
        return await converter.decode(list(payloads), [kind])
    except (ValueError, TypeError, RuntimeError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise HistoryError(f"cannot decode a {kind.__name__} in it: {why}") from None


def _time(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime(tzinfo=UTC)


_CLOSING = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
}


def _closes(event: HistoryEvent) -> bool:
    return event.event_type in _CLOSING
