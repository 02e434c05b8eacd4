"""Choosing how `recovery` talks to Slurm: pyslurm (libslurm), slurmrestd, or Slurm's commands.

All three backends implement the `Scheduler` protocol and the Slurm extras (`opted_in_jobs`,
`runs`, `submission`, `cluster_name`, `drain`). `auto` (the worker config's default) takes
pyslurm where it imports and was built for the release the controller runs (pyslurm 25.11.x for
Slurm 25.11); otherwise slurmrestd when the config names one, otherwise the commands. It says in
one log line which it took and why.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Literal

import structlog

from recovery.activities.schedulers import slurm_pyslurm_calls as calls
from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.schedulers.slurm import SlurmScheduler
from recovery.activities.schedulers.slurm_pyslurm import PyslurmScheduler
from recovery.activities.schedulers.slurmrestd import RestSlurmScheduler, read_token

log = structlog.get_logger("recovery.slurm")

Backend = Literal["auto", "pyslurm", "rest", "commands"]
SlurmBackend = SlurmScheduler | RestSlurmScheduler | PyslurmScheduler


def make_slurm_scheduler(
    backend: Backend = "commands",
    *,
    conf: str | None = None,
    restd_socket: str | None = None,
    restd_url: str | None = None,
    token: str | None = None,
    token_file: str | None = None,
    user: str | None = None,
    timeout: float = 30.0,
) -> SlurmBackend:
    """`commands`: sbatch/squeue/scontrol/sacct/sinfo with `conf` (default SLURM_CONF).
    `pyslurm`: libslurm through pyslurm (fails here, in one line, if pyslurm does not import).
    `rest`: slurmrestd on `restd_socket` (default SLURM_RESTD_SOCKET) or at `restd_url` with a
    JWT (`token`, or read from `token_file`). `auto`: see the module doc. What pyslurm and REST
    cannot do runs as commands."""
    commands = SlurmScheduler(conf, timeout=timeout)
    if backend == "auto":
        backend = choose_backend(conf, rest_configured=bool(restd_socket or restd_url), timeout=timeout)
    if backend == "commands":
        return commands
    if backend == "pyslurm":
        found = pyslurm_release(conf, timeout)
        if not found.pyslurm:
            raise SchedulerError(f"slurm.backend pyslurm: {found.error or 'pyslurm is not installed'}")
        if (why := pyslurm_mismatch(found)) is not None:
            log.warning("slurm backend pyslurm chosen in the config", problem=why)
        return PyslurmScheduler(conf, timeout=timeout, commands=commands)
    return RestSlurmScheduler(
        socket=restd_socket,
        url=restd_url,
        token=token or read_token(token_file),
        user=user,
        timeout=timeout,
        commands=commands,
    )


def choose_backend(conf: str | None, *, rest_configured: bool, timeout: float = 30.0) -> Backend:
    """`auto`'s choice: pyslurm where it imports and matches the controller's release."""
    found = pyslurm_release(conf, timeout)
    why = pyslurm_mismatch(found)
    if why is None:
        log.info("slurm backend", backend="pyslurm", pyslurm=found.pyslurm, slurm=found.controller)
        return "pyslurm"
    fallback: Backend = "rest" if rest_configured else "commands"
    log.info("slurm backend", backend=fallback, why_not_pyslurm=why)
    return fallback


def pyslurm_mismatch(found: calls.Release) -> str | None:
    """Why pyslurm cannot serve this cluster, or None when it can."""
    if not found.pyslurm:
        return found.error or "pyslurm is not installed"
    if not found.controller:
        return f"pyslurm {found.pyslurm} cannot read the controller's release: {found.error}"
    if _major_minor(found.pyslurm) != _major_minor(found.controller):
        built_for = _major_minor(found.pyslurm)
        return f"pyslurm {found.pyslurm} is built for Slurm {built_for}, the controller runs {found.controller}"
    return None


def pyslurm_release(conf: str | None, timeout: float = 30.0) -> calls.Release:
    """pyslurm's release and the controller's, asked in a child process as every pyslurm call
    is (importing pyslurm loads libslurm, which must not happen in the worker)."""
    pool = ProcessPoolExecutor(
        1, mp_context=get_context("spawn"), initializer=calls.prepare, initargs=(conf, os.getpid())
    )
    try:
        found = pool.submit(calls.release_or_reason).result(timeout)
    except (FutureTimeout, BrokenProcessPool) as err:
        pool.shutdown(wait=False, cancel_futures=True)  # a child stuck in libslurm is left to end
        return calls.Release(pyslurm="", controller="", error=f"pyslurm did not answer: {err!r}")
    pool.shutdown(wait=True)
    return found


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])
