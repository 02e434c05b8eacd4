"""The local cluster's job table and the processes that run its jobs.

Everything here runs on the daemon's one event loop, so the table changes only between
awaits and needs no locks. Every change marks the jobs and nodes it touched (`_touch`,
`_touch_node`) and ends in `_save`, which writes just those rows in one transaction; the
scheduler keeps its queue of runnable jobs and its free nodes as it goes, so neither a change
nor a scheduling pass walks the whole job table (10,000 jobs are routine).

A running job has an `Execution`: its copies (one per node), the tasks that reap them, and the
outcome once something decided how the attempt ends. The job leaves RUNNING only when every
copy has been reaped (`_finish`), which is the one place the final state is written.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import json
import os
import secrets
import shutil
import signal
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog

from recovery.activities.clock import utcnow
from recovery.activities.schedulers.base import NodeChanges
from recovery.activities.schedulers.local import procs as local_procs
from recovery.activities.schedulers.local import state as local_state
from recovery.activities.schedulers.local.changelog import ChangeLog
from recovery.activities.schedulers.local.protocol import ClusterStatus
from recovery.activities.schedulers.local.state import JobRecord, NodeRecord
from recovery.workflows.models import JobObservation, JobState, NodeInfo, SubmitRequest, TaskResult

log = structlog.get_logger("local_cluster")

KILL_GRACE_SECONDS = 2.0
# Ended jobs kept in the table; older ones are forgotten like Slurm purges finished jobs.
MAX_ENDED_JOBS = 1000
REQUEUE: Literal["requeue"] = "requeue"
Outcome = JobState | Literal["requeue"]


class OpError(Exception):
    kind: Literal["not_found", "refused"] = "refused"


class NotFound(OpError):
    kind = "not_found"


class Refused(OpError):
    kind = "refused"


@dataclass
class Execution:
    job_id: int
    procs: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    reapers: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    exited: set[str] = field(default_factory=set)
    launched: bool = False
    outcome: Outcome | None = None
    reason: str = ""
    failed_nodes: list[str] = field(default_factory=list)
    first_failure: TaskResult | None = None
    killing: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


def held_reason(request: SubmitRequest) -> str:
    """A held submission's reason: Slurm's word for a user hold, and the request's labels (a
    pipeline's stage: which pipeline holds it, after which stages), for `cluster status`."""
    labels = " ".join(f"{k}={v}" for k, v in request.labels.items())
    return f"JobHeldUser ({labels})" if labels else "JobHeldUser"


