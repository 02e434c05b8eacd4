"""The local cluster daemon: a unix-socket server in front of the job table.

One JSON request per line, one JSON reply per line, then the connection closes. Started by
`launcher.start()` as `python -m recovery.activities.schedulers.local.launcher serve --nodes N`.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import structlog
from pydantic import ValidationError

from recovery.activities.schedulers.local import protocol as wire
from recovery.activities.schedulers.local.cluster import LocalCluster, OpError
from recovery.activities.schedulers.local.state import StateError

log = structlog.get_logger("local_cluster")


class Daemon:
    def __init__(self, cluster: LocalCluster, socket_path: Path) -> None:
        self.cluster = cluster
        self.socket_path = socket_path
        self.stop = asyncio.Event()

    async def serve(self, pid_path: Path) -> None:
        await self.cluster.recover()
        self.socket_path.unlink(missing_ok=True)
        server = await asyncio.start_unix_server(self._handle, path=str(self.socket_path), limit=wire.LINE_LIMIT)
        # Whoever can write to the socket can run programs as us.
        self.socket_path.chmod(0o600)
        _write_pid(pid_path)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop.set)
        log.info("serving", socket=str(self.socket_path), nodes=self.cluster.node_count)
        try:
            await self.stop.wait()
            await self.cluster.shutdown()
        finally:
            server.close()
            self.socket_path.unlink(missing_ok=True)
            if _read_pid(pid_path) == os.getpid():
                pid_path.unlink(missing_ok=True)
            log.info("stopped")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            reply, shutdown = await self._answer(line)
            writer.write(_encode(reply) + b"\n")
            await writer.drain()
        except (OSError, ValueError) as err:
            # A client that went away or sent an over-long line; nothing to answer.
            log.warning("connection_failed", error=str(err))
            shutdown = False
        finally:
            writer.close()
        if shutdown:
            self.stop.set()

    async def _answer(self, line: bytes) -> tuple[wire.OkReply | wire.ErrorReply | bytes, bool]:
        try:
            request = wire.REQUEST.validate_json(line)
        except ValidationError as err:
            return wire.ErrorReply(error=f"bad request: {_first_error(err)}", kind="invalid"), False
        try:
            result = await self._dispatch(request)
        except OpError as err:
            return wire.ErrorReply(error=str(err), kind=err.kind), False
        if isinstance(result, bytes):
            return result, False  # a result the cluster serialised itself
        return wire.OkReply(result=result), isinstance(request, wire.Shutdown)

    async def _dispatch(self, request: wire.Request) -> Any:
        cluster = self.cluster
        match request:
            case wire.Ping():
                return wire.PingResult(pid=os.getpid(), nodes=cluster.node_count)
            case wire.Submit(request=submit):
                return cluster.submit(submit)
            case wire.Find(token=token):
                return cluster.find(token)
            case wire.Observe(job_ids=job_ids):
                return cluster.observe(job_ids)
            case wire.Changes(since=since):
                return cluster.changes(since)
            case wire.RequeueHold(job_id=job_id):
                await cluster.requeue_hold(job_id)
            case wire.SetExcludedNodes(job_id=job_id, nodes=nodes):
                cluster.set_excluded_nodes(job_id, nodes)
            case wire.Release(job_id=job_id):
                cluster.release(job_id)
            case wire.Cancel(job_id=job_id):
                await cluster.cancel(job_id)
            case wire.Nodes():
                return cluster.node_infos()
            case wire.NodeChanges(since=since):
                return cluster.node_changes(since)
            case wire.ProcessGroups(job_id=job_id):
                return cluster.process_groups(job_id)
            case wire.NodeDown(name=name, reason=reason):
                await cluster.node_down(name, reason)
            case wire.NodeDrain(name=name, reason=reason):
                cluster.node_drain(name, reason)
            case wire.NodeUp(name=name):
                cluster.node_up(name)
            case wire.Status():
                return cluster.status()
            case wire.Shutdown():
                await cluster.shutdown()
        return None


def _encode(reply: wire.OkReply | wire.ErrorReply | bytes) -> bytes:
    """The reply line; a result already serialised (observations, status) goes in as it is."""
    if isinstance(reply, bytes):
        return b'{"ok":true,"result":' + reply + b"}"
    return reply.model_dump_json().encode()


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _write_pid(path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{os.getpid()}\n")
    os.replace(tmp, path)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _configure_logging(stream: TextIO) -> None:
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=True,
    )


def run(root: Path, nodes: int) -> int:
    """The daemon's main: one per cluster directory, enforced by a lock held for its lifetime."""
    _configure_logging(sys.stderr)
    socket_path = root / "daemon.sock"
    if len(str(socket_path).encode()) > wire.MAX_SOCKET_PATH:
        print(f"local cluster: socket path {socket_path} is too long", file=sys.stderr)
        return 1
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = (root / "daemon.lock").open("a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"local cluster: another daemon already runs for {root}", file=sys.stderr)
        return 1
    try:
        cluster = LocalCluster(root, nodes)
    except StateError as err:
        print(f"local cluster: {err}", file=sys.stderr)
        return 1
    _scale_for_many_jobs()
    asyncio.run(Daemon(cluster, socket_path).serve(root / "daemon.pid"))
    return 0


def _scale_for_many_jobs() -> None:
    """Ten thousand running copies: one pidfd per copy instead of Python 3.11's default of one
    waiting thread per child (threads count against the machine's pid limit, 32768 here, next
    to the copies themselves), and the open-files limit raised to what the system allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if sys.version_info < (3, 12) and hasattr(asyncio, "PidfdChildWatcher"):
        # From 3.12 the loop uses pidfds by itself where the kernel has them.
        asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
