"""`recovery dev-server start|stop|status` on the real dev server, in a home and on ports of its
own (the session's server, which other tests use, is left alone)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.embedded.conftest import free_port


def test_start_status_stop_as_subcommands(temporal_bin: str) -> None:
    home = Path(tempfile.mkdtemp(prefix="rh-ds-", dir="/tmp"))
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "RECOVERY_HOME": str(home),
        "RECOVERY_TEMPORAL_ADDRESS": address,
        "RECOVERY_TEMPORAL_UI_PORT": str(free_port()),
    }

    def recovery(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "recovery.worker", "dev-server", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=90, check=False)

    try:
        down = recovery("status", "--json")
        assert (down.returncode, json.loads(down.stdout)["serving"]) == (3, False)
        started = recovery("start", "--json")
        assert started.returncode == 0, started.stderr
        assert json.loads(started.stdout)["address"] == address
        assert json.loads(started.stdout)["started"] is True
        again = recovery("start")
        assert (again.returncode, "already running" in again.stdout) == (0, True)
        up = recovery("status")
        assert (up.returncode, up.stdout.strip()) == (0, f"dev server at {address}: serving")
    finally:
        stopped = recovery("stop", "--json")
    assert (stopped.returncode, json.loads(stopped.stdout)) == (0, {"stopped": True})
    assert recovery("status").returncode == 3
    assert recovery("stop").stdout.strip() == "no dev server of ours was running"
