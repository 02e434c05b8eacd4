"""Recovery policy: the validated settings `decide` works from.

Policies are YAML files (see `docs/policies.md`). Files are read and validated by
`workflows.policy_files` outside workflow code; the workflow receives this model as input.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: object) -> timedelta:
    """`30s`, `10m`, `2h`, `7d` (or a number of seconds, or a timedelta) as a timedelta."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 30s, 10m, 2h or 7d, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f"expected a duration like 30s, 10m, 2h or 7d, got {value!r}")
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    return timedelta(seconds=seconds)


def format_duration(value: timedelta) -> str:
    seconds = value.total_seconds()
    for unit in ("d", "h", "m"):
        size = _UNIT_SECONDS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Backoff(_Section):
    """Restart 1 waits `first`; restart k>1 waits min(max, initial * factor^(k-2))."""

    first: Duration = timedelta(0)
    initial: Duration = timedelta(seconds=30)
    factor: float = Field(default=2.0, ge=1.0)
    max: Duration = timedelta(minutes=10)

    def delay(self, restart_number: int) -> timedelta:
        if restart_number <= 1:
            return self.first
        initial, cap = self.initial.total_seconds(), self.max.total_seconds()
        # Compare in logs: factor**k overflows a float long before a run has that many restarts.
        if initial <= 0 or (restart_number - 2) * math.log(self.factor) + math.log(initial) >= math.log(max(cap, 1e-9)):
            return min(self.max, self.initial) if initial <= 0 else self.max
        return timedelta(seconds=initial * self.factor ** (restart_number - 2))


class Hang(_Section):
    """No progress for longer than a timeout learned from the run's own step intervals, kept
    between `min_timeout` and `max_timeout`; longer grace before the first step and while a
    checkpoint is being saved."""

    min_timeout: Duration = timedelta(minutes=5)
    max_timeout: Duration = timedelta(minutes=60)
    startup_grace: Duration = timedelta(minutes=30)
    checkpoint_grace: Duration = timedelta(minutes=20)


class Straggler(_Section):
    """A sustained throughput drop of at least `min_drop` below the run's healthy baseline,
    declared once the evidence shows it, and by `sustain` after it began at the latest.
    Detection always runs; acting on it is opt-in (`enabled`)."""

    enabled: bool = False
    min_drop: float = Field(default=0.10, gt=0, lt=1)
    sustain: Duration = timedelta(minutes=10)


class Budgets(_Section):
    """Restarts allowed per diagnosed category (hangs have their own). Time limits and
    preemption (`scheduler`) resume without spending any budget."""

    application: int = Field(default=0, ge=0)
    out_of_memory: int = Field(default=0, ge=0)
    hardware: int = Field(default=3, ge=0)
    network: int = Field(default=3, ge=0)
    system_software: int = Field(default=2, ge=0)
    hang: int = Field(default=2, ge=0)
    unknown: int = Field(default=1, ge=0)

    def allowed(self, key: str) -> int | None:
        """The budget for a category, None when it has none (scheduler: unlimited)."""
        value = getattr(self, key, None)
        return value if isinstance(value, int) else None


class CrashLoop(_Section):
    """Stop after this many attempts in a row that got no further than the one before."""

    max_attempts_without_progress: int = Field(default=3, ge=1)


class SuspectNodes(_Section):
    """A node implicated in failures of at least `failures` different runs within `window` is
    suspect, and every run's restart advice excludes it. `drain` (drain it in the scheduler, its
    failures as the reason) is opt-in, in act mode, and needs the worker config's consent
    (`drain_suspect_nodes`): a drained node is gone for every user of the cluster."""

    failures: int = Field(default=2, ge=1)
    window: Duration = timedelta(days=7)
    drain: bool = False


NotifyOn = Literal["restart", "terminate", "give_up"]
_NOTIFY_ON: tuple[NotifyOn, ...] = ("restart", "give_up")


class Notify(_Section):
    """Tell people on these operations: a webhook (POST of the advice as JSON) and/or a
    command (an argument list, never a shell string; the advice as JSON on stdin)."""

    on: list[NotifyOn] = Field(default_factory=lambda: list(_NOTIFY_ON))
    webhook: str | None = None
    command: list[str] | None = None


class Policy(_Section):
    name: str = "default"
    max_restarts: int = Field(default=5, ge=0)
    backoff: Backoff = Backoff()
    exclude_implicated_nodes: bool = True
    max_excluded_nodes: int = Field(default=4, ge=0)
    on_unsatisfiable: Literal["wait", "drop_oldest_exclusion", "give_up"] = "wait"
    # How a restart brings the job back (docs/policies.md): Slurm's requeue (same job id, but a
    # requeued job waits out its credential's lifetime before it may start again), a new job of
    # the same run, or a resubmission when the allocation fits now and a requeue otherwise.
    restart_via: Literal["requeue", "resubmit", "auto"] = "requeue"
    budgets: Budgets = Budgets()
    crash_loop: CrashLoop = CrashLoop()
    hang: Hang = Hang()
    straggler: Straggler = Straggler()
    suspect_nodes: SuspectNodes = SuspectNodes()
    notify: Notify = Notify()


# Equal policies, one object: a worker holds a run's policy in each watch's input and each cached
# workflow's spec, about 7 KiB of pydantic objects apiece (10,000 runs of one policy: 70 MiB per
# copy). Policies are frozen, so sharing one is safe; keyed by their JSON, at most a few hundred.
_SHARED: dict[str, Policy] = {}
_SHARED_MAX = 256


def shared(policy: Policy) -> Policy:
    """The one object held for every policy equal to `policy` (it, the first time)."""
    key = policy.model_dump_json()
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()  # so many policies: start over rather than grow
        found = _SHARED[key] = policy
    return found


# A field of this type holds the shared object (`shared`) of the policy it was given.
SharedPolicy = Annotated[Policy, AfterValidator(shared)]
