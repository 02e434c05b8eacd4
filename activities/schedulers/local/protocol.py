"""The wire protocol of the embedded local cluster daemon.

One request per line, one reply per line, both JSON objects. Requests are told apart by `op`;
replies are `{"ok": true, "result": ...}` or `{"ok": false, "error": "...", "kind": ...}`.
The daemon (`daemon`, started by `launcher`) and its clients (`adapter`) share these
models, so a request the client can build is one the daemon can read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from recovery import settings
from recovery.workflows.models import JobObservation, NodeInfo, SubmitRequest

# Replies can carry every job the daemon knows; asyncio's default 64 KiB line limit is too small.
LINE_LIMIT = 64 * 1024 * 1024

# sun_path is 108 bytes on Linux, including the terminating NUL.
MAX_SOCKET_PATH = 107

ErrorKind = Literal["not_found", "refused", "invalid"]


def cluster_dir() -> Path:
    return settings.home() / "cluster"


def socket_path() -> Path:
    return cluster_dir() / "daemon.sock"


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Ping(_Op):
    op: Literal["ping"] = "ping"


class Submit(_Op):
    op: Literal["submit"] = "submit"
    request: SubmitRequest


class Find(_Op):
    op: Literal["find"] = "find"
    token: str


class Observe(_Op):
    op: Literal["observe"] = "observe"
    job_ids: list[str]


class Changes(_Op):
    op: Literal["changes"] = "changes"
    since: str | None = None


class RequeueHold(_Op):
    op: Literal["requeue_hold"] = "requeue_hold"
    job_id: str


class SetExcludedNodes(_Op):
    op: Literal["set_excluded_nodes"] = "set_excluded_nodes"
    job_id: str
    nodes: list[str]


class Release(_Op):
    op: Literal["release"] = "release"
    job_id: str


class Cancel(_Op):
    op: Literal["cancel"] = "cancel"
    job_id: str


class Nodes(_Op):
    op: Literal["nodes"] = "nodes"


class NodeChanges(_Op):
    op: Literal["node_changes"] = "node_changes"
    since: str | None = None


class ProcessGroups(_Op):
    """A running job's process group per node (for collecting a hung job's stacks)."""

    op: Literal["process_groups"] = "process_groups"
    job_id: str


class NodeDown(_Op):
    op: Literal["node_down"] = "node_down"
    name: str
    reason: str = ""


class NodeDrain(_Op):
    op: Literal["node_drain"] = "node_drain"
    name: str
    reason: str = ""


class NodeUp(_Op):
    op: Literal["node_up"] = "node_up"
    name: str


class Status(_Op):
    op: Literal["status"] = "status"


class Shutdown(_Op):
    op: Literal["shutdown"] = "shutdown"


Request = Annotated[
    Ping
    | Submit
    | Find
    | Observe
    | Changes
    | RequeueHold
    | SetExcludedNodes
    | Release
    | Cancel
    | Nodes
    | NodeChanges
    | ProcessGroups
    | NodeDown
    | NodeDrain
    | NodeUp
    | Status
    | Shutdown,
    Field(discriminator="op"),
]
REQUEST: TypeAdapter[Request] = TypeAdapter(Request)


class OkReply(_Op):
    ok: Literal[True] = True
    result: Any = None


class ErrorReply(_Op):
    ok: Literal[False] = False
    error: str
    kind: ErrorKind


Reply = Annotated[OkReply | ErrorReply, Field(discriminator="ok")]
REPLY: TypeAdapter[Reply] = TypeAdapter(Reply)


class PingResult(BaseModel):
    pid: int
    nodes: int


class ClusterStatus(BaseModel):
    """`cluster status --json`: whether the daemon answers, its nodes and every job it knows."""

    running: bool
    pid: int | None = None
    nodes: list[NodeInfo] = Field(default_factory=list)
    jobs: list[JobObservation] = Field(default_factory=list)
