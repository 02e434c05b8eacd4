"""Probing a node's GPUs from the worker: run the node probe there and read its answer.

`probe_node()` runs `python -m recovery.activities.gpu` on the node (`srun -w NODE ... --overlap`
on Slurm, directly for the local scheduler, whose nodes are all this machine) and never raises:
a probe that cannot run, times out or prints nonsense is a `GpuHealth` that says why.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence

from pydantic import TypeAdapter, ValidationError

from recovery.activities.gpu.readings import GpuHealth
from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.schedulers.slurm_commands import Runner, message, run_process, slurm_env

PROBE_MODULE = "recovery.activities.gpu"
PROBE_TIMEOUT_SECONDS = 60.0
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")  # one node: no hostlist brackets
_HEALTH: TypeAdapter[GpuHealth] = TypeAdapter(GpuHealth)


def probe_argv(
    node: str,
    scheduler_name: str,
    python: str,
    *,
    job_id: str | None = None,
    srun_args: Sequence[str] = (),
    immediate: int | None = None,
) -> list[str]:
    """The command that probes `node`: an argument list, never a shell string.

    Slurm: `srun -w NODE -N1 -n1 --overlap [--jobid=JOB | --immediate=S] [srun_args] PYTHON -m
    recovery.activities.gpu --node=NODE`. With `job_id` the probe is a step of that job, sharing its
    allocation (`--overlap`); without, srun asks for a new one, and `--immediate` makes it give
    up rather than queue behind the job holding the node. Local: the same Python command, run
    here. Raises ValueError for a name that is not one node, or an unknown scheduler."""
    if not _NODE_NAME.match(node):
        raise ValueError(f"{node!r} is not a node name")
    command = [python, "-m", PROBE_MODULE, f"--node={node}"]
    if scheduler_name == "local":
        return command
    if scheduler_name != "slurm":
        raise ValueError(f"no way to run a probe on scheduler {scheduler_name!r}")
    argv = ["srun", "-w", node, "-N1", "-n1", "--overlap"]
    if job_id is not None:
        argv.append(f"--jobid={job_id}")
    elif immediate is not None:
        argv.append(f"--immediate={immediate}")
    return [*argv, *srun_args, *command]


async def probe_node(
    node: str,
    scheduler_name: str,
    python: str,
    *,
    job_id: str | None = None,
    srun_args: Sequence[str] = (),
    timeout: float = PROBE_TIMEOUT_SECONDS,
    env: Mapping[str, str] | None = None,
    runner: Runner = run_process,
) -> GpuHealth:
    """Probe `node`'s GPUs by running `python -m recovery.activities.gpu` there. Never raises: a probe
    that cannot run, times out or prints nonsense is `available=False` with the reason, because
    attribution must carry on without it."""
    immediate = max(1, int(timeout / 2))  # srun gives up on an allocation before we give up on srun
    try:
        argv = probe_argv(node, scheduler_name, python, job_id=job_id, srun_args=srun_args, immediate=immediate)
    except ValueError as err:
        return _unprobed(node, str(err))
    run_env = env if env is not None else (slurm_env() if scheduler_name == "slurm" else dict(os.environ))
    try:
        result = await runner(argv, input=None, env=run_env, timeout=timeout)
    except SchedulerError as err:  # could not start it, or it timed out (and was killed)
        return _unprobed(node, f"the probe did not run: {err}")
    if result.returncode != 0:
        return _unprobed(node, f"the probe failed ({argv[0]} exit status {result.returncode}): {message(result)}")
    return parse_probe_output(node, result.stdout)


def parse_probe_output(node: str, stdout: str) -> GpuHealth:
    """The probe's JSON is its last line: a site's task prolog may print lines before it."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return _unprobed(node, "the probe printed nothing")
    try:
        health = read_health(lines[-1])
    except ValidationError as err:
        seen = lines[-1][:200]
        return _unprobed(node, f"the probe printed something unreadable: {seen!r} ({err.error_count()} errors)")
    return dataclasses.replace(health, node=node)


def read_health(line: str) -> GpuHealth:
    """The probe's JSON line, validated; raises pydantic's ValidationError."""
    return _HEALTH.validate_json(line)


def _unprobed(node: str, reason: str) -> GpuHealth:
    return GpuHealth(node=node, available=False, reason=reason)
