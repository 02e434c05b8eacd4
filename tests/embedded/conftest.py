"""The embedded default for real: the Temporal dev server (SQLite) and the local cluster daemon,
started once per session in a private RECOVERY_HOME on free ports, plus worker subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.client.temporal_client import connect
from recovery.worker.devserver import DevServer
from tests.conftest import need

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Embedded:
    home: Path
    server: DevServer
    env: dict[str, str]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def recovery(
        self, *args: str, timeout: float = 60, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run the `recovery` CLI as a subprocess, as a user would (from `cwd`, default home)."""
        return subprocess.run(
            [sys.executable, "-m", "recovery.worker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **env},
            cwd=cwd or self.home,
            check=False,
        )

    def start_worker(self, *args: str, **env: str) -> subprocess.Popen[bytes]:
        log = open(self.home / f"worker-{len(self.workers)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "recovery.worker", "worker", *args],
            env={**self.env, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.workers.append(proc)
        return proc

    def forget_node_history(self) -> None:
        """Clear every node's failure history on the local cluster (needs a worker). The session's tests share one
        node history: failures earlier tests caused make nodes suspect, and a test whose run
        restarts more than once can then be left without enough usable nodes."""
        # A query: answered once a worker (started just before, as a rule) polls the task queue.
        deadline = time.monotonic() + 60
        while (listed := self.recovery("nodes", "--json")).returncode != 0 and time.monotonic() < deadline:
            time.sleep(1)
        assert listed.returncode == 0, listed.stderr
        for node in json.loads(listed.stdout):
            cleared = self.recovery("nodes", "clear", node["node"])
            assert cleared.returncode == 0, cleared.stderr

    def stop_workers(self, only: list[subprocess.Popen[bytes]] | None = None) -> None:
        """Stop every worker, or `only` those."""
        stopping = self.workers if only is None else [proc for proc in self.workers if proc in only]
        for proc in stopping:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in stopping:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.workers = [proc for proc in self.workers if proc not in stopping]

    def job_script(
        self,
        name: str,
        fault_node: str | None = None,
        steps: int = 12,
        fault_step: int = 4,
        fault_rank: int | None = None,
        fault_kind: str = "crash",
    ) -> Path:
        """A copy of the demo's checkpointing job in its own directory, with a fault if asked."""
        workdir = self.home / "jobs" / f"{name}-{uuid.uuid4().hex[:6]}"
        workdir.mkdir(parents=True)
        package = resources.files("recovery.worker.demo_job")
        (workdir / "train.py").write_text(package.joinpath("train.py").read_text())
        fault = ""
        if fault_node or fault_rank is not None:
            fault = textwrap.dedent(f"""\
                export RECOVERY_EXAMPLE_FAULT={fault_kind}
                export RECOVERY_EXAMPLE_FAULT_NODE={fault_node or ""}
                export RECOVERY_EXAMPLE_FAULT_RANK={"" if fault_rank is None else fault_rank}
                export RECOVERY_EXAMPLE_FAULT_STEP={fault_step}
                """)
        script = workdir / "job.sbatch"
        script.write_text(
            "#!/bin/bash\n#SBATCH --nodes=2\nset -euo pipefail\n"
            + fault
            + f'exec {sys.executable} "$SLURM_SUBMIT_DIR/train.py" --steps {steps} --step-seconds 0.1\n'
        )
        return script


@pytest.fixture(scope="session")
def embedded(temporal_bin: str) -> Iterator[Embedded]:
    home = Path(tempfile.mkdtemp(prefix="rh-", dir="/tmp"))
    env = {
        "RECOVERY_HOME": str(home),
        "RECOVERY_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "RECOVERY_TEMPORAL_UI_PORT": str(free_port()),
        "RECOVERY_TASK_QUEUE": f"recovery-test-{uuid.uuid4().hex[:6]}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    server = DevServer.from_env()
    try:
        server.start(timeout=60)
    except Exception as e:  # noqa: BLE001 - any start failure means the service is missing
        need(False, f"the Temporal dev server ({e})")
    local_cluster.start(4)
    emb = Embedded(home=home, server=server, env={**os.environ, **env})
    try:
        yield emb
    finally:
        emb.stop_workers()
        local_cluster.stop()
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(autouse=True)
def no_worker_outlives_its_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that fails before its own stop_workers() would leave its workers polling the
    session's task queue: the next test's runs would be served by them (a test's failpoint
    worker then never gets the work it must die on), and one failure would cascade."""
    if "embedded" not in request.fixturenames:
        yield
        return
    embedded: Embedded = request.getfixturevalue("embedded")
    before = list(embedded.workers)  # a module's shared worker (test_temporal_ui) stays
    yield
    embedded.stop_workers(only=[proc for proc in embedded.workers if proc not in before])


@pytest.fixture
async def client(embedded: Embedded) -> AsyncIterator[Client]:
    yield await connect(embedded.server.address)


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
