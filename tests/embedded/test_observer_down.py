"""The observer is in the worker: a job that fails while the worker (and with it the observer) is
SIGKILLed is found once a worker is back, from the scheduler's state then, and recovered exactly
once. Real dev server, local cluster and worker subprocesses."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from temporalio.client import Client

from recovery.activities.schedulers.local import LocalScheduler
from recovery.client import runs
from recovery.workflows.models import JobState, RunStatus
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import restarts_of, start

T = TypeVar("T")


async def eventually(read: Callable[[], Awaitable[T]], check: Callable[[T], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check(await read()):
            return True
        await asyncio.sleep(0.2)
    return False


async def job_state(job_id: str) -> JobState:
    return (await LocalScheduler().observe([job_id]))[job_id].state


@pytest.mark.timeout(180)
async def test_a_job_failing_while_the_worker_is_killed_is_recovered_once_it_is_back(
    embedded: Embedded, client: Client
) -> None:
    worker = embedded.start_worker()
    embedded.forget_node_history()  # the restart excludes a node: earlier suspects would starve it
    # Rank 1 fails at step 100 of 200 (0.1 s steps): well after the watch saw its first
    # progress, even on a busy host (a crash read with the first step is an `ended`, no milestone).
    spec = await start(client, embedded.job_script("down", fault_rank=1, steps=200, fault_step=100))
    handle = client.get_workflow_handle(spec.run_id)

    async def status() -> RunStatus:
        return await handle.query("status", result_type=RunStatus)

    watched = await eventually(status, lambda s: any(m.name == "progress_started" for m in s.milestones), 60)
    assert watched, "the observer should report the first progress"
    job_id = (await status()).attempts[0].job_id
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    assert await eventually(lambda: job_state(job_id), lambda s: s is JobState.FAILED, 60), "the job should fail"
    # Nobody watched it fail (a query would need a worker): the next worker's observer finds it.

    embedded.start_worker()
    final = await runs.wait_result(client, spec.run_id)
    assert final is not None and final.run.state == "completed"
    assert len(final.symptoms) == 1 and final.symptoms[0].kind == "crash"
    (advice,) = final.advice
    assert advice.operation == "restart" and advice.status == "converged" and advice.acted
    assert [a.restart_count for a in final.attempts] == [0, 1]
    assert await restarts_of(job_id) == 1
    changed = [a.kind for a in final.actions if a.changed]
    assert sorted(changed) == sorted(set(changed)), "no action may change the world twice"
    embedded.stop_workers()
