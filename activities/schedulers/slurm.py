"""`SlurmScheduler`: the `Scheduler` interface over Slurm's own commands.

How it reads (see docs/slurm.md for the whole story):

- `observe(ids)`: one `squeue -O` for every id (the hot path). `-O` has no field for a job's
  exclusion list, so one more `squeue -o '%A %x'` reads it for the jobs where it can have
  changed: Slurm lets `ExcNodeList` change only while a job is pending, so for a job seen
  running or ended the list read once for that run (job id, restart count, submit and start
  time) stays right, and a poll of running jobs is one process. Jobs squeue no longer lists
  come from one `sacct -D` call. Failed jobs get their steps (one `sacct`) and node states
  (one `sinfo`). `detail(id)` adds `scontrol show job -o` for one job before an action.
- Mutations are one command each (`scontrol requeuehold|release|update`, `scancel`), with no
  retries of their own: Temporal retries the activity, which observes first.

Every command is an argument list, never a shell, with a timeout; errors are classified in
`slurm_commands.raise_for` only.
"""

from __future__ import annotations

import os
import pwd
import re
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import structlog

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.base import JobNotFound, SchedulerError, first_sight
from recovery.activities.schedulers.sbatch_script import directives, min_nodes
from recovery.activities.schedulers.slurm_commands import (
    AccountingDisabled,
    Completed,
    Runner,
    failed,
    raise_for,
    run_process,
    slurm_env,
)
from recovery.activities.schedulers.slurm_comment import parse_comment, submission_comment
from recovery.workflows.models import (
    JobObservation,
    JobSubmission,
    NodeInfo,
    SubmitRequest,
    TaskResult,
)

log = structlog.get_logger("recovery.slurm")

_JOB_ID = re.compile(r"^[0-9]+(_[0-9]+)?$")
DRAIN_REASON_CHARS = 200
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\]]*$")
_PARTITION = re.compile(r"^[A-Za-z0-9._\-]+$")
_EXCLUSION_MEMO_SIZE = 20_000
# Request variables sbatch would read as its own options, or that would point it elsewhere.
_REQUEST_ENV_DROPPED = ("SBATCH_", "SLURM_CONF")


