"""The local cluster's durable state: the job table and node states, in `state.db`.

SQLite (stdlib `sqlite3`) in WAL mode, one row per job and per node: a change writes only the
rows it touched, in one transaction (fsynced, `synchronous=FULL`), so the cost of a change does
not grow with the job table (the whole-file `state.json` of earlier versions did: 1,000 jobs
took minutes to start). A daemon killed mid-change restarts with the state of its last
committed change, including the process groups of the jobs that were running when it died.
A `state.json` from an earlier version is migrated once, on the daemon's first start.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from recovery.activities.clock import utcnow
from recovery.workflows.models import JobObservation, JobState, NodeInfo, TaskResult

# 1: state.json, rewritten whole; 2: state.db, a row per job and per node.
STATE_VERSION = 2
DB_NAME = "state.db"
LEGACY_NAME = "state.json"


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
    """The saved state exists but cannot be read; the daemon refuses to start rather than forget jobs."""


def db_path(root: Path) -> Path:
    return root / DB_NAME


def with_nodes(state: ClusterState, node_count: int) -> ClusterState:
    """The state with exactly nodes node1..nodeN, their down and drain marks kept."""
    saved = {node.name: node for node in state.nodes}
    state.nodes = []
    for number in range(1, node_count + 1):
        name = f"node{number}"
        old = saved.get(name)
        kept = old.model_dump(include={"down", "drain", "reason"}) if old else {}
        state.nodes.append(NodeRecord(name=name, **kept))
    return state


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
)


def _connect(path: Path) -> sqlite3.Connection:
    # Autocommit mode: every write below opens its own transaction explicitly.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    # FULL: every commit is fsynced, as every state.json rewrite was.
    conn.execute("PRAGMA synchronous=FULL")
    return conn


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Store:
    """The daemon's open `state.db`. Only the daemon writes it (its lock file makes it the only
    daemon); `read` gives a stopped cluster's state to the launcher."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def open(cls, root: Path) -> Store:
        """Open (or create) `state.db`; a `state.json` of an earlier version is migrated first."""
        path = db_path(root)
        legacy = root / LEGACY_NAME
        try:
            if not path.exists() and legacy.exists():
                _migrate(legacy, path)
            conn = _connect(path)
            for statement in _SCHEMA:
                conn.execute(statement)
            _check_version(conn, path)
        except sqlite3.Error as err:
            raise StateError(f"cannot open {path}: {err}") from err
        return cls(conn)

    def load(self, node_count: int) -> ClusterState:
        """The saved state (or a fresh one), with exactly nodes node1..nodeN, down marks kept."""
        try:
            state = _read(self.conn)
        except (sqlite3.Error, ValueError) as err:
            raise StateError(f"cannot read the local cluster's state: {_describe(err)}") from err
        state = with_nodes(state or ClusterState(), node_count)
        self.write(state.cluster_id, state.next_job_id, nodes=state.nodes, all_nodes=True)
        return state

    def write(
        self,
        cluster_id: str,
        next_job_id: int,
        *,
        jobs: Iterable[JobRecord] = (),
        deleted: Iterable[int] = (),
        nodes: Iterable[NodeRecord] = (),
        all_nodes: bool = False,
    ) -> None:
        """One change, in one transaction: the jobs and nodes it touched, the jobs it forgot.
        `all_nodes`: `nodes` is the whole node list (others are dropped)."""
        with _transaction(self.conn):
            _write(self.conn, cluster_id, next_job_id, jobs, deleted, nodes, all_nodes)

    def close(self) -> None:
        self.conn.close()


def _write(
    conn: sqlite3.Connection,
    cluster_id: str,
    next_job_id: int,
    jobs: Iterable[JobRecord],
    deleted: Iterable[int],
    nodes: Iterable[NodeRecord],
    all_nodes: bool,
) -> None:
    meta = {"version": str(STATE_VERSION), "cluster_id": cluster_id, "next_job_id": str(next_job_id)}
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
    if all_nodes:
        conn.execute("DELETE FROM nodes")
    # A node's job is not kept: a restarted daemon ends every job that was running.
    rows = [(node.name, node.model_dump_json(include={"name", "down", "drain", "reason"})) for node in nodes]
    conn.executemany("INSERT OR REPLACE INTO nodes VALUES (?, ?)", rows)
    conn.executemany("INSERT OR REPLACE INTO jobs VALUES (?, ?)", [(job.id, job.model_dump_json()) for job in jobs])
    conn.executemany("DELETE FROM jobs WHERE id = ?", [(job_id,) for job_id in deleted])


def _read(conn: sqlite3.Connection) -> ClusterState | None:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if not meta:
        return None
    nodes = [NodeRecord.model_validate_json(body) for (body,) in conn.execute("SELECT body FROM nodes ORDER BY rowid")]
    jobs = [JobRecord.model_validate_json(body) for (body,) in conn.execute("SELECT body FROM jobs ORDER BY id")]
    return ClusterState(cluster_id=meta["cluster_id"], next_job_id=int(meta["next_job_id"]), nodes=nodes, jobs=jobs)


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    if row is not None and int(row[0]) > STATE_VERSION:
        raise StateError(
            f"{path} was written by a newer recovery (state version {row[0]}, this one reads"
            f" up to {STATE_VERSION}); upgrade recovery or use another RECOVERY_HOME"
        )


def _migrate(legacy: Path, path: Path) -> None:
    """state.json (version 1) -> state.db, all or nothing: built aside, then renamed into place.
    The old file is kept beside it as state.json.migrated."""
    try:
        state = ClusterState.model_validate_json(legacy.read_bytes())
    except (OSError, ValueError) as err:
        raise StateError(f"cannot read {legacy} to migrate it: {_describe(err)}") from err
    tmp = path.with_name(path.name + ".tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    with closing(_connect(tmp)) as conn:
        for statement in _SCHEMA:
            conn.execute(statement)
        with _transaction(conn):
            _write(conn, state.cluster_id, state.next_job_id, state.jobs, (), state.nodes, True)
    os.replace(tmp, path)
    os.replace(legacy, legacy.with_name(legacy.name + ".migrated"))


def read(root: Path) -> ClusterState | None:
    """A stopped cluster's last saved state (state.db, else an unmigrated state.json), or None."""
    path, legacy = db_path(root), root / LEGACY_NAME
    try:
        if path.exists():
            with closing(_connect(path)) as conn:
                return _read(conn)
        if legacy.exists():
            return ClusterState.model_validate_json(legacy.read_bytes())
    except (OSError, sqlite3.Error, ValueError) as err:
        raise StateError(f"cannot read the local cluster's state in {root}: {_describe(err)}") from err
    return None


def _describe(err: Exception) -> str:
    """One line: pydantic's own message spans several."""
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(err)
