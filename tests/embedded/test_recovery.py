"""The recovery loop for real: dev server, local cluster daemon, worker subprocesses, the CLI."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.activities.schedulers.local import LocalScheduler
from recovery.client import runs
from recovery.client.submit import build_spec
from recovery.workflows.models import RunSpec, RunStatus, Tuning
from tests.embedded.conftest import Embedded, wait_for

FAST = Tuning(poll_seconds=0.1, heartbeat_timeout_seconds=3, action_timeout_seconds=3, verify_timeout_seconds=60)


async def start(client: Client, script: Path, policy: str = "default") -> RunSpec:
    spec = build_spec(str(script), [], "local", policy, None, None, script.parent)
    spec.tuning = FAST
    await runs.start_run(client, spec)
    return spec


async def restarts_of(job_id: str) -> int:
    found = await LocalScheduler().observe([job_id])
    return found[job_id].restart_count


def check_one_clean_recovery(status: RunStatus, fault_node: str) -> None:
    assert status.run.state == "completed"
    assert [a.restart_count for a in status.attempts] == [0, 1]
    (advice,) = status.advice
    assert advice.operation == "restart"
    assert fault_node in advice.excluded_nodes  # plus any node earlier tests made suspect
    assert advice.status == "converged" and advice.acted
    assert fault_node not in status.attempts[1].nodes


@pytest.mark.timeout(120)
async def test_cli_submit_recovers_and_reports(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    script = embedded.job_script("cli", fault_node="node2")
    done = embedded.recovery("submit", "--json", "--run", "cli test", str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    submitted = json.loads(done.stdout)
    assert set(submitted) == {"run", "workflow_id", "job_id", "scheduler"}
    assert submitted["scheduler"] == "local"
    assert submitted["job_id"] is not None
    run_id = submitted["run"]
    status = await runs.wait_result(client, run_id)
    assert status is not None
    check_one_clean_recovery(status, "node2")

    shown = embedded.recovery("status", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["run"]["state"] == "completed"
    for key in ("attempts", "symptoms", "diagnoses", "advice", "actions", "milestones", "goodput"):
        assert key in data
    attempt = data["attempts"][0]
    for key in (
        "index",
        "job_id",
        "state",
        "exit_code",
        "nodes",
        "excluded_nodes",
        "submitted_at",
        "started_at",
        "ended_at",
    ):
        assert key in attempt
    advice = data["advice"][0]
    for key in (
        "generation",
        "attempt_index",
        "operation",
        "excluded_nodes",
        "status",
        "acted",
        "reason",
        "explanation",
    ):
        assert key in advice
    assert data["symptoms"][0]["kind"] == "crash"
    assert data["attempts"][0]["submitted_at"].endswith(("Z", "+00:00"))

    text = embedded.recovery("status", run_id)
    assert "restart 1 of 5 excluding node2" in text.stdout
    assert "successor running after" in text.stdout

    def listed() -> bool:
        rows = json.loads(embedded.recovery("list", "--json").stdout)
        mine = [r for r in rows if r["id"] == run_id]
        return bool(mine) and mine[0]["state"] == "completed"

    assert wait_for(listed, timeout=20), "visibility should show the run completed"
    rows = json.loads(embedded.recovery("list", "--json").stdout)
    row = next(r for r in rows if r["id"] == run_id)
    assert row["name"] == "cli test" and row["attempts"] == 2 and row["paused"] is False
    assert row["job_id"] == submitted["job_id"] and row["scheduler"] == "local"
    embedded.stop_workers()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "failpoint",
    ["after:record_advice", "after:requeue_hold", "after:set_excluded_nodes", "after:release"],
)
async def test_worker_killed_mid_recovery_restarts_exactly_once(
    embedded: Embedded, client: Client, failpoint: str
) -> None:
    doomed = embedded.start_worker(RECOVERY_FAILPOINTS=failpoint)
    spec = await start(client, embedded.job_script("kill", fault_node="node1"))
    assert wait_for(lambda: doomed.poll() is not None, timeout=60), "the failpoint should fire"
    assert doomed.returncode == -signal.SIGKILL
    embedded.start_worker()
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_one_clean_recovery(status, "node1")
    assert await restarts_of(status.attempts[0].job_id) == 1
    changed = [a.kind for a in status.actions if a.changed]
    assert sorted(changed) == sorted(set(changed)), "no action may change the world twice"
    embedded.stop_workers()
