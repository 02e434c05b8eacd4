"""A private Temporal dev server and `recovery worker` subprocesses, against the real Slurm dev cluster.

Used by `test_slurm_recovery.py` and `benchmarks/slurm_recovery_latency.py`. It follows
`tests/embedded/conftest.py` (dev server on free ports in a temporary RECOVERY_HOME, workers as
subprocesses so that a failpoint's SIGKILL takes only the worker), without the embedded local
cluster: the scheduler here is Slurm (`deploy/slurm-dev-cluster`, found through SLURM_CONF).

Everything Slurm-side is read with Slurm's own commands (`scontrol`, `sacct`, the slurmctld log),
not through the adapter under test, so a bug in the adapter cannot hide behind its own reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from temporalio.client import Client
from temporalio.service import RPCError

from recovery.activities.schedulers.slurm import SlurmScheduler
from recovery.client import runs
from recovery.client.pipeline_file import load_pipeline
from recovery.client.submit import build_spec
from recovery.client.temporal_client import connect
from recovery.worker.devserver import DevServer
from recovery.workflows import search_attributes as sa
from recovery.workflows.models import RunSpec, RunStatus, SubmitRequest, Tuning
from recovery.workflows.pipeline_models import PIPELINE, PipelineInput, PipelineStatus

REPO = Path(__file__).resolve().parents[2]
DEV_CLUSTER = REPO / "deploy" / "slurm-dev-cluster"
T = TypeVar("T")

# Faster than worker/submit.py's TUNING["slurm"] (5 s polls, 10 min verify) so that a test
# recovery takes seconds; the timeouts still leave room for a 2-core machine under load.
FAST = Tuning(
    poll_seconds=1.0, heartbeat_timeout_seconds=5.0, action_timeout_seconds=10.0, verify_timeout_seconds=120.0
)
# A hardware-looking line as the NVIDIA driver logs it; `[node]` names the node, as a
# pdsh/srun-style prefix would.
XID_LINE = "[$SLURMD_NODENAME] NVRM: Xid (PCI:0000:3b:00): 79, pid=$$, GPU has fallen off the bus."
FirstRun = Literal["xid", "long", "gated", "fine"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- Slurm, read with its own commands ------------------------------------------------------------


def slurm(*argv: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    """One Slurm command as an argument list (never a shell)."""
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def hostnames(nodelist: str) -> list[str]:
    if not nodelist or nodelist == "(null)":
        return []
    return slurm("scontrol", "show", "hostnames", nodelist).stdout.split()


@dataclass(frozen=True)
class JobFacts:
    """`scontrol show job -o J`: what Slurm itself says about a job now."""

    job_id: str
    state: str
    restarts: int
    excluded: list[str]
    nodes: list[str]
    partition: str
    reason: str
    raw: str

    @property
    def held(self) -> bool:
        return "held" in self.reason.lower() or " Priority=0 " in f" {self.raw} "


_FIELD = re.compile(r"(?:^|\s)(\w+)=(\S*)")


def job_facts(job_id: str) -> JobFacts:
    raw = slurm("scontrol", "show", "job", "-o", job_id).stdout.strip()
    fields: dict[str, str] = {}
    for key, value in _FIELD.findall(raw):
        fields.setdefault(key, value)  # the structured keys come before any free text
    return JobFacts(
        job_id=job_id,
        state=fields.get("JobState", ""),
        restarts=int(fields.get("Restarts", "0") or 0),
        excluded=hostnames(fields.get("ExcNodeList", "")),
        nodes=hostnames(fields.get("NodeList", "")),
        partition=fields.get("Partition", ""),
        reason=fields.get("Reason", ""),
        raw=raw,
    )


def accounting_runs(job_id: str) -> list[tuple[str, list[str]]]:
    """Every run of the job in accounting, oldest first: (state, nodes). 22.05 keeps one record
    per run under `-D` (it has no restart count of its own)."""
    out = slurm("sacct", "-n", "-P", "-X", "-D", "-j", job_id, "-o", "JobID,State,NodeList").stdout
    found = []
    for line in out.splitlines():
        jid, state, nodes = [*line.split("|"), "", "", ""][:3]
        if jid == job_id:
            found.append((state.split()[0] if state else "", hostnames(nodes)))
    return found


def sbatch(*options: str, script: Path) -> str:
    """Plain `sbatch`, as a user opting in by hand would run it."""
    out = slurm("sbatch", "--parsable", *options, str(script)).stdout
    return out.strip().split(";")[0]


def ctld_log_lines(state_dir: Path, job_id: str) -> list[str]:
    """slurmctld's log lines about this job (the log says what each RPC did to it), from its
    submission on: a controller that lost its state can hand out a job id again."""
    text = (state_dir / "log" / "slurmctld.log").read_text(errors="replace")
    mark = re.compile(rf"\bJobId={re.escape(job_id)}\b")
    lines: list[str] = []
    for line in text.splitlines():
        if mark.search(line):
            if "_slurm_rpc_submit_batch_job" in line:
                lines = []
            lines.append(line)
    return lines


_LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\]")


def log_time(line: str) -> datetime:
    """A slurmctld log line's time (local, milliseconds) in UTC."""
    found = _LOG_TIME.match(line)
    assert found, line
    return datetime.fromisoformat(found.group(1)).astimezone(UTC)


