"""Issue 15's acceptance on Slurm: pipelines on the real dev cluster with a real dev server and
`recovery worker --scheduler slurm` subprocesses.

Every stage that needs another is in the queue from the start, held (`JobHeldUser`, its pipeline
and needs in the comment); the pipeline's `dag_release` lets it run once its needs completed, and
the stage's run adopts that job. What ran, and in which order, is read from the stages' own
output (an order file each stage appends to) and from Slurm's commands and slurmctld's log, not
through the adapter under test.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from recovery.workflows.pipeline_models import PipelineStatus
from tests.integration.recovery_rig import Rig, ctld_log_lines, failing_node, job_facts, job_script, slurm

pytestmark = [pytest.mark.slow, pytest.mark.temporal]

STAGE = """\
#!/bin/bash
#SBATCH --nodes=1
echo "start {name} $SLURM_JOB_ID" >> {order}
sleep {seconds}
{ending}
echo "end {name} $SLURM_JOB_ID" >> {order}
"""


def stage_script(directory: Path, name: str, seconds: float = 1, fail: bool = False) -> None:
    ending = "echo 'fatal: this stage fails' >&2; exit 1" if fail else ""
    order = directory / "order.log"
    text = STAGE.format(name=name, order=order, seconds=f"{seconds:g}", ending=ending)
    (directory / f"{name}.sbatch").write_text(text)


def order(directory: Path) -> list[str]:
    """`start NAME` / `end NAME` in the order the stages wrote them (job ids dropped)."""
    path = directory / "order.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [" ".join(line.split()[:2]) for line in lines]


def policy(rig: Rig, text: str) -> str:
    """A policy file; no node turns suspect from other tests' failures."""
    path = rig.home / f"policy-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(f"{text}\nsuspect_nodes: {{failures: 1000}}\n")
    return str(path)


def queued(pipeline_id: str) -> dict[str, tuple[str, str, str]]:
    """The pipeline's jobs Slurm lists (any state, MinJobAge keeps ended ones): stage -> (job id,
    state, reason), read off their comments (`recovery:pipeline=ID,stage=NAME,...`)."""
    out = slurm("squeue", "-a", "-h", "-t", "all", "-o", "%i|%T|%r|%k").stdout
    found = {}
    for line in out.splitlines():
        job_id, state, reason, comment = line.split("|", 3)
        items = dict(item.partition("=")[::2] for item in comment.removeprefix("recovery:").split(","))
        if items.get("pipeline") == pipeline_id:
            found[items["stage"]] = (job_id, state, reason)
    return found


def pending(pipeline_id: str) -> list[str]:
    return sorted(stage for stage, (_, state, _) in queued(pipeline_id).items() if state == "PENDING")


def run_jobs(run_id: str) -> list[str]:
    """Every job whose comment carries the stage run's token."""
    out = slurm("squeue", "-a", "-h", "-t", "all", "-o", "%i|%k").stdout
    return sorted(line.split("|", 1)[0] for line in out.splitlines() if f"token=recovery:{run_id}:" in line)


@pytest.fixture
def pipelines(rig: Rig) -> Iterator[list[str]]:
    """Pipeline ids a test started: their jobs (held ones too, which no run names) are cancelled
    at the end whatever happened."""
    started: list[str] = []
    yield started
    jobs = [job_id for p in started for job_id, _, _ in queued(p).values()]
    if jobs:
        slurm("scancel", *jobs, check=False)


async def result(rig: Rig, pipeline_id: str, timeout: float) -> PipelineStatus:
    handle = rig.client.get_workflow_handle(pipeline_id, result_type=PipelineStatus)
    try:
        await rig.until("the pipeline's end", lambda: _ended(rig, pipeline_id), timeout)
    except AssertionError as e:
        status = await handle.query("status", result_type=PipelineStatus)
        raise AssertionError(f"{e}\n{status.model_dump_json(indent=1)}") from None
    return await handle.result()


async def _ended(rig: Rig, pipeline_id: str) -> bool:
    description = await rig.client.get_workflow_handle(pipeline_id).describe()
    return description.status is not None and description.status.name != "RUNNING"


async def status_of(rig: Rig, pipeline_id: str) -> PipelineStatus:
    return await rig.client.get_workflow_handle(pipeline_id).query("status", result_type=PipelineStatus)


def releases(rig: Rig, job_id: str) -> list[str]:
    """slurmctld's log lines of `scontrol release` for the job: one per release that let it go."""
    return [line for line in ctld_log_lines(rig.slurm_dir, job_id) if "release hold on" in line]


# --- a three-stage pipeline whose first stage is recovered as a new job ----------------------------


