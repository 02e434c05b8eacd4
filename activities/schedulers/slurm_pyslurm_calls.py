"""The pyslurm calls themselves. They run in a child process, never in the worker's (see
`slurm_pyslurm` for why); each function here takes and returns plain, picklable values.

pyslurm is Slurm's C API (libslurm) for Python and builds against one Slurm release only
(pyslurm 25.11.x for Slurm 25.11). Every function translates pyslurm's `RPCError` into
`SlurmApiError`, which carries Slurm's errno and words across the process boundary; the worker
side classifies those words with the same table as the commands' (`slurm_commands.raise_for`).
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.slurm_commands import SLURM_INVALID_JOB_ID
from recovery.activities.schedulers.slurm_states import node_state
from recovery.workflows.models import NodeInfo

# Up to this many ids: one `slurm_load_job` each; more: one `slurm_load_jobs` for all of them.
# With 2,000 jobs queued, 10 ids read one by one cost 28 ms, all jobs loaded 200 ms.
PER_JOB_READS = 16


class SlurmApiError(Exception):
    """Slurm refused a call: its errno and its own words (`slurm_strerror`)."""

    def __init__(self, errno: int, message: str) -> None:
        super().__init__(errno, message)
        self.errno = errno
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} (errno {self.errno})"


@dataclass(frozen=True)
class Release:
    """Which Slurm pyslurm was built for, and which Slurm the controller runs ("" if unreachable)."""

    pyslurm: str
    controller: str
    error: str = ""


@dataclass(frozen=True)
class Submission:
    """What `submit` hands libslurm: the fields sbatch would set for a directive-free script."""

    script: str
    args: list[str]
    name: str
    nodes: int
    workdir: str
    comment: str
    excluded_nodes: list[str]
    output: str  # "": Slurm's default, slurm-%j.out in the working directory
    environment: dict[str, str]


def prepare(conf: str | None, parent: int) -> None:
    """The child's initializer. libslurm reads `SLURM_CONF` when pyslurm is first imported (by
    the first call, so that a pyslurm that does not import is that call's error, not a dead
    child). A JWT in the environment would switch libslurm's authentication: it never gets it.
    The child ends when `parent`, the process that spawned it, does (`end_with`)."""
    os.environ.pop("SLURM_JWT", None)
    if conf:
        os.environ["SLURM_CONF"] = conf
    end_with(parent)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with(parent: int) -> None:
    """Have the kernel kill this process when `parent` dies (Linux). A pool's child waits on its
    call queue and would never notice: a worker killed by the OOM killer or `kill -9` would leave
    its children behind, one set per restart. If the parent is already gone, end now."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _pyslurm() -> Any:
    return importlib.import_module("pyslurm")


@contextmanager
def _translated() -> Iterator[None]:
    ps = _pyslurm()
    try:
        yield
    except ps.RPCError as err:
        raise SlurmApiError(int(err.errno), str(err.msg)) from None


# --- reading ---------------------------------------------------------------------------------


def release_or_reason() -> Release:
    """pyslurm's release and the controller's; why not, when pyslurm does not import."""
    try:
        ps = _pyslurm()
    except ImportError as err:  # not installed, or libslurm not found: auto takes another backend
        return Release(pyslurm="", controller="", error=f"pyslurm does not import: {err}")
    try:
        with _translated():
            controller = str(ps.slurmctld.Config.load().version or "")
    except SlurmApiError as err:
        return Release(pyslurm=str(ps.__version__), controller="", error=str(err))
    return Release(pyslurm=str(ps.__version__), controller=controller)


def cluster_name() -> str:
    ps = _pyslurm()
    with _translated():
        return str(ps.slurmctld.Config.load().cluster_name or "")


def jobs(ids: list[int] | None) -> list[tuple[facts.SqueueJob, list[str]]]:
    """These jobs (all when None) as squeue rows, each with its exclusion list. Unknown ids are
    left out."""
    ps = _pyslurm()
    with _translated():
        if ids is not None and len(ids) <= PER_JOB_READS:
            loaded = [job for job in (_one_job(ps, i) for i in ids) if job is not None]
        else:
            loaded = list(ps.Jobs.load().values())
            if ids is not None:
                wanted = set(ids)
                loaded = [job for job in loaded if job.id in wanted]
    return [(_row(job), sp.expand_hostlist(job.excluded_nodes or "")) for job in loaded]


def _one_job(ps: Any, job_id: int) -> Any:
    try:
        return ps.Job.load(job_id)
    except ps.RPCError as err:
        if err.errno == SLURM_INVALID_JOB_ID:
            return None
        raise


