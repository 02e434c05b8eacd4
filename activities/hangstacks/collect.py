"""The worker's side: run the node helper on every node of a hung job, then judge.

Slurm: `srun --jobid=J --overlap -w NODE -N1 -n1 [srun_args] PYTHON -m recovery.activities.hangstacks.node
--job-id J --node NODE ...`, a step of the hung job itself (it holds the nodes; `--overlap` shares
its resources), so `PYTHON` must exist at the same path on the nodes, as for the health probe.
Local: the same module, run here, with the node's process group from the local cluster daemon.

Everything is bounded by one timeout. A node that cannot be read is evidence that says so; the
activity never fails for it, because the restart must not wait on evidence.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

import structlog
from pydantic import ValidationError
from temporalio import activity

from recovery.activities.hangstacks.judge import judge
from recovery.activities.hangstacks.model import NodeStacks
from recovery.activities.schedulers.base import Scheduler, SchedulerError
from recovery.activities.schedulers.slurm_commands import Runner, message, run_process, slurm_env
from recovery.workflows.models import HangStacks, HangStacksInput

log = structlog.get_logger("recovery.hangstacks")

_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")  # one node: no hostlist brackets
_JOB_ID = re.compile(r"^[0-9]+(_[0-9]+)?$")
T = TypeVar("T")


@runtime_checkable
class HasProcessGroups(Protocol):
    """A scheduler that can say which process group runs each node's share of a job (local)."""

    async def process_groups(self, job_id: str) -> dict[str, int]: ...


@dataclass(frozen=True)
class StackCollection:
    """The worker config's `hang_stacks` section. `timeout` bounds the whole collection."""

    enabled: bool = True
    timeout: float = 60.0
    samples: int = 2
    interval: float = 1.0
    native: bool = True
    parallel: int = 16
    py_spy: str | None = None
    srun_args: tuple[str, ...] = ()
    python: str = sys.executable
    slurm_conf: str | None = None

    def dump_timeout(self) -> float:
        """Seconds per py-spy run on a node: the helper's worst case (every dump retried without
        native frames) must end well within the whole collection's timeout."""
        spare = self.timeout * 0.8 - self.interval * max(0, self.samples - 1)
        return max(1.0, min(10.0, spare / (2 * max(1, self.samples))))


def helper_argv(cfg: StackCollection, job_id: str, node: str, pgid: int | None) -> list[str]:
    argv = [cfg.python, "-m", "recovery.activities.hangstacks.node", f"--job-id={job_id}", f"--node={node}"]
    argv += [f"--samples={cfg.samples}", f"--interval={cfg.interval:g}", f"--timeout={cfg.dump_timeout():g}"]
    argv += [] if cfg.native else ["--no-native"]
    argv += [f"--py-spy={cfg.py_spy}"] if cfg.py_spy else []
    argv += [f"--pgid={pgid}"] if pgid is not None else []
    return argv


def node_argv(cfg: StackCollection, scheduler: str, job_id: str, node: str, pgid: int | None = None) -> list[str]:
    """The command that reads `node`'s ranks: an argument list, never a shell string. Raises
    ValueError for a name that is not one node or a job id, or a scheduler it cannot reach into."""
    if not _NODE_NAME.match(node):
        raise ValueError(f"{node!r} is not a node name")
    if not _JOB_ID.match(job_id):
        raise ValueError(f"{job_id!r} is not a job id")
    if scheduler == "local":
        return helper_argv(cfg, job_id, node, pgid)
    if scheduler != "slurm":
        raise ValueError(f"no way to reach into a job on scheduler {scheduler!r}")
    srun = ["srun", f"--jobid={job_id}", "--overlap", "-w", node, "-N1", "-n1", "--quiet", *cfg.srun_args]
    return [*srun, *helper_argv(cfg, job_id, node, None)]


