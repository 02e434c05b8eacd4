"""A worker acts only on runs of the scheduler it manages.

A run's job ids mean something on one scheduler only: job 7 of a local run is not Slurm's job 7.
Workers of both kinds may poll one task queue by mistake (a laptop's worker left running, a
config without `scheduler: slurm`), and any of them may pick up any of a run's activities. So
each activity a run starts carries the run's scheduler in a Temporal header (put there by the
workflow side of this interceptor, from the run's spec), and the activity side refuses, before
the activity touches anything, when it names another scheduler than this worker's. The refusal
is one non-retryable error (`WrongScheduler`), so it reads as one line in the run's history, and
the run gives up with it (workflows/training_run.py).

A pipeline's own activities (its stages' held jobs) carry its scheduler too. Activities of other
workflows (node history, discovery) carry no header and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio import activity, workflow
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadConverter
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    StartActivityInput,
    StartLocalActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from recovery.activities.errors import PermanentActionError
from recovery.workflows.training_run import WRONG_SCHEDULER

HEADER = "recovery-scheduler"


def refusal(run_id: str, run_scheduler: str, managed: str) -> str:
    return (
        f"refused: run {run_id} is on the {run_scheduler} scheduler and this worker manages {managed}; "
        f"nothing was done (start a `recovery worker --scheduler {run_scheduler}`, on its own task queue)"
    )


def run_scheduler(headers: dict[str, Payload] | Any) -> str | None:
    """The scheduler an activity's run is on, as its workflow said; None when it said nothing."""
    payload = headers.get(HEADER) if headers else None
    if payload is None:
        return None
    value = PayloadConverter.default.from_payload(payload, str)
    return value if isinstance(value, str) else None


class SchedulerGuard(Interceptor):
    def __init__(self, managed: str) -> None:
        self.managed = managed

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Refuse(next, self.managed)

    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        return _TellScheduler


class _Refuse(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, managed: str) -> None:
        super().__init__(next)
        self.managed = managed

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        wanted = run_scheduler(input.headers)
        if wanted is not None and wanted != self.managed:
            message = refusal(activity.info().workflow_id or "?", wanted, self.managed)
            activity.logger.error(message)
            raise PermanentActionError(message, WRONG_SCHEDULER)
        return await self.next.execute_activity(input)


class _TellScheduler(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_WithSchedulerHeader(outbound))


class _WithSchedulerHeader(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        input.headers = with_scheduler(input.headers)
        return super().start_activity(input)

    def start_local_activity(self, input: StartLocalActivityInput) -> workflow.ActivityHandle[Any]:
        # A local activity runs on the worker of the workflow task, which may be the wrong one too.
        input.headers = with_scheduler(input.headers)
        return super().start_local_activity(input)


def with_scheduler(headers: Mapping[str, Payload]) -> dict[str, Payload]:
    """The workflow's headers and its run's scheduler. Duck-typed: the workflow class inside the
    sandbox is not the one imported out here. A run's spec names its scheduler; a pipeline's
    input does (its held stages' jobs)."""
    instance = workflow.instance()
    spec = getattr(instance, "spec", None) or getattr(instance, "inp", None)
    scheduler = getattr(spec, "scheduler", None)
    if not isinstance(scheduler, str):
        return dict(headers)
    return {**headers, HEADER: PayloadConverter.default.to_payload(scheduler)}
