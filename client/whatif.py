"""`recovery whatif`: what a policy would have decided on the failures runs already had.

Each recorded failure (`history_failures`) is decided again by the installed, pure `decide`
with the new policy, with the same context, diagnosis and time as when it happened, and set
beside the advice the run recorded then. A run the new policy gives up earlier would not have
had its later failures: they count for neither side's what-if totals, and the nodes it held from
that failure to its end are node-hours saved. A run the new policy restarts where it gave up
would have held its nodes for one more attempt, estimated as long as the one that failed.
Read-only: nothing is started or signalled.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseError
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter

from recovery.client.connection import resolve
from recovery.client.history_failures import HistoryError, RecordedFailure, RunFailures, failures_of
from recovery.client.replay import fetch_histories
from recovery.client.runs import visibility_time
from recovery.client.temporal_client import temporal_config
from recovery.workflows.decide import decide
from recovery.workflows.models import TRAINING_RUN, Advice, Model, Operation
from recovery.workflows.policy import Policy


class WhatIfError(ValueError):
    """Input what-if cannot use (an unreadable history, a bad run id); one line."""


class Decision(Model):
    operation: Operation
    excluded_nodes: list[str]
    backoff_seconds: float | None = None  # a restart's wait after the failure was decided


class Change(Model):
    run: str
    attempt_index: int
    recorded: Decision
    whatif: Decision
    why: str


class Totals(Model):
    restarts_recorded: int = 0
    restarts_whatif: int = 0
    gave_up_recorded: int = 0
    gave_up_whatif: int = 0
    node_hours_delta: float = 0.0  # what-if minus recorded: negative when the policy saves node-hours


class WhatIf(Model):
    """`whatif --json`."""

    policy: str
    failures: int
    changed: list[Change]
    totals: Totals


# --- reading ----------------------------------------------------------------------------------


def read_history_files(paths: Sequence[str]) -> list[WorkflowHistory]:
    """Histories exported as Temporal's JSON (the UI's download, `temporal workflow show
    --output json`, or tests/histories/record.py)."""
    histories = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            histories.append(WorkflowHistory.from_json(Path(path).stem, _what_whatif_reads(data)))
        except OSError as e:
            raise WhatIfError(f"cannot read history {path}: {e.strerror or e}") from None
        except (ValueError, ParseError, AttributeError, TypeError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise WhatIfError(f"history {path} is not a Temporal history in JSON: {first}") from None
    return histories


# The events what-if reads (history_failures); protobuf's JSON parser is slow, and these are
# about a third of a run's history. Written EVENT_TYPE_ACTIVITY_TASK_SCHEDULED by Temporal's
# JSON, ActivityTaskScheduled by older exports. Markers: a local diagnose's result.
_READ = {"workflowexecutionstarted", "activitytaskscheduled", "activitytaskcompleted", "markerrecorded"}


def _what_whatif_reads(data: Any) -> Any:
    """The history with only the events what-if reads, and its last (when and how it ended)."""
    events = data.get("events") if isinstance(data, dict) else None
    if not isinstance(events, list) or not events:
        return data
    kept = [e for e in events[:-1] if not isinstance(e, dict) or _kind(e) in _READ]
    return {**data, "events": [*kept, events[-1]]}


def _kind(event: dict[str, Any]) -> str:
    kind = event.get("eventType")
    if not isinstance(kind, str):
        return next(iter(_READ))  # a numeric or missing type: keep the event, the parser decides
    return kind.lower().removeprefix("event_type_").replace("_", "")


def offline_converter() -> DataConverter:
    """The converter the worker wrote with (a site's payload codec included)."""
    return resolve(temporal_config(), os.environ).data_converter


def query_for(since: datetime | None, runs: Sequence[str]) -> str:
    parts = [f'WorkflowType = "{TRAINING_RUN}"']
    if since is not None:
        parts.append(f'(ExecutionStatus = "Running" OR CloseTime > "{visibility_time(since)}")')
    if runs:
        bad = [r for r in runs if '"' in r or "\\" in r]
        if bad:
            raise WhatIfError(f"not a run id: {bad[0]!r}")
        parts.append("(" + " OR ".join(f'WorkflowId = "{r}"' for r in runs) + ")")
    return " AND ".join(parts)


async def live_histories(client: Client, since: datetime | None, runs: Sequence[str]) -> list[WorkflowHistory]:
    return await fetch_histories(client, query_for(since, runs))


async def recorded_failures(
    histories: Iterable[tuple[str, WorkflowHistory]], converter: DataConverter
) -> list[RunFailures]:
    """Each (name, history): the name says which input was bad when one cannot be read."""
    found = []
    for name, history in histories:
        try:
            found.append(await failures_of(history, converter))
        except HistoryError as e:
            raise WhatIfError(f"history {name}: {e}") from None
    return found


# --- deciding again ---------------------------------------------------------------------------


def evaluate(runs: Iterable[RunFailures], policy: Policy, since: datetime | None = None) -> WhatIf:
    chains: dict[str, list[RunFailures]] = defaultdict(list)
    for run in runs:
        chains[run.run].append(run)
    result = WhatIf(policy=policy.name, failures=0, changed=[], totals=Totals())
    for name in sorted(chains):
        _evaluate_run(chains[name], policy, since, result)
    result.totals.node_hours_delta = round(result.totals.node_hours_delta, 3)
    return result


def _evaluate_run(chain: list[RunFailures], policy: Policy, since: datetime | None, result: WhatIf) -> None:
    ended_at = max(r.ended_at for r in chain)
    failures = sorted((f for r in chain for f in r.failures), key=lambda f: f.advice.created_at)
    totals = result.totals
    gave_up_recorded = gave_up_whatif = False
    for failure in failures:
        if since is not None and failure.advice.created_at < since:
            continue
        result.failures += 1
        recorded = failure.advice
        totals.restarts_recorded += recorded.operation == "restart"
        gave_up_recorded |= recorded.operation != "restart"
        if gave_up_whatif:
            continue  # this failure would not have happened: the run had stopped
        whatif = decide(failure.context, failure.diagnosis, policy, recorded.created_at)
        totals.restarts_whatif += whatif.operation == "restart"
        change = _change(failure, whatif)
        if change is not None:
            result.changed.append(change)
        if whatif.operation != "restart":
            gave_up_whatif = True
            if recorded.operation == "restart":
                totals.node_hours_delta -= _node_hours(failure.nodes, failure.failed_at, ended_at)
        elif recorded.operation != "restart":
            totals.node_hours_delta += _node_hours(failure.nodes, failure.attempt_started_at, failure.failed_at)
    totals.gave_up_recorded += gave_up_recorded
    totals.gave_up_whatif += gave_up_whatif


def _decision(advice: Advice) -> Decision:
    backoff = None
    if advice.operation == "restart" and advice.not_before is not None:
        backoff = (advice.not_before - advice.created_at).total_seconds()
    return Decision(operation=advice.operation, excluded_nodes=list(advice.excluded_nodes), backoff_seconds=backoff)


def _change(failure: RecordedFailure, whatif: Advice) -> Change | None:
    before, after = _decision(failure.advice), _decision(whatif)
    if before == after:
        return None
    return Change(
        run=failure.run,
        attempt_index=failure.context.attempt_index,
        recorded=before,
        whatif=after,
        why=_why(before, after, whatif),
    )


def _why(before: Decision, after: Decision, whatif: Advice) -> str:
    # The advice's explanation is "what happened; what to do": the second half says why.
    decided = whatif.explanation.rsplit("; ", 1)[-1]
    if before.operation != after.operation:
        return f"{before.operation} -> {after.operation}: {decided}"
    parts = []
    if before.excluded_nodes != after.excluded_nodes:
        parts.append(f"excluding {_nodes(after.excluded_nodes)} instead of {_nodes(before.excluded_nodes)}")
    if before.backoff_seconds != after.backoff_seconds:
        parts.append(f"waiting {after.backoff_seconds or 0:g}s instead of {before.backoff_seconds or 0:g}s")
    return "; ".join(parts)


def _nodes(nodes: list[str]) -> str:
    return ", ".join(nodes) if nodes else "none"


def _node_hours(nodes: int, start: datetime | None, end: datetime) -> float:
    if start is None or end <= start:
        return 0.0
    return nodes * (end - start).total_seconds() / 3600


def render(result: WhatIf) -> str:
    t = result.totals
    lines = [f"policy {result.policy!r} on {result.failures} recorded failures: {len(result.changed)} decisions differ"]
    for c in result.changed:
        lines.append(f"  {c.run} attempt {c.attempt_index}: {c.why}")
    lines += [
        f"restarts: {t.restarts_recorded} recorded, {t.restarts_whatif} with {result.policy!r}",
        f"runs given up: {t.gave_up_recorded} recorded, {t.gave_up_whatif} with {result.policy!r}",
        f"node-hours: {t.node_hours_delta:+.3f} with {result.policy!r}",
    ]
    return "\n".join(lines)
