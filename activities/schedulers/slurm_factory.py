"""Choosing how `recovery` talks to Slurm: its commands (the default) or slurmrestd.

Both backends implement the `Scheduler` protocol and the Slurm extras (`opted_in_jobs`, `runs`);
a pyslurm backend for a Slurm 25.11 cluster would be a third class behind this same factory.
"""

from __future__ import annotations

from typing import Literal

from recovery.activities.schedulers.slurm import SlurmScheduler
from recovery.activities.schedulers.slurmrestd import RestSlurmScheduler, read_token

Backend = Literal["commands", "rest"]


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
) -> SlurmScheduler | RestSlurmScheduler:
    """`commands`: sbatch/squeue/scontrol/sacct/sinfo with `conf` (default SLURM_CONF).
    `rest`: slurmrestd on `restd_socket` (default SLURM_RESTD_SOCKET) or at `restd_url` with a
    JWT (`token`, or read from `token_file`); what its API cannot do runs as commands."""
    commands = SlurmScheduler(conf, timeout=timeout)
    if backend == "commands":
        return commands
    return RestSlurmScheduler(
        socket=restd_socket,
        url=restd_url,
        token=token or read_token(token_file),
        user=user,
        timeout=timeout,
        commands=commands,
    )
