"""One `report_failure` update at a time per node history, carrying every report and question a
worker has at that moment.

A burst of failures asks the cluster's NodeHistory entity the same thing a hundred times at once
(which nodes are suspect) and tells it a hundred failures. Sent one by one, the entity spends a
workflow task on each, and the server caps the updates it holds in flight per workflow
(`history.maxInFlightUpdates`, 10 by default). Here, while one update is on its way, whatever
comes in waits and goes together in the next one: one round trip for many runs, at most one in
flight per worker.

A question alone (no failures) that comes while an update asking it under the same rule is on
its way takes that update's answer instead of waiting for the next: the entity answers when the
update reaches it, so the answer misses at most the reports recorded in the moment between the
entity answering and the question coming. Suspects are advisory, and reports that close are
concurrent with the question anyway. With nothing on its way (one failure at a time, as in
every test of the rule) a question is sent and answered afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recovery.workflows.node_history.models import NodeFailure, NodeHistoryUpdate, SuspectRule

Send = Callable[[NodeHistoryUpdate], Awaitable[list[list[str]]]]


@dataclass
class _Ask:
    failures: list[NodeFailure]
    rule: SuspectRule | None
    now: datetime
    answer: asyncio.Future[list[str]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class _Flying:
    """The update on its way: the rules it asks under, and its answers once they come."""

    rules: list[SuspectRule]
    answers: asyncio.Future[list[list[str]]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class UpdateBatcher:
    """Batches into `send`; an error of one update is every caller's error in that batch."""

    def __init__(self, send: Send, errors: tuple[type[BaseException], ...]) -> None:
        self.send = send
        self.errors = errors  # what `send` raises for a caller to handle (others stay bugs)
        self._waiting: list[_Ask] = []
        self._sender: asyncio.Task[None] | None = None
        self._flying: _Flying | None = None

    async def ask(self, failures: list[NodeFailure], rule: SuspectRule | None, now: datetime) -> list[str]:
        """Record `failures`; the suspects under `rule` (none if no rule) once they are recorded."""
        flying = self._flying
        if not failures and rule is not None and flying is not None and rule in flying.rules:
            answers = await asyncio.shield(flying.answers)
            return answers[flying.rules.index(rule)]
        ask = _Ask(failures, rule, now)
        # Its error is read here even when its caller has given up: no "never retrieved" noise.
        ask.answer.add_done_callback(_retrieve)
        self._waiting.append(ask)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_all())
        # A caller that gives up (its activity timed out) leaves the batch to the others.
        return await asyncio.shield(ask.answer)

    async def _send_all(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                await self._send(batch)
            finally:
                for ask in batch:
                    if not ask.answer.done():
                        ask.answer.set_exception(RuntimeError("the node history update ended without an answer"))

    async def _send(self, batch: list[_Ask]) -> None:
        rules: list[SuspectRule] = []
        for ask in batch:
            if ask.rule is not None and ask.rule not in rules:
                rules.append(ask.rule)
        update = NodeHistoryUpdate(
            failures=[failure for ask in batch for failure in ask.failures],
            rules=rules,
            now=max(ask.now for ask in batch),
        )
        self._flying = flying = _Flying(rules)
        flying.answers.add_done_callback(_retrieve)
        try:
            answers = await self.send(update)
        except self.errors as err:
            flying.answers.set_exception(err)
            for ask in batch:
                ask.answer.set_exception(err)
            return
        else:
            flying.answers.set_result(answers)
        finally:
            self._flying = None
            if not flying.answers.done():  # a bug in `send`: its callers see it, the joiners too
                flying.answers.set_exception(RuntimeError("the node history update ended without an answer"))
        for ask in batch:
            ask.answer.set_result([] if ask.rule is None else answers[rules.index(ask.rule)])


def _retrieve(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()
