"""The CLI as users and scripts meet it: bad input changes nothing, and exit statuses are true."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from recovery.activities.schedulers.local import launcher as local_cluster
from tests.embedded.conftest import Embedded, wait_for


def run_ids(embedded: Embedded) -> set[str]:
    done = embedded.recovery("list", "--json")
    assert done.returncode == 0, done.stderr
    return {row["id"] for row in json.loads(done.stdout)}


def job_count() -> int:
    return len(local_cluster.status().jobs)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("recovery: ")
    assert done.stdout == ""
    return lines[0]


@pytest.fixture
def script(embedded: Embedded) -> Path:
    return embedded.job_script("cli")


BAD_POLICIES = {
    "unknown key": (
        "max_restarts: 2\nbackoff:\n  first: 1s\n  surprise: 3\n",
        ":4: unknown key 'backoff.surprise'",
    ),
    "bad duration": ("backoff: {initial: soon}\n", ":1: key 'backoff.initial'"),
    "bad yaml": ("max_restarts: [1,\n", "not valid YAML"),
    "wrong type": ("max_restarts: many\n", ":1: key 'max_restarts'"),
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_malformed_policy_starts_nothing(embedded: Embedded, script: Path, tmp_path: Path, case: str) -> None:
    text, expected = BAD_POLICIES[case]
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    before, jobs = run_ids(embedded), job_count()
    line = one_line_error(embedded.recovery("submit", "--policy", str(policy), str(script)))
    assert str(policy) in line and expected in line
    assert run_ids(embedded) == before and job_count() == jobs


def test_unknown_policy_name(embedded: Embedded, script: Path) -> None:
    before = run_ids(embedded)
    line = one_line_error(embedded.recovery("submit", "--policy", "nightly", str(script)))
    assert "unknown policy 'nightly'" in line
    assert run_ids(embedded) == before


def test_missing_script(embedded: Embedded) -> None:
    before = run_ids(embedded)
    line = one_line_error(embedded.recovery("submit", "/nonexistent/job.sbatch"))
    assert "/nonexistent/job.sbatch" in line and "No such file" in line
    assert run_ids(embedded) == before


def test_binary_script_is_refused(embedded: Embedded, tmp_path: Path) -> None:
    junk = tmp_path / "junk.sbatch"
    junk.write_bytes(b"#!/bin/bash\n\xff\xfe\x00junk")
    line = one_line_error(embedded.recovery("submit", str(junk)))
    assert "not UTF-8" in line or "NUL" in line


@pytest.mark.parametrize("command", ["status", "pause", "resume", "cancel"])
def test_unknown_run(embedded: Embedded, command: str) -> None:
    line = one_line_error(embedded.recovery(command, "no-such-run-123"))
    assert "no run 'no-such-run-123'" in line


def test_temporal_unreachable_is_one_line(embedded: Embedded) -> None:
    line = one_line_error(embedded.recovery("list", RECOVERY_TEMPORAL_ADDRESS="127.0.0.1:1"))
    assert "cannot reach Temporal at 127.0.0.1:1" in line


def test_hostile_run_name_is_harmless(embedded: Embedded, script: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    embedded.start_worker()
    name = f"a'b;$(touch {marker})\"c\nd"
    done = embedded.recovery("submit", "--json", "--run", name, str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run"]
    shown = embedded.recovery("status", run_id, "--json")
    assert json.loads(shown.stdout)["run"]["name"] == name
    assert not marker.exists()
    embedded.stop_workers()


@pytest.mark.timeout(600)
def test_exit_statuses_are_trustworthy(embedded: Embedded, script: Path) -> None:
    """temporalio's runtime can abort at interpreter exit (shared notes); 20 runs of each."""
    embedded.start_worker()
    run_id = None
    for _ in range(20):
        done = embedded.recovery("submit", "--json", str(script), cwd=script.parent)
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout)["run"]
    assert run_id is not None
    for _ in range(20):
        assert embedded.recovery("status", run_id, "--json").returncode == 0
        assert embedded.recovery("list", "--json").returncode == 0
        assert embedded.recovery("status", "no-such-run").returncode == 1
    embedded.stop_workers()


@pytest.mark.timeout(600)
def test_worker_exits_zero_on_sigterm(embedded: Embedded) -> None:
    for _ in range(20):
        worker = embedded.start_worker()
        log = embedded.home / f"worker-{len(embedded.workers) - 1}.log"
        assert wait_for(lambda log=log: b"worker started" in log.read_bytes(), timeout=30)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0, log.read_text()
        embedded.workers.remove(worker)
