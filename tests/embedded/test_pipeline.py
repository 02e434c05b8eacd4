"""A pipeline for real: `recovery submit pipeline.yaml` on the Temporal dev server and the
embedded local scheduler, with a worker subprocess. The first stage fails on node2 with a GPU
error, is recovered, and completes; only then does the second stage start, then the third."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
import uuid
from pathlib import Path

from temporalio.client import Client
from temporalio.service import RPCError

from recovery.client import runs
from recovery.workflows.pipeline_models import PipelineStatus
from tests.embedded.conftest import Embedded, wait_for
from tests.json_output import BAD_STAGE, HELD_PIPELINE

# Each stage writes when it starts and ends (per node), so the order is read from what ran.
STAGE = """\
#!/bin/bash
#SBATCH --nodes={nodes}
set -euo pipefail
echo "start {name} $SLURMD_NODENAME $SLURM_RESTART_COUNT" >> "$SLURM_SUBMIT_DIR/order.log"
{work}
echo "end {name} $SLURMD_NODENAME" >> "$SLURM_SUBMIT_DIR/order.log"
"""

PIPELINE = """\
name: three stages
stages:
  - name: prep
    script: stages/prep.sbatch
  - name: train
    script: stages/train.sbatch
    needs: [prep]
  - name: eval
    script: stages/eval.sbatch
    needs: [train]
    on_dependency_failure: hold
