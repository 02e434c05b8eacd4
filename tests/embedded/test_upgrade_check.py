"""`recovery upgrade-check` on a dev server with open runs: the installed code replays them all
(exit 0); a copy with an unguarded change to the restart path breaks exactly the open runs that
restarted (exit 3), and says which and why."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest
from temporalio.client import Client

from recovery.client import runs
from tests.embedded.conftest import REPO, Embedded
from tests.embedded.test_recovery import start

# The CLI, run with version N+1's unguarded TrainingRun in place of the installed one.
WITH_UNGUARDED_CHANGE = textwrap.dedent("""\
    import sys, tempfile
    from pathlib import Path
    from recovery.client import replay
    from tests.histories.next_version import next_version
    changed = next_version(Path(tempfile.mkdtemp()), guarded=False).TrainingRun
    replay.WORKFLOWS = (changed, *replay.WORKFLOWS[1:])
    from recovery.worker.cli import main
    main(sys.argv[1:])
    """)


def upgrade_check_with_unguarded_change(embedded: Embedded, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITH_UNGUARDED_CHANGE, "upgrade-check", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=embedded.env,
        cwd=REPO,
        check=False,
    )


async def restarted_and_running(client: Client, run_id: str) -> bool:
    status = await runs.query_status(client, run_id)
    return len(status.attempts) == 2 and status.advice[0].status == "converged"


@pytest.mark.timeout(240)
async def test_upgrade_check_replays_open_runs_against_the_installed_code(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    restarted = await start(client, embedded.job_script("upg", fault_rank=1, fault_step=3, steps=900))
    for _ in range(300):
        if await restarted_and_running(client, restarted.run_id):
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("the run should have restarted")
    plain = await start(client, embedded.job_script("upg-plain", steps=900))
    try:
        done = embedded.recovery("upgrade-check", "--json")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["failed"] == [] and result["checked"] >= 2

        broken = upgrade_check_with_unguarded_change(embedded, "--json")
        assert broken.returncode == 3, broken.stderr
        failed = {f["run"]: f["error"] for f in json.loads(broken.stdout)["failed"]}
        assert restarted.run_id in failed and plain.run_id not in failed
        assert "Nondeterminism" in failed[restarted.run_id]

        text = upgrade_check_with_unguarded_change(embedded)
        assert text.returncode == 3 and "would break" in text.stdout and restarted.run_id in text.stdout
    finally:
        for spec in (restarted, plain):
            await runs.signal_run(client, spec.run_id, "cancel", kill_job=True)
        for spec in (restarted, plain):  # their jobs gone before the next test needs the nodes
            await asyncio.wait_for(runs.wait_result(client, spec.run_id), 60)
        embedded.stop_workers()


def test_upgrade_check_without_temporal_is_one_line(embedded: Embedded) -> None:
    done = embedded.recovery("upgrade-check", RECOVERY_TEMPORAL_ADDRESS="127.0.0.1:1")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "cannot reach Temporal at 127.0.0.1:1" in done.stderr
