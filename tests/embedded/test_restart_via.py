"""Policy `restart_via` on the local scheduler: a restart as a new job of the same run, chosen
by the policy or (`auto`) by whether the allocation fits now; exactly once under SIGKILL."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.client import runs
from recovery.workflows.models import JobState, RunStatus, SubmitRequest
from tests.embedded.conftest import Embedded, wait_for
from tests.embedded.test_recovery import start

# No node becomes suspect from other tests' failures: the free-node count stays this test's own.
POLICY = "restart_via: {via}\nsuspect_nodes: {{failures: 1000}}\n"


def policy_file(tmp_path: Path, via: str) -> str:
    path = tmp_path / f"{via}.yaml"
    path.write_text(POLICY.format(via=via))
    return str(path)


def check_resubmitted(status: RunStatus, fault_node: str) -> None:
    """Completed as a new job: its own id, restart count 0, off the failed node, same output."""
    assert status.run.state == "completed", status
    first, second = status.attempts
    assert second.job_id != first.job_id and second.restart_count == 0, status.attempts
    assert fault_node in second.excluded_nodes and fault_node not in second.nodes, second
    assert second.output_path == first.output_path, "the resubmission keeps the output file"
    (advice,) = status.advice
    assert advice.status == "converged" and advice.acted, advice
    submits = [a for a in status.actions if a.kind == "submit" and a.changed]
    assert [a.job_id for a in submits] == [second.job_id], status.actions
    assert not any(a.kind == "requeue_hold" for a in status.actions), status.actions


async def first_job_state(job_id: str) -> JobState:
    return (await LocalScheduler().observe([job_id]))[job_id].state


@pytest.mark.timeout(120)
async def test_resubmit_runs_a_new_job_of_the_same_run(embedded: Embedded, client: Client, tmp_path: Path) -> None:
    embedded.start_worker()
    script = embedded.job_script("resubmit", fault_node="node2")
    spec = await start(client, script, policy_file(tmp_path, "resubmit"))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_resubmitted(status, "node2")
    assert await first_job_state(status.attempts[0].job_id) == JobState.FAILED
    output = Path(status.attempts[1].output_path or "")
    text = output.read_text()
    assert "GPU has fallen off the bus" in text and "training done" in text, "both jobs wrote to the one file"
    embedded.stop_workers()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("failpoint", ["before:plan_restart", "after:resubmit"])
async def test_worker_killed_mid_resubmit_submits_exactly_once(
    embedded: Embedded, client: Client, tmp_path: Path, failpoint: str
) -> None:
    doomed = embedded.start_worker(RECOVERY_FAILPOINTS=failpoint)
    spec = await start(
        client, embedded.job_script("kill-resubmit", fault_node="node1"), policy_file(tmp_path, "resubmit")
    )
    assert wait_for(lambda: doomed.poll() is not None, timeout=60), "the failpoint should fire"
    assert doomed.returncode == -signal.SIGKILL
    embedded.start_worker()
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_resubmitted(status, "node1")
    jobs = [j for j in local_cluster.status().jobs if j.token.startswith(f"recovery:{spec.run_id}:")]
    assert len(jobs) == 2, "one first job, one resubmission: never a second"
    embedded.stop_workers()


async def blocker(workdir: Path, nodes: list[str]) -> str:
    """A 2-node job that keeps `nodes` busy for a while (excluded from the others)."""
    script = workdir / "block.sbatch"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import time; time.sleep(20)'\n")
    obs = await LocalScheduler().submit(
        SubmitRequest(
            script=script.read_text(),
            name="blocker",
            nodes=2,
            workdir=str(workdir),
            token="",
            excluded_nodes=[n for n in ("node1", "node2", "node3", "node4") if n not in nodes],
        )
    )
    return obs.job_id


@pytest.mark.timeout(150)
async def test_auto_resubmits_when_the_allocation_fits_now(embedded: Embedded, client: Client, tmp_path: Path) -> None:
    embedded.start_worker()
    spec = await start(client, embedded.job_script("auto-fits", fault_node="node2"), policy_file(tmp_path, "auto"))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_resubmitted(status, "node2")
    embedded.stop_workers()


@pytest.mark.timeout(150)
async def test_auto_requeues_when_the_allocation_does_not_fit(
    embedded: Embedded, client: Client, tmp_path: Path
) -> None:
    """node1 and node2 busy, the job on node3 and node4 fails on node4: one node free, two needed."""
    held = await blocker(tmp_path, ["node1", "node2"])
    try:
        embedded.start_worker()
        spec = await start(client, embedded.job_script("auto-full", fault_node="node4"), policy_file(tmp_path, "auto"))
        status = await runs.wait_result(client, spec.run_id)
        assert status is not None
        assert status.run.state == "completed", status
        first, second = status.attempts
        assert first.nodes == ["node3", "node4"], first
        assert second.job_id == first.job_id and second.restart_count == 1, status.attempts
        (requeued,) = [a for a in status.actions if a.kind == "requeue_hold"]
        assert "only 1 free node(s) now, 2 needed" in requeued.detail, requeued
    finally:
        if not (await first_job_state(held)).ended:
            await LocalScheduler().cancel(held)
        embedded.stop_workers()
