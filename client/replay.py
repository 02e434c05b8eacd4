"""Fetching workflow histories, and replaying them against the workflow code installed here.

Temporal replays a history by running the workflow code again and checking that it issues the
same commands (activities, timers, markers) in the same order as the history recorded. Code
that would decide differently on an old run is found here, before it ships, instead of in a
worker that fails that run's workflow tasks after the rollout. One Replayer replays them all:
building one costs more than replaying a history.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass

from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.runtime import LogForwardingConfig, LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from recovery.workflows.discovery import SlurmDiscovery
from recovery.workflows.node_history import NodeHistory
from recovery.workflows.training_run import TrainingRun

# Every workflow a worker runs: histories of any of them are replayed.
WORKFLOWS: tuple[type, ...] = (TrainingRun, NodeHistory, SlurmDiscovery)


_PASSING_RECOVERY = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules("recovery")
)

# Histories fetched at once: each is one or a few RPCs; more only queues at the frontend.
CONCURRENT_FETCHES = 32


class HistoryFetchError(RuntimeError):
    """Temporal refused to list or return histories; one line."""


@dataclass(frozen=True)
class ReplayFailure:
    """A history today's code cannot replay: the run would break after the upgrade."""

    workflow_id: str
    run_id: str
    error: str


async def replay(
    histories: Iterable[WorkflowHistory],
    converter: DataConverter,
    workflows: Sequence[type] | None = None,
    full_sandbox: bool = False,
) -> list[ReplayFailure]:
    """The histories that do not replay, with the first line of why (default: against WORKFLOWS).

    The sandbox re-imports a workflow's module for every history it replays, which costs about
    four times the replay itself; by default `recovery`'s own modules are passed through, so the
    command sequence (what breaks runs in flight) is checked at a quarter of the cost, but a
    restricted call in workflow code (the clock, I/O) is not caught. `full_sandbox` catches that
    too, as the worker's sandbox would: the tests use it."""
    by_run = {h.run_id: h for h in histories}
    runner = SandboxedWorkflowRunner() if full_sandbox else _PASSING_RECOVERY
    replayer = Replayer(
        workflows=workflows or WORKFLOWS, data_converter=converter, runtime=_runtime(), workflow_runner=runner
    )
    results = await replayer.replay_workflows(_iterate(by_run.values()), raise_on_replay_failure=False)
    return [
        ReplayFailure(by_run[run_id].workflow_id, run_id, _first_line(error))
        for run_id, error in results.replay_failures.items()
    ]


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
        raise HistoryFetchError(f"cannot read the runs' histories from Temporal: {e.message}") from None


@functools.cache
def _runtime() -> Runtime:
    """The SDK core logs each failed replay as a warning on stdout, where `--json` output goes:
    its errors go through Python's logging (stderr) instead, and a failure is reported once, here."""
    quiet = TelemetryFilter(core_level="ERROR", other_level="ERROR")
    forwarding = LogForwardingConfig(logger=logging.getLogger("recovery.replay"))
    return Runtime(telemetry=TelemetryConfig(logging=LoggingConfig(filter=quiet, forwarding=forwarding)))


async def _iterate(histories: Iterable[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return f"{type(error).__name__}: {text.splitlines()[0]}"
