"""Watches shared out among the live workers of a task queue, so that a worker started beside a
busy one takes its share of the runs already watched, not only of the runs started after it.

Temporal gives an activity to whichever worker polls for it, and a watch then stays for its
attempt's whole life on the worker that took it: a second worker added to a busy queue got none
of what already ran (benchmarks/concurrent_runs.py: 0 of a burst's 700 activity tasks). Here,
each look, a worker counts the live workers polling its activity queue and the runs running;
holding more watches than its share (the runs over the workers, and a margin), it hands some of
the surplus on (`Observer.hand_on`): those watches end with a retryable error and Temporal
retries each on whichever worker polls first. About half come back here; the next look hands on
again. Level-triggered: each look acts on the counts as they are now, so a worker that comes or
goes (the orphans' release, worker/orphans.py) only changes the next look's arithmetic.

What moves is the watch, and the observer's work for it (reading the log, judging it); and the
run's workflow tasks may follow. Temporal gives a run's workflow task to the worker that has the
run cached (its sticky queue) and its recovery's activities to the worker of that task (eager
dispatch), so a burst's work would all stay here. The runs handed on have their stickiness reset
(`ResetStickyTaskQueue`): their next workflow task goes to whichever worker polls first, which
replays the run once and keeps it from then on. Handing on costs a re-read of each moved
attempt's output on its new worker, so it goes at most `PER_LOOK` watches a look, and never
while a recovery is under way on this worker (`quiet`): a burst of failures is not the moment to
move work.
"""

from __future__ import annotations

import asyncio
import math
import socket
import time
from collections.abc import Callable, Sequence

import structlog
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

from recovery.activities.observer.loop import Observer
from recovery.worker.orphans import RUNNING_QUERY, activity_pollers, gone_holder
from recovery.worker.stopping import stopped_within

log = structlog.get_logger("recovery.worker")

LOOK_SECONDS = 15.0
# A poller not heard from for this long is no live worker (the server lists pollers it saw in
# the last few minutes; a worker long-polls about every minute).
LIVE_SECONDS = 90.0
# Watches handed on in one look, at most: each is one activity retry through the server and one
# re-read of its attempt's output on the worker that takes it.
PER_LOOK = 500
# A worker keeps up to this many watches over its share before handing any on, and a tenth of
# its share: the counts are a moment's, and moving a watch costs more than an uneven split.
MARGIN = 8
RESETS_AT_ONCE = 16  # runs' stickiness reset concurrently after a hand-on


def to_hand_on(held: int, running: int, workers: int) -> int:
    """How many of its `held` watches a worker hands on, `running` runs among `workers` workers."""
    if workers < 2 or held <= 0:
        return 0
    share = math.ceil(running / workers)
    surplus = held - share
    if surplus <= max(MARGIN, share // 10):
        return 0
    return min(surplus, PER_LOOK)


def live_workers(pollers: Sequence[tuple[str, float]], me: str, now: float, host: str) -> int:
    """Distinct workers among `(identity, last seen)` pollers, heard from within LIVE_SECONDS and
    not a gone process of this host; this worker counts whether or not it is listed yet."""
    live = {
        identity for identity, seen in pollers if now - seen <= LIVE_SECONDS and gone_holder(identity, host) is None
    }
    return len(live | {me})


async def share_once(client: Client, queue: str, observer: Observer) -> int:
    """One look: hand on this worker's surplus of watches; how many were handed on."""
    held = observer.watching
    if held <= MARGIN:
        return 0
    pollers = [(p.identity, p.last_access_time.ToSeconds()) for p in await activity_pollers(client, queue)]
    workers = live_workers(pollers, client.identity, time.time(), socket.gethostname())
    if workers < 2:
        return 0
    running = (await client.count_workflows(f'{RUNNING_QUERY} AND TaskQueue="{queue}"')).count
    count = to_hand_on(held, running, workers)
    if not count:
        return 0
    handed = observer.hand_on(count)
    log.info("watches handed on", count=len(handed), held=held, runs=running, workers=workers)
    limit = asyncio.Semaphore(RESETS_AT_ONCE)
    await asyncio.gather(*(_unstick(client, run_id, limit) for run_id in handed))
    return len(handed)


async def _unstick(client: Client, run_id: str, limit: asyncio.Semaphore) -> None:
    """The run's next workflow task goes to any worker of the queue, not only to this one."""
    request = ResetStickyTaskQueueRequest(namespace=client.namespace, execution=WorkflowExecution(workflow_id=run_id))
    async with limit:
        try:
            await client.workflow_service.reset_sticky_task_queue(request)
        except RPCError as e:  # the run ended meanwhile: nothing to move
            log.debug("stickiness not reset", run_id=run_id, error=str(e).splitlines()[0] if str(e) else "")


async def share_while_serving(
    client: Client,
    queue: str,
    observer: Observer,
    stop: asyncio.Event,
    quiet: Callable[[], bool] | None = None,
    interval: float = LOOK_SECONDS,
) -> None:
    """Look every `interval` until `stop`; a look waits for a quiet moment (no recovery's step
    under way here) when `quiet` is given."""
    while not await stopped_within(stop, interval):
        if quiet is not None and not quiet():
            continue
        try:
            await share_once(client, queue, observer)
        except RPCError as e:
            log.warning("watches not shared", error=str(e).splitlines()[0] if str(e) else type(e).__name__)