def job_script(
    directory: Path, *, first_run: FirstRun = "xid", seconds: float = 5, directives: tuple[str, ...] = ()
) -> Path:
    """A 2-node batch script whose first run (whatever its job id or restart count) misbehaves:

    - `xid`: the task on the allocation's second node prints an Xid 79 line (and notes its node
      in `failed-node`) and exits 3;
      `srun --kill-on-bad-exit` then ends the other task, so the job FAILS;
    - `long`: every task notes it started (`started-NODE`, see `tasks_started`) and sleeps long
      enough for a node to be declared dead under it;
    - `gated`: the batch script waits for a `go` file before it launches its step, so that a
      test can take a node away between the allocation and the step's launch;
    - `fine`: nothing goes wrong.

    Later runs just work for `seconds`. "First" is a marker directory: mkdir is atomic, so exactly
    one run (a requeue or a resubmission alike) is the faulty one.
    """
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / "first-run-happened"
    task = f"""\
first=$1 mode=$2 seconds=$3
if [ "$first" = 1 ] && [ "$mode" = xid ] && [ "$SLURM_NODEID" = 1 ]; then
  sleep 1
  echo "{XID_LINE}" >&2
  echo "$SLURMD_NODENAME" >{shlex.quote(str(directory / "failed-node"))}
  sleep 1  # srun forwards output after the fact: exiting at once can lose the line
  exit 3
fi
if [ "$first" = 1 ] && [ "$mode" = long ]; then
  seconds=75
  touch {shlex.quote(str(directory))}/"started-$SLURMD_NODENAME"
fi
sleep "$seconds"
echo "task $SLURM_PROCID on $SLURMD_NODENAME done"
"""
    lines = ["#!/bin/bash", "#SBATCH --nodes=2", *(f"#SBATCH {d}" for d in directives)]
    go = shlex.quote(str(directory / "go"))
    lines += [
        f"if mkdir {shlex.quote(str(marker))} 2>/dev/null; then first=1; else first=0; fi",
        'echo "run ${SLURM_RESTART_COUNT:-0} of job $SLURM_JOB_ID on $SLURM_JOB_NODELIST (first=$first)"',
        f'if [ "$first" = 1 ] && [ {first_run} = gated ]; then until [ -e {go} ]; do sleep 0.2; done; fi',
        f'srun --kill-on-bad-exit=1 bash -c {shlex.quote(task)} task "$first" {first_run} {seconds:g}',
    ]
    script = directory / "job.sbatch"
    script.write_text("\n".join(lines) + "\n")
    return script


def tasks_started(directory: Path) -> list[str]:
    """The nodes whose task of a `long` first run is running: Slurm shows the job RUNNING
    before srun has launched its step everywhere."""
    return sorted(p.name.removeprefix("started-") for p in directory.glob("started-*"))


