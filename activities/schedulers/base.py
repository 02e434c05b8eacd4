"""The one scheduler interface. The embedded local scheduler and Slurm both implement it.

Rules every implementation keeps, because activities build their idempotency on them:

- `observe` is a fresh read, never a cache: activities call it right before acting.
- Mutating calls do exactly one thing and raise `SchedulerError` when the scheduler refuses;
  they never retry on their own (Temporal retries the activity, which re-observes first).
- `find(token)` finds a job submitted with that token, so a retried submit adopts its job
  instead of starting a second one.
- Errors are translated here, in one place: `SchedulerUnavailable` is temporary (the daemon or
  slurmctld is down; retry with backoff), `SchedulerError` is the scheduler refusing a command
  (the activity decides whether the world already looks as wanted).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import Field

from recovery.workflows.models import JobObservation, JobState, Model, NodeInfo, SubmitRequest


class SchedulerError(Exception):
    """The scheduler refused or failed a command. The message is the scheduler's own words."""


class SchedulerUnavailable(SchedulerError):
    """The scheduler cannot be reached right now; the same call may work later."""


class JobNotFound(SchedulerError):
    """The scheduler has no record of the job (never existed, or purged)."""


class JobNotRequeueable(SchedulerError):
    """The job cannot be requeued (submitted with --no-requeue, or requeue disabled): resubmit."""


class Scheduler(Protocol):
    name: str

    async def submit(self, request: SubmitRequest) -> JobObservation:
        """Queue a new job; returns its first observation."""
        ...

    async def find(self, token: str) -> JobObservation | None:
        """The job submitted with `token`, if the scheduler still knows it."""
        ...

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        """A fresh read of these jobs, in one call. Unknown jobs are left out of the result."""
        ...

    async def requeue_hold(self, job_id: str) -> None:
        """Stop the job if it runs and queue it again held; its restart count goes up by one."""
        ...

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        """Set the nodes a pending job must not run on (replaces the previous list)."""
        ...

    async def release(self, job_id: str) -> None:
        """Let a held job be scheduled."""
        ...

    async def cancel(self, job_id: str) -> None:
        """End the job for good."""
        ...

    async def nodes(self) -> list[NodeInfo]:
        """Every node and its state."""
        ...

    def opted_in(self, observation: JobObservation) -> bool:
        """Whether the job asked to be managed by recovery (checked before every mutation)."""
        ...


@runtime_checkable
class Drainable(Protocol):
    """A scheduler that can take a node out of rotation (Slurm's DRAIN: running work goes on,
    nothing new starts there) until an operator returns it."""

    async def drain(self, node: str, reason: str) -> None: ...


class JobChanges(Model):
    """The jobs that changed since a cursor (list-and-watch: read everything once, then only
    what changed). `complete` False: the scheduler cannot say what changed since that cursor
    (none given, too old, or from before the scheduler restarted): read every job again."""

    cursor: str  # opaque; the next call passes it back
    complete: bool
    jobs: dict[str, JobObservation] = Field(default_factory=dict)  # changed, as they are now
    gone: list[str] = Field(default_factory=list)  # forgotten since (purged)


@runtime_checkable
class Watchable(Protocol):
    """A scheduler that can say which jobs changed since a point, so that one observer watching
    10,000 jobs reads the few that changed instead of all of them several times a second."""

    async def changes(self, since: str | None) -> JobChanges:
        """What changed since `since` (a cursor of an earlier answer); None: the current cursor
        only. Every job the answer leaves out is as it was at `since`."""
        ...


class NodeChanges(Model):
    """The nodes that changed since a cursor, each as it is now. `full`: the scheduler could not
    say what changed since that cursor (none given, too old, from before it restarted), so
    `nodes` is every node instead, and replaces what the reader held."""

    cursor: str  # opaque; the next call passes it back
    full: bool
    nodes: list[NodeInfo] = Field(default_factory=list)


@runtime_checkable
class NodesWatchable(Protocol):
    """A scheduler that can say which nodes changed since a point: the diagnoses of a burst of
    100 failures on a 10,000-node cluster then read a few nodes each, not all of them."""

    async def node_changes(self, since: str | None) -> NodeChanges:
        """What changed since `since` (a cursor of an earlier answer); None: every node."""
        ...


@runtime_checkable
class SubmitsAs(Protocol):
    """A scheduler that can say whether this worker may submit a job as another user (a
    resubmission keeps the failed job's owner). Without it, only the worker's own user."""

    def submit_as_refusal(self, user: str) -> str | None: ...


@runtime_checkable
class Partitioned(Protocol):
    """A scheduler whose nodes are grouped in partitions (Slurm)."""

    async def partition_nodes(self, partition: str) -> list[str]: ...


UNAVAILABLE_STATES = ("drain", "down", "fail", "maint", "reboot")


def out_of_rotation(info: NodeInfo) -> bool:
    """Whether a node is already drained, draining, down or otherwise not taking new work."""
    state = info.state.lower()
    return any(word in state for word in UNAVAILABLE_STATES)


def free_now(info: NodeInfo) -> bool:
    """Whether a new job could start on the node right now: idle and in rotation."""
    return info.state.lower().split("+")[0].rstrip("*~#!%$@^-") == "idle" and not out_of_rotation(info)


async def first_sight(scheduler: Scheduler, job_id: str, request: SubmitRequest) -> JobObservation:
    """A job just submitted, as the scheduler shows it; pending while it does not show it yet
    (possible with a Slurm controller under load): submitted, said plainly."""
    found = await scheduler.observe([job_id])
    return found.get(job_id) or JobObservation(
        job_id=job_id, name=request.name, state=JobState.PENDING, token=request.token
    )
