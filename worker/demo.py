"""`recovery demo`: the whole loop on the embedded default, in under a minute.

Starts what is missing (dev server, a 4-node local cluster), runs a worker in this process,
submits the packaged checkpointing job with a hardware-looking fault on node2 in the first
attempt, and narrates: failure, advice, restart, resume from checkpoint, completion. Exit 0
only if the run completed and its second attempt resumed from a checkpoint, not step 0.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import time
from contextlib import AsyncExitStack
from importlib import resources
from pathlib import Path

from temporalio.client import Client

from recovery import settings
from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.client import runs
from recovery.client.config import WorkerConfig
from recovery.client.render import outcome
from recovery.client.submit import build_spec
from recovery.client.temporal_client import connect
from recovery.worker import logs
from recovery.worker.devserver import DevServer
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import RunSpec, RunStatus

FAULT_NODE = "node2"
RESUMED = re.compile(r"resumed from checkpoint at step (\d+)")
NARRATED = re.compile(r"NVRM|Error|resumed|starting from|training done")
TIMEOUT = 120.0


def say(text: str) -> None:
    print(text, flush=True)


async def run_demo(nodes: int = 4, keep: bool = False) -> int:
    logs.configure(logging.WARNING)  # the narration is the demo's output, not the worker's log
    server = DevServer.from_env()
    async with AsyncExitStack() as cleanup:
        if server.start():
            say(f"started the Temporal dev server at {server.address}")
            if not keep:
                cleanup.callback(server.stop)
        if not local_cluster.is_running():
            local_cluster.start(nodes)
            say(f"started a {nodes}-node local cluster")
            if not keep:
                cleanup.callback(local_cluster.stop)
        client = await connect()
        await cleanup.enter_async_context(build_worker(client, LocalScheduler(), WorkerConfig()))
        status = await _submit_and_follow(client, server)
    return _verdict(status)


async def _submit_and_follow(client: Client, server: DevServer) -> RunStatus | None:
    spec = _demo_spec()
    await runs.start_run(client, spec)
    say(f"run {spec.run_id} submitted: 2 nodes, fault injected on {FAULT_NODE} at step 8")
    say(f"Temporal UI: {server.ui_url}/namespaces/{settings.namespace()}/workflows/{spec.run_id}")
    narrator = _Narrator()
    deadline = time.monotonic() + TIMEOUT
    status: RunStatus | None = None
    while time.monotonic() < deadline:
        status = await runs.query_status(client, spec.run_id)
        narrator.show(status)
        if status.run.state.finished:
            break
        await asyncio.sleep(0.3)
    if status is not None and (summary := outcome(status)):
        # The narration above already told the attempts, failure, advice and actions: only the
        # recovery's latency and goodput are new (the whole timeline is `recovery status RUN`).
        say("")
        say("\n".join(summary))
        say(f"the whole timeline: recovery status {spec.run_id}")
    return status


def _demo_spec() -> RunSpec:
    workdir = settings.home() / "demo" / time.strftime("%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    package = resources.files("recovery.worker.demo_job")
    for name in ("job.sbatch", "train.py"):
        (workdir / name).write_text(package.joinpath(name).read_text())
    spec = build_spec(str(workdir / "job.sbatch"), ["--steps", "30"], "local", "default", "demo", 2, workdir)
    spec.env = {
        "RECOVERY_PYTHON": sys.executable,
        "RECOVERY_EXAMPLE_FAULT": "crash",
        "RECOVERY_EXAMPLE_FAULT_NODE": FAULT_NODE,
        "RECOVERY_EXAMPLE_FAULT_STEP": "8",
    }
    return spec


class _Narrator:
    """Prints each new thing once: attempts, symptoms, advice, actions, and job output lines."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.offsets: dict[str, int] = {}

    def show(self, status: RunStatus) -> None:
        for a in status.attempts:
            if a.started_at:
                self._once(f"attempt {a.index} running on {', '.join(a.nodes)} (job {a.job_id})")
        for s in status.symptoms:
            self._once(f"FAILURE: attempt {s.attempt_index} {s.kind}: {s.evidence[0].text}")
        for adv in status.advice:
            self._once(f"ADVICE {adv.generation}: {adv.operation}: {adv.explanation}")
            if adv.status != "pending":
                self._once(f"advice {adv.generation} {adv.status}: {adv.status_reason}")
        for act in status.actions:
            self._once(f"action: {act.kind} ({act.detail})")
        for path in {a.output_path for a in status.attempts if a.output_path}:
            self._tail(path)

    def _once(self, line: str) -> None:
        if line not in self.seen:
            self.seen.add(line)
            say(line)

    def _tail(self, path: str) -> None:
        try:
            with open(path, "rb") as f:
                f.seek(self.offsets.get(path, 0))
                data = f.read()
        except OSError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self.offsets[path] = self.offsets.get(path, 0) + len(complete)
        for line in complete.decode("utf-8", "replace").splitlines():
            if NARRATED.search(line):
                say(f"  | {line}")


def _verdict(status: RunStatus | None) -> int:
    if status is None or status.run.state.value != "completed":
        say(f"demo FAILED: the run ended {status.run.state.value if status else 'unknown'}")
        return 1
    output = Path(status.attempts[-1].output_path or "")
    resumed = [int(m) for m in RESUMED.findall(output.read_text())] if output.exists() else []
    if not resumed or min(resumed) == 0:
        say("demo FAILED: the restarted attempt did not resume from a checkpoint")
        return 1
    say(f"demo OK: recovered from the {FAULT_NODE} failure, resumed at step {min(resumed)}, completed")
    return 0
