"""Policy `restart_via` on the real Slurm dev cluster: a restart as a new job of the same run
(`resubmit`), the choice `auto` makes, and exactly one resubmission when the worker is SIGKILLed
at each step of it. Slurm's side is read with its own commands."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from recovery.workflows.models import RunStatus
from tests.integration.recovery_rig import (
    Rig,
    ctld_log_lines,
    dev_cluster,
    failing_node,
    job_facts,
    job_script,
    slurm,
    tasks_started,
)
from tests.integration.test_slurm_recovery import check_converged_restart, kill_slurmd, running_on_two

if TYPE_CHECKING:
    from tests.integration.conftest import SlurmDevCluster

pytestmark = [pytest.mark.slow, pytest.mark.temporal]


def policy(rig: Rig, via: str) -> str:
    """A policy file; no node turns suspect from other tests' failures, so the advice excludes
    exactly the failed node."""
    path = rig.home / f"policy-{via}-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(f"restart_via: {via}\nsuspect_nodes: {{failures: 1000}}\n")
    return str(path)


def run_jobs(run_id: str) -> list[str]:
    """Every job whose comment carries the run's token, as Slurm lists them (MinJobAge keeps
    finished ones for 5 minutes)."""
    out = slurm("squeue", "-a", "-h", "-t", "all", "-o", "%i|%k").stdout
    return sorted(line.split("|", 1)[0] for line in out.splitlines() if f"recovery:{run_id}:" in line)


def check_resubmitted(status: RunStatus, bad: str, first_job: str) -> str:
    """Completed as a new job of the run, off the bad node, into the same output file."""
    assert status.run.state == "completed", status.model_dump_json(indent=1)
    check_converged_restart(status, bad)
    first, second = status.attempts
    assert first.job_id == first_job != second.job_id, status.attempts
    assert second.restart_count == 0 and bad not in second.nodes, second
    assert second.output_path == first.output_path, "the resubmission keeps the output file"
    assert not any(a.kind == "requeue_hold" for a in status.actions), status.actions
    new = job_facts(second.job_id)
    assert new.state == "COMPLETED" and bad in new.excluded and bad not in new.nodes, new.raw
    assert job_facts(first_job).restarts == 0, "never requeued"
    return second.job_id


@pytest.mark.timeout(150)
async def test_resubmit_runs_the_script_again_as_a_new_job_of_the_run(rig: Rig) -> None:
    rig.start_worker(mode="act")
    script = job_script(rig.workdir("resubmit"), first_run="xid", seconds=4)
    spec, job = await rig.submit_run(script, policy=policy(rig, "resubmit"))
    status = await rig.result(spec.run_id, timeout=120)
    second = check_resubmitted(status, failing_node(script.parent), job)
    rig.jobs.append(second)

    old, new = job_facts(job), job_facts(second)
    assert old.state == "FAILED", old.raw
    # the same owner, working directory and output file (the first run's lines, then the second's)
    for key in ("UserId", "WorkDir", "StdOut"):
        assert field(old.raw, key) == field(new.raw, key), (key, old.raw, new.raw)
    text = Path(field(new.raw, "StdOut")).read_text()
    assert f"of job {job} " in text and f"of job {second} " in text, text
    assert not any("Requeuing" in line for line in ctld_log_lines(rig.slurm_dir, job))
    assert run_jobs(spec.run_id) == sorted([job, second])


@pytest.mark.timeout(150)
async def test_auto_resubmits_on_free_nodes(rig: Rig) -> None:
    rig.start_worker(mode="act")
    script = job_script(rig.workdir("auto"), first_run="xid", seconds=4)
    spec, job = await rig.submit_run(script, policy=policy(rig, "auto"))
    status = await rig.result(spec.run_id, timeout=120)
    rig.jobs.append(check_resubmitted(status, failing_node(script.parent), job))
    submit = next(a for a in status.actions if a.kind == "submit")
    assert "free node(s) fit now" in submit.detail, submit


@pytest.mark.timeout(150)
@pytest.mark.parametrize("failpoint", ["before:plan_restart", "after:resubmit"])
async def test_worker_killed_mid_resubmit_submits_once(rig: Rig, failpoint: str) -> None:
    doomed = rig.start_worker(mode="act", failpoints=failpoint)
    script = job_script(rig.workdir("kill-resubmit"), first_run="xid", seconds=4)
    spec, job = await rig.submit_run(script, policy=policy(rig, "resubmit"))
    await rig.until("the failpoint to kill the worker", lambda: doomed.poll() is not None, 90, run_id=spec.run_id)
    assert doomed.returncode == -signal.SIGKILL, rig.worker_logs()
    rig.start_worker(mode="act")
    status = await rig.result(spec.run_id, timeout=120)
    second = check_resubmitted(status, failing_node(script.parent), job)
    rig.jobs.append(second)
    assert run_jobs(spec.run_id) == sorted([job, second]), "one resubmission, never two"


@pytest.mark.timeout(300)
async def test_node_fail_requeued_by_slurm_is_cancelled_and_resubmitted_once_across_a_kill(
    rig: Rig, slurm_cluster: SlurmDevCluster
) -> None:
    """NODE_FAIL: Slurm requeues the job itself; `resubmit` cancels that pending job and
    submits a new one. The worker dies right after the cancel; its successor resubmits once."""
    doomed = rig.start_worker(mode="act", failpoints="after:cancel_job")
    script = job_script(rig.workdir("nodefail-resubmit"), first_run="long", seconds=4)
    spec, job = await rig.submit_run(script, policy=policy(rig, "resubmit"))
    first = await rig.until("the job running on 2 nodes", running_on_two(job), 30, run_id=spec.run_id)
    await rig.until(
        "both tasks started", lambda: tasks_started(script.parent) == sorted(first.nodes), 30, run_id=spec.run_id
    )
    victim = first.nodes[1]
    kill_slurmd(slurm_cluster.state_dir, victim)
    try:
        await rig.until("the failpoint after the cancel", lambda: doomed.poll() is not None, 150, run_id=spec.run_id)
        assert doomed.returncode == -signal.SIGKILL, rig.worker_logs()
        rig.start_worker(mode="act")
        status = await rig.result(spec.run_id, timeout=120)
    finally:
        dev_cluster("start")  # brings the killed slurmd back (start is idempotent)
    second = status.attempts[-1].job_id
    rig.jobs.append(second)
    assert status.run.state == "completed", status.model_dump_json(indent=1)
    assert second != job and victim not in status.attempts[-1].nodes, status.attempts
    assert job_facts(job).state == "CANCELLED", job_facts(job).raw
    # The worker died after the cancel and before Temporal heard of it: the retry finds the job
    # ended and records no second cancel; Slurm got exactly one.
    assert [a.kind for a in status.actions if a.changed].count("cancel") <= 1, status.actions
    kills = [line for line in ctld_log_lines(rig.slurm_dir, job) if "REQUEST_KILL_JOB" in line]
    assert len(kills) == 1, kills
    assert run_jobs(spec.run_id) == sorted([job, second]), "one resubmission, never two"


def field(raw: str, key: str) -> str:
    """One `Key=value` of `scontrol show job -o` (values here have no spaces)."""
    for token in raw.split():
        name, sep, value = token.partition("=")
        if sep and name == key:
            return value
    raise AssertionError(f"{key} not in {raw}")