def failing_node(directory: Path) -> str:
    """The node whose task printed the Xid line (the job notes it beside its output, which a
    requeue of a plain-sbatch job truncates): the truth the advice must match."""
    return (directory / "failed-node").read_text().strip()


# --- the Temporal side --------------------------------------------------------------------------


@dataclass
class TemporalDev:
    """A private dev server (SQLite under a temporary RECOVERY_HOME, free ports)."""

    home: Path
    server: DevServer

    @classmethod
    def start(cls) -> TemporalDev:
        home = Path(tempfile.mkdtemp(prefix="rslurm-", dir="/tmp"))
        server = DevServer(home, f"127.0.0.1:{free_port()}", free_port())
        server.start(timeout=60)
        return cls(home, server)

    def stop(self) -> None:
        """Stop the server and remove its home (a failing test has already shown the logs)."""
        self.server.stop()
        shutil.rmtree(self.home, ignore_errors=True)


@dataclass
class Rig:
    """One test's world: its own task queue on the shared dev server, its workers, its jobs."""

    dev: TemporalDev
    slurm_dir: Path
    client: Client
    task_queue: str = field(default_factory=lambda: f"slurm-test-{uuid.uuid4().hex[:6]}")
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.dev.home

    @property
    def env(self) -> dict[str, str]:
        """The environment of `recovery` subprocesses: the dev cluster's SLURM_CONF (already in
        os.environ from the `slurm_cluster` fixture) and this rig's Temporal settings."""
        return {
            **os.environ,
            "RECOVERY_HOME": str(self.home),
            "RECOVERY_TEMPORAL_ADDRESS": self.dev.server.address,
            "RECOVERY_TEMPORAL_UI_PORT": str(self.dev.server.ui_port),
            "RECOVERY_TASK_QUEUE": self.task_queue,
            "SLURM_DEV_DIR": str(self.slurm_dir),
        }

    def workdir(self, name: str) -> Path:
        path = self.home / "jobs" / f"{name}-{uuid.uuid4().hex[:6]}"
        path.mkdir(parents=True)
        return path

    # --- processes

    def recovery(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
        """The `recovery` CLI, as a user would run it (`env`: settings of its own, over the rig's)."""
        return subprocess.run(
            [sys.executable, "-m", "recovery.worker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **env},
            cwd=self.home,
            check=False,
        )

    def start_worker(
        self,
        *args: str,
        mode: str = "act",
        discovery: bool = False,
        failpoints: str | None = None,
        backend: str = "auto",
    ) -> subprocess.Popen[bytes]:
        """`recovery worker --scheduler slurm` in its own process. Discovery is off unless a test
        needs it: the other tests start their runs themselves, and a discovery loop would only add
        polls (and adopt other tests' recently failed jobs) on a 2-core machine."""
        config = self.home / f"worker-{self.task_queue}-{len(self.workers)}.yaml"
        interval = "discovery: {interval: 2s}" if discovery else "discovery: {enabled: false}"
        config.write_text(f"scheduler: slurm\n{interval}\nslurm: {{backend: {backend}}}\n")
        env = self.env
        if failpoints:
            env["RECOVERY_FAILPOINTS"] = failpoints
        log = open(self.home / f"worker-{self.task_queue}-{len(self.workers)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "recovery.worker", "worker", "--scheduler", "slurm", "--mode", mode,
             "--config", str(config), *args],
            env=env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        self.workers.append(proc)
        return proc

    def worker_logs(self) -> str:
        parts = []
        for path in sorted(self.home.glob(f"worker-{self.task_queue}-*.log")):
            tail = path.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.workers:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.workers.clear()

    # --- runs

    async def submit_run(
        self,
        script: Path,
        tuning: Tuning = FAST,
        name: str | None = None,
        policy: str = "default",
        env: dict[str, str] | None = None,
    ) -> tuple[RunSpec, str]:
        """What `recovery submit --scheduler slurm` does (client/runs.py `sbatch_for`), with a
        faster tuning: sbatch as the user with the run's token, then a run adopting that job.
        `env` is added to the job's environment (and kept in the spec for resubmits)."""
        spec = build_spec(str(script), [], "slurm", policy, name, None, script.parent)
        spec.tuning = tuning
        if env is not None:
            spec.env = env
        request = SubmitRequest(
            script=spec.script,
            name=spec.name,
            nodes=spec.nodes,
            workdir=spec.workdir,
            token=f"recovery:{spec.run_id}:0",
            env=spec.env,
        )
        observed = await SlurmScheduler().submit(request)
        self.jobs.append(observed.job_id)
        spec.adopt_job_id = observed.job_id
        await runs.start_run(self.client, spec, task_queue=self.task_queue)
        return spec, observed.job_id

    async def start_pipeline(self, path: Path, tuning: Tuning = FAST) -> PipelineInput:
        """What `recovery submit --scheduler slurm pipeline.yaml` does, on this rig's task queue
        and with `tuning` for every stage."""
        inp = load_pipeline(str(path), "slurm")
        for stage in inp.stages:
            stage.spec.tuning = tuning
        await self.client.start_workflow(
            PIPELINE,
            inp,
            id=inp.pipeline_id,
            task_queue=self.task_queue,
            search_attributes=sa.at_start("slurm", inp.owner),
            result_type=PipelineStatus,
        )
        return inp

    async def status(self, run_id: str) -> RunStatus | None:
        try:
            return await runs.get_status(self.client, run_id)
        except (runs.RunError, RPCError):
            return None

    async def describe(self, run_id: str) -> str:
        status = await self.status(run_id)
        shown = status.model_dump_json(indent=1) if status else "(no status)"
        return f"run {run_id}:\n{shown}\n{self.worker_logs()}"

    async def result(self, run_id: str, timeout: float) -> RunStatus:
        """The run's final status; fails the test with what the run shows if it takes longer."""
        try:
            status = await asyncio.wait_for(runs.wait_result(self.client, run_id), timeout)
        except TimeoutError:
            raise AssertionError(
                f"run {run_id} did not finish within {timeout:.0f}s\n{await self.describe(run_id)}"
            ) from None
        assert status is not None, f"run {run_id} failed as a workflow\n{await self.describe(run_id)}"
        return status

    def listed(self) -> list[dict[str, Any]]:
        done = self.recovery("list", "--json")
        assert done.returncode == 0, done.stderr
        rows: list[dict[str, Any]] = json.loads(done.stdout)
        return rows

    @overload
    async def until(
        self,
        what: str,
        check: Callable[[], Awaitable[T | None]],
        timeout: float,
        every: float = 0.3,
        run_id: str | None = None,
    ) -> T: ...

    @overload
    async def until(
        self, what: str, check: Callable[[], T | None], timeout: float, every: float = 0.3, run_id: str | None = None
    ) -> T: ...

    async def until(
        self, what: str, check: Callable[[], Any], timeout: float, every: float = 0.3, run_id: str | None = None
    ) -> Any:
        """Poll `check` (plain or async) until it returns something truthy; fail after `timeout`
        seconds, showing the run (if named) and the workers' logs."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
            if time.monotonic() > deadline:
                context = await self.describe(run_id) if run_id else self.worker_logs()
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{context}")
            await asyncio.sleep(every)

    # --- clean-up

    async def close(self) -> None:
        """Stop this rig's workers, end its workflows, cancel every job it or its runs made."""
        self.stop_workers()
        jobs = list(self.jobs)
        async for wf in self.client.list_workflows('ExecutionStatus="Running"'):
            jobs += wf.typed_search_attributes.get(sa.JOB_IDS) or []
            with contextlib.suppress(RPCError):
                await self.client.get_workflow_handle(wf.id).terminate("test finished")
        if jobs:
            slurm("scancel", *dict.fromkeys(jobs), check=False)


async def new_rig(dev: TemporalDev, slurm_dir: Path) -> Rig:
    return Rig(dev=dev, slurm_dir=slurm_dir, client=await connect(dev.server.address))


def dev_cluster(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """deploy/slurm-dev-cluster, for the cluster that SLURM_DEV_DIR names."""
    done = subprocess.run([str(DEV_CLUSTER), *args], capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"slurm-dev-cluster {' '.join(args)} failed: {done.stderr.strip()}")
    return done
