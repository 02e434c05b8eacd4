"""An upgrade in the middle of recoveries, on the real dev server: version N (today's code) is
killed right after a restart's requeue_hold; version N+1, whose restart path runs one more
activity (`announce_restart`, behind `workflow.patched`), takes over. Every run completes with
exactly one restart: the run caught mid-restart stays on the old path, a run paused before its
restart and a run started after the upgrade take the new one."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from recovery.client import runs
from recovery.client.submit import build_spec
from recovery.workflows.models import RunSpec
from tests.embedded.conftest import REPO, Embedded, wait_for
from tests.embedded.test_recovery import FAST, restarts_of
from tests.histories.next_version import PATCH_ID

# `recovery worker` of version N+1: today's worker with the changed TrainingRun and its new activity.
WORKER_N_PLUS_1 = textwrap.dedent("""\
    import tempfile
    from pathlib import Path
    from tests.histories.next_version import next_version
    upgraded = next_version(Path(tempfile.mkdtemp()), guarded=True)
    from recovery.worker import run_worker
    run_worker.TrainingRun = upgraded.TrainingRun
    today = run_worker.activities_for
    run_worker.activities_for = lambda *args: [*today(*args), upgraded.announce_restart]
    from recovery.worker.cli import main
    main(["worker"])
    """)


# Runs and workers of this test on a task queue of their own: the session's `upgrade-check`
# (tests/json_output.py) checks the session's queue, whose code is today's, not N+1's.
QUEUE = f"recovery-versioning-{uuid.uuid4().hex[:6]}"


async def start(client: Client, script: Path) -> RunSpec:
    spec = build_spec(str(script), [], "local", "default", None, None, script.parent)
    spec.tuning = FAST
    await runs.start_run(client, spec, task_queue=QUEUE)
    return spec


def start_next_version(embedded: Embedded) -> subprocess.Popen[bytes]:
    log = open(embedded.home / f"worker-{len(embedded.workers)}-n+1.log", "wb")  # noqa: SIM115
    env = {**embedded.env, "RECOVERY_TASK_QUEUE": QUEUE}
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER_N_PLUS_1], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
    )
    embedded.workers.append(proc)
    return proc


async def history_of(client: Client, run_id: str) -> tuple[list[str], list[str]]:
    """The activities a run scheduled, and the patches it recorded."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    activities = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    markers = [
        json.loads(e.marker_recorded_event_attributes.details["patch-data"].payloads[0].data)["id"]
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and "patch-data" in e.marker_recorded_event_attributes.details  # not a local activity's
    ]
    return activities, markers


async def advised(client: Client, run_id: str) -> bool:
    return bool((await runs.query_status(client, run_id)).advice)


@pytest.mark.timeout(300)
async def test_runs_survive_a_mid_recovery_upgrade(embedded: Embedded, client: Client) -> None:
    version_n = embedded.start_worker(RECOVERY_FAILPOINTS="after:requeue_hold", RECOVERY_TASK_QUEUE=QUEUE)
    paused = await start(client, embedded.job_script("v-paused", fault_rank=1, fault_step=3, steps=20))
    await runs.signal_run(client, paused.run_id, "pause")
    for _ in range(300):
        if await advised(client, paused.run_id):
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("the paused run should have recorded its advice")
    caught = await start(client, embedded.job_script("v-caught", fault_rank=1, fault_step=3, steps=20))
    assert wait_for(lambda: version_n.poll() is not None, timeout=90), "N should die after requeue_hold"
    assert version_n.returncode == -signal.SIGKILL

    start_next_version(embedded)
    await runs.signal_run(client, paused.run_id, "resume")
    fresh = await start(client, embedded.job_script("v-fresh", fault_rank=1, fault_step=3, steps=20))
    try:
        for spec in (caught, paused, fresh):
            status = await runs.wait_result(client, spec.run_id)
            assert status is not None and status.run.state == "completed", spec.run_id
            assert [a.restart_count for a in status.attempts] == [0, 1]
            assert status.advice[0].status == "converged"
            assert await restarts_of(status.attempts[0].job_id) == 1
        old_path, old_markers = await history_of(client, caught.run_id)
        assert "requeue_hold" in old_path and "announce_restart" not in old_path
        assert PATCH_ID not in old_markers  # today's own patches (observer-watch) are recorded by both
        for spec in (paused, fresh):
            new_path, markers = await history_of(client, spec.run_id)
            assert new_path.index("announce_restart") < new_path.index("requeue_hold")
            assert PATCH_ID in markers
    finally:
        embedded.stop_workers()