@pytest.mark.timeout(300)
async def test_three_stages_after_a_first_stage_resubmitted_off_a_bad_node(rig: Rig, pipelines: list[str]) -> None:
    rig.start_worker(mode="act")
    workdir = rig.workdir("pipeline")
    job_script(workdir / "prep", first_run="xid", seconds=3)  # 2 nodes, an Xid on the second, once
    stage_script(workdir, "train")
    stage_script(workdir, "eval")
    path = workdir / "pipeline.yaml"
    path.write_text(
        "name: three stages\nstages:\n"
        f"  - {{name: prep, script: prep/job.sbatch, policy: {policy(rig, 'restart_via: resubmit')}}}\n"
        "  - {name: train, script: train.sbatch, needs: [prep]}\n"
        "  - {name: eval, script: eval.sbatch, needs: [train]}\n"
    )
    inp = await rig.start_pipeline(path)
    pipelines.append(inp.pipeline_id)

    # The whole pipeline is in the queue at once: train and eval held, saying by whom.
    held = await rig.until("train and eval queued held", lambda: pending(inp.pipeline_id) == ["eval", "train"], 60)
    assert held
    seen = queued(inp.pipeline_id)
    assert [seen[s][2] for s in ("train", "eval")] == ["JobHeldUser", "JobHeldUser"], seen
    train_job = seen["train"][0]
    assert "pipeline=" in job_facts(train_job).raw and "after=prep" in job_facts(train_job).raw

    status = await result(rig, inp.pipeline_id, 240)
    assert status.pipeline.state == "completed", status.model_dump_json(indent=1)
    runs = {s.name: await rig.status(s.run) for s in status.stages}
    prep, train, evaluation = runs["prep"], runs["train"], runs["eval"]
    assert prep is not None and train is not None and evaluation is not None

    # prep: failed on the node with the Xid, recovered as a new job off that node
    bad = failing_node(workdir / "prep")
    assert len(prep.attempts) == 2 and prep.attempts[0].job_id != prep.attempts[1].job_id, prep.attempts
    assert bad in prep.attempts[0].nodes and bad not in prep.attempts[1].nodes, prep.attempts
    assert prep.advice[0].excluded_nodes == [bad] and prep.advice[0].status == "converged", prep.advice
    # train and eval: each once, each the job queued held at the start, released once
    assert [a.job_id for a in train.attempts] == [train_job] and len(evaluation.attempts) == 1
    assert run_jobs(train.run.id) == [train_job] and run_jobs(evaluation.run.id) == [evaluation.attempts[0].job_id]
    for job_id in (train_job, evaluation.attempts[0].job_id):
        assert len(releases(rig, job_id)) == 1, ctld_log_lines(rig.slurm_dir, job_id)
    ran = order(workdir)
    assert ran == ["start train", "end train", "start eval", "end eval"], ran
    # train started only after prep's second job ended (Slurm's own times)
    prep_end = prep.attempts[1].ended_at
    assert prep_end is not None and train.attempts[0].started_at is not None
    assert train.attempts[0].started_at >= prep_end.replace(microsecond=0)
    kinds = [(a.kind, a.stage) for a in status.actions]
    assert kinds == [("dag_release", "prep"), ("dag_release", "train"), ("dag_release", "eval")], kinds
    assert status.actions[1].detail == f"prep completed; job {train_job} released"


# --- two parallel needs ---------------------------------------------------------------------------


@pytest.mark.timeout(240)
async def test_a_stage_waits_for_both_parallel_needs(rig: Rig, pipelines: list[str]) -> None:
    rig.start_worker(mode="act")
    workdir = rig.workdir("parallel")
    stage_script(workdir, "fast", seconds=1)
    stage_script(workdir, "slow", seconds=8)
    stage_script(workdir, "join")
    path = workdir / "pipeline.yaml"
    path.write_text(
        "name: join\nstages:\n  - {name: fast, script: fast.sbatch}\n  - {name: slow, script: slow.sbatch}\n"
        "  - {name: join, script: join.sbatch, needs: [fast, slow]}\n"
    )
    inp = await rig.start_pipeline(path)
    pipelines.append(inp.pipeline_id)
    status = await result(rig, inp.pipeline_id, 200)
    assert status.pipeline.state == "completed", status.model_dump_json(indent=1)
    ran = order(workdir)
    assert ran.count("start join") == 1, ran
    assert ran.index("start join") > ran.index("end slow") and ran.index("start join") > ran.index("end fast"), ran


