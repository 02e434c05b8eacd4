"""`recovery submit` against a Temporal whose namespace lacks recovery's search attributes (or
does not exist): one clear line, a non-zero exit, and nothing started: no workflow, no job.

The server here is a second, bare dev server (`temporal server start-dev` without our
`--search-attribute`s), as an operator gets from running Temporal by hand."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.workflows import search_attributes
from tests.conftest import need
from tests.embedded.conftest import Embedded, free_port, wait_for


@pytest.fixture(scope="module")
def bare_server(temporal_bin: str) -> Iterator[str]:
    """The address of a dev server started with no custom search attributes."""
    address = f"127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory(prefix="bare-temporal-") as tmp:
        command = [
            temporal_bin, "server", "start-dev", "--headless",
            "--ip", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
            "--db-filename", str(Path(tmp) / "temporal.db"), "--log-level", "error",
        ]  # fmt: skip
        with open(Path(tmp) / "server.log", "wb") as log:
            server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            healthy = wait_for(lambda: _healthy(temporal_bin, address), timeout=60, interval=0.3)
            need(healthy, f"a second Temporal dev server ({(Path(tmp) / 'server.log').read_text()[-500:]})")
            yield address
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _healthy(temporal_bin: str, address: str) -> bool:
    probe = [temporal_bin, "operator", "cluster", "health", "--address", address]
    done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    return done.returncode == 0 and b"SERVING" in done.stdout


def workflows_on(temporal_bin: str, address: str) -> list[object]:
    command = [temporal_bin, "workflow", "list", "--address", address, "--namespace", "default", "-o", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    text = done.stdout.strip()
    return json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines()]


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # no traceback
    assert lines[0].startswith("recovery: ")
    return lines[0]


def test_submit_without_search_attributes_says_how_to_fix_and_starts_nothing(
    embedded: Embedded, bare_server: str, temporal_bin: str
) -> None:
    script = embedded.job_script("bare")
    jobs = len(local_cluster.status().jobs)
    done = embedded.recovery("submit", str(script), cwd=script.parent, RECOVERY_TEMPORAL_ADDRESS=bare_server)
    line = one_line(done)
    assert "namespace 'default' lacks recovery's search attributes" in line
    assert any(name in line for name in search_attributes.ALL)
    assert "`recovery dev-server start`" in line
    assert "`temporal operator search-attribute create`" in line and "docs/operations.md" in line
    assert workflows_on(temporal_bin, bare_server) == []
    assert len(local_cluster.status().jobs) == jobs


def test_slurm_submit_checks_before_sbatch(embedded: Embedded, bare_server: str, temporal_bin: str) -> None:
    """On Slurm the job is submitted before the run starts: the namespace is checked first.
    With no sbatch on PATH, any other order would fail on sbatch instead."""
    script = embedded.job_script("bare-slurm")
    done = embedded.recovery(
        "submit", "--scheduler", "slurm", str(script),
        cwd=script.parent, RECOVERY_TEMPORAL_ADDRESS=bare_server, PATH="/nonexistent",
    )  # fmt: skip
    line = one_line(done)
    assert "sbatch" not in line
    for name in search_attributes.ALL:  # the check names every missing attribute
        assert name in line
    assert "`recovery dev-server start`" in line
    assert workflows_on(temporal_bin, bare_server) == []


@pytest.mark.parametrize("scheduler", ["local", "slurm"])
def test_submit_to_a_missing_namespace_says_so(embedded: Embedded, bare_server: str, scheduler: str) -> None:
    script = embedded.job_script("no-namespace")
    done = embedded.recovery(
        "submit", "--scheduler", scheduler, str(script),
        cwd=script.parent, RECOVERY_TEMPORAL_ADDRESS=bare_server, RECOVERY_NAMESPACE="nowhere", PATH="/nonexistent",
    )  # fmt: skip
    line = one_line(done)
    assert "namespace 'nowhere' does not exist" in line
    assert "temporal operator namespace create --namespace nowhere" in line
