"""Integration fixtures: a real four-node Slurm cluster on this machine.

The cluster is `deploy/slurm-dev-cluster` (private munged, MariaDB, slurmdbd,
slurmctld, four slurmd, slurmrestd; state under ``$RECOVERY_HOME/slurm`` or
``$SLURM_DEV_DIR``). The session fixture starts it unless it already runs and
points ``SLURM_CONF`` at it. It is left running when the session ends, so that
later test modules and sessions reuse it; ``deploy/slurm-dev-cluster stop``
stops it.

If it cannot start, its tests are skipped with the reason, except in CI
(``CI=true``), where they fail: a missing cluster must never pass silently.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from tests.conftest import need
from tests.integration.recovery_rig import Rig, TemporalDev, new_rig

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "slurm-dev-cluster"
IN_CI = os.environ.get("CI", "").lower() == "true"


def _unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(
            f"the Slurm dev cluster is unavailable, and CI must run this test: {reason}",
            pytrace=False,
        )
    pytest.skip(f"the Slurm dev cluster is unavailable: {reason}")


@dataclass(frozen=True)
class SlurmDevCluster:
    """How to reach the running dev cluster."""

    conf: str
    state_dir: Path
    restd_socket: str | None
    started_by_session: bool
    nodes: tuple[str, ...] = ("node1", "node2", "node3", "node4")


def _script(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False)


def _parse_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = value
    return env


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmDevCluster]:
    if not SCRIPT.is_file():
        _unavailable(f"{SCRIPT} is missing")
    if os.geteuid() != 0:
        _unavailable("deploy/slurm-dev-cluster start needs root")
    was_running = _script("status", timeout=60).returncode == 0
    if not was_running:
        # the first start on a bare machine installs packages: allow for apt
        try:
            started = _script("start", timeout=900)
        except subprocess.TimeoutExpired:
            _unavailable("deploy/slurm-dev-cluster start timed out")
        if started.returncode != 0:
            tail = " | ".join(started.stderr.strip().splitlines()[-5:])
            _unavailable(f"deploy/slurm-dev-cluster start failed: {tail}")
    env = _parse_env(_script("env", timeout=30).stdout)
    if "SLURM_CONF" not in env:
        _unavailable("deploy/slurm-dev-cluster env printed no SLURM_CONF")
    os.environ.update(env)
    yield SlurmDevCluster(
        conf=env["SLURM_CONF"],
        state_dir=Path(env.get("SLURM_DEV_DIR", Path(env["SLURM_CONF"]).parents[1])),
        restd_socket=env.get("SLURM_RESTD_SOCKET"),
        started_by_session=not was_running,
    )
    # Left running on purpose: other modules and sessions use it.
    # `deploy/slurm-dev-cluster stop` stops it.


@pytest.fixture(scope="module")
def temporal(slurm_cluster: SlurmDevCluster, temporal_bin: str) -> Iterator[TemporalDev]:
    """One private dev server for the module; each test gets its own task queue on it."""
    try:
        dev = TemporalDev.start()
    except Exception as e:  # noqa: BLE001 - a dev server that cannot start is a missing service
        need(False, f"the Temporal dev server ({e})")
    try:
        yield dev
    finally:
        dev.stop()


@pytest.fixture
async def rig(temporal: TemporalDev, slurm_cluster: SlurmDevCluster) -> AsyncIterator[Rig]:
    r = await new_rig(temporal, slurm_cluster.state_dir)
    try:
        yield r
    finally:
        await r.close()
