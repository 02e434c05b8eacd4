"""The `recovery_runs{state}` gauge: runs per RecoveryState, counted in Temporal visibility.

A background task of the worker process, never workflow code. Each worker counts the same
namespace, so with several workers take `max` across them, not `sum`.
"""

from __future__ import annotations

import asyncio

import structlog
from temporalio.client import Client
from temporalio.common import MetricMeter
from temporalio.runtime import Runtime
from temporalio.service import RPCError

from recovery.activities import metrics
from recovery.worker.stopping import stopped_within
from recovery.workflows import search_attributes as sa
from recovery.workflows.models import TRAINING_RUN, RunState

log = structlog.get_logger("recovery.worker")


def state_query(state: RunState) -> str:
    return f'WorkflowType="{TRAINING_RUN}" AND {sa.STATE.name}="{state.value}"'


async def count_runs(client: Client) -> dict[str, int]:
    return {state.value: (await client.count_workflows(state_query(state))).count for state in RunState}


def runtime_meter(client: Client) -> MetricMeter:
    return (client.service_client.config.runtime or Runtime.default()).metric_meter


async def publish_run_states(client: Client, interval: float, stop: asyncio.Event) -> None:
    """Count now, then every `interval` seconds until `stop`; a failed count keeps the last values."""
    meter = runtime_meter(client)
    while not stop.is_set():
        try:
            metrics.set_runs(meter, await count_runs(client))
        except RPCError as e:
            log.warning("runs by state not counted", error=str(e).splitlines()[0] if str(e) else type(e).__name__)
        await stopped_within(stop, interval)
