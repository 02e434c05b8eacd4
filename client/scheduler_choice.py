"""Which scheduler `recovery submit` uses, chosen once: `--scheduler`, else RECOVERY_SCHEDULER,
else the config file's `scheduler:` (`--config` or RECOVERY_CONFIG, the file the worker reads),
else the embedded local scheduler. A Slurm site sets it in one place and every submit follows."""

from __future__ import annotations

from typing import get_args

from pydantic import BaseModel

from recovery.client.config import WorkerConfig
from recovery.client.submit import SubmitError

SCHEDULERS: tuple[str, ...] = get_args(WorkerConfig.model_fields["scheduler"].annotation)

HELP = (
    "local or slurm; default: RECOVERY_SCHEDULER, else `scheduler:` in the config file "
    "(--config or RECOVERY_CONFIG), else local"
)


class SchedulerChoice(BaseModel):
    name: str
    source: str  # where it came from, in the words `submit` prints


def choose_scheduler(
    flag: str | None, env_value: str | None, config: WorkerConfig, config_path: str | None
) -> SchedulerChoice:
    if flag is not None:
        return SchedulerChoice(name=flag, source="--scheduler")
    if env_value is not None:
        if env_value not in SCHEDULERS:
            raise SubmitError(f"RECOVERY_SCHEDULER must be one of {', '.join(SCHEDULERS)}, not {env_value!r}")
        return SchedulerChoice(name=env_value, source="RECOVERY_SCHEDULER")
    if config_path is not None and "scheduler" in config.model_fields_set:
        return SchedulerChoice(name=config.scheduler, source=f"the config {config_path}")
    return SchedulerChoice(name="local", source="the default")
