"""`recovery upgrade-check`: would the installed workflow code break the runs in flight?

Fetches the histories of every open run (and of runs closed recently, which a retried query or
a reset could still replay) from Temporal and replays them against the code installed here.
Read-only: it starts, signals and changes nothing.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError

from recovery.client.replay import WORKFLOWS, ReplayFailure, replay
from recovery.workflows.models import Model

# Histories fetched at once: each is one or a few RPCs; more only queues at the frontend.
CONCURRENT_FETCHES = 32


class UpgradeCheckError(RuntimeError):
    """The check could not be made (Temporal refused a query); one line."""


class FailedRun(Model):
    run: str
    run_id: str
    error: str


class UpgradeCheck(Model):
    """`upgrade-check --json`: histories checked, and the runs that would break, with why."""

    checked: int
    failed: list[FailedRun]


def query_for(closed_since: timedelta, now: datetime) -> str:
    """Open executions of every workflow type a worker runs, and those closed since then."""
    types = " OR ".join(f'WorkflowType = "{w.__name__}"' for w in WORKFLOWS)
    since = (now - closed_since).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f'({types}) AND (ExecutionStatus = "Running" OR CloseTime > "{since}")'


async def fetch_histories(client: Client, query: str) -> list[WorkflowHistory]:
    """Every listed execution's history, fetched concurrently."""
    limit = asyncio.Semaphore(CONCURRENT_FETCHES)

    async def one(workflow_id: str, run_id: str) -> WorkflowHistory:
        async with limit:
            return await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()

    try:
        listed = [(wf.id, wf.run_id) async for wf in client.list_workflows(query)]
        return list(await asyncio.gather(*(one(wid, rid) for wid, rid in listed)))
    except RPCError as e:
        raise UpgradeCheckError(f"cannot read the runs' histories from Temporal: {e.message}") from None


async def check_upgrade(client: Client, closed_since: timedelta, now: datetime) -> UpgradeCheck:
    histories = await fetch_histories(client, query_for(closed_since, now))
    failures = await replay(histories, client.data_converter)
    return UpgradeCheck(checked=len(histories), failed=[_failed(f) for f in failures])


def _failed(failure: ReplayFailure) -> FailedRun:
    return FailedRun(run=failure.workflow_id, run_id=failure.run_id, error=failure.error)


def render(result: UpgradeCheck) -> str:
    if not result.failed:
        return f"all {result.checked} histories replay on the installed code: safe to roll out"
    lines = [f"{len(result.failed)} of {result.checked} runs would break on the installed code:"]
    lines += [f"  {f.run} (run {f.run_id}): {f.error}" for f in result.failed]
    lines.append("keep the old workers until these finish, or guard the change with workflow.patched")
    return "\n".join(lines)
