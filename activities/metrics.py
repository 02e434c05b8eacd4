"""The worker's own Prometheus metrics, served beside the Temporal SDK's on `--metrics`.

They are recorded through the SDK's metric meter (no second HTTP server): inside an activity
through `activity.metric_meter()`, which adds the labels `namespace`, `task_queue` and
`activity_type`; the runs gauge through the runtime's meter. Every series also carries the
SDK's `service_name` label. Only activities and the worker process record them, never workflow
code, so a replay cannot count anything twice. Without `--metrics` the SDK drops them.

Metrics, their labels, and what they count:

- `recovery_runs{state}` (gauge): TrainingRun workflows per `RecoveryState`, counted in Temporal
  visibility by each worker every `metrics_interval`. Closed runs count until the namespace's
  retention drops them. Every worker reports the same numbers: aggregate with `max`.
- `recovery_attempts_total{scheduler, how}`: attempts started by this worker. `how` is `submit`
  (a new job: a run's first attempt or a resubmission), `requeue` (the same job requeued for
  the next attempt) or `adopt` (a job submitted outside recovery that opted in).
- `recovery_symptoms_total{kind, category}`: failed attempts diagnosed. `kind` is crash, hang or
  straggler; `category` the diagnosis's (hardware, network, application, ...).
- `recovery_advice_total{operation, mode}`: advice recorded. `operation` is restart, terminate
  or give_up; `mode` is act (it will be carried out) or observe (recorded only).
- `recovery_advice_resolved_total{operation, status, acted}`: advice resolved, as activities
  see it. A carried-out restart is `converged` or `abandoned` by the successor check; advice
  that stops the run is `converged` when recorded; an observe-mode restart is `abandoned` when
  recorded. Not counted: restarts abandoned because a scheduler command failed or the run was
  cancelled first (the workflow decides those, and workflow code records no metrics).
- `recovery_actions_total{kind, changed}`: scheduler actions (requeue_hold, set_excluded_nodes,
  release); `changed` is false when a retry found the work already done.
- `recovery_failure_to_advice_seconds{operation}` (histogram): from the failure (the scheduler's
  end time, else when it was detected) to the advice being recorded.
- `recovery_failure_to_successor_seconds` (histogram): from the failure to the successor attempt
  running (the scheduler's start time).
- `recovery_scheduler_errors_total{scheduler, command, kind}`: scheduler errors met by
  activities. `command` is the activity (submit_attempt, requeue_hold, ...); `kind` is
  SchedulerUnavailable, SchedulerRefused, JobNotFound or NotRequeueable.
- `recovery_worker_gc_pause_seconds{generation}` (histogram): how long the worker process stood
  still in each garbage collection (worker/gc_pauses.py); a full one (`generation="2"`) of a
  worker holding thousands of runs is what stalls its workflow tasks.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime, timedelta

from temporalio import activity
from temporalio.common import MetricMeter

# The worker's scheduler (local, slurm), set around each activity by the worker's interceptor
# (worker/activity_context.py), so that no call site has to pass it.
SCHEDULER: ContextVar[str] = ContextVar("recovery_scheduler", default="unknown")

RUNS = "recovery_runs"
ATTEMPTS = "recovery_attempts_total"
SYMPTOMS = "recovery_symptoms_total"
ADVICE = "recovery_advice_total"
ADVICE_RESOLVED = "recovery_advice_resolved_total"
ACTIONS = "recovery_actions_total"
FAILURE_TO_ADVICE = "recovery_failure_to_advice_seconds"
FAILURE_TO_SUCCESSOR = "recovery_failure_to_successor_seconds"
SCHEDULER_ERRORS = "recovery_scheduler_errors_total"
GC_PAUSE = "recovery_worker_gc_pause_seconds"

# Recoveries take seconds (local) to hours (a queued successor on a busy cluster).
LATENCY_BUCKETS = (1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 21600.0)
# A young collection takes microseconds; a full one of a large heap, seconds.
GC_PAUSE_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
BUCKET_OVERRIDES = {
    FAILURE_TO_ADVICE: LATENCY_BUCKETS,
    FAILURE_TO_SUCCESSOR: LATENCY_BUCKETS,
    GC_PAUSE: GC_PAUSE_BUCKETS,
}

DESCRIPTIONS = {
    RUNS: "TrainingRun workflows by RecoveryState (Temporal visibility)",
    ATTEMPTS: "attempts started, by how",
    SYMPTOMS: "failed attempts diagnosed, by symptom kind and category",
    ADVICE: "advice recorded, by operation and mode",
    ADVICE_RESOLVED: "advice resolved, by operation, status and whether it was acted on",
    ACTIONS: "scheduler actions carried out, by kind and whether they changed the job",
    FAILURE_TO_ADVICE: "seconds from an attempt's failure to its advice being recorded",
    FAILURE_TO_SUCCESSOR: "seconds from an attempt's failure to its successor running",
    SCHEDULER_ERRORS: "scheduler errors met by activities, by scheduler, command and kind",
    GC_PAUSE: "seconds the worker process stood still in a garbage collection, by generation",
}


def _meter() -> MetricMeter:
    """The current activity's meter; outside an activity (unit tests, start-up) a no-op."""
    return activity.metric_meter() if activity.in_activity() else MetricMeter.noop


def _count(name: str, **labels: str) -> None:
    _meter().create_counter(name, DESCRIPTIONS[name]).add(1, labels)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """Elapsed seconds, or None when a time is unknown; clock skew between hosts clamps to 0."""
    if start is None or end is None:
        return None
    return max((end - start) / timedelta(seconds=1), 0.0)


def attempt_started(how: str) -> None:
    _count(ATTEMPTS, scheduler=SCHEDULER.get(), how=how)


def symptom_diagnosed(kind: str, category: str) -> None:
    _count(SYMPTOMS, kind=kind, category=category)


def advice_recorded(operation: str, mode: str, latency: float | None) -> None:
    _count(ADVICE, operation=operation, mode=mode)
    if latency is not None:
        hist = _meter().create_histogram_float(FAILURE_TO_ADVICE, DESCRIPTIONS[FAILURE_TO_ADVICE], "s")
        hist.record(latency, {"operation": operation})


def advice_resolved(operation: str, status: str, acted: bool) -> None:
    _count(ADVICE_RESOLVED, operation=operation, status=status, acted=_flag(acted))


def successor_running(latency: float | None) -> None:
    if latency is not None:
        hist = _meter().create_histogram_float(FAILURE_TO_SUCCESSOR, DESCRIPTIONS[FAILURE_TO_SUCCESSOR], "s")
        hist.record(latency)


def action_done(kind: str, changed: bool) -> None:
    _count(ACTIONS, kind=kind, changed=_flag(changed))


def scheduler_error(kind: str) -> None:
    command = activity.info().activity_type if activity.in_activity() else "none"
    _count(SCHEDULER_ERRORS, scheduler=SCHEDULER.get(), command=command, kind=kind)


def set_runs(meter: MetricMeter, counts: dict[str, int]) -> None:
    gauge = meter.create_gauge(RUNS, DESCRIPTIONS[RUNS])
    for state, count in counts.items():
        gauge.set(count, {"state": state})
