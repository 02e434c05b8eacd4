"""How the per-worker batcher shares node-history updates: what waits for the next update, what
takes the answer of the one on its way. The entity itself (a Temporal workflow) is tested in
tests/embedded/test_suspect_nodes.py; here `send` is a small in-memory ledger whose answers are
held until the test lets them go, so "on its way" is a state the test controls."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from recovery.activities.node_history_batch import UpdateBatcher
from recovery.workflows.node_history.models import NodeFailure, NodeHistoryUpdate, SuspectRule

NOW = datetime(2026, 12, 1, tzinfo=UTC)
TWO_RUNS = SuspectRule(failures=2, window=timedelta(days=7))
ONE_RUN = SuspectRule(failures=1, window=timedelta(days=7))


class Ledger:
    """Records failures; answers each rule with the nodes failing that many different runs.
    Each update waits at the door until the test opens it."""

    def __init__(self) -> None:
        self.failures: list[NodeFailure] = []
        self.updates: list[NodeHistoryUpdate] = []
        self.door = asyncio.Event()
        self.fail_with: Exception | None = None

    async def send(self, update: NodeHistoryUpdate) -> list[list[str]]:
        self.updates.append(update)
        await self.door.wait()
        if self.fail_with is not None:
            raise self.fail_with
        self.failures += update.failures
        return [self._suspects(rule) for rule in update.rules]

    def _suspects(self, rule: SuspectRule) -> list[str]:
        runs: dict[str, set[str]] = {}
        for f in self.failures:
            runs.setdefault(f.node, set()).add(f.run_id)
        return sorted(node for node, seen in runs.items() if len(seen) >= rule.failures)


class Refused(Exception):
    pass


def failure(node: str, run: str) -> NodeFailure:
    return NodeFailure(node=node, run_id=run, attempt_index=0, category="hardware", at=NOW)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_question_while_an_update_asks_the_same_is_answered_by_it() -> None:
    ledger = Ledger()
    batcher = UpdateBatcher(ledger.send, (Refused,))
    ledger.failures = [failure("n1", "a"), failure("n1", "b")]
    first = asyncio.create_task(batcher.ask([], TWO_RUNS, NOW))
    await settle()
    second = asyncio.create_task(batcher.ask([], TWO_RUNS, NOW + timedelta(seconds=1)))
    await settle()
    ledger.door.set()
    assert await first == ["n1"]
    assert await second == ["n1"]
    assert len(ledger.updates) == 1, "the second question rode on the first's update"


async def test_questions_one_after_another_are_each_asked_afresh() -> None:
    ledger = Ledger()
    ledger.door.set()
    batcher = UpdateBatcher(ledger.send, (Refused,))
    assert await batcher.ask([], TWO_RUNS, NOW) == []
    await batcher.ask([failure("n1", "a")], None, NOW)
    await batcher.ask([failure("n1", "b")], None, NOW)
    assert await batcher.ask([], TWO_RUNS, NOW) == ["n1"], "a report recorded before the question counts"
    assert len(ledger.updates) == 4


async def test_a_report_or_another_rule_waits_for_the_next_update() -> None:
    ledger = Ledger()
    batcher = UpdateBatcher(ledger.send, (Refused,))
    ledger.failures = [failure("n1", "a")]
    first = asyncio.create_task(batcher.ask([], TWO_RUNS, NOW))
    await settle()
    report = asyncio.create_task(batcher.ask([failure("n2", "c")], None, NOW))
    other_rule = asyncio.create_task(batcher.ask([], ONE_RUN, NOW))
    await settle()
    ledger.door.set()
    assert await first == []
    assert await report == []
    assert await other_rule == ["n1", "n2"], "asked in the next update, after the report it went with"
    assert len(ledger.updates) == 2
    assert ledger.updates[1].failures == [failure("n2", "c")]
    assert ledger.updates[1].rules == [ONE_RUN]


async def test_the_error_of_the_update_on_its_way_is_the_error_of_who_joined_it() -> None:
    ledger = Ledger()
    ledger.fail_with = Refused("no worker runs the entity")
    batcher = UpdateBatcher(ledger.send, (Refused,))
    first = asyncio.create_task(batcher.ask([], TWO_RUNS, NOW))
    await settle()
    joined = asyncio.create_task(batcher.ask([], TWO_RUNS, NOW))
    await settle()
    ledger.door.set()
    for task in (first, joined):
        with pytest.raises(Refused):
            await task
    assert len(ledger.updates) == 1
