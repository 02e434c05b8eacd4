"""From parsed Slurm output to `JobObservation`, `TaskResult` and `NodeInfo`. Pure functions.

The queries these parse, and why each field comes from where it does:

- `squeue -O` (one call for many jobs): everything but the exclusion list; it has no field
  for it, while `-o` (which has `%x`) has no restart count and no exit code. So a second
  `squeue -o '%A %x'` (one call) reads exclusion lists where they may have changed.
- `scontrol show job -o J`: everything for one job, the exclusion list included (`detail`).
- `sacct -D -P` (accounting): jobs slurmctld forgot, one record per run (a requeue starts a new
  record, so the restart count is the number of records less one), and the job steps that give
  per-node task results.
- `sinfo -N -O`: node states and reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.slurm_comment import parse_comment
from recovery.activities.schedulers.slurm_states import base_state, map_state, node_state, node_unusable
from recovery.workflows.models import JobObservation, JobState, NodeInfo, TaskResult

# squeue -O fields; Name and Comment (free text) are delimiter-safe anyway, but last by habit.
SQUEUE_FIELDS = [
    "JobID",
    "State",
    "Reason",
    "RestartCnt",
    "PriorityLong",
    "exit_code",
    "NodeList",
    "BatchHost",
    "SubmitTime",
    "StartTime",
    "EndTime",
    "Partition",
    "UserName",
    "ArrayJobID",
    "ArrayTaskID",
    "WorkDir",
    "STDOUT",
    "STDERR",
    "Name",
    "Comment",
]

# sacct fields: first and last never hold a newline (see slurm_parse.split_lines).
SACCT_FIELDS = [
    "JobIDRaw",
    "JobID",
    "State",
    "ExitCode",
    "NodeList",
    "Partition",
    "User",
    "Reason",
    "JobName",
    "Comment",
    "Submit",
    "Start",
    "End",
]

SINFO_FIELDS = ["NodeList", "StateComplete", "NodeAddr", "NodeHost", "Reason"]


def squeue_format(delims: sp.Delimiters, fields: list[str] = SQUEUE_FIELDS) -> str:
    """`-O` value: each field printed whole (no width) and followed by the delimiter."""
    ends = [delims.field] * (len(fields) - 1) + [delims.record]
    return ",".join(f"{name}:{end}" for name, end in zip(fields, ends, strict=True))


def sinfo_format(delims: sp.Delimiters) -> str:
    return squeue_format(delims, SINFO_FIELDS)


# --- squeue rows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SqueueJob:
    """One squeue row, typed. `key` names one run of one job: see `exclusion_key`."""

    job_id: str
    raw_state: str
    reason: str
    restart_count: int
    priority: int | None
    exit_text: str
    nodes: list[str]
    batch_host: str
    submitted_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    partition: str
    user: str
    array_job_id: str
    array_task_id: str
    workdir: str
    stdout: str
    stderr: str
    name: str
    comment: str

    @property
    def state(self) -> tuple[JobState, bool]:
        raw = self.raw_state
        if base_state(raw) == "COMPLETING" and self.ended_at is None and self.restart_count > 0:
            # Requeued while its last run still cleans up: Slurm's state is PENDING|COMPLETING,
            # which squeue and libslurm print as COMPLETING alone. Once released (reason None,
            # priority > 0) nothing else tells it from a run that ends, but this: a run that
            # ends has an end time, a requeued job has none (seen on 25.11 for ~0.5 s).
            raw = f"PENDING+{raw}"
        return map_state(raw, self.reason, self.priority)

    @property
    def exclusion_key(self) -> tuple[str, int, datetime | None, datetime | None] | None:
        """A key under which this run's exclusion list cannot change, or None if it can.

        Slurm accepts `ExcNodeList` only for pending jobs ("Job is no longer pending execution"
        otherwise), and a job can become pending again only by a requeue, which raises its
        restart count and resets its submit time. So while a job RUNS, or has ENDED, its list
        is the one it had when it started, fixed for (job id, restart count, submit, start).
        COMPLETING is left out: after a requeue it precedes a pending, updatable job.
        """
        state, _ = self.state
        if base_state(self.raw_state) == "RUNNING" or state.ended:
            return (self.job_id, self.restart_count, self.submitted_at, self.started_at)
        return None


def squeue_job(row: dict[str, str]) -> SqueueJob:
    priority = sp.clean(row["PriorityLong"])
    return SqueueJob(
        job_id=row["JobID"].strip(),
        raw_state=row["State"].strip(),
        reason=sp.clean(row["Reason"]),
        restart_count=sp.parse_int(row["RestartCnt"]),
        priority=int(priority) if priority.isdigit() else None,
        exit_text=row["exit_code"].strip(),
        nodes=sp.expand_hostlist(row["NodeList"]),
        batch_host=sp.clean(row["BatchHost"]),
        submitted_at=sp.parse_time(row["SubmitTime"]),
        started_at=sp.parse_time(row["StartTime"]),
        ended_at=sp.parse_time(row["EndTime"]),
        partition=sp.clean(row["Partition"]),
        user=sp.clean(row["UserName"]),
        array_job_id=sp.clean(row["ArrayJobID"]),
        array_task_id=sp.clean(row["ArrayTaskID"]),
        workdir=sp.clean(row.get("WorkDir", "")),
        stdout=sp.clean(row["STDOUT"]),
        stderr=sp.clean(row["STDERR"]),
        name=row["Name"],
        comment=sp.clean(row["Comment"]),
    )


def observation(
    job: SqueueJob,
    excluded: list[str],
    tasks: list[TaskResult] | None = None,
    failed_nodes: list[str] | None = None,
) -> JobObservation:
    state, held = job.state
    exit_code, signal = sp.parse_exit_code(job.exit_text) if state.ended else (None, None)
    out, err = _paths(job)
    return JobObservation(
        job_id=job.job_id,
        name=job.name,
        state=state,
        held=held,
        reason=job.reason,
        nodes=job.nodes if state is not JobState.PENDING else [],
        excluded_nodes=excluded,
        exit_code=exit_code,
        signal=signal,
        restart_count=job.restart_count,
        submitted_at=job.submitted_at,
        started_at=job.started_at if state is not JobState.PENDING else None,
        ended_at=job.ended_at if state.ended else None,
        output_path=out or None,
        error_path=err or out or None,
        tasks=tasks or [],
        failed_nodes=failed_nodes or [],
        token=parse_comment(job.comment).token or "",
        scheduler_state=job.raw_state,
        comment=job.comment,
        partition=job.partition,
        user=job.user,
    )


def _paths(job: SqueueJob) -> tuple[str, str]:
    def expand(pattern: str) -> str:
        return sp.expand_output_path(
            pattern,
            job_id=job.job_id,
            name=job.name,
            user=job.user,
            node=job.batch_host or (job.nodes[0] if job.nodes else ""),
            array_job_id=job.array_job_id,
            array_task_id=job.array_task_id,
            # 22.05's squeue prints the path sbatch made absolute; 25.11's the one given
            # (`slurm-%j.out`), which Slurm resolves against the job's working directory
            workdir=job.workdir,
        )

    return expand(job.stdout), expand(job.stderr)


def excluded_from_scontrol(fields: dict[str, str]) -> list[str]:
    return sp.expand_hostlist(fields.get("ExcNodeList", ""))


# --- sacct -----------------------------------------------------------------------------------


@dataclass
class SacctRun:
    """One run of a job in accounting (a requeue starts the next), with its steps."""

    row: dict[str, str]
    steps: list[dict[str, str]] = field(default_factory=list)


def sacct_runs(rows: list[dict[str, str]]) -> dict[str, list[SacctRun]]:
    """Accounting rows grouped by job, runs in order, each run's steps after it (as `sacct -D`
    prints them: a step row belongs to the run row above it)."""
    runs: dict[str, list[SacctRun]] = {}
    for row in rows:
        raw = row["JobIDRaw"].strip()
        job_id, dot, _ = raw.partition(".")
        if not dot:
            runs.setdefault(job_id, []).append(SacctRun(row=row))
        elif runs.get(job_id):
            runs[job_id][-1].steps.append(row)
    return runs


def tasks_from_steps(steps: list[dict[str, str]]) -> list[TaskResult]:
    """Per-node results from a run's steps.

    A step on one node is that node's result. A step on several nodes has one exit code for all
    of them (Slurm 22.05 keeps no per-task codes), so it names no node: srun's own
    "srun: error: NODE: task N: Exited with exit code X" line in the job's error output does
    (`slurm_parse.parse_srun_failures`). The batch step counts only when the job ran no
    steps of its own: otherwise its exit code is just the script passing a step's failure on.
    """
    numbered = [s for s in steps if _step_name(s).isdigit()]
    batch = [s for s in steps if _step_name(s) in ("batch", "interactive")]
    chosen = numbered if numbered else batch
    tasks = []
    for step in chosen:
        nodes = sp.expand_hostlist(step["NodeList"])
        if len(nodes) != 1:
            continue
        exit_code, signal = sp.parse_exit_code(step["ExitCode"])
        tasks.append(TaskResult(node=nodes[0], exit_code=exit_code, signal=signal, ended_at=sp.parse_time(step["End"])))
    return tasks


def _step_name(step: dict[str, str]) -> str:
    return step["JobIDRaw"].strip().partition(".")[2]


def sacct_observation(job_id: str, runs: list[SacctRun]) -> JobObservation:
    """A job slurmctld no longer lists, from its last run in accounting. Its exclusion list is
    not in accounting: reported empty."""
    last = runs[-1].row
    state, held = map_state(last["State"], sp.clean(last["Reason"]))
    exit_code, signal = sp.parse_exit_code(last["ExitCode"]) if state.ended else (None, None)
    comment = sp.clean(last["Comment"])
    return JobObservation(
        job_id=job_id,
        name=last["JobName"],
        state=state,
        held=held,
        reason=sp.clean(last["Reason"]),
        nodes=sp.expand_hostlist(last["NodeList"]),
        exit_code=exit_code,
        signal=signal,
        restart_count=len(runs) - 1,
        submitted_at=sp.parse_time(last["Submit"]),
        started_at=sp.parse_time(last["Start"]) if state is not JobState.PENDING else None,
        ended_at=sp.parse_time(last["End"]) if state.ended else None,
        tasks=tasks_from_steps(runs[-1].steps),
        token=parse_comment(comment).token or "",
        scheduler_state=last["State"].strip(),
        comment=comment,
        partition=sp.clean(last["Partition"]),
        user=sp.clean(last["User"]),
    )


def run_history(job_id: str, runs: list[SacctRun]) -> list[JobObservation]:
    """Every run of a job, oldest first, `restart_count` = its index. A run that a requeue ended
    shows as REQUEUED in accounting: FAILED if it exited non-zero, else CANCELLED."""
    history = []
    for index in range(len(runs)):
        obs = sacct_observation(job_id, runs[: index + 1])
        if obs.scheduler_state.upper().startswith("REQUEUED"):
            exit_code, signal = sp.parse_exit_code(runs[index].row["ExitCode"])
            failed = bool(exit_code) or signal is not None
            obs = obs.model_copy(
                update={
                    "state": JobState.FAILED if failed else JobState.CANCELLED,
                    "held": False,
                    "exit_code": exit_code,
                    "signal": signal,
                    "ended_at": sp.parse_time(runs[index].row["End"]),
                }
            )
        history.append(obs)
    return history


# --- nodes -----------------------------------------------------------------------------------


def node_infos(rows: list[dict[str, str]]) -> list[NodeInfo]:
    """sinfo -N prints a node once per partition: keep the first of each."""
    seen: dict[str, NodeInfo] = {}
    for row in rows:
        name = row["NodeList"].strip()
        if name and name not in seen:
            reason = sp.clean(row["Reason"]).strip()
            # NodeAddr, then the host name the machine calls itself (NodeHostname): logs use either.
            addresses = list(dict.fromkeys(a for a in (row["NodeAddr"].strip(), row["NodeHost"].strip()) if a))
            seen[name] = NodeInfo(name=name, state=node_state(row["StateComplete"]), reason=reason, addresses=addresses)
    return list(seen.values())


def failed_nodes(job_nodes: list[str], nodes: list[NodeInfo]) -> list[str]:
    """The job's nodes that Slurm reports DOWN, DRAIN, FAIL or NOT_RESPONDING now."""
    bad = {n.name for n in nodes if node_unusable(n.state)}
    return [n for n in job_nodes if n in bad]


def needs_failure_facts(state: JobState) -> bool:
    """Ended without success, and not by a person's cancel: worth steps and node states."""
    return state.ended and state not in (JobState.COMPLETED, JobState.CANCELLED)
