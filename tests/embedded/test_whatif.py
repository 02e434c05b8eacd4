"""`recovery whatif` against Temporal: a run that restarted twice on the real dev server is
decided again under a stricter policy, read from its history; nothing is started or signalled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.client import runs
from recovery.workflows.models import RunStatus
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import start
from tests.histories.record import FLAKY_GPU_JOB


@pytest.mark.timeout(180)
async def test_whatif_reads_failures_from_temporal(embedded: Embedded, client: Client, tmp_path: Path) -> None:
    embedded.start_worker()
    embedded.forget_node_history()  # two restarts, each excluding a node: earlier suspects would starve it
    script = embedded.job_script("whatif")
    (script.parent / "train.py").write_text(FLAKY_GPU_JOB)
    spec = await start(client, script)
    status = await runs.wait_result(client, spec.run_id)
    embedded.stop_workers()
    assert status is not None
    assert status.run.state == "completed" and len(status.advice) == 2, story(status)
    # What the strict policy's verdict rests on: two hardware crashes, each restart counted.
    seen = [(s.kind, d.category) for s, d in zip(status.symptoms, status.diagnoses, strict=True)]
    assert seen == [("crash", "hardware")] * 2, story(status)
    strict = tmp_path / "strict.yaml"
    strict.write_text("name: strict\nbudgets: {hardware: 1}\n")
    events_before = len((await client.get_workflow_handle(spec.run_id).fetch_history()).events)

    done = embedded.recovery("whatif", "--policy", str(strict), "--since", "1h", "--run", spec.run_id, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["failures"] == 2
    assert len(result["changed"]) == 1, result
    (change,) = result["changed"]
    assert change["run"] == spec.run_id and change["attempt_index"] == 1
    assert (change["recorded"]["operation"], change["whatif"]["operation"]) == ("restart", "give_up")
    assert result["totals"]["restarts_recorded"] == 2 and result["totals"]["restarts_whatif"] == 1

    same = embedded.recovery("whatif", "--policy", "default", "--run", spec.run_id)
    assert same.returncode == 0, same.stderr
    assert "on 2 recorded failures: 0 decisions differ" in same.stdout
    assert len((await client.get_workflow_handle(spec.run_id).fetch_history()).events) == events_before


def story(status: RunStatus) -> str:
    """The run as a failure message: each attempt, what was seen on it, what was decided."""
    lines = [f"attempt {a.index}: job {a.job_id} restart {a.restart_count} on {a.nodes}" for a in status.attempts]
    for symptom, diagnosis in zip(status.symptoms, status.diagnoses, strict=False):
        first = symptom.evidence[0].text if symptom.evidence else ""
        lines.append(f"attempt {symptom.attempt_index}: {symptom.kind} ({first!r}) -> {diagnosis.category}")
    lines += [f"advice: {a.operation} {a.status} {a.explanation}" for a in status.advice]
    return "\n".join(lines)