async def read_node(
    cfg: StackCollection,
    scheduler: str,
    job_id: str,
    node: str,
    *,
    pgid: int | None = None,
    timeout: float,
    env: Mapping[str, str],
    runner: Runner = run_process,
) -> NodeStacks:
    """One node's stacks. Never raises: what went wrong is the answer's `reason`."""
    try:
        argv = node_argv(cfg, scheduler, job_id, node, pgid)
    except ValueError as err:
        return NodeStacks(node=node, ok=False, reason=str(err))
    try:
        result = await runner(argv, input=None, env=env, timeout=max(1.0, timeout))
    except SchedulerError as err:  # could not start it, or it timed out (and was killed)
        return NodeStacks(node=node, ok=False, reason=f"the helper did not run: {err}")
    if result.returncode != 0:
        return NodeStacks(node=node, ok=False, reason=f"{argv[0]} exit status {result.returncode}: {message(result)}")
    return parse_node_output(node, result.stdout)


def parse_node_output(node: str, stdout: str) -> NodeStacks:
    """The helper's JSON is its last line: a site's task prolog may print before it."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return NodeStacks(node=node, ok=False, reason="the helper printed nothing")
    try:
        found = NodeStacks.model_validate_json(lines[-1])
    except ValidationError as err:
        why = f"the helper printed something unreadable: {lines[-1][:200]!r} ({err.error_count()} errors)"
        return NodeStacks(node=node, ok=False, reason=why)
    return found.model_copy(update={"node": node})


class StackActivities:
    """`collect_hang_stacks`: the evidence a hung attempt's ranks give, and the culprits."""

    def __init__(
        self,
        scheduler: Scheduler,
        config: StackCollection | None = None,
        *,
        runner: Runner = run_process,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.config = config or StackCollection()
        self.runner = runner
        self.env = env

    @activity.defn
    async def collect_hang_stacks(self, inp: HangStacksInput) -> HangStacks:
        cfg = self.config
        if not cfg.enabled:
            return HangStacks(collected=False, summary="stack collection is off (worker config hang_stacks.enabled)")
        if self.scheduler.name not in ("local", "slurm"):
            return HangStacks(collected=False, summary=f"no way to collect stacks on scheduler {self.scheduler.name}")
        started = time.monotonic()
        nodes = await _heartbeating(self._read_all(inp))
        verdict = judge(nodes, inp.nodes)
        log.info(
            "hang stacks",
            run_id=inp.run_id,
            job_id=inp.job_id,
            culprits=[c.node for c in verdict.culprits],
            seconds=round(time.monotonic() - started, 1),
            summary=verdict.summary,
        )
        return HangStacks(collected=True, summary=verdict.summary, culprits=verdict.culprits, evidence=verdict.evidence)

    async def _read_all(self, inp: HangStacksInput) -> list[NodeStacks]:
        cfg, name = self.config, self.scheduler.name
        deadline = time.monotonic() + cfg.timeout
        groups: dict[str, int] = {}
        if name == "local":
            if not isinstance(self.scheduler, HasProcessGroups):
                return [NodeStacks(node=n, ok=False, reason="the scheduler names no process groups") for n in inp.nodes]
            try:
                groups = await self.scheduler.process_groups(inp.job_id)
            except SchedulerError as err:
                return [NodeStacks(node=n, ok=False, reason=f"no process groups: {err}") for n in inp.nodes]
        env = self.env if self.env is not None else (slurm_env(cfg.slurm_conf) if name == "slurm" else dict(os.environ))
        gate = asyncio.Semaphore(max(1, cfg.parallel))

        async def one(node: str) -> NodeStacks:
            if name == "local" and node not in groups:
                return NodeStacks(node=node, ok=False, reason="the job runs nothing on this node now")
            async with gate:
                left = deadline - time.monotonic()
                if left <= 0:
                    why = f"not read: the {cfg.timeout:g}s for all nodes ran out"
                    return NodeStacks(node=node, ok=False, reason=why)
                return await read_node(
                    cfg, name, inp.job_id, node, pgid=groups.get(node), timeout=left, env=env, runner=self.runner
                )

        return list(await asyncio.gather(*(one(node) for node in inp.nodes)))


async def _heartbeating(work: Awaitable[T]) -> T:
    """Await `work`, heartbeating meanwhile: a worker killed mid-collection is noticed by the
    heartbeat timeout, not by the activity's (long) start-to-close timeout."""
    every = 2.0
    if activity.in_activity() and (limit := activity.info().heartbeat_timeout):
        every = min(every, limit.total_seconds() / 3)
    task = asyncio.ensure_future(work)
    while not task.done():
        if activity.in_activity():
            activity.heartbeat("collecting stacks")
        await asyncio.wait({task}, timeout=every)
    return task.result()
