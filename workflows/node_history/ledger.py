"""The node history's bookkeeping, as pure functions over `NodeHistoryState`.

No I/O and no clock: the NodeHistory workflow passes `now` in, so replays agree and tests can
call these directly. Failures are kept oldest first per node.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from recovery.workflows.node_history.models import (
    NodeFailure,
    NodeHistoryLimits,
    NodeHistoryState,
    NodeQuery,
    NodeSummary,
    SuspectRule,
)


def record(state: NodeHistoryState, failure: NodeFailure, now: datetime, limits: NodeHistoryLimits) -> bool:
    """Add a failure unless it is already on record, too old, or from before the node's last
    clear. Returns whether it was added. Keeps the history within `limits`."""
    cleared = state.cleared.get(failure.node)
    if failure.at < now - limits.retention or (cleared is not None and failure.at <= cleared):
        return False
    kept = state.failures.setdefault(failure.node, [])
    if any(f.key == failure.key for f in kept):
        return False  # a retried report: one failure is counted once
    if len(failure.reason) > limits.max_reason_chars:
        failure = failure.model_copy(update={"reason": failure.reason[: limits.max_reason_chars]})
    kept.append(failure)
    kept.sort(key=lambda f: f.at)
    prune(state, now, limits)
    return any(f.key == failure.key for f in state.failures.get(failure.node, []))


def forget(state: NodeHistoryState, node: str, now: datetime) -> int:
    """Clear a node: drop its failures (returns how many) and ignore later reports of older ones."""
    dropped = len(state.failures.pop(node, []))
    state.cleared[node] = now
    return dropped


def prune(state: NodeHistoryState, now: datetime, limits: NodeHistoryLimits) -> None:
    """Drop failures older than the retention, beyond `max_per_node` for a node, and beyond
    `max_total` overall (oldest first); and clears older than any failure still accepted."""
    oldest = now - limits.retention
    for node in list(state.failures):
        kept = [f for f in state.failures[node] if f.at >= oldest][-limits.max_per_node :]
        if kept:
            state.failures[node] = kept
        else:
            del state.failures[node]
    _cap_total(state, limits.max_total)
    for node in [n for n, at in state.cleared.items() if at < oldest]:
        del state.cleared[node]


def _cap_total(state: NodeHistoryState, max_total: int) -> None:
    total = sum(len(kept) for kept in state.failures.values())
    if total <= max_total:
        return
    everything = sorted((f for kept in state.failures.values() for f in kept), key=lambda f: f.at)
    drop = {f.key for f in everything[: total - max_total]}
    for node in list(state.failures):
        kept = [f for f in state.failures[node] if f.key not in drop]
        if kept:
            state.failures[node] = kept
        else:
            del state.failures[node]


def runs_within(failures: list[NodeFailure], window: timedelta, now: datetime) -> list[str]:
    """The distinct runs, in order of first failure, among failures at or after `now - window`."""
    since = now - window
    return list(dict.fromkeys(f.run_id for f in failures if f.at >= since))


def is_suspect(failures: list[NodeFailure], rule: SuspectRule, now: datetime) -> bool:
    return len(runs_within(failures, rule.window, now)) >= rule.failures


def suspects(state: NodeHistoryState, rule: SuspectRule, now: datetime) -> list[str]:
    """Suspect nodes, sorted by name so the same history gives the same list."""
    return sorted(node for node, kept in state.failures.items() if is_suspect(kept, rule, now))


def summarize(state: NodeHistoryState, query: NodeQuery) -> list[NodeSummary]:
    """Every node on record: suspects first, then by most recent failure."""
    rows = [_summary(node, kept, query) for node, kept in state.failures.items()]
    rows.sort(key=lambda s: (not s.suspect, -(s.last_failure_at or query.now).timestamp(), s.node))
    return rows


def _summary(node: str, failures: list[NodeFailure], query: NodeQuery) -> NodeSummary:
    in_window = runs_within(failures, query.rule.window, query.now)
    return NodeSummary(
        node=node,
        failures=len(failures),
        runs=list(dict.fromkeys(f.run_id for f in failures)),
        runs_in_window=in_window,
        suspect=len(in_window) >= query.rule.failures,
        last_failure_at=failures[-1].at if failures else None,
        history=list(failures),
    )
