"""The local cluster's durable state: the job table and node states, in `state.json`.

The file is rewritten whole after every change (temp file, fsync, `os.replace`), so a reader
never sees half a table and a restarted daemon knows every job it had, including the process
groups of the ones that were running when it died.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from recovery.activities.clock import utcnow
from recovery.workflows.models import JobObservation, JobState, NodeInfo, TaskResult

STATE_VERSION = 1


def script_path(root: Path, job_id: int) -> Path:
    """The batch script as submitted, copied like sbatch does."""
    return root / "jobs" / str(job_id) / "script"


def output_path(root: Path, job_id: int) -> Path:
    return root / "logs" / f"slurm-{job_id}.out"


class NodeRecord(BaseModel):
    name: str
    down: bool = False
    drain: bool = False  # as Slurm's DRAIN: its job goes on, no new one starts here
    reason: str = ""
    job_id: int | None = None

    def info(self) -> NodeInfo:
        if self.down:
            state = "down"
        elif self.drain:
            state = "draining" if self.job_id is not None else "drained"
        elif self.job_id is not None:
            state = "allocated"
        else:
            state = "idle"
        return NodeInfo(name=self.name, state=state, reason=self.reason)


class JobRecord(BaseModel):
    """One job: what was submitted, plus the current attempt (cleared on requeue)."""

    id: int
    token: str
    name: str
    args: list[str] = Field(default_factory=list)
    nodes_wanted: int
    workdir: str
    env: dict[str, str] = Field(default_factory=dict)
    excluded_nodes: list[str] = Field(default_factory=list)
    submitted_at: datetime
    output: str = ""  # the output file a resubmission keeps; empty: logs/slurm-ID.out
    restart_count: int = 0
    state: JobState = JobState.PENDING
    held: bool = False
    reason: str = ""
    nodes: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    tasks: list[TaskResult] = Field(default_factory=list)
    failed_nodes: list[str] = Field(default_factory=list)
    # node -> process group of its copy; what a restarted daemon must clean up.
    pgids: dict[str, int] = Field(default_factory=dict)

    def output_file(self, root: Path) -> Path:
        """Where the job writes: the output a resubmission kept, else one file per job."""
        return Path(self.output) if self.output else output_path(root, self.id)

    def observation(self, output_path: Path) -> JobObservation:
        return JobObservation(
            job_id=str(self.id),
            name=self.name,
            state=self.state,
            held=self.held,
            reason=self.reason,
            nodes=list(self.nodes),
            excluded_nodes=list(self.excluded_nodes),
            exit_code=self.exit_code,
            signal=self.signal,
            restart_count=self.restart_count,
            submitted_at=self.submitted_at,
            started_at=self.started_at,
            ended_at=self.ended_at,
            output_path=str(output_path),
            error_path=str(output_path),
            tasks=list(self.tasks),
            failed_nodes=list(self.failed_nodes),
            token=self.token,
        )

    def start_new_attempt(self) -> None:
        """Requeue: the observation describes the attempt to come, held until released."""
        self.restart_count += 1
        self.state = JobState.PENDING
        self.held = True
        self.reason = "JobHeldUser"
        self.submitted_at = utcnow()
        self.nodes = []
        self.exit_code = None
        self.signal = None
        self.started_at = None
        self.ended_at = None
        self.tasks = []
        self.failed_nodes = []
        self.pgids = {}


class ClusterState(BaseModel):
    version: int = STATE_VERSION
    # Marks every job copy's environment, so a restarted daemon only kills its own orphans.
    cluster_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    next_job_id: int = 1
    nodes: list[NodeRecord] = Field(default_factory=list)
    jobs: list[JobRecord] = Field(default_factory=list)


class StateError(Exception):
    """state.json exists but cannot be read; the daemon refuses to start rather than forget jobs."""


def load(path: Path, node_count: int) -> ClusterState:
    """The saved state (or a fresh one), with exactly nodes node1..nodeN, down marks kept."""
    if path.exists():
        try:
            state = ClusterState.model_validate_json(path.read_bytes())
        except ValueError as err:
            raise StateError(f"cannot read {path}: {err}") from err
    else:
        state = ClusterState()
    saved = {node.name: node for node in state.nodes}
    state.nodes = []
    for number in range(1, node_count + 1):
        name = f"node{number}"
        old = saved.get(name)
        kept = old.model_dump(include={"down", "drain", "reason"}) if old else {}
        state.nodes.append(NodeRecord(name=name, **kept))
    return state


def save(path: Path, state: ClusterState) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        handle.write(state.model_dump_json(indent=1).encode())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
