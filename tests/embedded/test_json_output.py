"""With --json, stdout is JSON only, on the local scheduler: every command that takes --json.

Its Slurm twin is tests/integration/test_json_output.py; the list of commands comes from the
parser (tests/json_output.py), so a new --json command fails here until it is run here too.

Each command runs for real, in a way the session's other tests survive: pause, resume, whatif
and cancel on this test's own run (which fails once on node2, so that it has a failure to show
and to clear); node-down, node-drain and node-up on nodes the run does not use, brought back up;
`cluster start` and `dev-server start` against the session's running ones (nothing to start);
the `start` that starts and the `stop` that stops in a home of the test's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recovery.activities.schedulers.local import launcher as local_cluster
from tests.embedded.conftest import Embedded, wait_for
from tests.json_output import (
    Case,
    cancel_case,
    held_pipeline,
    json_documents,
    node_cases,
    private_home,
    private_home_cases,
    release_case,
    run_cases,
    run_cases_on,
)


def restarted(embedded: Embedded, run: str) -> bool:
    """Whether the run's second attempt runs (the first failed on node2)."""
    done = embedded.recovery("status", run, "--json")
    attempts: list[dict[str, Any]] = json.loads(done.stdout)["attempts"] if done.returncode == 0 else []
    return len(attempts) >= 2 and attempts[-1]["state"] == "RUNNING"


def idle_nodes(embedded: Embedded) -> list[str]:
    done = embedded.recovery("cluster", "status", "--json")
    assert done.returncode == 0, done.stderr
    return [node["name"] for node in json.loads(done.stdout)["nodes"] if node["state"] == "idle"]


@pytest.mark.timeout(420)
def test_every_json_command_prints_json_only(embedded: Embedded, tmp_path: Path) -> None:
    # Long enough to be open for every command below; cancelled (and its job killed) at the end.
    script = embedded.job_script("json", fault_node="node2", fault_step=1, steps=3000)
    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    embedded.start_worker()
    try:
        submitted = embedded.recovery("submit", "--json", str(script), cwd=script.parent)
        assert submitted.returncode == 0, submitted.stderr
        (answer,) = json_documents(("submit",), submitted.stdout)
        assert answer["job_id"], answer
        run = answer["run"]
        assert wait_for(lambda: restarted(embedded, run), timeout=120), embedded.recovery("status", run)
        pipeline = held_pipeline(embedded.recovery, tmp_path / "pipeline")
        free = idle_nodes(embedded)
        assert len(free) >= 2, f"the node steps need two nodes the run does not use: {free}"
        server, daemon = embedded.server, local_cluster.status()
        with private_home(embedded.recovery) as own:
            cases = [
                Case(("status",), (run,), lambda s: s["run"]["id"] == run and len(s["attempts"]) >= 2),
                *run_cases_on(run, log, server.address),
                Case(("cluster", "status"), (), lambda s: s["running"] and s["pid"] == daemon.pid),
                # Already running: nothing started, the running daemon named.
                Case(("cluster", "start"), (), lambda a: (a["started"], a["pid"]) == (False, daemon.pid)),
                *node_cases(free),
                Case(("nodes",), (), lambda rows: "node2" in [r["node"] for r in rows]),
                *private_home_cases(own),
                # Forgets the failure this run left on node2: the history as the test found it.
                Case(("nodes", "clear"), ("node2",), lambda c: c["node"] == "node2" and c["forgotten"] >= 1),
                release_case(pipeline),
                cancel_case(run),
            ]
            run_cases(embedded.recovery, cases, ran_before=[("submit",)])
    finally:
        embedded.stop_workers()
