"""Several runs recover while workers are SIGKILLed at random moments and the dev server itself
is SIGKILLed once and restarted on the same SQLite file: every run completes, none restarts twice."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time

import pytest
from temporalio.client import Client

from recovery.client import runs
from recovery.workflows.models import RunStatus
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import restarts_of, start

RUNS = 4
SEED = int(os.environ.get("RECOVERY_CHAOS_SEED", time.time()))


def kill_worker(embedded: Embedded) -> None:
    for proc in embedded.workers:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()


def kill_server(embedded: Embedded) -> None:
    pid = embedded.server.pid()
    assert pid is not None, "the test's dev server should be running"
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while embedded.server.serving() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.mark.timeout(300)
async def test_runs_survive_killed_workers_and_a_killed_server(embedded: Embedded, client: Client) -> None:
    rng = random.Random(SEED)
    print(f"chaos seed {SEED} (set RECOVERY_CHAOS_SEED to replay)")
    embedded.start_worker()
    specs = []
    for i in range(RUNS):
        script = embedded.job_script(f"chaos{i}", fault_rank=i % 2, steps=30, fault_step=3 + i)
        specs.append(await start(client, script))
    for round_ in range(4):
        await asyncio.sleep(rng.uniform(0.3, 2.5))
        kill_worker(embedded)
        if round_ == 1:
            kill_server(embedded)
            embedded.server.start(timeout=60)
        embedded.start_worker()

    results: list[RunStatus | None] = await asyncio.wait_for(
        asyncio.gather(*(runs.wait_result(client, s.run_id) for s in specs)), timeout=240
    )
    for spec, status in zip(specs, results, strict=True):
        assert status is not None, f"{spec.run_id} did not complete"
        assert status.run.state == "completed", f"{spec.run_id}: {status.run.state}"
        assert len(status.advice) == 1 and status.advice[0].status == "converged"
        # Other tests of the session may have made a node suspect: it is excluded too.
        assert status.diagnoses[0].implicated[0].node in status.advice[0].excluded_nodes
        assert status.advice[0].excluded_nodes[0] not in status.attempts[1].nodes
        assert await restarts_of(status.attempts[0].job_id) == 1, f"{spec.run_id} restarted twice"
    embedded.stop_workers()