"""


def write_pipeline(embedded: Embedded) -> Path:
    # The first stage is the demo's checkpointing job, failing on node2 at step 4 (an Xid).
    demo = embedded.job_script("pipeline", fault_node="node2")
    work = demo.read_text().split("set -euo pipefail\n", 1)[1].replace("exec ", "")
    (demo.parent / "stages").mkdir()
    (demo.parent / "stages" / "prep.sbatch").write_text(STAGE.format(nodes=2, name="prep", work=work))
    quick = f'{sys.executable} -c "import time; time.sleep(0.5)"'
    for name in ("train", "eval"):
        (demo.parent / "stages" / f"{name}.sbatch").write_text(STAGE.format(nodes=1, name=name, work=quick))
    path = demo.parent / "pipeline.yaml"
    path.write_text(PIPELINE)
    return path


async def test_three_stages_run_in_order_after_a_recovered_first_stage(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    path = write_pipeline(embedded)
    done = embedded.recovery("submit", "--json", str(path), cwd=path.parent)
    assert done.returncode == 0, done.stderr
    submitted = json.loads(done.stdout)
    assert set(submitted) == {"pipeline", "workflow_id", "stages"}
    pipeline_id = submitted["pipeline"]
    assert submitted["workflow_id"] == pipeline_id
    assert list(submitted["stages"]) == ["prep", "train", "eval"]

    result: PipelineStatus = await client.get_workflow_handle(pipeline_id, result_type=PipelineStatus).result()
    assert result.pipeline.state == "completed"

    lines = (path.parent / "order.log").read_text().splitlines()
    # prep: two nodes, the first attempt crashed (no `end`), the second ran without node2.
    prep_ends = [i for i, line in enumerate(lines) if line.startswith("end prep")]
    assert [line.split()[0:2] for line in lines if "prep" in line].count(["start", "prep"]) == 4
    assert len(prep_ends) == 2
    train = [line for line in lines if "train" in line]
    assert train == [train[0], train[1]] and train[0].startswith("start train") and train[1].startswith("end train")
    assert lines.index(train[0]) > max(prep_ends)  # train started only after prep completed
    evals = [i for i, line in enumerate(lines) if "eval" in line]
    assert len(evals) == 2 and evals[0] > lines.index(train[1])

    prep = await runs.wait_result(client, submitted["stages"]["prep"])
    assert prep is not None and prep.run.state == "completed"
    assert len(prep.attempts) == 2 and "node2" in prep.attempts[1].excluded_nodes

    shown = embedded.recovery("status", pipeline_id, "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["pipeline"]["id"] == pipeline_id and data["pipeline"]["state"] == "completed"
    assert [(s["name"], s["run"], s["state"], s["needs"]) for s in data["stages"]] == [
        ("prep", submitted["stages"]["prep"], "completed", []),
        ("train", submitted["stages"]["train"], "completed", ["prep"]),
        ("eval", submitted["stages"]["eval"], "completed", ["train"]),
    ]
    assert [(a["kind"], a["stage"]) for a in data["actions"]] == [
        ("dag_release", "prep"), ("dag_release", "train"), ("dag_release", "eval"),
    ]  # fmt: skip
    # The timeline: each stage's span, attempts and recoveries; the stages' goodput added up.
    prep_view, train_view, eval_view = data["stages"]
    assert [a["job_id"] for a in prep_view["attempts"]] == [a.job_id for a in prep.attempts]
    assert "node2" in prep_view["attempts"][1]["excluded_nodes"]
    assert [a["operation"] for a in prep_view["advice"]] == ["restart"]
    assert prep_view["ended_at"] <= train_view["started_at"] and train_view["ended_at"] <= eval_view["started_at"]
    assert data["goodput"]["failures"] == 1 and 0 < data["goodput"]["ettr"] < 1
    assert data["goodput"]["elapsed_seconds"] == sum(s["goodput"]["elapsed_seconds"] for s in data["stages"])

    text = embedded.recovery("status", pipeline_id)
    assert text.returncode == 0, text.stderr
    assert f"pipeline {pipeline_id}" in text.stdout and "dag_release" in text.stdout
    assert "advice restart -> converged" in text.stdout and "goodput  ETTR" in text.stdout
    watched = embedded.recovery("status", pipeline_id, "--watch")
    assert watched.returncode != 0 and len(watched.stderr.strip().splitlines()) == 1
    assert "is a pipeline" in watched.stderr

    listed = embedded.recovery("list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert rows[pipeline_id]["kind"] == "pipeline" and rows[pipeline_id]["pipeline"] is None
    for run_id in submitted["stages"].values():
        assert rows[run_id]["kind"] == "run" and rows[run_id]["pipeline"] == pipeline_id
    # The Temporal UI (and `temporal workflow list`) find a pipeline's stages by its id.
    stages = [wf.id async for wf in client.list_workflows(f'ParentWorkflowId="{pipeline_id}"')]
    assert sorted(stages) == sorted(submitted["stages"].values())
    whole = [wf.id async for wf in client.list_workflows(f'RecoveryPipeline="{pipeline_id}"')]
    assert sorted(whole) == sorted([pipeline_id, *submitted["stages"].values()])
    embedded.stop_workers()


async def exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError:
        return False
    return True


async def test_worker_killed_right_after_a_release_releases_once(embedded: Embedded, client: Client) -> None:
    embedded.stop_workers()  # the doomed worker is the only one: no other carries on for it
    doomed = embedded.start_worker()
    path = write_pipeline(embedded)
    done = embedded.recovery("submit", "--json", str(path), cwd=path.parent)
    assert done.returncode == 0, done.stderr
    submitted = json.loads(done.stdout)
    train = submitted["stages"]["train"]
    deadline = 120
    while deadline > 0 and not await exists(client, train):
        await asyncio.sleep(0.05)
        deadline -= 0.05
    assert await exists(client, train), "train should be released"
    doomed.send_signal(signal.SIGKILL)  # right after the release, before it is followed further
    assert wait_for(lambda: doomed.poll() is not None, timeout=10)
    embedded.start_worker()
    result: PipelineStatus = await client.get_workflow_handle(
        submitted["pipeline"], result_type=PipelineStatus
    ).result()
    assert result.pipeline.state == "completed"
    assert [(a.kind, a.stage) for a in result.actions] == [
        ("dag_release", "prep"), ("dag_release", "train"), ("dag_release", "eval"),
    ]  # fmt: skip
    lines = (path.parent / "order.log").read_text().splitlines()
    assert sum(line.startswith("start train") for line in lines) == 1
    assert sum(line.startswith("start eval") for line in lines) == 1
    embedded.stop_workers()


def test_a_bad_pipeline_file_starts_nothing(embedded: Embedded) -> None:
    path = write_pipeline(embedded)
    path.write_text(PIPELINE.replace("needs: [prep]", "needs: [eval]"))
    before = embedded.recovery("list", "--json").stdout
    done = embedded.recovery("submit", "--json", str(path), cwd=path.parent)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"recovery: {path}:7: the stages' needs form a cycle: train -> eval -> train"
    ]
    assert embedded.recovery("list", "--json").stdout == before  # nothing was started


# A one-node job that runs until its gate file exists, so a test decides when it ends.
GATED = """\
#!/bin/bash
#SBATCH --nodes=1
set -euo pipefail
echo "start {name}" >> "$SLURM_SUBMIT_DIR/order.log"
echo "{name} ran"
while [ ! -e "$SLURM_SUBMIT_DIR/go-{name}" ]; do sleep 0.1; done
echo "end {name}" >> "$SLURM_SUBMIT_DIR/order.log"
"""


def gated_scripts(embedded: Embedded, *names: str) -> Path:
    workdir = embedded.home / "jobs" / f"chain-{uuid.uuid4().hex[:6]}"
    workdir.mkdir(parents=True)
    for name in names:
        (workdir / f"{name}.sbatch").write_text(GATED.format(name=name))
    return workdir


async def pipeline_detail(client: Client, pipeline_id: str) -> str:
    status = await client.get_workflow_handle(pipeline_id).query("status", result_type=PipelineStatus)
    return status.stages[0].detail


async def test_submit_after_chains_a_run_that_survives_a_killed_worker(embedded: Embedded, client: Client) -> None:
    embedded.stop_workers()  # the doomed worker is the only one: no other carries on for it
    doomed = embedded.start_worker()
    workdir = gated_scripts(embedded, "first", "second", "third")
    (workdir / "go-second").touch()
    first = embedded.recovery("submit", "--json", "first.sbatch", cwd=workdir)
    assert first.returncode == 0, first.stderr
    first_run = json.loads(first.stdout)["run"]

    unknown = embedded.recovery("submit", "--json", "--after", f"{first_run},nope-123", "second.sbatch", cwd=workdir)
    assert unknown.returncode != 0 and unknown.stdout == ""
    assert unknown.stderr.strip().splitlines() == ["recovery: --after: no run 'nope-123'; nothing was started"]

    done = embedded.recovery("submit", "--json", "--after", first_run, "second.sbatch", cwd=workdir)
    assert done.returncode == 0, done.stderr
    chained = json.loads(done.stdout)
    run = chained["run"]
    assert chained["workflow_id"] == run and chained["job_id"] is None and chained["scheduler"] == "local"
    assert chained["after"] == [first_run] and chained["stages"] == {"run": f"{run}.run"}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (await pipeline_detail(client, run)).startswith("waits for"):
        await asyncio.sleep(0.1)
    assert (await pipeline_detail(client, run)).startswith(f"waits for {first_run} to complete (job ")  # held
    doomed.send_signal(signal.SIGKILL)  # while the chained run waits
    assert wait_for(lambda: doomed.poll() is not None, timeout=10)
    embedded.start_worker()
    assert "second" not in (workdir / "order.log").read_text()  # nothing ran before the first ended
    # The pipeline's first query after the kill goes to the dead worker's sticky queue until
    # Temporal gives up on it: ask again until the new worker answers.
    not_started = f"recovery: run {run!r} has not started yet ("
    waiting = embedded.recovery("logs", run)
    deadline = time.monotonic() + 60
    while "did not answer the status query" in waiting.stderr and time.monotonic() < deadline:
        waiting = embedded.recovery("logs", run)
    assert waiting.returncode != 0 and waiting.stderr.startswith(not_started), waiting.stderr
    (workdir / "go-first").touch()
    result: PipelineStatus = await client.get_workflow_handle(run, result_type=PipelineStatus).result()
    assert result.pipeline.state == "completed"
    assert [(a.kind, a.detail.split(";")[0]) for a in result.actions] == [("dag_release", f"{first_run} completed")]
    assert (workdir / "order.log").read_text().splitlines() == [
        "start first",
        "end first",
        "start second",
        "end second",
    ]
    logs = embedded.recovery("logs", run)  # the chained run's id reads its job's output
    assert logs.returncode == 0 and logs.stdout.strip() == "second ran", logs

    # A run it follows that is cancelled cancels the chained run, which says so; its job never ran.
    third = embedded.recovery("submit", "--json", "third.sbatch", cwd=workdir)
    assert third.returncode == 0, third.stderr
    third_run = json.loads(third.stdout)["run"]
    done = embedded.recovery("submit", "--json", "--after", third_run, "second.sbatch", cwd=workdir)
    assert done.returncode == 0, done.stderr
    cancelled_run = json.loads(done.stdout)["run"]
    assert embedded.recovery("cancel", third_run, "--kill-job").returncode == 0
    result = await client.get_workflow_handle(cancelled_run, result_type=PipelineStatus).result()
    assert result.pipeline.state == "cancelled"
    assert (
        result.stages[0].state == "cancelled" and result.stages[0].detail == f"follows {third_run}, which was cancelled"
    )
    shown = embedded.recovery("status", cancelled_run)
    assert shown.returncode == 0 and f"follows {third_run}, which was cancelled" in shown.stdout
    assert (workdir / "order.log").read_text().count("start second") == 1
    embedded.stop_workers()


async def test_an_operator_releases_a_held_stage(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    workdir = gated_scripts(embedded, "held", "chained")
    (workdir / "go-held").touch()
    (workdir / "go-chained").touch()
    # A user's bug: not retried, so the stage gives up at once and its dependant is held.
    (workdir / "bad.sbatch").write_text(BAD_STAGE)
    (workdir / "pipeline.yaml").write_text(HELD_PIPELINE)
    done = embedded.recovery("submit", "--json", "pipeline.yaml", cwd=workdir)
    assert done.returncode == 0, done.stderr
    pipeline_id = json.loads(done.stdout)["pipeline"]
    handle = client.get_workflow_handle(pipeline_id, result_type=PipelineStatus)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = await handle.query("status", result_type=PipelineStatus)
        if status.stages[1].state == "held":
            break
        await asyncio.sleep(0.2)
    assert [s.state for s in status.stages] == ["gave_up", "held"]

    listed = embedded.recovery("list")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    at = next(i for i, row in enumerate(rows) if row.startswith(pipeline_id + " "))
    assert "held for an operator (pipeline)" in rows[at] and rows[at + 1].startswith(f"└ {pipeline_id}.bad ")

    for target, error in (
        (f"{pipeline_id}.bad", f"stage 'bad' of pipeline {pipeline_id!r} is not held (it is gave_up)"),
        (f"{pipeline_id}.nope", f"pipeline {pipeline_id!r} has no stage 'nope'"),
        ("nope-123", "no pipeline 'nope-123' (give PIPELINE or PIPELINE.STAGE)"),
    ):
        refused = embedded.recovery("release", "--json", target)
        assert refused.returncode != 0 and refused.stdout == ""
        assert refused.stderr.strip().splitlines() == [f"recovery: {error}"]
    assert not (workdir / "order.log").exists()  # the held stage has not run
    several = embedded.recovery("logs", pipeline_id)
    assert several.stderr.strip() == (
        f"recovery: {pipeline_id!r} is a pipeline: logs read one run, so give one of its stages'"
        f" ({pipeline_id}.bad, {pipeline_id}.held)"
    )
    # A run chained after the held stage, which has no run yet: it follows the stage.
    chained = embedded.recovery("submit", "--json", "--after", f"{pipeline_id}.held", "chained.sbatch", cwd=workdir)
    assert chained.returncode == 0, chained.stderr
    chained_run = json.loads(chained.stdout)["run"]

    released = embedded.recovery("release", "--json", pipeline_id)
    assert released.returncode == 0, released.stderr
    assert json.loads(released.stdout) == {
        "pipeline": pipeline_id, "workflow_id": pipeline_id, "action": "release", "signalled": True,
        "stages": ["held"],
    }  # fmt: skip
    result = await handle.result()
    assert [s.state for s in result.stages] == ["gave_up", "completed"] and result.pipeline.state == "gave_up"
    assert result.actions[-1].kind == "dag_release"
    assert result.actions[-1].detail.startswith("released by an operator; job ")  # its held job let go
    chained_result = await client.get_workflow_handle(chained_run, result_type=PipelineStatus).result()
    assert chained_result.pipeline.state == "completed"
    assert (workdir / "order.log").read_text().splitlines() == [
        "start held",
        "end held",
        "start chained",
        "end chained",
    ]
    ended = embedded.recovery("release", f"{pipeline_id}.held")
    assert ended.stderr.strip() == f"recovery: pipeline {pipeline_id!r} has already ended"
    embedded.stop_workers()
