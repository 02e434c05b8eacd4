"""The worker process: runs TrainingRun workflows and their activities against one scheduler."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

import structlog
from temporalio.client import Client
from temporalio.worker import Worker

from activities.actions import ActionActivities
from activities.diagnose import DiagnoseActivities
from activities.schedulers.base import Scheduler
from activities.watch import WatchActivities
from worker import settings
from worker.config import WorkerConfig
from workflows.training_run import TrainingRun

log = structlog.get_logger("recovery.worker")


def make_scheduler(config: WorkerConfig) -> Scheduler:
    if config.scheduler == "local":
        from activities.schedulers.local import LocalScheduler

        return LocalScheduler()
    raise ValueError(f"unknown scheduler {config.scheduler!r}")


def activities_for(scheduler: Scheduler, mode: str) -> list[Callable[..., Any]]:
    actions = ActionActivities(scheduler, mode)
    watch = WatchActivities(scheduler)
    return [
        actions.submit_attempt,
        actions.adopt_attempt,
        actions.record_advice,
        actions.requeue_hold,
        actions.set_excluded_nodes,
        actions.release,
        actions.cancel_job,
        actions.verify_successor,
        watch.watch_attempt,
        watch.await_requeue,
        DiagnoseActivities(scheduler).diagnose,
    ]


def build_worker(client: Client, scheduler: Scheduler, mode: str, task_queue: str | None = None) -> Worker:
    return Worker(
        client,
        task_queue=task_queue or settings.task_queue(),
        workflows=[TrainingRun],
        activities=activities_for(scheduler, mode),
        max_concurrent_activities=1000,
    )


async def serve(client: Client, scheduler: Scheduler, config: WorkerConfig) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    mode = config.effective_mode
    worker = build_worker(client, scheduler, mode)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "worker started",
        task_queue=worker.config().get("task_queue"),
        scheduler=scheduler.name,
        mode=mode,
    )
    async with worker:
        await stop.wait()
        log.info("worker stopping")
