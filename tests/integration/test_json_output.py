"""With --json, stdout is JSON only, on Slurm: every command that takes --json.

The bug this guards: `recovery submit --json` on Slurm printed the adapter's log line
(`[info] sbatch job_id=...`) on stdout before the JSON, so `... | jq` failed. The local twin is
tests/embedded/test_json_output.py; the list of commands comes from the parser.

Each command runs for real: pause, resume, whatif and cancel on this test's own run (its first
run fails with an Xid on one node, so `nodes` and `nodes clear` have a failure to show and
forget). The local scheduler's daemon, which a Slurm user does not run, is not running in the
rig's home: `cluster status` says so (exit 3, still JSON); its other commands and `dev-server
start|stop` run in a home of the test's own, so the module's dev server is left alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recovery.client.cli_cluster import NOT_RUNNING
from tests.integration.recovery_rig import Rig, failing_node, job_facts, job_script
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

SLURM_CLUSTER = "recovery"  # the dev cluster's ClusterName, where node history is kept


@pytest.mark.timeout(420)
async def test_every_json_command_prints_json_only(rig: Rig, tmp_path: Path) -> None:
    # Long enough after its restart to be open for every command below; cancelled at the end.
    script = job_script(rig.workdir("json"), first_run="xid", seconds=300)
    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    rig.start_worker(mode="act")
    submitted = rig.recovery("submit", "--scheduler", "slurm", "--json", str(script))
    assert submitted.returncode == 0, submitted.stderr
    (answer,) = json_documents(("submit",), submitted.stdout)
    assert answer["job_id"], answer
    run, job = answer["run"], answer["job_id"]
    rig.jobs.append(job)

    def requeued() -> bool:
        facts = job_facts(job)
        return facts.state == "RUNNING" and facts.restarts >= 1

    await rig.until(f"job {job} running again after its Xid", requeued, 120, run_id=run)
    bad = failing_node(script.parent)
    pipeline = held_pipeline(rig.recovery, tmp_path / "pipeline", "--scheduler", "slurm")
    server = rig.dev.server
    with private_home(rig.recovery) as own:
        cases = [
            Case(("status",), (run,), lambda s: s["run"]["id"] == run and s["run"]["scheduler"] == "slurm"),
            *run_cases_on(run, log, server.address),
            Case(("cluster", "status"), (), lambda s: s["running"] is False, codes=(NOT_RUNNING,)),
            Case(("nodes",), ("--cluster", SLURM_CLUSTER), lambda rows: bad in [r["node"] for r in rows]),
            *private_home_cases(own, on_cluster=node_cases(["node1", "node2"], own)),
            # Forgets the failure this run left: the node history as the test found it.
            Case(
                ("nodes", "clear"),
                (bad, "--cluster", SLURM_CLUSTER),
                lambda c: c["node"] == bad and c["forgotten"] >= 1,
            ),
            release_case(pipeline),
            cancel_case(run),
        ]
        run_cases(rig.recovery, cases, ran_before=[("submit",)])
