"""A SIGKILLed worker's watches move to a live worker of the same host at once, not after their
heartbeat timeout (worker/orphans.py): when a worker starts after the loss, and when one was
already running beside the lost one. The runs here heartbeat every 5 min, so a watch held by
the new worker within the test's minute can only have been handed on."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import time

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client

from recovery.client import runs
from recovery.client.submit import build_spec
from recovery.workflows.models import RunSpec
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import FAST

SLOW_BEAT = FAST.model_copy(update={"watch_heartbeat_timeout_seconds": 600.0})
HOST = socket.gethostname()


async def start_long_run(client: Client, embedded: Embedded, name: str) -> RunSpec:
    script = embedded.job_script(name, steps=5000)
    spec = build_spec(str(script), [], "local", "default", None, None, script.parent)
    spec.tuning = SLOW_BEAT
    await runs.start_run(client, spec)
    return spec


async def watch_holder(client: Client, run_id: str) -> str | None:
    """The identity of the worker whose watch of the run has started, if one has."""
    description = await client.get_workflow_handle(run_id).describe()
    for pending in description.raw_description.pending_activities:
        started = pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        if pending.activity_type.name == "watch_attempt" and started:
            return pending.last_worker_identity
    return None


async def held_by(client: Client, run_id: str, worker: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await watch_holder(client, run_id) == f"{worker.pid}@{HOST}":
            return True
        await asyncio.sleep(0.5)
    return False


async def cancel(embedded: Embedded, *specs: RunSpec) -> None:
    for spec in specs:
        done = embedded.recovery("cancel", spec.run_id, "--kill-job")
        assert done.returncode == 0, done.stderr


@pytest.mark.timeout(180)
async def test_a_worker_started_after_a_loss_takes_the_lost_workers_watches(embedded: Embedded, client: Client) -> None:
    first = embedded.start_worker()
    spec = await start_long_run(client, embedded, "orphan-start")
    try:
        assert await held_by(client, spec.run_id, first, timeout=60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        second = embedded.start_worker()
        assert await held_by(client, spec.run_id, second, timeout=60), "the watch waited for its heartbeat timeout"
    finally:
        await cancel(embedded, spec)
        embedded.stop_workers()


@pytest.mark.timeout(180)
async def test_a_running_worker_takes_the_watches_of_one_lost_beside_it(embedded: Embedded, client: Client) -> None:
    first = embedded.start_worker()
    spec = await start_long_run(client, embedded, "orphan-beside")
    try:
        assert await held_by(client, spec.run_id, first, timeout=60)
        second = embedded.start_worker()
        await asyncio.sleep(3)  # the second worker has looked once and found nothing to take
        assert await watch_holder(client, spec.run_id) == f"{first.pid}@{HOST}"
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert await held_by(client, spec.run_id, second, timeout=60), "the watch waited for its heartbeat timeout"
    finally:
        await cancel(embedded, spec)
        embedded.stop_workers()
