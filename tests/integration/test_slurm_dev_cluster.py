"""The dev cluster from deploy/slurm-dev-cluster is a real multi-node Slurm.

Checks what the Slurm adapter and the recovery tests rely on: four idle nodes in
two partitions, multi-node jobs with accounting, and the restart sequence
requeue-hold, update exclusions, release.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.integration.conftest import SlurmDevCluster


def run(*args: str, timeout: float = 30) -> str:
    """Run a Slurm command (argument list, never a shell string); return stdout."""
    proc = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args} failed ({proc.returncode}): {proc.stderr.strip()}"
    return proc.stdout


def wait_until(what: str, check: Callable[[], bool], timeout: float, every: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def node_states(partition: str) -> dict[str, str]:
    out = run("sinfo", "-h", "-N", "-p", partition, "-o", "%N|%T")
    return dict(line.split("|", 1) for line in out.split())


def show_job(job_id: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for token in run("scontrol", "show", "job", "-o", job_id).split():
        key, sep, value = token.partition("=")
        if sep:
            fields.setdefault(key, value)
    return fields


def sacct_row(job_id: str) -> tuple[str, str] | None:
    """(State, ExitCode) of the job's own accounting record, once it exists."""
    out = run("sacct", "-n", "-P", "-j", job_id, "-o", "JobID,State,ExitCode")
    for line in out.splitlines():
        jid, state, exit_code = line.split("|")
        if jid == job_id:
            return state, exit_code
    return None


@pytest.fixture
def submitted(slurm_cluster: SlurmDevCluster) -> Iterator[list[str]]:
    """Job ids a test submitted; whatever still runs at the end is cancelled."""
    ids: list[str] = []
    yield ids
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, timeout=30, check=False)


def sbatch(submitted: list[str], *args: str) -> str:
    job_id = run("sbatch", "--parsable", *args).strip().split(";")[0]
    submitted.append(job_id)
    return job_id


def test_four_idle_nodes_in_two_partitions(slurm_cluster: SlurmDevCluster) -> None:
    # earlier jobs may still be ending: give them a moment
    wait_until("4 idle nodes", lambda: set(node_states("debug").values()) == {"idle"}, 60)
    assert sorted(node_states("debug")) == list(slurm_cluster.nodes)
    assert sorted(node_states("other")) == ["node3", "node4"]
    default = run("sinfo", "-h", "-o", "%P").split()
    assert "debug*" in default


def test_two_node_job_completes_in_accounting(
    slurm_cluster: SlurmDevCluster, submitted: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "job.out"
    job_id = sbatch(submitted, "-N2", "-o", str(out), "--wrap", "srun bash -c 'echo ran on $SLURMD_NODENAME'")

    def completed() -> bool:
        row = sacct_row(job_id)
        return row is not None and row[0] not in {"PENDING", "RUNNING", "COMPLETING"}

    wait_until(f"job {job_id} to finish in sacct", completed, 60)
    assert sacct_row(job_id) == ("COMPLETED", "0:0")
    ran_on = {line.split()[-1] for line in out.read_text().splitlines()}
    assert len(ran_on) == 2 and ran_on <= set(slurm_cluster.nodes)


@pytest.mark.slow
def test_requeue_hold_exclude_release_reruns_elsewhere(
    slurm_cluster: SlurmDevCluster, submitted: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "requeue.out"
    # start on node2 (the only node not excluded), so excluding node2 must move it
    job_id = sbatch(
        submitted,
        "-N1",
        "--exclude=node1,node3,node4",
        "--open-mode=append",
        "-o",
        str(out),
        "--wrap",
        'echo "attempt ${SLURM_RESTART_COUNT:-0} on $SLURMD_NODENAME"; sleep 300',
    )
    wait_until(f"job {job_id} running", lambda: show_job(job_id)["JobState"] == "RUNNING", 30)
    first = show_job(job_id)
    assert first["NodeList"] == "node2"
    assert first["Restarts"] == "0"
    # RUNNING in slurmctld comes before the batch script has run on the node: under load a
    # requeue right away can stop the first attempt before it says where it ran.
    wait_until("the first attempt's output", lambda: out.exists() and "attempt 0" in out.read_text(), 15)

    run("scontrol", "requeuehold", job_id)
    run("scontrol", "update", f"JobId={job_id}", "ExcNodeList=node2")
    run("scontrol", "release", job_id)

    # about 11 s with cred_expire=10 and the 2 s scheduler interval
    def rerunning() -> bool:
        job = show_job(job_id)
        return job["JobState"] == "RUNNING" and job["Restarts"] == "1"

    wait_until(f"job {job_id} to run again", rerunning, 60)
    again = show_job(job_id)
    assert again["NodeList"] not in {"node2", ""}
    assert again["ExcNodeList"] == "node2"
    wait_until("the second attempt's output", lambda: "attempt 1" in out.read_text(), 15)
    lines = [line for line in out.read_text().splitlines() if line.startswith("attempt")]
    assert lines[0] == "attempt 0 on node2"
    assert lines[-1] == f"attempt 1 on {again['NodeList']}"
