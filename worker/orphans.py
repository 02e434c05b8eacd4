"""Watches that a dead worker of this host still holds, handed to a live worker at once.

A watch heartbeats seldom (its timeout is sized so that ten thousand idle runs cost the server
little), and on its own Temporal gives a SIGKILLed worker's watches to another worker only when
that timeout has passed: minutes. A worker knows better about its own host. A watch's holder is
named by its identity, `pid@host` (the SDK's default); when the host is this one and no process
has that pid, the holder is gone, and the watch is failed by its id so that its retry policy
gives it to a live worker now.

Level-triggered: at start the worker looks at every running run's pending watch (whatever died
before it started); then, each `interval`, it lists the task queue's pollers, and a poller of
this host whose process is gone makes it look again (a second worker lost while this one runs).

Only watches are released. A watch only reads, so releasing one whose holder was alive after all
(a pid reused, a worker in another pid namespace under the same host name) costs a re-read,
never an action twice; every other activity waits for its own timeout.
"""

from __future__ import annotations

import asyncio
import os
import socket

import structlog
from temporalio.api.enums.v1 import PendingActivityState, TaskQueueType
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from recovery.worker.stopping import stopped_within
from recovery.workflows.models import TRAINING_RUN

log = structlog.get_logger("recovery.worker")

WATCH_ACTIVITY = "watch_attempt"
RUNNING_QUERY = f'WorkflowType="{TRAINING_RUN}" AND ExecutionStatus="Running"'
DESCRIBE_AT_ONCE = 16  # runs described concurrently in a look (10,000 runs: a few hundred round trips each)
LOOK_SECONDS = 10.0


def gone_holder(identity: str, host: str) -> int | None:
    """The pid of a worker of `host` named by `identity` whose process no longer exists."""
    pid_text, at, where = identity.partition("@")
    if not at or where != host or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return pid
    except PermissionError:
        return None  # alive, another user's
    return None


async def release_orphaned_watches(client: Client, host: str | None = None) -> int:
    """Fail every running run's watch held by a gone worker of this host; how many were."""
    here = host or socket.gethostname()
    limit = asyncio.Semaphore(DESCRIBE_AT_ONCE)
    released = 0

    async def look(workflow_id: str, run_id: str | None) -> None:
        nonlocal released
        async with limit:
            released += await _release_in_run(client, workflow_id, run_id, here)

    tasks = []
    async for execution in client.list_workflows(RUNNING_QUERY):
        tasks.append(asyncio.create_task(look(execution.id, execution.run_id)))
    await asyncio.gather(*tasks)
    return released


async def _release_in_run(client: Client, workflow_id: str, run_id: str | None, host: str) -> int:
    try:
        description = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
    except RPCError:
        return 0  # the run ended meanwhile, or the server is busy: the next look sees it
    released = 0
    for pending in description.raw_description.pending_activities:
        if pending.activity_type.name != WATCH_ACTIVITY:
            continue
        if pending.state != PendingActivityState.PENDING_ACTIVITY_STATE_STARTED:
            continue
        pid = gone_holder(pending.last_worker_identity, host)
        if pid is None:
            continue
        handle = client.get_async_activity_handle(
            workflow_id=workflow_id, run_id=description.run_id, activity_id=pending.activity_id
        )
        try:
            await handle.fail(ApplicationError(f"the worker holding this watch (pid {pid} on {host}) is gone"))
        except RPCError:
            continue  # it moved or completed meanwhile: nothing to release
        log.info("watch released from a gone worker", run_id=workflow_id, worker_pid=pid)
        released += 1
    return released


async def activity_pollers(client: Client, queue: str) -> list[PollerInfo]:
    """The pollers of the activity queue the server heard from lately (one per worker process)."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )
    return list((await client.workflow_service.describe_task_queue(request)).pollers)


async def gone_pollers(client: Client, queue: str, host: str) -> set[str]:
    """Identities of this host's pollers of the activity queue whose processes are gone."""
    pollers = await activity_pollers(client, queue)
    return {poller.identity for poller in pollers if gone_holder(poller.identity, host) is not None}


async def release_while_serving(
    client: Client, queue: str, stop: asyncio.Event, interval: float = LOOK_SECONDS
) -> None:
    """Release at start, then whenever a poller of this host is newly gone, until `stop`."""
    host = socket.gethostname()
    handled: set[str] = set()
    first = True
    while not stop.is_set():
        try:
            gone = await gone_pollers(client, queue, host)
            if first or gone - handled:
                released = await release_orphaned_watches(client, host)
                if released:
                    log.info("watches of gone workers released", count=released)
                handled |= gone
                first = False
        except RPCError as e:
            log.warning(
                "gone workers' watches not looked at", error=str(e).splitlines()[0] if str(e) else type(e).__name__
            )
        await stopped_within(stop, interval)