def _row(job: Any) -> facts.SqueueJob:
    """A pyslurm Job as the squeue row the commands backend reads, so both map it alike. The
    exit code is pyslurm's decoding, which folds codes of 128 and above (137 reads as 9): the
    worker side takes ended jobs' codes from squeue instead (`slurm_pyslurm`)."""
    exit_code, signal = job.exit_code, job.exit_code_signal
    job_id = str(job.id)
    return facts.SqueueJob(
        job_id=job_id,
        raw_state=str(job.state or ""),
        reason=sp.clean(str(job.state_reason or "")),
        restart_count=int(job.requeue_count or 0),
        priority=job.priority if isinstance(job.priority, int) else None,
        exit_text=f"{exit_code or 0}:{signal or 0}",
        nodes=sp.expand_hostlist(str(job.allocated_nodes or "")),
        batch_host=sp.clean(str(job.batch_host or "")),
        submitted_at=_time(job.submit_time),
        started_at=_time(job.start_time),
        ended_at=_time(job.end_time, until=time.time()),
        partition=str(job.partition or ""),
        user=str(job.user_name or ""),
        # squeue prints a plain job's own id as its array job id, and N/A as its task id
        array_job_id=str(job.array_id or job_id),
        array_task_id=str(job.array_task_id) if job.array_task_id is not None else "",
        workdir=str(job.working_directory or ""),
        stdout=sp.clean(str(job.standard_output or "")),
        stderr=sp.clean(str(job.standard_error or "")),
        name=str(job.name or ""),
        comment=str(job.comment or ""),
    )


def _time(value: Any, until: float | None = None) -> Any:
    """An epoch as a time. With `until`, a later one is none: libslurm gives a job that has not
    ended its expected end (start plus time limit, even an unlimited one) where squeue prints
    NONE, and a requeued job still completing must read as not ended (slurm_facts.SqueueJob)."""
    if not isinstance(value, int) or value <= 0 or (until is not None and value > until):
        return None
    return sp.parse_time(str(value))


def nodes() -> list[NodeInfo]:
    ps = _pyslurm()
    with _translated():
        loaded = list(ps.Nodes.load().values())
    return [
        NodeInfo(
            name=str(n.name),
            state=node_state(str(n.state or "")),
            reason=sp.clean(str(n.reason or "")).strip(),
            addresses=list(dict.fromkeys(str(a) for a in (n.address, n.hostname) if a)),
        )
        for n in loaded
    ]


def submission_fields(job_id: int) -> dict[str, str]:
    """A job's name, owner, working directory, node count, comment, partition and batch script."""
    ps = _pyslurm()
    with _translated():
        job = ps.Job.load(job_id)
        script = ps.Job(job_id).get_batch_script()
    return {
        "name": str(job.name or ""),
        "user": str(job.user_name or ""),
        "workdir": str(job.working_directory or "/"),
        "nodes": str(job.num_nodes or 1),
        "comment": str(job.comment or ""),
        "partition": str(job.partition or ""),
        "script": str(script or ""),
    }


# --- acting ----------------------------------------------------------------------------------


def submit(request: Submission) -> int:
    """One batch job, as sbatch would queue a directive-free script with recovery's options
    (`slurm.sbatch_options`): name, nodes, working directory, comment, append to output,
    requeueable, the environment given, exclusions. One task per node, as sbatch without `-n`
    gives `srun` in the script."""
    ps = _pyslurm()
    environment = {
        **request.environment,
        # sbatch sets these for the job; libslurm leaves them to its caller
        "SLURM_SUBMIT_DIR": os.getcwd(),
        "SLURM_SUBMIT_HOST": socket.gethostname(),
    }
    desc = ps.JobSubmitDescription(
        script=request.script,
        script_args=list(request.args) or None,
        name=request.name,
        nodes=request.nodes,
        ntasks=request.nodes,
        working_directory=request.workdir,
        comment=request.comment,
        log_files_open_mode="append",
        is_requeueable=True,
        environment=environment,
        excluded_nodes=list(request.excluded_nodes) or None,
        standard_output=request.output or None,
    )
    with _translated():
        return int(desc.submit())


def requeue_hold(job_id: int) -> None:
    ps = _pyslurm()
    with _translated():
        ps.Job(job_id).requeue(hold=True)


def set_excluded_nodes(job_id: int, nodes: list[str]) -> None:
    """Replace a pending job's exclusions. pyslurm sends nothing for an empty list (libslurm's
    "no change"), so clearing them is the commands' job (`slurm_pyslurm`)."""
    if not nodes:
        raise ValueError("pyslurm cannot clear a job's exclusions")
    ps = _pyslurm()
    with _translated():
        ps.Job(job_id).modify(ps.JobSubmitDescription(excluded_nodes=list(nodes)))


def release_job(job_id: int) -> None:
    ps = _pyslurm()
    with _translated():
        ps.Job(job_id).release()


def cancel(job_id: int) -> None:
    """pyslurm's cancel passes over an unknown job in silence (it ignores ESLURM_INVALID_JOB_ID
    for SIGKILL); the commands' scancel says so. Loading the job first says it too."""
    ps = _pyslurm()
    with _translated():
        ps.Job.load(job_id)
        ps.Job(job_id).cancel()


def drain(node: str, reason: str) -> None:
    ps = _pyslurm()
    with _translated():
        ps.Node(node).modify(ps.Node(state="DRAIN", reason=reason))