class LocalCluster:
    def __init__(self, root: Path, node_count: int) -> None:
        self.root = root
        self.node_count = node_count
        self.store = local_state.Store.open(root)
        state = self.store.load(node_count)
        self.cluster_id = state.cluster_id
        self.next_job_id = state.next_job_id
        self.nodes: dict[str, NodeRecord] = {node.name: node for node in state.nodes}
        self.jobs: dict[int, JobRecord] = {}
        self.runs: dict[int, Execution] = {}
        self.stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()
        # What the next `_save` writes.
        self._dirty: set[int] = set()
        self._dirty_nodes: set[str] = set()
        self._deleted: set[int] = set()
        self._observed: dict[int, bytes] = {}  # job id -> its observation's JSON, until it changes
        # What `changes` and `node_changes` answer from: the jobs and the nodes touched, in order.
        self.epoch = secrets.token_hex(8)
        self._job_log: ChangeLog[int] = ChangeLog(self.epoch)
        self._node_log: ChangeLog[str] = ChangeLog(self.epoch)
        # The scheduler's indexes, kept by `_touch` and `_touch_node`: runnable jobs (pending,
        # not held) in job id order, free usable nodes by number, jobs per token, ended jobs.
        self._queue: list[int] = []
        self._position = {name: number for number, name in enumerate(self.nodes)}
        self._free: list[int] = []
        self._usable: set[str] = set()
        self._tokens: dict[str, list[int]] = {}
        self._ended: set[int] = set()
        self._ended_heap: list[int] = []
        for job in state.jobs:
            self.jobs[job.id] = job
            if job.token:
                self._tokens.setdefault(job.token, []).append(job.id)
            self._index(job)
        for node in self.nodes.values():
            self._index_node(node)

    # --- paths and persistence ---------------------------------------------------------

    def script_path(self, job_id: int) -> Path:
        return local_state.script_path(self.root, job_id)

    def output_path(self, job: JobRecord) -> Path:
        return job.output_file(self.root)

    def _touch(self, job: JobRecord) -> None:
        """`job` changed: write it with the next `_save`, and keep the indexes in step."""
        self._dirty.add(job.id)
        self._observed.pop(job.id, None)
        self._index(job)
        self._job_log.add(job.id)

    def _touch_node(self, node: NodeRecord) -> None:
        """`node` changed how an operator sees it (down, drained, up): saved with the next `_save`."""
        self._dirty_nodes.add(node.name)
        self._node_moved(node)

    def _node_moved(self, node: NodeRecord) -> None:
        """`node`'s state changed (an operator's word, or a job took or left it)."""
        self._index_node(node)
        self._node_log.add(node.name)

    def _save(self) -> None:
        """Write what changed since the last save, in one transaction."""
        self.store.write(
            self.cluster_id,
            self.next_job_id,
            jobs=[self.jobs[job_id] for job_id in sorted(self._dirty) if job_id in self.jobs],
            deleted=sorted(self._deleted),
            nodes=[self.nodes[name] for name in sorted(self._dirty_nodes)],
        )
        self._dirty.clear()
        self._dirty_nodes.clear()
        self._deleted.clear()

    def _forget_token(self, job: JobRecord) -> None:
        same = self._tokens.get(job.token)
        if same is not None:
            same.remove(job.id)
            if not same:
                del self._tokens[job.token]

    def _index(self, job: JobRecord) -> None:
        runnable = job.state is JobState.PENDING and not job.held
        at = bisect.bisect_left(self._queue, job.id)
        queued = at < len(self._queue) and self._queue[at] == job.id
        if runnable and not queued:
            self._queue.insert(at, job.id)
        elif queued and not runnable:
            del self._queue[at]
        if job.state.ended and job.id not in self._ended:
            self._ended.add(job.id)
            heapq.heappush(self._ended_heap, job.id)
        elif not job.state.ended:
            self._ended.discard(job.id)  # its heap entry is skipped when it comes up

    def _index_node(self, node: NodeRecord) -> None:
        number = self._position[node.name]
        free = not (node.down or node.drain) and node.job_id is None
        at = bisect.bisect_left(self._free, number)
        listed = at < len(self._free) and self._free[at] == number
        if free and not listed:
            self._free.insert(at, number)
        elif listed and not free:
            del self._free[at]
        if node.down or node.drain:
            self._usable.discard(node.name)
        else:
            self._usable.add(node.name)

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        # The loop keeps only weak references to tasks; hold them until they finish.
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- startup and shutdown ----------------------------------------------------------

    async def recover(self) -> None:
        """Jobs that were running when a previous daemon died: end them, kill their orphans."""
        orphans: list[int] = []
        for job in self.jobs.values():
            if job.state is not JobState.RUNNING:
                continue
            alive = [pgid for pgid in job.pgids.values() if local_procs.group_is_ours(pgid, self.cluster_id, job.id)]
            orphans += alive
            job.state = JobState.NODE_FAIL
            job.reason = "local cluster daemon restarted"
            job.ended_at = utcnow()
            job.pgids = {}
            self._touch(job)
            log.warning("job_lost_in_restart", job_id=job.id, orphan_groups=len(alive))
        await local_procs.terminate_groups(orphans, KILL_GRACE_SECONDS)
        self._schedule()

    async def shutdown(self) -> None:
        """Stop scheduling and end every running job; they count as node failures."""
        self.stopping = True
        runs = list(self.runs.values())
        await asyncio.gather(*(self._stop(run, JobState.NODE_FAIL, "local cluster stopped") for run in runs))
        self._save()

    # --- operations --------------------------------------------------------------------

    def submit(self, request: SubmitRequest) -> JobObservation:
        if self.stopping:
            raise Refused("the local cluster is shutting down")
        self._check_request(request)
        excluded = self._known_nodes(request.excluded_nodes)
        job = JobRecord(
            id=self.next_job_id,
            token=request.token,
            name=request.name,
            args=list(request.args),
            nodes_wanted=request.nodes,
            workdir=request.workdir,
            env=dict(request.env),
            excluded_nodes=excluded,
            submitted_at=utcnow(),
            output=request.output,
            held=request.hold,
            reason=held_reason(request) if request.hold else "",
        )
        script = self.script_path(job.id)
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(request.script)
        script.chmod(0o700)
        self.next_job_id += 1
        self.jobs[job.id] = job
        if job.token:
            self._tokens.setdefault(job.token, []).append(job.id)
        self._touch(job)
        log.info("submitted", job_id=job.id, nodes=job.nodes_wanted)
        self._schedule()  # saves the job with whatever scheduling did to it, in one transaction
        return self.observe_one(job)

    def _check_request(self, request: SubmitRequest) -> None:
        """Refuse at submit what would otherwise only fail when the job starts."""
        workdir = Path(request.workdir)
        if not workdir.is_absolute() or not workdir.is_dir():
            raise Refused(f"workdir {request.workdir!r} is not an absolute path to a directory")
        if request.nodes > len(self.nodes):
            raise Refused(f"job asks for {request.nodes} nodes; the local cluster has {len(self.nodes)}")
        strings = [*request.args, *request.env, *request.env.values()]
        if any("\0" in text for text in strings):
            raise Refused("arguments and environment must not contain NUL characters")
        if any(not key or "=" in key for key in request.env):
            raise Refused("environment variable names must be non-empty and contain no '='")

    def observe_one(self, job: JobRecord) -> JobObservation:
        observed = job.observation(self.output_path(job))
        if job.state is JobState.PENDING and not job.held:
            observed.reason = self._pending_reason(job)
        return observed

    def _pending_reason(self, job: JobRecord) -> str:
        """Why a runnable job waits: its nodes are busy, or too few could ever run it. Worked
        out when asked (every change runs the scheduler, so a job that could start has)."""
        excluded = sum(1 for name in job.excluded_nodes if name in self._usable)
        return "Resources" if len(self._usable) - excluded >= job.nodes_wanted else "ReqNodeNotAvail"

    def find(self, token: str) -> JobObservation | None:
        matches = self._tokens.get(token, []) if token else []
        return self.observe_one(self.jobs[matches[-1]]) if matches else None

    def observe(self, job_ids: list[str]) -> bytes:
        """The known jobs' observations, as the JSON object (job id -> observation) the reply
        carries: a worker's observer asks for every watched job every few seconds, and 10,000
        observations built anew each time cost the daemon a second."""
        parts = [
            json.dumps(job_id).encode() + b":" + self._observed_json(job)
            for job_id in job_ids
            if (job := self._lookup(job_id)) is not None
        ]
        return b"{" + b",".join(parts) + b"}"

    def changes(self, since: str | None) -> bytes:
        """The jobs that changed since the cursor `since` (a `JobChanges` as JSON): every job
        touched since, and every runnable pending job (its reason follows the nodes, which do
        not touch it). A cursor this daemon cannot answer for asks for a full read instead."""
        head = {"cursor": self._job_log.cursor}
        changed = self._job_log.since(since)
        if changed is None:
            return json.dumps(head | {"complete": False}).encode()
        touched = sorted(changed | set(self._queue))
        present = [job_id for job_id in touched if job_id in self.jobs]
        jobs = b",".join(json.dumps(str(i)).encode() + b":" + self._observed_json(self.jobs[i]) for i in present)
        gone = [str(job_id) for job_id in touched if job_id not in self.jobs]
        tail = json.dumps(head | {"complete": True, "gone": gone}).encode()
        return tail[:-1] + b',"jobs":{' + jobs + b"}}"

    def node_changes(self, since: str | None) -> NodeChanges:
        """The nodes that changed since the cursor `since`, each as it is now; every node (and
        `full`) when this daemon cannot answer for that cursor."""
        changed = self._node_log.since(since)
        if changed is None:
            return NodeChanges(cursor=self._node_log.cursor, full=True, nodes=self.node_infos())
        infos = [self.nodes[name].info() for name in sorted(changed, key=self._position.__getitem__)]
        return NodeChanges(cursor=self._node_log.cursor, full=False, nodes=infos)

    def _observed_json(self, job: JobRecord) -> bytes:
        """A job's observation as JSON, kept until the job changes (`_touch`). A runnable job's
        is not kept: its reason follows the nodes."""
        cached = self._observed.get(job.id)
        if cached is None:
            cached = self.observe_one(job).model_dump_json().encode()
            if not (job.state is JobState.PENDING and not job.held):
                self._observed[job.id] = cached
        return cached

    async def requeue_hold(self, job_id: str) -> None:
        job = self._job(job_id)
        run = self.runs.get(job.id)
        if run is not None and await self._stop(run, REQUEUE):
            return
        if job.state is JobState.PENDING:
            raise Refused(f"job {job.id} is pending; only a running or ended job can be requeued")
        job.start_new_attempt()
        self._touch(job)
        log.info("requeued_held", job_id=job.id, restart_count=job.restart_count)
        self._schedule()

    def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        job = self._job(job_id)
        if job.state is not JobState.PENDING:
            raise Refused(f"job {job.id} is {job.state}; excluded nodes change only while pending")
        job.excluded_nodes = self._known_nodes(nodes)
        self._touch(job)
        self._schedule()

    def release(self, job_id: str) -> None:
        job = self._job(job_id)
        if not job.held:
            raise Refused(f"job {job.id} is not held")
        job.held = False
        job.reason = ""
        self._touch(job)
        self._schedule()

    async def cancel(self, job_id: str) -> None:
        job = self._job(job_id)
        run = self.runs.get(job.id)
        if run is not None and await self._stop(run, JobState.CANCELLED, "cancelled"):
            return
        if job.state is not JobState.PENDING:
            raise Refused(f"job {job.id} already ended ({job.state})")
        job.state = JobState.CANCELLED
        job.held = False
        job.reason = "cancelled"
        job.ended_at = utcnow()
        self._touch(job)
        self._save()

    def process_groups(self, job_id: str) -> dict[str, int]:
        """Each node's process group of a running job (its copy of the script leads it); empty
        when the job is not running."""
        job = self._job(job_id)
        return dict(job.pgids) if job.state is JobState.RUNNING else {}

    def node_infos(self) -> list[NodeInfo]:
        return [node.info() for node in self.nodes.values()]

    async def node_down(self, name: str, reason: str = "") -> None:
        node = self._node(name)
        node.down = True
        node.reason = reason or "set down by operator"
        self._touch_node(node)
        self._save()
        log.warning("node_down", node=name, job_id=node.job_id)
        run = self.runs.get(node.job_id) if node.job_id is not None else None
        if run is None:
            return
        # The node is gone: its copy gets no grace, unlike the copies on healthy nodes.
        proc = run.procs.get(name)
        if proc is not None and name not in run.exited:
            local_procs.signal_group(proc.pid, signal.SIGKILL)
        await self._stop(run, JobState.NODE_FAIL, "NodeDown", [name])

    def node_drain(self, name: str, reason: str = "") -> None:
        node = self._node(name)
        node.drain = True
        node.reason = reason or "drained by operator"
        self._touch_node(node)
        self._save()
        log.warning("node_drain", node=name, reason=node.reason)

    def node_up(self, name: str) -> None:
        node = self._node(name)
        node.down = False
        node.drain = False
        node.reason = ""
        self._touch_node(node)
        self._schedule()

    def status(self) -> bytes:
        """`ClusterStatus` as JSON, its jobs from the same kept observations as `observe`."""
        head = ClusterStatus(running=True, pid=os.getpid(), nodes=self.node_infos()).model_dump_json()
        assert head.endswith('"jobs":[]}')
        jobs = b",".join(self._observed_json(job) for job in self.jobs.values())
        return head[: -len("[]}")].encode() + b"[" + jobs + b"]}"

    # --- lookups -----------------------------------------------------------------------

    def _lookup(self, job_id: str) -> JobRecord | None:
        return self.jobs.get(int(job_id)) if job_id.isascii() and job_id.isdigit() else None

    def _job(self, job_id: str) -> JobRecord:
        job = self._lookup(job_id)
        if job is None:
            raise NotFound(f"job {job_id} not found")
        return job

    def _node(self, name: str) -> NodeRecord:
        node = self.nodes.get(name)
        if node is None:
            raise NotFound(f"node {name} not found (nodes: {', '.join(self.nodes)})")
        return node

    def _known_nodes(self, names: list[str]) -> list[str]:
        unknown = [name for name in names if name not in self.nodes]
        if unknown:
            raise Refused(f"unknown node(s): {', '.join(unknown)}")
        return list(dict.fromkeys(names))

    # --- scheduling --------------------------------------------------------------------

    def _schedule(self) -> None:
        """First fit in submit order: each runnable job gets the lowest-numbered free nodes.
        Then saves what this change and the scheduling did."""
        names = list(self.nodes)
        for job_id in [] if self.stopping else list(self._queue):
            if not self._free:
                break  # nothing more can start; the jobs left wait (see `_pending_reason`)
            job = self.jobs[job_id]
            if len(self._free) < job.nodes_wanted:
                continue
            excluded = set(job.excluded_nodes)
            fit = [names[n] for n in self._free if names[n] not in excluded][: job.nodes_wanted]
            if len(fit) == job.nodes_wanted:
                self._allocate(job, fit)
        self._save()

    def _allocate(self, job: JobRecord, names: list[str]) -> None:
        job.state = JobState.RUNNING
        job.reason = ""
        job.nodes = names
        job.started_at = utcnow()
        self._touch(job)
        for name in names:
            self.nodes[name].job_id = job.id
            self._node_moved(self.nodes[name])
        run = Execution(job.id)
        self.runs[job.id] = run
        log.info("started", job_id=job.id, nodes=names, restart_count=job.restart_count)
        self._background(self._launch(run, job))

    # --- running -----------------------------------------------------------------------

    async def _launch(self, run: Execution, job: JobRecord) -> None:
        output = self.output_path(job)
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            # One descriptor shared by every copy: O_APPEND keeps their writes whole and
            # never truncates what earlier attempts wrote.
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as err:
            log.error("output_unwritable", job_id=job.id, path=str(output), error=str(err))
            run.launched = True
            self._task_ended(run, job, job.nodes[0], 1)
            return
        try:
            for index in range(len(job.nodes)):
                if run.outcome is not None:
                    break
                await self._spawn(run, job, fd, index)
        finally:
            os.close(fd)
            run.launched = True
            self._touch(job)  # its process groups: what a restarted daemon cleans up
            self._save()
            self._maybe_finish(run)

    async def _spawn(self, run: Execution, job: JobRecord, fd: int, index: int) -> None:
        node = job.nodes[index]
        env = local_procs.slurm_env(
            base=os.environ,
            extra=job.env,
            cluster_id=self.cluster_id,
            job_id=job.id,
            name=job.name,
            nodes=job.nodes,
            index=index,
            restart_count=job.restart_count,
            submit_dir=job.workdir,
        )
        try:
            argv = local_procs.script_argv(self.script_path(job.id), job.args)
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=job.workdir,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=fd,
                stderr=fd,
                start_new_session=True,
            )
        except (OSError, ValueError) as err:
            os.write(fd, f"local cluster: cannot start the job on {node}: {err}\n".encode())
            # The shell's codes for "not found" and "cannot execute".
            self._task_ended(run, job, node, 127 if isinstance(err, FileNotFoundError) else 126)
            return
        run.procs[node] = proc
        job.pgids[node] = proc.pid
        run.reapers[node] = asyncio.create_task(self._reap(run, job, node, proc))
        if run.outcome is not None:
            # Stopped while this copy was being started; the kill round may have missed it.
            local_procs.signal_group(proc.pid, signal.SIGKILL)

    async def _reap(self, run: Execution, job: JobRecord, node: str, proc: asyncio.subprocess.Process) -> None:
        returncode = await proc.wait()
        self._task_ended(run, job, node, returncode)

    def _task_ended(self, run: Execution, job: JobRecord, node: str, returncode: int) -> None:
        result = TaskResult(
            node=node,
            exit_code=returncode if returncode >= 0 else None,
            signal=-returncode if returncode < 0 else None,
            ended_at=utcnow(),
        )
        job.tasks.append(result)
        self._touch(job)
        run.exited.add(node)
        if returncode != 0 and run.outcome is None:
            run.outcome = JobState.FAILED
            run.first_failure = result
            self._kill(run)
        self._save()
        self._maybe_finish(run)

    def _kill(self, run: Execution) -> None:
        if not run.killing:
            run.killing = True
            self._background(self._kill_copies(run))

    async def _kill_copies(self, run: Execution) -> None:
        """SIGTERM every live copy's group, SIGKILL the ones still there after the grace."""
        live = {node: task for node, task in run.reapers.items() if not task.done()}
        for node in live:
            local_procs.signal_group(run.procs[node].pid, signal.SIGTERM)
        if not live:
            return
        _, pending = await asyncio.wait(live.values(), timeout=KILL_GRACE_SECONDS)
        for node, task in live.items():
            if task in pending:
                local_procs.signal_group(run.procs[node].pid, signal.SIGKILL)

    async def _stop(self, run: Execution, outcome: Outcome, reason: str = "", failed: list[str] | None = None) -> bool:
        """End a running attempt as `outcome` and wait until its copies are gone.

        Returns False if something else had already decided how the attempt ends; the caller
        then looks at the job as that left it.
        """
        taken = run.outcome is None
        if taken:
            run.outcome = outcome
            run.reason = reason
            run.failed_nodes = failed or []
            self._kill(run)
        await run.done.wait()
        return taken

    def _maybe_finish(self, run: Execution) -> None:
        if run.launched and not run.done.is_set() and set(run.procs) <= run.exited:
            self._finish(run)

    def _finish(self, run: Execution) -> None:
        job = self.jobs[run.job_id]
        # Whatever the copies left behind in their groups goes with the job, as in Slurm.
        for pgid in job.pgids.values():
            local_procs.signal_group(pgid, signal.SIGKILL)
        for name in job.nodes:
            if self.nodes[name].job_id == job.id:
                self.nodes[name].job_id = None
                self._node_moved(self.nodes[name])
        del self.runs[job.id]
        if run.outcome == REQUEUE:
            job.start_new_attempt()
        else:
            self._record_end(job, run)
        self._touch(job)
        log.info("ended", job_id=job.id, state=job.state, exit_code=job.exit_code)
        self._prune()
        run.done.set()
        self._schedule()

    def _record_end(self, job: JobRecord, run: Execution) -> None:
        job.pgids = {}
        job.ended_at = utcnow()
        outcome, failure = run.outcome, run.first_failure
        if outcome is None:
            job.state = JobState.COMPLETED
            job.exit_code = 0
        elif outcome is JobState.FAILED and failure is not None:
            job.state = JobState.FAILED
            job.exit_code = failure.exit_code
            job.signal = failure.signal
            job.reason = f"RaisedSignal:{failure.signal}" if failure.signal else "NonZeroExitCode"
        elif isinstance(outcome, JobState):
            job.state = outcome
            job.reason = run.reason
            job.failed_nodes = run.failed_nodes

    def _prune(self) -> None:
        """Forget the oldest ended jobs (by id) beyond MAX_ENDED_JOBS."""
        while len(self._ended) > MAX_ENDED_JOBS:
            job_id = heapq.heappop(self._ended_heap)
            if job_id not in self._ended:
                continue  # requeued since it ended: no longer ended
            self._ended.discard(job_id)
            job = self.jobs.pop(job_id)
            self._observed.pop(job_id, None)
            self._forget_token(job)
            self._deleted.add(job_id)
            self._job_log.add(job_id)
            shutil.rmtree(self.script_path(job_id).parent, ignore_errors=True)
