"""The embedded local scheduler ("a tiny Slurm on one machine"): start, stop and look at it.

The daemon outlives the command that starts it (and workers): it runs detached in its own
session, with its state under `$RECOVERY_HOME/cluster/`:

    daemon.sock   the unix socket clients talk to (`adapter`)
    daemon.pid    the daemon's pid, written once the socket answers
    daemon.log    its log
    state.db      the job table and node states (SQLite, WAL): a row per job and per node
    jobs/<id>/script, logs/slurm-<id>.out

A process is only ever signalled by its exact pid, after checking its command line: never by
name.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from recovery import settings
from recovery.activities.schedulers.base import SchedulerError, SchedulerUnavailable
from recovery.activities.schedulers.local import procs as local_procs
from recovery.activities.schedulers.local import protocol as wire
from recovery.activities.schedulers.local import state as local_state
from recovery.activities.schedulers.local.adapter import call_sync

DEFAULT_NODES = 4
_MARK = "recovery.activities.schedulers.local.launcher"
# What a daemon started before the package moved runs as: still ours to recognise and stop.
_OLD_MARKS = ("worker.local_cluster", "recovery.worker.local_cluster")

# Daemons this process started: polled so they do not linger as zombies once stopped.
_children: list[subprocess.Popen[bytes]] = []


class ClusterError(Exception):
    """Starting or stopping the local cluster failed; the message says why and what to look at."""


class DaemonInfo(BaseModel):
    pid: int
    nodes: int
    started: bool
    note: str = ""


def cluster_dir() -> Path:
    return wire.cluster_dir()


def log_path() -> Path:
    return cluster_dir() / "daemon.log"


# --- lifecycle ---------------------------------------------------------------------------


def start(nodes: int = DEFAULT_NODES, timeout: float = 10.0) -> DaemonInfo:
    """Start the daemon unless one already answers; a running one is never restarted."""
    if nodes < 1:
        raise ClusterError(f"a cluster needs at least one node, not {nodes}")
    if len(str(wire.socket_path()).encode()) > wire.MAX_SOCKET_PATH:
        raise ClusterError(
            f"RECOVERY_HOME {settings.home()} is too long a path for the local cluster's"
            " unix socket; choose a shorter one"
        )
    running = _answering()
    stuck = daemon_pid() if running is None else None
    if stuck is not None:
        # A daemon that is still starting (or recovering its jobs) gets the same patience.
        running = _wait_answer(None, timeout)
        if running is None:
            raise ClusterError(f"the local cluster daemon (pid {stuck}) does not answer; see {log_path()}")
    if running is not None:
        return _already(running, nodes)
    proc = _spawn(nodes)
    answer = _wait_answer(proc, timeout)
    if answer is None:
        raise ClusterError(f"the local cluster did not answer within {timeout:g}s; see {log_path()}")
    if answer.pid != proc.pid:
        return _already(answer, nodes)  # another start won the race; ours has exited
    return DaemonInfo(pid=answer.pid, nodes=answer.nodes, started=True)


def stop(timeout: float = 15.0) -> bool:
    """Stop the daemon and every job it runs. False if it was not running."""
    pid = daemon_pid()
    if pid is None:
        (cluster_dir() / "daemon.pid").unlink(missing_ok=True)
        return False
    # If it does not answer, the signals below still stop it.
    with contextlib.suppress(SchedulerError):
        call_sync(wire.Shutdown(), timeout=timeout)
    if _wait_exit(pid, timeout):
        return True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if _is_daemon(pid):
            os.kill(pid, sig)
        if _wait_exit(pid, 3.0):
            break
    _kill_orphans()
    if _is_daemon(pid):
        raise ClusterError(f"the local cluster daemon (pid {pid}) did not stop")
    return True


def status() -> wire.ClusterStatus:
    """Fresh from the daemon; if it is not running, the last saved state with running=False."""
    try:
        return wire.ClusterStatus.model_validate(call_sync(wire.Status(), timeout=10.0))
    except SchedulerUnavailable:
        pass
    root = cluster_dir()
    try:
        saved = local_state.read(root)
    except local_state.StateError as err:
        raise ClusterError(str(err)) from err
    if saved is None:
        return wire.ClusterStatus(running=False)
    return wire.ClusterStatus(
        running=False,
        nodes=[node.info() for node in saved.nodes],
        jobs=[job.observation(job.output_file(root)) for job in saved.jobs],
    )


def is_running() -> bool:
    return _answering() is not None


def node_down(name: str, reason: str = "") -> None:
    call_sync(wire.NodeDown(name=name, reason=reason))


def node_drain(name: str, reason: str = "") -> None:
    call_sync(wire.NodeDrain(name=name, reason=reason))


def node_up(name: str) -> None:
    call_sync(wire.NodeUp(name=name))


# --- helpers -----------------------------------------------------------------------------


def daemon_pid() -> int | None:
    """The pid in daemon.pid, if that process is alive and is our daemon."""
    try:
        pid = int((cluster_dir() / "daemon.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _is_daemon(pid) else None


def _is_daemon(pid: int) -> bool:
    _reap_children()
    if not local_procs.process_alive(pid):
        return False
    args = local_procs.cmdline(pid)
    return "serve" in args and any(mark in args for mark in (_MARK, *_OLD_MARKS))


def _answering() -> wire.PingResult | None:
    try:
        return wire.PingResult.model_validate(call_sync(wire.Ping(), timeout=2.0))
    except SchedulerUnavailable:
        return None


def _already(running: wire.PingResult, nodes: int) -> DaemonInfo:
    note = ""
    if running.nodes != nodes:
        note = (
            f"the local cluster already runs with {running.nodes} nodes, not {nodes};"
            " stop it first to change the node count"
        )
    return DaemonInfo(pid=running.pid, nodes=running.nodes, started=False, note=note)


def _spawn(nodes: int) -> subprocess.Popen[bytes]:
    root = cluster_dir()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ, RECOVERY_HOME=str(settings.home()))
    # The daemon imports this package; make that work when it is not installed.
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with log_path().open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", _MARK, "serve", "--nodes", str(nodes)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            cwd=root,
            start_new_session=True,
        )
    _children.append(proc)
    return proc


def _wait_answer(proc: subprocess.Popen[bytes] | None, timeout: float) -> wire.PingResult | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = _answering()
        if answer is not None:
            return answer
        if proc is not None and proc.poll() is not None:
            # It may have lost the race for the lock to a daemon that is just coming up.
            answer = _answering()
            if answer is None:
                raise _failure(proc)
            return answer
        time.sleep(0.05)
    return None


def _failure(proc: subprocess.Popen[bytes]) -> ClusterError:
    lines = log_path().read_text(errors="replace").strip().splitlines()
    last = lines[-1] if lines else "no output"
    return ClusterError(f"the local cluster daemon exited with status {proc.returncode}: {last} (see {log_path()})")


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_daemon(pid):
            return True
        time.sleep(0.05)
    return not _is_daemon(pid)


def _reap_children() -> None:
    for proc in list(_children):
        if proc.poll() is not None:
            _children.remove(proc)


def _kill_orphans() -> None:
    """After a forced kill, the daemon could not end its jobs; end them from its saved state."""
    try:
        state = local_state.read(cluster_dir())
    except local_state.StateError:
        return
    if state is None:
        return
    for job in state.jobs:
        for pgid in job.pgids.values():
            if local_procs.group_is_ours(pgid, state.cluster_id, job.id):
                local_procs.signal_group(pgid, signal.SIGKILL)


# --- the daemon's entry point --------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {_MARK}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the daemon in the foreground")
    serve.add_argument("--nodes", type=int, default=DEFAULT_NODES)
    args = parser.parse_args(argv)
    from recovery.activities.schedulers.local import daemon as local_daemon

    return local_daemon.run(cluster_dir(), args.nodes)


if __name__ == "__main__":
    sys.exit(main())
