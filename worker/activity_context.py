"""What every log line and metric written while an activity runs knows about it, set in one place.

A Temporal activity interceptor binds structlog context variables for the activity's duration:
`activity` (its name), `run_id`, `attempt` and `job_id` (None where the activity's input does not
say), and sets the scheduler label of the worker's metrics. Each activity runs in its own asyncio
task, so what is bound here is seen by that activity's lines only, and is reset when it ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog
from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from recovery.activities import metrics
from recovery.workflows.models import TRAINING_RUN

RUN_WORKFLOW = TRAINING_RUN


def context_fields(
    activity_type: str, workflow_type: str | None, workflow_id: str | None, args: Sequence[Any]
) -> dict[str, Any]:
    """The log context of one activity: from its input where it names them, else its workflow."""
    first = args[0] if args else None
    attempt = getattr(first, "attempt", None)
    advice = getattr(first, "advice", None)
    run_id = getattr(first, "run_id", None)
    if run_id is None and workflow_type == RUN_WORKFLOW:
        run_id = workflow_id  # a run's id is its workflow id
    index = getattr(first, "attempt_index", None)
    if index is None:
        index = getattr(attempt, "index", None) if attempt is not None else getattr(advice, "attempt_index", None)
    job_id = getattr(first, "job_id", None) or getattr(attempt, "job_id", None)
    return {"activity": activity_type, "run_id": run_id, "attempt": index, "job_id": job_id}


class ActivityContext(Interceptor):
    def __init__(self, scheduler: str) -> None:
        self.scheduler = scheduler

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next, self.scheduler)


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, scheduler: str) -> None:
        super().__init__(next)
        self.scheduler = scheduler

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        fields = context_fields(info.activity_type, info.workflow_type, info.workflow_id, input.args)
        token = metrics.SCHEDULER.set(self.scheduler)
        try:
            with structlog.contextvars.bound_contextvars(**fields):
                return await self.next.execute_activity(input)
        finally:
            metrics.SCHEDULER.reset(token)
