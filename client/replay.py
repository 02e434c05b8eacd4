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
import multiprocessing
import os
import pickle
from collections.abc import AsyncIterator, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from temporalio.api.history.v1 import History
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.runtime import LogForwardingConfig, LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from recovery.workflows.discovery import SlurmDiscovery
from recovery.workflows.node_history import NodeHistory
from recovery.workflows.pipeline import Pipeline
from recovery.workflows.training_run import TrainingRun

# Every workflow a worker runs: histories of any of them are replayed.
WORKFLOWS: tuple[type, ...] = (TrainingRun, Pipeline, NodeHistory, SlurmDiscovery)


_PASSING_RECOVERY = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules("recovery")
)

# Histories one replay process takes at a time.
BATCH = 50
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
    histories: Iterable[WorkflowHistory] | AsyncIterator[WorkflowHistory],
    converter: DataConverter,
    workflows: Sequence[type] | None = None,
    full_sandbox: bool = False,
    processes: int | None = None,
    batch: int = BATCH,
) -> list[ReplayFailure]:
    """The histories that do not replay, with the first line of why (default: against WORKFLOWS).
    An async iterator is replayed as its histories arrive (while the rest are still fetched).

    The sandbox re-imports a workflow's module for every history it replays, which costs about
    four times the replay itself; by default `recovery`'s own modules are passed through, so the
    command sequence (what breaks runs in flight) is checked at a quarter of the cost, but a
    restricted call in workflow code (the clock, I/O) is not caught. `full_sandbox` catches that
    too, as the worker's sandbox would: the tests use it.

    Replaying is CPU-bound (about 0.6 ms an event here): more than one batch of histories is
    spread over `processes` (default: one per CPU), `batch` histories at a time."""
    job = _Job(tuple(workflows or WORKFLOWS), full_sandbox, converter)
    distinct = _distinct(histories if isinstance(histories, AsyncIterator) else _iterate(histories))
    first: list[WorkflowHistory] = []
    async for history in distinct:
        first.append(history)
        if len(first) > batch:
            break
    count = _process_count(processes, job)
    if len(first) <= batch or count < 2:
        return await job.replay([*first, *[h async for h in distinct]])
    return await _replay_in_processes(first, distinct, job, count, batch)


@dataclass(frozen=True)
class _Job:
    """What a replay needs besides the histories; sent to replay processes as it is."""

    workflows: tuple[type, ...]
    full_sandbox: bool
    converter: DataConverter

    async def replay(self, histories: list[WorkflowHistory]) -> list[ReplayFailure]:
        by_run = {h.run_id: h for h in histories}
        runner = SandboxedWorkflowRunner() if self.full_sandbox else _PASSING_RECOVERY
        replayer = Replayer(
            workflows=self.workflows, data_converter=self.converter, runtime=_runtime(), workflow_runner=runner
        )
        results = await replayer.replay_workflows(_iterate(histories), raise_on_replay_failure=False)
        return [
            ReplayFailure(by_run[run_id].workflow_id, run_id, _first_line(error))
            for run_id, error in results.replay_failures.items()
        ]


def _process_count(asked: int | None, job: _Job) -> int:
    """One per CPU unless asked; one when the job cannot cross to another process (a payload
    codec that does not pickle)."""
    try:
        pickle.dumps(job)
    except (pickle.PicklingError, TypeError, AttributeError):
        return 1
    return asked if asked is not None else (os.cpu_count() or 1)


async def _replay_in_processes(
    first: list[WorkflowHistory], rest: AsyncIterator[WorkflowHistory], job: _Job, count: int, size: int
) -> list[ReplayFailure]:
    loop = asyncio.get_running_loop()
    # spawn, not fork: the parent runs the SDK's native threads, which a fork does not carry over.
    with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn")) as pool:
        batches: list[asyncio.Future[list[ReplayFailure]]] = []
        batch = list(first)
        async for history in rest:
            batch.append(history)
            if len(batch) >= size:
                batches.append(loop.run_in_executor(pool, _replay_packed, job, _pack(batch)))
                batch = []
        if batch:
            batches.append(loop.run_in_executor(pool, _replay_packed, job, _pack(batch)))
        return [failure for found in await asyncio.gather(*batches) for failure in found]


def _pack(histories: list[WorkflowHistory]) -> list[tuple[str, bytes]]:
    return [(h.workflow_id, History(events=h.events).SerializeToString()) for h in histories]


def _replay_packed(job: _Job, packed: list[tuple[str, bytes]]) -> list[ReplayFailure]:
    """In a replay process: one batch."""
    histories = [WorkflowHistory(workflow_id, History.FromString(data).events) for workflow_id, data in packed]
    return asyncio.run(job.replay(histories))


async def _distinct(source: AsyncIterator[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    """Each execution once (a run listed twice by visibility is replayed once)."""
    seen: set[str] = set()
    async for history in source:
        if history.run_id not in seen:
            seen.add(history.run_id)
            yield history


async def fetch_histories(client: Client, query: str) -> list[WorkflowHistory]:
    """Every listed execution's history."""
    return [history async for history in stream_histories(client, query)]


async def stream_histories(client: Client, query: str) -> AsyncIterator[WorkflowHistory]:
    """Every listed execution's history, fetched concurrently, each yielded as soon as it arrives."""
    limit = asyncio.Semaphore(CONCURRENT_FETCHES)

    async def one(workflow_id: str, run_id: str) -> WorkflowHistory:
        async with limit:
            return await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()

    fetching: list[asyncio.Future[WorkflowHistory]] = []
    try:
        async for wf in client.list_workflows(query):
            fetching.append(asyncio.ensure_future(one(wf.id, wf.run_id)))
        for done in asyncio.as_completed(fetching):
            yield await done
    except RPCError as e:
        raise HistoryFetchError(f"cannot read the runs' histories from Temporal: {e.message}") from None
    finally:
        for task in fetching:  # a consumer that stopped early leaves nothing running
            task.cancel()


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
