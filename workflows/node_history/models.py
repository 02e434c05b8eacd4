"""The node history's models: what runs report, what the NodeHistory entity keeps, what it answers.

They travel as the entity's input and state (through continue-as-new), in its signals and queries,
and in the activities between a run and the entity. Serialised as JSON by Temporal's pydantic
converter: a field's name is part of running histories and never changes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import Field

from recovery.workflows.models import Category, Model
from recovery.workflows.policy import Duration, SuspectNodes


class NodeFailure(Model):
    """One failure a node was implicated in. (run_id, attempt_index, node) names it, so a report
    that is retried or sent twice is counted once."""

    node: str
    run_id: str
    attempt_index: int = Field(ge=0)
    category: Category
    at: datetime
    reason: str = ""

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.run_id, self.attempt_index, self.node)


class SuspectRule(Model):
    """A node implicated in failures of at least `failures` different runs within `window` is suspect."""

    failures: int = Field(default=2, ge=1)
    window: Duration = timedelta(days=7)

    @classmethod
    def of(cls, section: SuspectNodes) -> SuspectRule:
        return cls(failures=section.failures, window=section.window)


class NodeQuery(Model):
    """Input of the NodeHistory queries. `now` comes from the caller: a query runs on the entity's
    last workflow task, whose clock can be days old when no failure came in since."""

    rule: SuspectRule = Field(default_factory=SuspectRule)
    now: datetime


class NodeSummary(Model):
    """One node as `recovery nodes --json` shows it. `failures` and `runs` cover the whole kept
    history; `runs_in_window` are the runs `suspect` is decided on."""

    node: str
    failures: int
    runs: list[str]
    runs_in_window: list[str]
    suspect: bool
    last_failure_at: datetime | None = None
    history: list[NodeFailure] = Field(default_factory=list)


class NodeReport(Model):
    """The `nodes` query: every node with failures on record, suspects first."""

    cluster: str
    rule: SuspectRule
    now: datetime
    nodes: list[NodeSummary] = Field(default_factory=list)


class NodeHistoryLimits(Model):
    """What keeps the entity bounded: its state travels whole through continue-as-new, and one
    payload must stay well under Temporal's 2 MB limit (4,000 failures with long names and
    reasons measure about 1.4 MB)."""

    retention: Duration = timedelta(days=30)
    max_per_node: int = Field(default=50, ge=1)
    max_total: int = Field(default=4000, ge=1)
    max_reason_chars: int = Field(default=160, ge=0)
    history_events_limit: int = Field(default=5000, ge=10)


class NodeHistoryState(Model):
    """The failures on record per node (oldest first), and when each node was last cleared:
    a late report of a failure from before the clear must not bring it back."""

    failures: dict[str, list[NodeFailure]] = Field(default_factory=dict)
    cleared: dict[str, datetime] = Field(default_factory=dict)
    continued: int = 0


class NodeHistoryUpdate(Model):
    """Input of the `report_failure` update: failures to record (none for a read), and the rules
    whose suspects at `now` the caller wants back, one list per rule, in order. Workers batch
    every report and question they have at one moment into one update."""

    failures: list[NodeFailure] = Field(default_factory=list)
    rules: list[SuspectRule] = Field(default_factory=list)
    now: datetime


class NodeHistoryInput(Model):
    cluster: str
    limits: NodeHistoryLimits = Field(default_factory=NodeHistoryLimits)
    state: NodeHistoryState | None = None


class NodeFailureReport(Model):
    """Activity input: failures to record. `cluster` None means the worker's own cluster."""

    failures: list[NodeFailure]
    cluster: str | None = None


class SuspectQuery(Model):
    """Activity input: which nodes are suspect on the cluster (None: the worker's own) at `now`."""

    rule: SuspectRule = Field(default_factory=SuspectRule)
    now: datetime
    cluster: str | None = None


class DrainInput(Model):
    """Activity input: drain these suspect nodes, for this run (named in the drain reason)."""

    run_id: str
    nodes: list[str]
    rule: SuspectRule = Field(default_factory=SuspectRule)
    now: datetime
    cluster: str | None = None


class DrainResult(Model):
    """Per node, what the drain found and did: `drained` now, `already` drained or down (left
    alone), or `refused` with why (the worker may not drain, or the scheduler cannot)."""

    drained: dict[str, str] = Field(default_factory=dict)  # node -> the reason given to the scheduler
    already: list[str] = Field(default_factory=list)
    refused: str | None = None
