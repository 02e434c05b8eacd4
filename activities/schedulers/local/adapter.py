"""`LocalScheduler`: the `Scheduler` interface over the embedded local cluster daemon's socket.

One request per connection: the daemon may take a few seconds on a mutating call (it waits
until a stopped job's processes are gone), and a fresh connection per call keeps a slow call
from holding up the others. Errors are translated in `_reply`/`_unavailable` only.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from recovery.activities.schedulers.base import (
    JobChanges,
    JobNotFound,
    NodeChanges,
    SchedulerError,
    SchedulerUnavailable,
)
from recovery.activities.schedulers.local import protocol as wire
from recovery.activities.schedulers.sbatch_options import SbatchOptionError, read_options
from recovery.activities.schedulers.slurm_parse import expand_hostlist
from recovery.workflows.models import JobObservation, NodeInfo, SubmitRequest

_OBSERVATIONS: TypeAdapter[dict[str, JobObservation]] = TypeAdapter(dict[str, JobObservation])
_NODES: TypeAdapter[list[NodeInfo]] = TypeAdapter(list[NodeInfo])
_GROUPS: TypeAdapter[dict[str, int]] = TypeAdapter(dict[str, int])

# The sbatch options the local scheduler honours; `submit` refuses the others up front.
HONOURED_SBATCH_OPTIONS = ("exclude",)


def local_request(request: SubmitRequest) -> SubmitRequest:
    """sbatch's `--exclude` (a node list: `node3`, `node[3-4],node7`) as the job's exclusions."""
    if not request.sbatch_options:
        return request
    try:
        options = read_options(request.sbatch_options)
    except SbatchOptionError as e:
        raise SchedulerError(str(e)) from None
    excluded = list(request.excluded_nodes)
    for option in options:
        if option.name not in HONOURED_SBATCH_OPTIONS:
            raise SchedulerError(f"the local scheduler cannot honour sbatch's --{option.name}")
        excluded += [node for node in expand_hostlist(option.value or "") if node not in excluded]
    return request.model_copy(update={"excluded_nodes": excluded, "sbatch_options": []})


class LocalScheduler:
    name = "local"

    def __init__(self, socket_path: Path | None = None, timeout: float = 60.0) -> None:
        self.socket_path = socket_path or wire.socket_path()
        # Generous: a mutating call waits up to the kill grace for a job's processes to go.
        self.timeout = timeout

    async def submit(self, request: SubmitRequest) -> JobObservation:
        result = await self._call(wire.Submit(request=local_request(request)))
        return JobObservation.model_validate(result)

    async def find(self, token: str) -> JobObservation | None:
        result = await self._call(wire.Find(token=token))
        return None if result is None else JobObservation.model_validate(result)

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        if not job_ids:
            return {}
        return _OBSERVATIONS.validate_python(await self._call(wire.Observe(job_ids=job_ids)))

    async def changes(self, since: str | None) -> JobChanges:
        return JobChanges.model_validate(await self._call(wire.Changes(since=since)))

    async def requeue_hold(self, job_id: str) -> None:
        await self._call(wire.RequeueHold(job_id=job_id))

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        await self._call(wire.SetExcludedNodes(job_id=job_id, nodes=nodes))

    async def release(self, job_id: str) -> None:
        await self._call(wire.Release(job_id=job_id))

    async def cancel(self, job_id: str) -> None:
        await self._call(wire.Cancel(job_id=job_id))

    async def nodes(self) -> list[NodeInfo]:
        return _NODES.validate_python(await self._call(wire.Nodes()))

    async def node_changes(self, since: str | None) -> NodeChanges:
        return NodeChanges.model_validate(await self._call(wire.NodeChanges(since=since)))

    async def process_groups(self, job_id: str) -> dict[str, int]:
        """The running job's process group per node: every process of a node's copy is in it."""
        return _GROUPS.validate_python(await self._call(wire.ProcessGroups(job_id=job_id)))

    async def drain(self, node: str, reason: str) -> None:
        await self._call(wire.NodeDrain(name=node, reason=reason))

    def opted_in(self, observation: JobObservation) -> bool:
        return True  # every job on the embedded cluster was submitted by a run

    async def _call(self, request: BaseModel) -> Any:
        _check_path(self.socket_path)
        try:
            async with asyncio.timeout(self.timeout):
                line = await self._exchange(request.model_dump_json().encode() + b"\n")
        except OSError as err:  # TimeoutError is an OSError too
            raise _unavailable(self.socket_path, err) from err
        return _reply(line)

    async def _exchange(self, data: bytes) -> bytes:
        reader, writer = await asyncio.open_unix_connection(str(self.socket_path), limit=wire.LINE_LIMIT)
        try:
            writer.write(data)
            await writer.drain()
            return await reader.readline()
        finally:
            writer.close()


def call_sync(request: BaseModel, socket_path: Path | None = None, timeout: float = 30.0) -> Any:
    """The same call for synchronous callers (the CLI and the daemon's lifecycle helpers)."""
    path = socket_path or wire.socket_path()
    _check_path(path)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(request.model_dump_json().encode() + b"\n")
            line = conn.makefile("rb").readline(wire.LINE_LIMIT)
    except OSError as err:
        raise _unavailable(path, err) from err
    return _reply(line)


def _check_path(path: Path) -> None:
    if len(str(path).encode()) > wire.MAX_SOCKET_PATH:
        raise SchedulerError(
            f"the local cluster socket path {path} is too long for a unix socket; use a shorter RECOVERY_HOME"
        )


def _unavailable(path: Path, err: OSError) -> SchedulerUnavailable:
    detail = err.strerror or str(err) or type(err).__name__
    return SchedulerUnavailable(
        f"the local cluster is not running ({path}: {detail}); start it with `recovery cluster start`"
    )


def _reply(line: bytes) -> Any:
    if not line.endswith(b"\n"):
        raise SchedulerUnavailable("the local cluster closed the connection without an answer")
    try:
        reply = wire.REPLY.validate_json(line)
    except ValidationError as err:
        raise SchedulerError(f"the local cluster answered something unreadable: {err}") from err
    if isinstance(reply, wire.OkReply):
        return reply.result
    if reply.kind == "not_found":
        raise JobNotFound(reply.error)
    raise SchedulerError(reply.error)
