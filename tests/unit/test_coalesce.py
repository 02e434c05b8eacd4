from __future__ import annotations

import asyncio

import pytest

from recovery.activities.schedulers.base import SchedulerUnavailable
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import SubmitRequest
from tests.fakes import ScriptedScheduler


class Counting(ScriptedScheduler):
    def __init__(self) -> None:
        super().__init__(["run"])
        self.observed: list[list[str]] = []
        self.down = False

    async def observe(self, job_ids: list[str]):  # type: ignore[no-untyped-def]
        self.observed.append(job_ids)
        if self.down:
            raise SchedulerUnavailable("slurmctld is down")
        return await super().observe(job_ids)


async def submitted(scheduler: Counting, n: int) -> list[str]:
    ids = []
    for i in range(n):
        req = SubmitRequest(script="#!/bin/sh\n", name=f"j{i}", nodes=1, workdir="/tmp", token=f"t{i}")
        ids.append((await scheduler.submit(req)).job_id)
    return ids


async def test_many_watches_share_one_poll() -> None:
    scheduler = Counting()
    ids = await submitted(scheduler, 50)
    observer = CoalescingObserver(scheduler, window=0.05)
    answers = await asyncio.gather(*(observer.observe([job]) for job in ids))
    assert scheduler.observed == [sorted(ids)]
    assert [list(a) for a in answers] == [[job] for job in ids]


async def test_a_failed_poll_reaches_every_waiter() -> None:
    scheduler = Counting()
    ids = await submitted(scheduler, 3)
    scheduler.down = True
    observer = CoalescingObserver(scheduler, window=0.01)
    results = await asyncio.gather(*(observer.observe([job]) for job in ids), return_exceptions=True)
    assert all(isinstance(r, SchedulerUnavailable) for r in results)
    scheduler.down = False
    assert list(await observer.observe([ids[0]])) == [ids[0]]


async def test_a_cancelled_watch_does_not_break_the_others() -> None:
    scheduler = Counting()
    ids = await submitted(scheduler, 2)
    observer = CoalescingObserver(scheduler, window=0.05)
    doomed = asyncio.create_task(observer.observe([ids[0]]))
    kept = asyncio.create_task(observer.observe([ids[1]]))
    await asyncio.sleep(0.01)
    doomed.cancel()
    assert list(await kept) == [ids[1]]
    with pytest.raises(asyncio.CancelledError):
        await doomed


class SlowNodes(ScriptedScheduler):
    """Counts its node reads; each takes a moment and shows the nodes as they are when it begins."""

    def __init__(self) -> None:
        super().__init__(["run"])
        self.reads = 0
        self.down: set[str] = set()

    async def nodes(self):  # type: ignore[no-untyped-def]
        self.reads += 1
        found = [n.model_copy(update={"state": "down"}) if n.name in self.down else n for n in await super().nodes()]
        await asyncio.sleep(0.05)
        return found


async def test_diagnoses_at_once_share_a_node_read_begun_after_they_asked() -> None:
    scheduler = SlowNodes()
    observer = CoalescingObserver(scheduler, window=0.01)
    burst = [asyncio.create_task(observer.nodes()) for _ in range(100)]
    await asyncio.sleep(0.01)
    burst[0].cancel()  # one diagnosis gives up: the read the others wait for goes on
    answers = await asyncio.gather(*burst[1:])
    assert scheduler.reads == 1 and all(a == answers[0] for a in answers)

    # A node set down while a read is on its way: whoever asks now waits for the next read.
    during = asyncio.create_task(observer.nodes())
    await asyncio.sleep(0.3)  # past the window: the read has begun
    scheduler.down.add(scheduler.node_names[0])
    after = await observer.nodes()
    assert scheduler.reads == 3
    assert (await during)[0].state == "idle" and after[0].state == "down"
