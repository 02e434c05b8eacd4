"""The node history's pure bookkeeping: what counts, what is kept, what makes a node suspect."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from recovery.workflows.node_history import ledger as node_ledger
from recovery.workflows.node_history.models import (
    NodeFailure,
    NodeHistoryLimits,
    NodeHistoryState,
    NodeQuery,
    SuspectRule,
)
from recovery.workflows.policy import Policy, SuspectNodes

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


def failure(node: str, run: str, ago: timedelta, attempt: int = 0, reason: str = "xid 79") -> NodeFailure:
    return NodeFailure(node=node, run_id=run, attempt_index=attempt, category="hardware", at=NOW - ago, reason=reason)


def test_old_failures_are_refused_and_pruned() -> None:
    state, limits = NodeHistoryState(), NodeHistoryLimits(retention=timedelta(days=30))
    assert not node_ledger.record(state, failure("n1", "a", timedelta(days=31)), NOW, limits)
    assert node_ledger.record(state, failure("n1", "b", timedelta(days=29)), NOW, limits)
    node_ledger.prune(state, NOW + timedelta(days=2), limits)
    assert state.failures == {}


def test_per_node_and_total_caps_drop_the_oldest() -> None:
    state = NodeHistoryState()
    limits = NodeHistoryLimits(max_per_node=3, max_total=4)
    for i in range(5):
        node_ledger.record(state, failure("n1", f"r{i}", timedelta(hours=10 - i)), NOW, limits)
    assert [f.run_id for f in state.failures["n1"]] == ["r2", "r3", "r4"]
    node_ledger.record(state, failure("n2", "x", timedelta(hours=1)), NOW, limits)
    node_ledger.record(state, failure("n3", "y", timedelta(minutes=1)), NOW, limits)
    assert sum(len(v) for v in state.failures.values()) == 4
    assert [f.run_id for f in state.failures["n1"]] == ["r3", "r4"]


def test_a_failure_dropped_by_the_cap_is_not_reported_as_recorded() -> None:
    state = NodeHistoryState()
    limits = NodeHistoryLimits(max_per_node=1)
    assert node_ledger.record(state, failure("n1", "new", timedelta(hours=1)), NOW, limits)
    assert not node_ledger.record(state, failure("n1", "older", timedelta(hours=2)), NOW, limits)


def test_long_reasons_are_cut() -> None:
    state = NodeHistoryState()
    node_ledger.record(state, failure("n1", "a", timedelta(0), reason="x" * 500), NOW, NodeHistoryLimits())
    assert len(state.failures["n1"][0].reason) == 160


def test_clear_is_remembered_only_as_long_as_failures_are() -> None:
    state, limits = NodeHistoryState(), NodeHistoryLimits(retention=timedelta(days=30))
    node_ledger.record(state, failure("n1", "a", timedelta(hours=1)), NOW, limits)
    assert node_ledger.forget(state, "n1", NOW) == 1
    assert not node_ledger.record(state, failure("n1", "b", timedelta(minutes=1)), NOW, limits)
    node_ledger.prune(state, NOW + timedelta(days=31), limits)
    assert state.cleared == {}


def test_suspects_and_summary() -> None:
    state, limits = NodeHistoryState(), NodeHistoryLimits()
    for node, run, ago in [("n2", "a", 3), ("n2", "b", 2), ("n1", "a", 1), ("n3", "c", 200)]:
        node_ledger.record(state, failure(node, run, timedelta(hours=ago)), NOW, limits)
    rule = SuspectRule.of(Policy().suspect_nodes)
    assert node_ledger.suspects(state, rule, NOW) == ["n2"]
    assert node_ledger.suspects(state, SuspectRule(failures=1, window=timedelta(days=1)), NOW) == ["n1", "n2"]
    rows = node_ledger.summarize(state, NodeQuery(rule=rule, now=NOW))
    assert [r.node for r in rows] == ["n2", "n1", "n3"]  # suspects first, then most recent failure
    assert rows[0].runs_in_window == ["a", "b"] and rows[0].suspect


def test_policy_rule_defaults() -> None:
    assert SuspectNodes() == SuspectNodes(failures=2, window=timedelta(days=7), drain=False)
    assert SuspectRule.of(SuspectNodes(failures=3, window=timedelta(days=1))).failures == 3
