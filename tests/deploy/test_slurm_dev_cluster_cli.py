"""deploy/slurm-dev-cluster's release switch, without touching a running cluster: each command
here reads only a private, empty state directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "slurm-dev-cluster"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLURM_DEV_DIR": str(tmp_path / "state"), "SLURM_DEV_PREFIX": "/opt/slurm-x"}
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=30, check=False)


def exports(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert done.returncode == 0, done.stderr
    return dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())


def test_env_puts_the_releases_commands_first_on_path(tmp_path: Path) -> None:
    new = exports(run(tmp_path, "env"))  # 25.11 is the default
    assert new["SLURM_DEV_RELEASE"] == "25.11" and new["SLURM_DEV_DIR"] == str(tmp_path / "state")
    assert new["PATH"].split(":")[:2] == ["/opt/slurm-x/bin", "/opt/slurm-x/sbin"]
    old = exports(run(tmp_path, "--release", "22.05", "env"))
    assert old["SLURM_DEV_RELEASE"] == "22.05" and "/opt/slurm-x/bin" not in old["PATH"].split(":")
    assert old["SLURM_CONF"] == new["SLURM_CONF"] == str(tmp_path / "state" / "etc" / "slurm.conf")


def test_a_state_directory_answers_for_the_release_it_holds(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "release").write_text("22.05\n")
    assert exports(run(tmp_path, "env"))["SLURM_DEV_RELEASE"] == "22.05"
    other = run(tmp_path, "--release", "25.11", "status")
    assert other.returncode == 1 and other.stdout == ""
    assert other.stderr.strip().splitlines() == [
        f"slurm-dev-cluster: error: {state} holds the 22.05 cluster, not 25.11 (start --release 25.11 switches)"
    ]


@pytest.mark.parametrize("args", [["--release", "24.11", "env"], ["--release"], ["--frobnicate", "env"]])
def test_bad_arguments_fail_without_acting(tmp_path: Path, args: list[str]) -> None:
    done = run(tmp_path, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert not (tmp_path / "state").exists()
