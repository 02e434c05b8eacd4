"""`recovery upgrade-check`: would the installed workflow code break the runs in flight?

Fetches the histories of every open run (and of runs closed recently, which a retried query or
a reset could still replay) from Temporal and replays them against the code installed here.
Read-only: it starts, signals and changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from temporalio.client import Client, WorkflowHistory

from recovery.client.replay import WORKFLOWS, HistoryFetchError, ReplayFailure, replay, stream_histories
from recovery.client.runs import visibility_time
from recovery.workflows.models import Model


class FailedRun(Model):
    run: str
    run_id: str
    error: str


class UpgradeCheck(Model):
    """`upgrade-check --json`: histories checked, and the runs that would break, with why."""

    checked: int
    failed: list[FailedRun]


def query_for(closed_since: timedelta, now: datetime, task_queue: str) -> str:
    """Open executions of every workflow type a worker runs on this task queue (the runs these
    workers will replay), and those closed since then."""
    types = " OR ".join(f'WorkflowType = "{w.__name__}"' for w in WORKFLOWS)
    since = visibility_time(now - closed_since)
    if '"' in task_queue:
        raise HistoryFetchError(f"task queue {task_queue!r}: a name with a double quote cannot be queried")
    return f'({types}) AND TaskQueue = "{task_queue}" AND (ExecutionStatus = "Running" OR CloseTime > "{since}")'


async def check_upgrade(client: Client, closed_since: timedelta, now: datetime, task_queue: str) -> UpgradeCheck:
    checked = 0

    async def counted() -> AsyncIterator[WorkflowHistory]:
        nonlocal checked
        async for history in stream_histories(client, query_for(closed_since, now, task_queue)):
            checked += 1
            yield history

    # Replayed as they arrive: fetching the rest overlaps with replaying the first.
    failures = await replay(counted(), client.data_converter)
    return UpgradeCheck(checked=checked, failed=[_failed(f) for f in failures])


def _failed(failure: ReplayFailure) -> FailedRun:
    return FailedRun(run=failure.workflow_id, run_id=failure.run_id, error=failure.error)


def render(result: UpgradeCheck) -> str:
    if not result.failed:
        return f"all {result.checked} histories replay on the installed code: safe to roll out"
    lines = [f"{len(result.failed)} of {result.checked} runs would break on the installed code:"]
    lines += [f"  {f.run} (run {f.run_id}): {f.error}" for f in result.failed]
    lines.append("keep the old workers until these finish, or guard the change with workflow.patched")
    return "\n".join(lines)
