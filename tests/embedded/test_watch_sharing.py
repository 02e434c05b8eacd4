"""A worker started beside a busy one takes a share of the runs it already watches
(worker/sharing.py), on the real dev server and local cluster: the busy worker hands its
surplus of watches on, Temporal retries them on whichever worker polls first, the runs' next
workflow tasks may go to the second worker too, and no run is recovered or disturbed by the
move. The runs heartbeat every 5 min, so a watch held by the second worker within the test's
two minutes can only have been handed on."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from recovery.client import runs
from recovery.client.submit import build_spec
from recovery.worker.sharing import MARGIN
from recovery.workflows.models import RunSpec
from tests.embedded.conftest import Embedded
from tests.embedded.test_orphaned_watches import HOST, SLOW_BEAT, watch_holder

# More runs than the local cluster's 4 nodes: most wait in the queue, watched all the same.
RUNS = 24
JOB = """#!/bin/bash
#SBATCH --nodes=1
for step in $(seq 1 100000); do
  echo "recovery-progress step=$step"
  sleep 1
done
"""


async def start_idle_run(client: Client, workdir: Path) -> RunSpec:
    workdir.mkdir(parents=True)
    script = workdir / "job.sbatch"
    script.write_text(JOB)
    spec = build_spec(str(script), [], "local", "default", None, None, workdir)
    spec.tuning = SLOW_BEAT
    await runs.start_run(client, spec)
    return spec


async def holders(client: Client, specs: list[RunSpec]) -> list[str | None]:
    return list(await asyncio.gather(*(watch_holder(client, s.run_id) for s in specs)))


async def tasks_by(client: Client, run_id: str, identity: str) -> int:
    """The run's workflow tasks the worker of this identity took."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    started = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
    return sum(
        1
        for e in history.events
        if e.event_type == started and e.workflow_task_started_event_attributes.identity == identity
    )


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(1)
    return False


@pytest.mark.timeout(300)
async def test_a_worker_started_beside_a_busy_one_takes_a_share_of_its_watches(
    embedded: Embedded, client: Client
) -> None:
    first = embedded.start_worker()
    specs = [await start_idle_run(client, embedded.home / "jobs" / f"share-{i}") for i in range(RUNS)]
    me_first = f"{first.pid}@{HOST}"
    try:

        async def all_on_first() -> bool:
            return all(h == me_first for h in await holders(client, specs))

        assert await until(all_on_first, 90), "every run's watch starts on the only worker"
        second = embedded.start_worker()
        me_second = f"{second.pid}@{HOST}"
        # The first keeps at most its share and the margin; the rest must reach the second.
        least = RUNS - (math.ceil(RUNS / 2) + MARGIN)

        async def shared() -> bool:
            held = await holders(client, specs)
            return sum(h == me_second for h in held) >= least and all(h in (me_first, me_second) for h in held)

        assert await until(shared, 150), f"the second worker took fewer than {least} of {RUNS} watches"
        assert "watches handed on" in (embedded.home / "worker-0.log").read_text()
        # The runs handed on are no longer stuck to the first worker's cache: their next workflow
        # task (here a pause and a resume, which change nothing for a running run) may go to the
        # second worker. Without the reset, the idle first worker would take every one.
        for spec in specs:
            await runs.signal_run(client, spec.run_id, "pause")
            await runs.signal_run(client, spec.run_id, "resume")

        async def some_tasks_on_second() -> bool:
            return sum(await asyncio.gather(*(tasks_by(client, s.run_id, me_second) for s in specs))) > 0

        assert await until(some_tasks_on_second, 60), "every run's workflow task stayed on the first worker"
        for spec in specs:
            status = await runs.query_status(client, spec.run_id)
            assert status.run.state in ("pending", "running"), status.run
            assert len(status.attempts) == 1 and not status.symptoms and not status.advice, "nothing was recovered"
    finally:
        for spec in specs:
            await runs.signal_run(client, spec.run_id, "cancel", kill_job=True)
        embedded.stop_workers()