@pytest.mark.timeout(240)
async def test_a_need_giving_up_cancels_or_holds_its_dependants_and_leaves_no_held_job(
    rig: Rig, pipelines: list[str]
) -> None:
    rig.start_worker(mode="act")
    workdir = rig.workdir("give-up")
    stage_script(workdir, "fine", seconds=1)
    stage_script(workdir, "bad", seconds=3, fail=True)
    for name in ("join", "keep", "after_keep"):
        stage_script(workdir, name)
    never = policy(rig, "max_restarts: 0")
    path = workdir / "pipeline.yaml"
    path.write_text(
        "name: give up\nstages:\n  - {name: fine, script: fine.sbatch}\n"
        f"  - {{name: bad, script: bad.sbatch, policy: {never}}}\n"
        "  - {name: join, script: join.sbatch, needs: [fine, bad], on_dependency_failure: cancel}\n"
        "  - {name: keep, script: keep.sbatch, needs: [bad], on_dependency_failure: hold}\n"
        "  - {name: after_keep, script: after_keep.sbatch, needs: [keep]}\n"
    )
    inp = await rig.start_pipeline(path)
    pipelines.append(inp.pipeline_id)

    async def held_for_an_operator() -> PipelineStatus | None:
        status = await status_of(rig, inp.pipeline_id)
        states = {s.name: s.state.value for s in status.stages}
        ready = states["join"] == "cancelled" and states["keep"] == "held" and "; job" in status.actions[-2].detail
        return status if ready else None

    status = await rig.until("bad to give up and its dependants to follow", held_for_an_operator, 150)
    states = {s.name: s.state.value for s in status.stages}
    assert states == {
        "fine": "completed",
        "bad": "gave_up",
        "join": "cancelled",
        "keep": "held",
        "after_keep": "waiting",
    }
    # join's held job is gone from the queue; keep's (and what waits on it) stays held, for an operator
    join_job = queued(inp.pipeline_id)["join"][0]
    assert job_facts(join_job).state == "CANCELLED", job_facts(join_job).raw
    assert pending(inp.pipeline_id) == ["after_keep", "keep"]
    assert all(reason == "JobHeldUser" for stage, (_, state, reason) in queued(inp.pipeline_id).items()
               if state == "PENDING"), queued(inp.pipeline_id)  # fmt: skip

    # cancelling the pipeline takes the held jobs with it
    cancelled = rig.recovery("cancel", inp.pipeline_id)
    assert cancelled.returncode == 0, cancelled.stderr
    status = await result(rig, inp.pipeline_id, 60)
    assert status.pipeline.state == "cancelled", status.model_dump_json(indent=1)
    assert pending(inp.pipeline_id) == [], queued(inp.pipeline_id)
    ran = order(workdir)
    assert not any(name in line for line in ran for name in ("join", "keep")), ran


@pytest.mark.timeout(180)
async def test_a_cancelled_pipeline_leaves_no_held_job(rig: Rig, pipelines: list[str]) -> None:
    rig.start_worker(mode="act")
    workdir = rig.workdir("cancel")
    stage_script(workdir, "first", seconds=120)
    stage_script(workdir, "second")
    stage_script(workdir, "third")
    path = workdir / "pipeline.yaml"
    path.write_text(
        "name: cancelled\nstages:\n  - {name: first, script: first.sbatch}\n"
        "  - {name: second, script: second.sbatch, needs: [first]}\n"
        "  - {name: third, script: third.sbatch, needs: [second]}\n"
    )
    inp = await rig.start_pipeline(path)
    pipelines.append(inp.pipeline_id)
    await rig.until("first running", lambda: "start first" in order(workdir), 60)
    assert pending(inp.pipeline_id) == ["second", "third"]
    cancelled = rig.recovery("cancel", inp.pipeline_id, "--kill-job")
    assert cancelled.returncode == 0, cancelled.stderr
    status = await result(rig, inp.pipeline_id, 60)
    assert status.pipeline.state == "cancelled", status.model_dump_json(indent=1)
    jobs = queued(inp.pipeline_id)
    assert [s for s, (_, state, _) in jobs.items() if state not in ("CANCELLED",)] == [], jobs
    assert order(workdir) == ["start first"]


# --- the worker killed right after a release ------------------------------------------------------


@pytest.mark.timeout(240)
async def test_worker_killed_right_after_a_release_releases_once(rig: Rig, pipelines: list[str]) -> None:
    doomed = rig.start_worker(mode="act", failpoints="after:dag_release")
    workdir = rig.workdir("kill-release")
    for name in ("one", "two", "three"):
        stage_script(workdir, name, seconds=2)
    path = workdir / "pipeline.yaml"
    path.write_text(
        "name: killed\nstages:\n  - {name: one, script: one.sbatch}\n"
        "  - {name: two, script: two.sbatch, needs: [one]}\n"
        "  - {name: three, script: three.sbatch, needs: [two]}\n"
    )
    inp = await rig.start_pipeline(path)
    pipelines.append(inp.pipeline_id)
    await rig.until("the failpoint after the release", lambda: doomed.poll() is not None, 120)
    assert doomed.returncode == -signal.SIGKILL, rig.worker_logs()
    two_job = queued(inp.pipeline_id)["two"][0]
    assert len(releases(rig, two_job)) == 1
    rig.start_worker(mode="act")
    status = await result(rig, inp.pipeline_id, 180)
    assert status.pipeline.state == "completed", status.model_dump_json(indent=1)
    ran = order(workdir)
    assert ran == ["start one", "end one", "start two", "end two", "start three", "end three"], ran
    # the retried dag_release found the job released and did nothing: Slurm got one release
    assert len(releases(rig, two_job)) == 1, ctld_log_lines(rig.slurm_dir, two_job)
    updates = [line for line in ctld_log_lines(rig.slurm_dir, two_job) if "_slurm_rpc_update_job" in line]
    assert len(updates) == 1, updates
    release = next(a for a in status.actions if a.kind == "dag_release" and a.stage == "two")
    assert "not held" in release.detail and "already released" in release.detail, release
    two = await rig.status(status.stages[1].run)
    assert two is not None and [a.job_id for a in two.attempts] == [two_job]
