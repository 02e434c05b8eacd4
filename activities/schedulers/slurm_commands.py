"""Running Slurm's commands, and turning their failures into the scheduler errors, in one place.

Every command runs from an argument list (`asyncio.create_subprocess_exec`, never a shell), so a
job name or comment is one argument whatever it holds. Each call has a timeout; a command still
running at the timeout, or when the calling activity is cancelled, is killed and reaped.

Classification (`raise_for`), from the words Slurm prints:

- SchedulerUnavailable: slurmctld or slurmdbd cannot be reached, or the call timed out; the same
  call may work later ("Unable to contact slurm controller", "Socket timed out", "Zero Bytes were
  transmitted", "Connection refused", ...). 22.05's `scontrol requeuehold` says only "Unexpected
  message received" when slurmctld is down, so that counts as unavailable too.
- JobNotFound: "Invalid job id specified".
- JobNotRequeueable, for requeue commands only: "Requested operation is presently disabled"
  (a --no-requeue job), "Only batch jobs are accepted" (an salloc/srun job).
- AccountingDisabled: `sacct` on a cluster without slurmdbd ("Slurm accounting storage is
  disabled"); callers carry on without the history (see `SlurmScheduler._sacct`).
- SchedulerError: anything else Slurm refused, with Slurm's own message on one line.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from recovery.activities.schedulers.base import JobNotFound, JobNotRequeueable, SchedulerError, SchedulerUnavailable

# ESLURM_INVALID_JOB_ID in slurm_errno.h: the errno libslurm and slurmrestd give for an unknown job.
SLURM_INVALID_JOB_ID = 2017


class AccountingDisabled(SchedulerError):
    """The cluster keeps no job accounting (no slurmdbd): there is no history to read."""


UNAVAILABLE_MARKERS = (
    "unable to contact slurm controller",
    "socket timed out",
    "zero bytes were transmitted",
    "connection refused",
    "connection timed out",
    "connection reset by peer",  # slurmctld stopping while it answers (seen on 25.11)
    "unexpected message received",
    "communication connection failure",
    "communications connection failure",
    "backup controller in standby mode",
    "transport endpoint is not connected",
    "problem talking to the database",
    "unable to connect to database",
    "slurmdbd: connection",
    "resource temporarily unavailable",
    "slurmctld is down",
)
NOT_FOUND_MARKERS = ("invalid job id specified", "invalid job id")
NO_ACCOUNTING_MARKER = "accounting storage is disabled"
# What `scontrol requeue[hold]` says of a job submitted with --no-requeue (or on a cluster with
# JobRequeue=0 and no --requeue), and of a job that is not a batch job.
NOT_REQUEUEABLE_MARKERS = ("requested operation is presently disabled", "only batch jobs are accepted")

# Variables that change what Slurm's client commands print or which jobs they list. The worker's
# environment may hold them for a person's convenience; the parsers need Slurm's defaults.
_OUTPUT_VARIABLES = ("SLURM_TIME_FORMAT", "SLURM_JWT", "SQUEUE_", "SACCT_", "SINFO_", "SCONTROL_")
_MESSAGE_LIMIT = 400


@dataclass(frozen=True)
class Completed:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


class Runner(Protocol):
    """Runs one command. Tests wrap `run_process` with one of these to count invocations."""

    async def __call__(
        self, argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float
    ) -> Completed: ...


async def run_process(argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float) -> Completed:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
        )
    except OSError as err:  # FileNotFoundError, PermissionError
        raise SchedulerError(f"cannot run {argv[0]}: {err.strerror or err} (are Slurm's commands installed?)") from err
    try:
        async with asyncio.timeout(timeout):
            out, err_out = await proc.communicate(input)
    except TimeoutError as err:
        raise SchedulerUnavailable(f"{' '.join(argv[:2])} did not answer within {timeout:g}s") from err
    finally:
        if proc.returncode is None:  # timed out or cancelled: never leave it behind
            proc.kill()
            await proc.wait()
    return Completed(list(argv), proc.returncode or 0, _text(out), _text(err_out))


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def slurm_env(conf: str | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment Slurm commands run with: the worker's, with `SLURM_CONF` set when given,
    Slurm's default time format, and no variables that reshape output."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(_OUTPUT_VARIABLES)}
    if conf:
        env["SLURM_CONF"] = conf
    env["SLURM_TIME_FORMAT"] = "standard"
    return env


def message(result: Completed) -> str:
    """Slurm's complaint as one line: its error lines (or all output), prefixes trimmed."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()] or lines or [result.stdout.strip()]
    text = "; ".join(_trim(line) for line in errors if line) or f"exit status {result.returncode}"
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _trim(line: str) -> str:
    for prefix in ("error: ", "fatal: "):
        head, sep, tail = line.partition(prefix)
        if sep and head.endswith(": ") and " " not in head.strip(": "):
            return tail
    return line


def failed(result: Completed, *, errors_in_output: bool = False) -> bool:
    """Whether the command failed. `errors_in_output` for commands that print an error and still
    exit 0 (22.05's scancel does, for an unknown job)."""
    if result.returncode != 0:
        return True
    return errors_in_output and any(" error: " in f" {line}" for line in result.stderr.splitlines())


def raise_for(result: Completed, what: str, *, requeue: bool = False) -> None:
    """Raise the scheduler error that `result`'s failure means. `what` says which call failed;
    `requeue` that it was a requeue, whose refusals mean the job must be resubmitted instead."""
    text = message(result)
    lowered = f"{result.stderr}\n{result.stdout}".lower()
    if any(marker in lowered for marker in UNAVAILABLE_MARKERS):
        raise SchedulerUnavailable(f"{what}: {text}")
    if any(marker in lowered for marker in NOT_FOUND_MARKERS):
        raise JobNotFound(f"{what}: {text}")
    if requeue and any(marker in lowered for marker in NOT_REQUEUEABLE_MARKERS):
        raise JobNotRequeueable(f"{what}: {text}")
    if NO_ACCOUNTING_MARKER in lowered:
        raise AccountingDisabled(f"{what}: {text}")
    if "could not establish a configuration source" in lowered:
        raise SchedulerError(f"{what}: no Slurm configuration found (set SLURM_CONF): {text}")
    raise SchedulerError(f"{what}: {text}")
