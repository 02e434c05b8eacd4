"""sbatch's own options before the script, on the real dev server and local cluster: the one the
local scheduler honours (--exclude) is honoured for every attempt; the others are refused in one
line, with nothing started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recovery.activities.schedulers.local import launcher as local_cluster
from tests.embedded.conftest import Embedded, wait_for


def test_exclude_is_honoured_on_the_local_scheduler(embedded: Embedded) -> None:
    script = embedded.job_script("exclude", fault_node="node3", steps=8, fault_step=3)
    embedded.start_worker()
    embedded.forget_node_history()  # two nodes excluded in the restart: an earlier suspect would starve it
    done = embedded.recovery(
        "submit", "--json", "--scheduler", "local", "-x", "node[1]", "-J", "excluding", str(script),
        cwd=script.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run"]

    def status() -> dict[str, Any]:
        return dict(json.loads(embedded.recovery("status", run_id, "--json").stdout))

    assert wait_for(lambda: status()["run"]["state"] in ("completed", "gave_up"), timeout=120)
    final = status()
    assert final["run"]["state"] == "completed"
    assert final["run"]["name"] == "excluding"  # -J is --run
    attempts = final["attempts"]
    assert len(attempts) == 2  # node3 failed the first: the job's own exclusion stays in the restart
    for attempt in attempts:
        assert "node1" in attempt["excluded_nodes"] and "node1" not in attempt["nodes"]
    assert "node3" in attempts[0]["nodes"] and set(attempts[1]["excluded_nodes"]) == {"node1", "node3"}
    embedded.stop_workers()


def test_options_the_local_scheduler_cannot_honour_are_refused(embedded: Embedded, tmp_path: Path) -> None:
    script = embedded.job_script("refused")
    runs = embedded.recovery("list", "--json").stdout
    jobs = len(local_cluster.status().jobs)
    done = embedded.recovery(
        "submit", "--scheduler", "local", "-p", "gpu", "-t", "2:00:00", "--exclude", "node3", str(script),
        cwd=script.parent,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line == (
        "recovery: the local scheduler cannot honour sbatch's -p gpu, -t 2:00:00 (it honours only --exclude); "
        "submit with --scheduler slurm, or leave them out"
    )
    assert embedded.recovery("list", "--json").stdout == runs and len(local_cluster.status().jobs) == jobs
