"""On the real Slurm dev cluster: `submit` defaults to Slurm where the config or
RECOVERY_SCHEDULER says so, passes sbatch's own options on as typed, and a worker of the local
scheduler refuses a Slurm run, leaving its job alone. Slurm's side is read with scontrol."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.recovery_rig import Rig, job_facts, slurm

pytestmark = pytest.mark.timeout(300)


def job_script(workdir: Path, seconds: int = 3) -> Path:
    script = workdir / "job.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\necho started on $SLURMD_NODENAME\nsleep {seconds}\necho done\n")
    return script


def submit(rig: Rig, workdir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`recovery submit` as a user types it, from the job's directory."""
    return subprocess.run(
        [sys.executable, "-m", "recovery.worker", "submit", *args],
        capture_output=True, text=True, timeout=120, env={**rig.env, **env}, cwd=workdir, check=False,
    )  # fmt: skip


def time_limit(job_id: str) -> str:
    found = re.search(r"\bTimeLimit=(\S+)", slurm("scontrol", "show", "job", "-o", job_id).stdout)
    return found.group(1) if found else ""


async def test_the_config_chooses_slurm_and_sbatch_options_reach_sbatch(rig: Rig) -> None:
    rig.start_worker(mode="observe")
    workdir = rig.workdir("config-slurm")
    config = workdir / "recovery.yaml"
    config.write_text("scheduler: slurm\n")
    script = job_script(workdir)
    done = submit(rig, workdir, "--json", "-p", "other", "-t", "5", "--exclude", "node3", script.name,
                  RECOVERY_CONFIG=str(config))  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rig.jobs.append(out["job_id"])
    assert out["scheduler"] == "slurm"
    facts = job_facts(out["job_id"])  # Slurm's own word: the options reached sbatch as typed
    assert facts.partition == "other" and facts.excluded == ["node3"] and time_limit(out["job_id"]) == "00:05:00"
    status = await rig.result(out["run"], timeout=120)
    assert status.run.state == "completed" and status.run.scheduler == "slurm"
    assert status.attempts[0].nodes == ["node4"]  # `other` is node3,node4, and node3 was excluded

    # RECOVERY_SCHEDULER says the same without a config, and submit says where it came from.
    done = submit(rig, workdir, script.name, RECOVERY_SCHEDULER="slurm")
    assert done.returncode == 0, done.stderr
    assert "on the slurm scheduler (from RECOVERY_SCHEDULER)" in done.stdout
    job = re.search(r"\(job (\d+)\)", done.stdout)
    assert job is not None, done.stdout
    rig.jobs.append(job.group(1))
    assert job_facts(job.group(1)).partition == "debug"


async def test_a_local_worker_refuses_a_slurm_run_and_leaves_its_job_alone(rig: Rig) -> None:
    log = open(rig.home / f"worker-{rig.task_queue}-local.log", "wb")  # noqa: SIM115
    worker = subprocess.Popen(
        [sys.executable, "-m", "recovery.worker", "worker", "--scheduler", "local"],
        env=rig.env, cwd=rig.home, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    log.close()
    rig.workers.append(worker)
    workdir = rig.workdir("refused")
    script = job_script(workdir, seconds=20)
    done = submit(rig, workdir, "--json", "--scheduler", "slurm", script.name)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rig.jobs.append(out["job_id"])
    status = await rig.result(out["run"], timeout=60)
    assert status.run.state == "gave_up" and status.attempts == []
    detail = status.milestones[-1].detail
    assert "is on the slurm scheduler and this worker manages local" in detail, detail
    facts = job_facts(out["job_id"])  # the job runs on as submitted: nothing held, requeued or cancelled
    assert facts.state in ("PENDING", "RUNNING", "COMPLETED") and facts.restarts == 0 and not facts.held