class SlurmScheduler:
    name = "slurm"

    def __init__(
        self,
        conf: str | None = None,
        *,
        timeout: float = 30.0,
        runner: Runner | None = None,
        find_window: str = "now-7days",
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`conf`: slurm.conf to use (default: `SLURM_CONF` from the environment, else Slurm's
        own default). `timeout`: seconds per command (a down slurmctld makes commands retry for
        about 10-20 s before they give up). `runner`: runs one command (tests count calls with
        it). `find_window`:
        how far back `find` looks in accounting. `env`: the base environment (default the
        worker's)."""
        self.conf = conf or (env or os.environ).get("SLURM_CONF")
        self.timeout = timeout
        self.find_window = find_window
        self._runner: Runner = runner or run_process
        self._env = slurm_env(self.conf, env)
        self._exclusions: OrderedDict[tuple[object, ...], list[str]] = OrderedDict()
        self._said_no_accounting = False

    # --- the Scheduler protocol --------------------------------------------------------------

    async def submit(self, request: SubmitRequest) -> JobObservation:
        env = {**self._env, **request_env(request.env)}
        with tempfile.TemporaryDirectory(prefix="recovery-sbatch-") as tmp:
            # A file, not stdin: sbatch passes arguments to a script only when it names a file.
            # sbatch copies the script at submission, so the file may go right after.
            script = Path(tmp) / "job.sbatch"
            script.write_text(request.script)
            as_user = request.user
            if (why := self.submit_as_refusal(as_user)) is not None:
                log.warning("submitting as the worker's user", owner=as_user, why=why)
                as_user = ""
            argv = [*sbatch_options(request, as_user=as_user), str(script), *request.args]
            result = await self._run(argv, what="sbatch", env=env)
        job_id = parse_parsable(result.stdout)
        log.info("sbatch", job_id=job_id, name=request.name, nodes=request.nodes, user=as_user or _me())
        return await first_sight(self, job_id, request)

    async def find(self, token: str) -> JobObservation | None:
        if not token:
            return None
        # root submits a resubmission as the job's owner (sbatch --uid): its job is among everyone's
        jobs = await self._squeue([] if os.geteuid() == 0 else ["--me"])
        mine = [j for j in jobs if parse_comment(j.comment).token == token]
        if mine:
            newest = max(mine, key=lambda j: id_order(j.job_id))
            return (await self._complete([newest], fresh=False))[newest.job_id]
        job_id = await self._find_in_accounting(token)
        if job_id is None:
            return None
        return (await self.observe([job_id])).get(job_id)

    async def observe(self, job_ids: list[str], *, fresh: bool = False) -> dict[str, JobObservation]:
        """A fresh read of these jobs. `fresh=True` also re-reads exclusion lists that Slurm
        cannot have changed (for the moment right before an action, if a caller wants that)."""
        ids = list(dict.fromkeys(j for j in job_ids if _JOB_ID.match(j)))
        if not ids:
            return {}
        result = await self._complete(await self._squeue_ids(ids), fresh=fresh)
        missing = [i for i in ids if i not in result]
        if missing:
            result.update(await self.accounting(missing))
        return result

    async def requeue_hold(self, job_id: str) -> None:
        argv = ["scontrol", "requeuehold", checked_id(job_id)]
        await self._run(argv, what=f"requeuehold {job_id}", requeue=True)

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        # An empty value clears the list (22.05 accepts `ExcNodeList=`).
        value = ",".join(checked_node(n) for n in nodes)
        argv = ["scontrol", "update", f"JobId={checked_id(job_id)}", f"ExcNodeList={value}"]
        await self._run(argv, what=f"update {job_id} ExcNodeList={value}")

    async def release(self, job_id: str) -> None:
        await self._run(["scontrol", "release", checked_id(job_id)], what=f"release {job_id}")

    async def cancel(self, job_id: str) -> None:
        # -v: 22.05's scancel reports an unknown job only on stderr, and exits 0.
        argv = ["scancel", "-v", checked_id(job_id)]
        await self._run(argv, what=f"scancel {job_id}", errors_in_output=True)

    async def drain(self, node: str, reason: str) -> None:
        """DRAIN a node with a reason (argument list: the reason is data, never shell)."""
        name, text = checked_node(node), one_line_reason(reason)
        argv = ["scontrol", "update", f"NodeName={name}", "State=DRAIN", f"Reason={text}"]
        await self._run(argv, what=f"drain {node}")

    def opted_in(self, observation: JobObservation) -> bool:
        """Only jobs whose comment starts with `recovery` are ever acted on."""
        return parse_comment(observation.comment).opted_in

    async def nodes(self) -> list[NodeInfo]:
        delims = sp.Delimiters.fresh()
        argv = ["sinfo", "-a", "-h", "-N", "-O", facts.sinfo_format(delims)]
        result = await self._run(argv, what="sinfo")
        return facts.node_infos(sp.split_records(result.stdout, delims, facts.SINFO_FIELDS))

    # --- beyond the protocol -------------------------------------------------------------------

    async def opted_in_jobs(self, partitions: list[str] | None = None) -> list[JobObservation]:
        """Jobs whose comment opts in to recovery (`recovery`, `recovery:...`), in any state, in
        these partitions (all when None), from one squeue call, completed like `observe`."""
        args = []
        if partitions:
            args = ["-p", ",".join(_checked_partition(p) for p in partitions)]
        jobs = [j for j in await self._squeue(args) if parse_comment(j.comment).opted_in]
        found = await self._complete(jobs, fresh=False)
        return [found[j.job_id] for j in jobs if j.job_id in found]

    async def runs(self, job_id: str) -> list[JobObservation]:
        """Every run of the job from accounting, oldest first (`restart_count` = index): what
        happened to a run that Slurm requeued by itself (NODE_FAIL, preemption), whose record
        `observe` no longer shows. Failed runs name their nodes that are unusable now."""
        rows = await self._sacct(["-j", checked_id(job_id)])
        history = facts.run_history(job_id, facts.sacct_runs(rows).get(job_id, []))
        if any(facts.needs_failure_facts(r.state) for r in history):
            nodes = await self.nodes()
            history = [_with_failed_nodes(r, nodes) for r in history]
        return history

    async def submission(self, job_id: str) -> JobSubmission:
        """A job as plain sbatch submitted it: its batch script (Slurm keeps a copy), working
        directory, node count, name and owner, for a run that adopts it."""
        checked = checked_id(job_id)
        shown = await self._run(["scontrol", "show", "job", "-o", checked], what=f"show job {job_id}")
        fields = sp.parse_scontrol_job(shown.stdout)
        script = await self._run(["scontrol", "write", "batch_script", checked, "-"], what=f"batch script of {job_id}")
        return JobSubmission(
            job_id=checked,
            name=fields.get("JobName", ""),
            user=fields.get("UserId", "").split("(", 1)[0],
            workdir=fields.get("WorkDir", "/"),
            nodes=sp.parse_int(fields.get("NumNodes", "1").split("-", 1)[0], 1),
            script=script.stdout,
            comment=fields.get("Comment", ""),
            partition=fields.get("Partition", ""),
        )

    def submit_as_refusal(self, user: str) -> str | None:
        """Why this worker cannot submit a job as `user` (None: it can). Slurm lets only root
        submit for another user (`sbatch --uid`)."""
        if not user or user == _me() or os.geteuid() == 0:
            return None
        return f"the worker runs as {_me()}, and Slurm lets only root submit a job as another user ({user})"

    async def partition_nodes(self, partition: str) -> list[str]:
        """The nodes of one partition (sinfo -N prints one per line)."""
        result = await self._run(["sinfo", "-h", "-N", "-p", _checked_partition(partition), "-o", "%N"], what="sinfo")
        return list(dict.fromkeys(line.strip() for line in result.stdout.splitlines() if line.strip()))

    async def cluster_name(self) -> str:
        """`ClusterName` from slurmctld's configuration (for run ids derived from cluster and job)."""
        result = await self._run(["scontrol", "show", "config"], what="show config")
        for line in result.stdout.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() == "ClusterName":
                return value.strip()
        raise SchedulerError("scontrol show config printed no ClusterName")

    # --- reading -------------------------------------------------------------------------------

    async def _squeue(self, selection: list[str]) -> list[facts.SqueueJob]:
        delims = sp.Delimiters.fresh()
        argv = ["squeue", "-a", "-h", "-t", "all", *selection, "-O", facts.squeue_format(delims)]
        result = await self._run(argv, what="squeue")
        return [facts.squeue_job(row) for row in sp.split_records(result.stdout, delims, facts.SQUEUE_FIELDS)]

    async def squeue_rows(self, ids: list[str]) -> list[facts.SqueueJob]:
        """squeue's rows for these jobs (one call; unknown ids left out), without exclusions."""
        return await self._squeue_ids([checked_id(i) for i in ids])

    async def _squeue_ids(self, ids: list[str]) -> list[facts.SqueueJob]:
        try:
            jobs = await self._squeue(["-j", ",".join(ids)])
        except JobNotFound:  # squeue -j with one unknown id fails; with several it lists the rest
            return []
        return [job for job in jobs if job.job_id in ids]

    async def _complete(self, jobs: list[facts.SqueueJob], *, fresh: bool) -> dict[str, JobObservation]:
        """Observations for squeue rows: exclusions, and for failed jobs steps and node states."""
        return await self.complete_rows(await self._with_exclusions(jobs, fresh))

    async def complete_rows(self, detailed: list[tuple[facts.SqueueJob, list[str]]]) -> dict[str, JobObservation]:
        """Observations for rows with their exclusions; failed jobs get their per-node step
        results (sacct) and which of their nodes are unusable now (sinfo)."""
        failing = [job for job, _ in detailed if facts.needs_failure_facts(job.state[0])]
        tasks = await self.tasks_of([(j.job_id, j.restart_count) for j in failing]) if failing else {}
        node_list = await self.nodes() if failing else []
        return {
            job.job_id: facts.observation(
                job, excluded, tasks.get(job.job_id), facts.failed_nodes(job.nodes, node_list)
            )
            for job, excluded in detailed
        }

    async def _with_exclusions(
        self, jobs: list[facts.SqueueJob], fresh: bool
    ) -> list[tuple[facts.SqueueJob, list[str]]]:
        """Each job with its exclusion list: remembered where Slurm cannot have changed it
        (`SqueueJob.exclusion_key`), the rest read with one more squeue call for all of them."""
        known: dict[str, list[str]] = {}
        for job in jobs:
            key = job.exclusion_key
            if not fresh and key is not None and key in self._exclusions:
                known[job.job_id] = self._exclusions[key]
        missing = [job for job in jobs if job.job_id not in known]
        if missing:
            read = await self._exclusion_lists([job.job_id for job in missing])
            for job in missing:
                known[job.job_id] = read.get(job.job_id, [])
                if job.exclusion_key is not None:
                    self._remember(job.exclusion_key, known[job.job_id])
        return [(job, known[job.job_id]) for job in jobs]

    async def _exclusion_lists(self, job_ids: list[str]) -> dict[str, list[str]]:
        """`squeue -o '%A %x'`: the one format with the exclusion list (`-O` has none)."""
        delims = sp.Delimiters.fresh()
        fmt = f"%A{delims.field}%x{delims.record}"
        argv = ["squeue", "-a", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", fmt]
        try:
            result = await self._run(argv, what="squeue")
        except JobNotFound:  # gone since the first read: nothing excluded any more
            return {}
        rows = sp.split_records(result.stdout, delims, ["JobID", "ExcNodeList"])
        return {row["JobID"].strip(): sp.expand_hostlist(row["ExcNodeList"]) for row in rows}

    async def detail(self, job_id: str) -> JobObservation | None:
        """One job, complete and fresh, from `scontrol show job -o` (with squeue for its exact
        name and comment): for the moment right before an action. None if Slurm forgot it."""
        jobs = await self._squeue_ids([checked_id(job_id)])
        if not jobs:
            return (await self.accounting([job_id])).get(job_id)
        try:
            result = await self._run(["scontrol", "show", "job", "-o", job_id], what=f"show job {job_id}")
        except JobNotFound:  # purged between the two reads: squeue's row is the last word
            return (await self._complete(jobs, fresh=True))[job_id]
        fields = sp.parse_scontrol_job(result.stdout, name=jobs[0].name)
        job = _updated(jobs[0], fields)
        excluded = facts.excluded_from_scontrol(fields)
        if job.exclusion_key is not None:
            self._remember(job.exclusion_key, excluded)
        return (await self.complete_rows([(job, excluded)]))[job_id]

    def _remember(self, key: tuple[object, ...], excluded: list[str]) -> None:
        self._exclusions[key] = excluded
        self._exclusions.move_to_end(key)
        while len(self._exclusions) > _EXCLUSION_MEMO_SIZE:
            self._exclusions.popitem(last=False)

    async def tasks_of(self, runs: list[tuple[str, int]]) -> dict[str, list[TaskResult]]:
        """Per-node results of each job's current run (job id, restart count), from its steps in
        accounting. Empty when accounting has not recorded that run yet, keeps none, or cannot
        be reached: they add to what slurmctld said, and a failed job must not go unreported
        while slurmdbd is away (srun's lines in the job's output name the node too)."""
        try:
            rows = await self._sacct(["-j", ",".join(job_id for job_id, _ in runs)])
        except SchedulerError as err:  # SchedulerUnavailable included, on purpose
            log.warning("no job steps from accounting", error=str(err))
            return {}
        by_job = facts.sacct_runs(rows)
        out = {}
        for job_id, restart_count in runs:
            job_runs = by_job.get(job_id, [])
            if len(job_runs) == restart_count + 1:
                out[job_id] = facts.tasks_from_steps(job_runs[-1].steps)
        return out

    async def accounting(self, job_ids: list[str]) -> dict[str, JobObservation]:
        """Jobs slurmctld no longer lists, from accounting (one `sacct -D` call)."""
        rows = await self._sacct(["-j", ",".join(job_ids)])
        runs = facts.sacct_runs(rows)
        found = {i: facts.sacct_observation(i, runs[i]) for i in job_ids if runs.get(i)}
        if any(facts.needs_failure_facts(o.state) for o in found.values()):
            nodes = await self.nodes()
            found = {i: _with_failed_nodes(o, nodes) for i, o in found.items()}
        return found

    async def _find_in_accounting(self, token: str) -> str | None:
        users = ["--allusers"] if os.geteuid() == 0 else [f"--user={_me()}"]
        rows = await self._sacct(["-X", *users, "-S", self.find_window])
        ids = [r["JobIDRaw"].strip() for r in rows if parse_comment(sp.clean(r["Comment"])).token == token]
        return max(ids, key=id_order) if ids else None

    async def _sacct(self, selection: list[str]) -> list[dict[str, str]]:
        sep = sp.Delimiters.fresh().field
        argv = [
            "sacct",
            "-n",
            "-P",
            "-D",
            f"--delimiter={sep}",
            *selection,
            "-o",
            ",".join(facts.SACCT_FIELDS),
        ]
        try:
            result = await self._run(argv, what="sacct")
        except AccountingDisabled:
            # Many small clusters run without slurmdbd. A job slurmctld has purged (MinJobAge,
            # 300 s by default) is then simply unknown, which the watch treats as its end.
            if not self._said_no_accounting:
                log.warning("no job accounting: a finished job is known only until slurmctld purges it")
                self._said_no_accounting = True
            return []
        return sp.split_lines(result.stdout, sep, facts.SACCT_FIELDS)

    # --- running -------------------------------------------------------------------------------

    async def _run(
        self,
        argv: list[str],
        *,
        what: str,
        env: Mapping[str, str] | None = None,
        errors_in_output: bool = False,
        requeue: bool = False,
    ) -> Completed:
        result = await self._runner(argv, input=None, env=env or self._env, timeout=self.timeout)
        if failed(result, errors_in_output=errors_in_output):
            raise_for(result, what, requeue=requeue)
        return result


# --- helpers -----------------------------------------------------------------------------------


def sbatch_options(request: SubmitRequest, *, as_user: str = "") -> list[str]:
    """sbatch's options for a run's job: output kept across requeues (`--open-mode=append`),
    requeue allowed, the token in the comment, the worker's environment plus the request's.
    `--nodes` only when the script does not already ask for that many: its own `--nodes=2-4`
    would otherwise be narrowed to exactly 2. A resubmission names the failed job's output file
    (appended to, as a requeue would) and, from root, its owner (`--uid`)."""
    # The user's own options first, as typed: on a clash sbatch takes the last, recovery's.
    argv = ["sbatch", *request.sbatch_options, "--parsable", f"--job-name={request.name}"]
    if min_nodes(request.script) != request.nodes:
        argv.append(f"--nodes={request.nodes}")
    argv += [
        f"--chdir={request.workdir}",
        f"--comment={submission_comment(request.script, request.token, request.labels)}",
        "--open-mode=append",
        "--requeue",
        "--export=ALL",
    ]
    if request.excluded_nodes:
        argv.append(f"--exclude={','.join(checked_node(n) for n in request.excluded_nodes)}")
    if request.output:
        argv.append(f"--output={request.output}")
    if request.hold:
        # priority 0 at submission: squeue shows the reason JobHeldUser until `scontrol release`
        argv.append("--hold")
    if as_user and as_user != _me():
        # numbers: 25.11's sbatch refuses a user name here ("Invalid --uid specification"), and
        # without --gid the job would keep root's group
        owner = _owner(as_user)
        argv += [f"--uid={owner.pw_uid}", f"--gid={owner.pw_gid}"]
    return argv


def sbatch_only(request: SubmitRequest) -> bool:
    """Whether only sbatch can submit this as asked: `#SBATCH` lines in the script or sbatch
    options the user typed (sbatch parses both on the client; libslurm and slurmrestd have no
    parser for them), another owner (`sbatch --uid`, with `submit_as_refusal`'s rules), or a held
    submission (a pipeline's stage: one path for it, `--hold`, proven on the real cluster)."""
    other_owner = bool(request.user and request.user != _me())
    return bool(directives(request.script) or request.sbatch_options or request.hold or other_owner)


def _me() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _owner(user: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(user)
    except KeyError:
        raise SchedulerError(f"no such user on this machine: {user!r}") from None


def parse_parsable(stdout: str) -> str:
    """`sbatch --parsable` prints `JOBID` or `JOBID;CLUSTER`."""
    job_id = stdout.strip().splitlines()[-1].split(";")[0].strip() if stdout.strip() else ""
    if not _JOB_ID.match(job_id):
        raise SchedulerError(f"sbatch printed no job id: {stdout.strip()[:200]!r}")
    return job_id


def request_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith(_REQUEST_ENV_DROPPED)}


def _updated(job: facts.SqueueJob, fields: dict[str, str]) -> facts.SqueueJob:
    """squeue's row with the fresher scontrol facts (name, comment and paths stay squeue's:
    scontrol's free text is not delimiter-safe)."""
    if "JobState" not in fields:
        return job
    priority = sp.clean(fields.get("Priority", ""))
    restarts = sp.parse_int(fields.get("Restarts", ""), job.restart_count)
    reason = job.reason
    if fields["JobState"] != job.raw_state or restarts != job.restart_count:
        # scontrol -o writes the reason's spaces as underscores; squeue's words are exact but
        # describe the earlier state.
        reason = sp.clean(fields.get("Reason", "")).replace("_", " ")
    return replace(
        job,
        raw_state=fields["JobState"],
        reason=reason,
        restart_count=restarts,
        priority=int(priority) if priority.isdigit() else job.priority,
        exit_text=fields.get("ExitCode", job.exit_text),
        nodes=sp.expand_hostlist(fields.get("NodeList", "")),
        batch_host=sp.clean(fields.get("BatchHost", job.batch_host)),
        submitted_at=sp.parse_time(fields.get("SubmitTime", "")) or job.submitted_at,
        started_at=sp.parse_time(fields.get("StartTime", "")),
        ended_at=sp.parse_time(fields.get("EndTime", "")),
        partition=sp.clean(fields.get("Partition", job.partition)),
    )


def _with_failed_nodes(obs: JobObservation, nodes: list[NodeInfo]) -> JobObservation:
    if not facts.needs_failure_facts(obs.state):
        return obs
    return obs.model_copy(update={"failed_nodes": facts.failed_nodes(obs.nodes, nodes)})


def one_line_reason(reason: str) -> str:
    """One line, printable, short: Slurm shows the reason in `sinfo -R` and keeps it in its state."""
    flat = "".join(c if c.isprintable() else " " for c in reason)
    return " ".join(flat.split())[:DRAIN_REASON_CHARS] or "recovery: suspect node"


def checked_id(job_id: str) -> str:
    if not _JOB_ID.match(job_id):
        raise JobNotFound(f"{job_id!r} is not a Slurm job id")
    return job_id


def checked_node(node: str) -> str:
    if not _NODE_NAME.match(node):
        raise SchedulerError(f"{node!r} is not a node name")
    return node


def _checked_partition(partition: str) -> str:
    if not _PARTITION.match(partition):
        raise SchedulerError(f"{partition!r} is not a partition name")
    return partition


def id_order(job_id: str) -> tuple[int, int]:
    base, _, task = job_id.partition("_")
    return int(base), int(task or 0)
