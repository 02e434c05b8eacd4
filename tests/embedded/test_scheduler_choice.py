"""The scheduler is chosen once (--scheduler, RECOVERY_SCHEDULER, the config's `scheduler:`,
local), `submit` says which, and a worker of another scheduler refuses a run: on the real dev
server and local cluster."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from recovery.activities.schedulers.local import launcher as local_cluster
from tests.embedded.conftest import Embedded, wait_for


@pytest.fixture
def script(embedded: Embedded) -> Path:
    return embedded.job_script("choice")


def slurm_config(tmp_path: Path) -> Path:
    path = tmp_path / "recovery.yaml"
    path.write_text("scheduler: slurm\n")
    return path


def test_submit_says_which_scheduler_and_where_from(embedded: Embedded, script: Path, tmp_path: Path) -> None:
    embedded.start_worker()
    config = slurm_config(tmp_path)
    # The environment beats the config file, and says so.
    done = embedded.recovery(
        "submit", str(script), cwd=script.parent, RECOVERY_SCHEDULER="local", RECOVERY_CONFIG=str(config)
    )
    assert done.returncode == 0, done.stderr
    assert "on the local scheduler (from RECOVERY_SCHEDULER)" in done.stdout
    # The flag beats both; --json carries the scheduler.
    done = embedded.recovery(
        "submit", "--json", "--scheduler", "local", "--config", str(config), str(script),
        cwd=script.parent, RECOVERY_SCHEDULER="slurm",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["scheduler"] == "local" and out["job_id"]
    listed = {row["id"]: row for row in json.loads(embedded.recovery("list", "--json").stdout)}
    assert listed[out["run"]]["scheduler"] == "local"
    embedded.stop_workers()


def test_the_config_file_chooses_slurm(embedded: Embedded, script: Path, tmp_path: Path) -> None:
    """With `scheduler: slurm` in the config and nothing else said, submit goes to Slurm: with
    no Slurm commands on its PATH it fails in one line naming sbatch, and starts nothing (the
    real cluster's case is tests/integration/test_submit_on_slurm.py)."""
    no_slurm = tmp_path / "bin"
    no_slurm.mkdir()
    before = json.loads(embedded.recovery("list", "--json").stdout)
    done = embedded.recovery(
        "submit", "--config", str(slurm_config(tmp_path)), str(script), cwd=script.parent, PATH=str(no_slurm)
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "sbatch" in lines[0], done.stderr
    assert json.loads(embedded.recovery("list", "--json").stdout) == before


def test_a_slurm_worker_refuses_a_local_run(embedded: Embedded, script: Path) -> None:
    queue = f"slurm-only-{uuid.uuid4().hex[:6]}"  # the slurm worker alone polls this queue
    embedded.start_worker("--scheduler", "slurm", "--mode", "act", RECOVERY_TASK_QUEUE=queue)
    jobs = len(local_cluster.status().jobs)
    done = embedded.recovery("submit", "--json", "--scheduler", "local", "--wait-for-job", "1", str(script),
                             cwd=script.parent, RECOVERY_TASK_QUEUE=queue)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run"]

    def status() -> dict[str, object]:
        shown = embedded.recovery("status", run_id, "--json", RECOVERY_TASK_QUEUE=queue)
        assert shown.returncode == 0, shown.stderr
        return dict(json.loads(shown.stdout))

    assert wait_for(lambda: status()["run"]["state"] == "gave_up", timeout=60)  # type: ignore[index]
    final = status()
    assert final["attempts"] == []
    assert len(local_cluster.status().jobs) == jobs  # nothing submitted
    (gave_up,) = [m for m in final["milestones"] if m["name"] == "gave_up"]  # type: ignore[union-attr]
    assert "is on the local scheduler and this worker manages slurm" in gave_up["detail"]
    shown = embedded.recovery("status", run_id, RECOVERY_TASK_QUEUE=queue)
    assert "this worker manages slurm" in shown.stdout
    embedded.stop_workers()
