"""`PyslurmScheduler`: the `Scheduler` interface over pyslurm, Slurm's C API (libslurm), for a
cluster of the release pyslurm was built for (25.11 with pyslurm 25.11.x; install `.[slurm]`).

pyslurm's calls run in a child process, not in a thread: its Cython calls into libslurm hold
the GIL for their whole length (none releases it), so a call in a thread would still stop every
other thread of the worker, the event loop included, while slurmctld answers, and for 10-20 s
when slurmctld is away. A process also keeps a crash inside libslurm out of the worker. The
child is started with `spawn` (the worker has threads; `fork` would copy their locks), imports
pyslurm on its first call, and reads `SLURM_CONF` (given, or the worker's) when it does.

Through pyslurm (`slurm_pyslurm_calls`): `observe` (one `slurm_load_job` per id up to 16,
else one `slurm_load_jobs`), `find` among the jobs slurmctld lists, `opted_in_jobs`, `nodes`,
`submit` of a script without `#SBATCH` lines, `requeue_hold`, `set_excluded_nodes`, `release`,
`cancel`, `drain`, `submission`, `cluster_name`.

Through Slurm's commands (a `SlurmScheduler` inside), one operation each, because pyslurm
cannot do it as the commands backend does (docs/slurm.md lists them):

- `submit` of a script with `#SBATCH` lines: sbatch reads them on the client, libslurm has no
  parser, and pyslurm's own (`load_sbatch_options`) knows part of sbatch's options and drops
  the rest silently;
- clearing a job's exclusions: pyslurm sends nothing for an empty list;
- the exit code of a failed job: pyslurm folds codes of 128 and above (137 reads as 9), so
  failed jobs' codes come from one `squeue` for them;
- accounting (`sacct`): jobs slurmctld no longer lists, per-node step results, `runs`, and
  `find` of a finished job, with the commands backend's parser of `sacct -D` runs.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import pwd
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import TypeVar

import structlog

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers import slurm_pyslurm_calls as calls
from recovery.activities.schedulers.base import SchedulerError, SchedulerUnavailable, first_sight
from recovery.activities.schedulers.slurm import (
    SlurmScheduler,
    checked_id,
    checked_node,
    id_order,
    one_line_reason,
    request_env,
    sbatch_only,
)
from recovery.activities.schedulers.slurm_commands import Completed, raise_for, slurm_env
from recovery.activities.schedulers.slurm_comment import parse_comment, submission_comment
from recovery.workflows.models import JobObservation, JobSubmission, NodeInfo, SubmitRequest

log = structlog.get_logger("recovery.slurm")
T = TypeVar("T")


class PyslurmScheduler:
    name = "slurm"

    def __init__(
        self,
        conf: str | None = None,
        *,
        timeout: float = 30.0,
        processes: int = 2,
        commands: SlurmScheduler | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`conf`: slurm.conf (default `SLURM_CONF`). `timeout`: seconds per call (the call is
        then reported unavailable; libslurm's own timeouts end it in the child). `processes`:
        children, so that one slow call does not queue every other behind it. `commands` does
        what pyslurm cannot (the module doc)."""
        self.conf = conf or (env or os.environ).get("SLURM_CONF")
        self.timeout = timeout
        self.commands = commands or SlurmScheduler(self.conf, timeout=timeout, env=env)
        self._env = slurm_env(self.conf, env)
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    # --- the Scheduler protocol --------------------------------------------------------------

    async def submit(self, request: SubmitRequest) -> JobObservation:
        if sbatch_only(request):  # #SBATCH lines, typed sbatch options, or another owner
            return await self.commands.submit(request)
        submission = calls.Submission(
            script=request.script,
            args=list(request.args),
            name=request.name,
            nodes=request.nodes,
            workdir=request.workdir,
            comment=submission_comment(request.script, request.token),
            excluded_nodes=[checked_node(n) for n in request.excluded_nodes],
            output=request.output,
            environment={**self._env, **request_env(request.env)},
        )
        job_id = str(await self._call(calls.submit, submission, what="submit"))
        log.info("pyslurm submit", job_id=job_id, name=request.name, nodes=request.nodes)
        return await first_sight(self, job_id, request)

    async def find(self, token: str) -> JobObservation | None:
        if not token:
            return None
        # As the commands' find: the worker's own jobs, or everyone's for root, which resubmits a
        # job as its owner (sbatch --uid), so another user's job cannot pose as a run's.
        me = None if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        listed = await self._jobs(None)
        mine = [(j, x) for j, x in listed if me in (None, j.user) and parse_comment(j.comment).token == token]
        if mine:
            newest = max(mine, key=lambda pair: id_order(pair[0].job_id))
            return (await self._complete([newest]))[newest[0].job_id]
        return await self.commands.find(token)  # finished and purged: accounting

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        ids = list(dict.fromkeys(j for j in job_ids if j.isdigit()))
        if not ids:
            return {}
        result = await self._complete(await self._jobs([int(i) for i in ids]))
        missing = [i for i in ids if i not in result]
        if missing:
            result.update(await self.commands.accounting(missing))
        return result

    async def requeue_hold(self, job_id: str) -> None:
        await self._call(calls.requeue_hold, int(checked_id(job_id)), what=f"requeuehold {job_id}", requeue=True)

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        if not nodes:
            await self.commands.set_excluded_nodes(job_id, nodes)  # pyslurm cannot clear them
            return
        checked = [checked_node(n) for n in nodes]
        await self._call(calls.set_excluded_nodes, int(checked_id(job_id)), checked, what=f"update {job_id}")

    async def release(self, job_id: str) -> None:
        await self._call(calls.release_job, int(checked_id(job_id)), what=f"release {job_id}")

    async def cancel(self, job_id: str) -> None:
        await self._call(calls.cancel, int(checked_id(job_id)), what=f"cancel {job_id}")

    async def drain(self, node: str, reason: str) -> None:
        await self._call(calls.drain, checked_node(node), one_line_reason(reason), what=f"drain {node}")

    def opted_in(self, observation: JobObservation) -> bool:
        return parse_comment(observation.comment).opted_in

    async def nodes(self) -> list[NodeInfo]:
        return await self._call(calls.nodes, what="load nodes")

    # --- beyond the protocol -------------------------------------------------------------------

    async def opted_in_jobs(self, partitions: list[str] | None = None) -> list[JobObservation]:
        wanted = set(partitions or [])
        jobs = [
            (job, excluded)
            for job, excluded in await self._jobs(None)
            if parse_comment(job.comment).opted_in and (not wanted or wanted & set(job.partition.split(",")))
        ]
        found = await self._complete(jobs)
        return [found[job.job_id] for job, _ in jobs]

    async def runs(self, job_id: str) -> list[JobObservation]:
        return await self.commands.runs(job_id)

    async def submission(self, job_id: str) -> JobSubmission:
        checked = checked_id(job_id)
        fields = await self._call(calls.submission_fields, int(checked), what=f"show job {job_id}")
        return JobSubmission(
            job_id=checked,
            name=fields["name"],
            user=fields["user"],
            workdir=fields["workdir"],
            nodes=int(fields["nodes"]),
            script=fields["script"],
            comment=fields["comment"],
            partition=fields["partition"],
        )

    async def cluster_name(self) -> str:
        name = await self._call(calls.cluster_name, what="load config")
        if not name:
            raise SchedulerError("slurmctld's configuration has no ClusterName")
        return name

    async def release_info(self) -> calls.Release:
        """pyslurm's release and the controller's (for `auto`, and for operators)."""
        return await self._call(calls.release_or_reason, what="load config")

    # --- reading -------------------------------------------------------------------------------

    async def _jobs(self, ids: list[int] | None) -> list[tuple[facts.SqueueJob, list[str]]]:
        return await self._call(calls.jobs, ids, what="load jobs")

    async def _complete(self, jobs: list[tuple[facts.SqueueJob, list[str]]]) -> dict[str, JobObservation]:
        """Observations, with what the commands add for failed jobs: their exit codes (see the
        module doc), per-node step results, and which of their nodes are unusable now."""
        # failed, timed out, node failure: the codes diagnosis reads (a cancel's code is Slurm's)
        failed = [job.job_id for job, _ in jobs if facts.needs_failure_facts(job.state[0])]
        if failed:
            exits = {row.job_id: row.exit_text for row in await self.commands.squeue_rows(failed)}
            jobs = [(_with_exit(job, exits.get(job.job_id)), excluded) for job, excluded in jobs]
        return await self.commands.complete_rows(jobs)

    # --- running -------------------------------------------------------------------------------

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self._processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=calls.prepare,
                initargs=(self.conf, os.getpid()),
            )
        return self._pool

    async def _call(self, fn: Callable[..., T], *args: object, what: str, requeue: bool = False) -> T:
        """One call in the child, with the timeout, Slurm's refusals classified as the commands'
        are, and a dead child replaced."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                return await loop.run_in_executor(self._executor(), functools.partial(fn, *args))
        except TimeoutError as err:
            raise SchedulerUnavailable(f"pyslurm {what} did not answer within {self.timeout:g}s") from err
        except BrokenProcessPool as err:
            self.close()
            raise SchedulerUnavailable(f"pyslurm {what}: its process ended ({err})") from err
        except calls.SlurmApiError as err:
            raise_for(Completed([what], 1, "", err.message), what, requeue=requeue)
            raise AssertionError("raise_for returned") from err  # pragma: no cover
        except ImportError as err:
            raise SchedulerError(f"pyslurm does not import: {err}") from err


def _with_exit(job: facts.SqueueJob, exit_text: str | None) -> facts.SqueueJob:
    return job if exit_text is None else replace(job, exit_text=exit_text)
