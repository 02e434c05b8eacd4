"""The worker process: runs TrainingRun and Pipeline (and, on Slurm, SlurmDiscovery) against one scheduler."""

from __future__ import annotations

import asyncio
import functools
import signal
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

import structlog
from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import Interceptor, PollerBehaviorAutoscaling, UnsandboxedWorkflowRunner, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from recovery import settings
from recovery.activities.actions import ActionActivities
from recovery.activities.attribution import Provider, make_provider
from recovery.activities.diagnose import DiagnoseActivities, HealthProbing
from recovery.activities.discovery import Discoverable, DiscoveryActivities
from recovery.activities.hangstacks.collect import StackActivities, StackCollection
from recovery.activities.logwatch import LogReading
from recovery.activities.node_history import NodeHistoryActivities
from recovery.activities.notify import NotifyActivities
from recovery.activities.progress import ProgressParser
from recovery.activities.run_waits import RunWaitActivities
from recovery.activities.schedulers.base import Scheduler, SchedulerError
from recovery.activities.signatures.catalog import load_catalog
from recovery.activities.stage_jobs import StageJobActivities
from recovery.activities.watch import WatchActivities
from recovery.client import runs
from recovery.client.config import WorkerConfig
from recovery.client.submit import TUNING
from recovery.worker.activity_context import ActivityContext
from recovery.worker.gc_pauses import GcPauses, Quiet
from recovery.worker.orphans import release_while_serving
from recovery.worker.run_states import publish_run_states, runtime_meter
from recovery.worker.scheduler_guard import SchedulerGuard
from recovery.worker.sharing import share_while_serving
from recovery.workflows.discovery import SlurmDiscovery
from recovery.workflows.models import DiscoveryInput
from recovery.workflows.node_history import NodeHistory
from recovery.workflows.node_history.models import SuspectQuery
from recovery.workflows.pipeline import Pipeline
from recovery.workflows.training_run import TrainingRun

log = structlog.get_logger("recovery.worker")


def make_scheduler(config: WorkerConfig) -> Scheduler:
    if config.scheduler == "local":
        from recovery.activities.schedulers.local import LocalScheduler

        return LocalScheduler()
    from recovery.activities.schedulers.slurm_factory import make_slurm_scheduler

    slurm = config.slurm
    return make_slurm_scheduler(
        slurm.backend,
        conf=slurm.conf,
        restd_socket=slurm.restd_socket,
        restd_url=slurm.restd_url,
        token_file=slurm.token_file,
    )


def log_reading(config: WorkerConfig) -> LogReading:
    """Checked at start-up: a bad override file stops the worker with one line, not a run later."""
    catalog = load_catalog(*config.signatures) if config.signatures else None
    ProgressParser(config.progress_patterns)  # raises ProgressError on a bad pattern
    return LogReading(catalog, tuple(config.progress_patterns))


def provider_for(config: WorkerConfig) -> Provider:
    chosen = config.attribution
    return make_provider(chosen.provider, chosen.url, chosen.timeout.total_seconds())


def probing_for(config: WorkerConfig) -> HealthProbing:
    health = config.health
    return HealthProbing(health.probe, health.max_nodes, health.timeout.total_seconds(), tuple(health.srun_args))


def stacks_for(config: WorkerConfig) -> StackCollection:
    section = config.hang_stacks
    return StackCollection(
        enabled=section.enabled,
        timeout=section.timeout.total_seconds(),
        samples=section.samples,
        interval=section.interval.total_seconds(),
        native=section.native,
        parallel=section.parallel,
        py_spy=section.py_spy,
        srun_args=tuple(section.srun_args),
        slurm_conf=config.slurm.conf,
    )


def watch_activities(
    scheduler: Scheduler, config: WorkerConfig, quiet: Callable[[], bool] | None = None
) -> WatchActivities:
    """The worker's watches and their one observer; `quiet`: whether no recovery is under way
    here (the observer defers due log reads while one is)."""
    # Watches asking within this window share one scheduler poll (one squeue on Slurm).
    window = 0.05 if config.scheduler == "local" else 0.25
    return WatchActivities(scheduler, log_reading(config), window, quiet)


def activities_for(
    scheduler: Scheduler,
    config: WorkerConfig,
    suspects: Callable[[SuspectQuery], Awaitable[list[str]]] | None = None,
    watch: WatchActivities | None = None,
) -> list[Callable[..., Any]]:
    """`suspects`: the cluster's node history, which `diagnose` asks (none: no suspects known);
    `watch`: the worker's watches (made here when not given)."""
    actions = ActionActivities(scheduler, config)
    watch = watch or watch_activities(scheduler, config)
    return [
        actions.submit_attempt,
        actions.adopt_attempt,
        actions.record_advice,
        actions.plan_restart,
        actions.requeue_hold,
        actions.set_excluded_nodes,
        actions.release,
        actions.cancel_job,
        actions.verify_successor,
        watch.watch_attempt,
        watch.await_requeue,
        watch.attempt_end,
        DiagnoseActivities(
            scheduler, provider_for(config), probing_for(config), watch.coalescer.node_index, suspects
        ).diagnose,
        StackActivities(scheduler, stacks_for(config)).collect_hang_stacks,
        NotifyActivities().notify,
        *stage_job_activities(scheduler),
    ]


def stage_job_activities(scheduler: Scheduler) -> list[Callable[..., Any]]:
    """A pipeline's actions on its stages' held jobs."""
    stages = StageJobActivities(scheduler)
    return [stages.dag_release, stages.dag_cancel]


# Beyond the long watches: room for the short activities of recoveries happening at once.
SHORT_ACTIVITY_SLOTS = 200
# The SDK holds a heartbeat back for 0.8 of the activity's heartbeat timeout (at most this): a
# watch beats every half timeout (activities/watch.py), and with this cap each beat is sent as
# it comes, leaving half the timeout (30 s on the local tuning) for a busy server, not 0.2 of it.
HEARTBEAT_THROTTLE = timedelta(seconds=20)
# Workflow tasks one worker works on at once (the SDK's default is 100). A burst of failures
# wakes that many runs together, and a run asking its suspects (a local activity) holds its
# task open until the node history, a workflow of the same worker, answers: with every slot
# held by such runs, the answer would wait for the question's timeout.
WORKFLOW_TASK_SLOTS = 500
# A run's workflow task waits this long on the worker that has it cached (sticky) before any
# worker of the queue may take it (the SDK's default is 10 s): a busy worker's runs move to an
# idle one within seconds of a burst, at the price of one replay of each moved run's history.
STICKY_WAIT = timedelta(seconds=3)
# Workflow task polls kept open however quiet the queue (the SDK's autoscaling goes down to one
# of each kind): after an idle hour a burst's first tasks were handed out one poll at a time
# until the pollers scaled up again (10,000 runs, one worker: one poller of each kind before
# the burst, workflow tasks waiting 0.58 s on average to be taken in it). Five is the SDK's
# fixed number before autoscaling; an idle poll is a long poll the server answers every minute.
WORKFLOW_POLLERS = PollerBehaviorAutoscaling(minimum=5)


def cache_size(config: WorkerConfig) -> int:
    """Runs whose workflow the worker keeps in memory: `cached_runs`, or (null) every run it can
    hold, watched or being recovered."""
    return config.cached_runs or config.max_runs + SHORT_ACTIVITY_SLOTS


def build_worker(
    client: Client,
    scheduler: Scheduler,
    config: WorkerConfig,
    task_queue: str | None = None,
    interceptors: Sequence[Interceptor] = (),
    watch: WatchActivities | None = None,
) -> Worker:
    """The worker; `interceptors` run after its own (a test counts what activities do); `watch`:
    its watches, when the caller shares them out (worker/sharing.py)."""
    queue = task_queue or settings.task_queue()
    workflows: list[type] = [TrainingRun, Pipeline, NodeHistory]
    nodes = NodeHistoryActivities(client, scheduler, config.slurm.cluster, may_drain=config.drain_suspect_nodes)
    activities = activities_for(scheduler, config, nodes.suspects, watch)
    activities += [nodes.report_failure, nodes.suspect_nodes, nodes.drain_nodes]
    activities.append(RunWaitActivities(client).await_runs)  # for chained runs (`submit --after`)
    if isinstance(scheduler, Discoverable) and config.discovery.enabled:
        workflows.append(SlurmDiscovery)
        start = functools.partial(runs.start_run, client)
        discovery = DiscoveryActivities(scheduler, start, config.partitions, TUNING["slurm"])
        activities.append(discovery.adopt_opted_in_jobs)
    return Worker(
        client,
        task_queue=queue,
        workflows=workflows,
        activities=activities,
        max_concurrent_activities=config.max_runs + SHORT_ACTIVITY_SLOTS,
        max_cached_workflows=cache_size(config),
        workflow_runner=SandboxedWorkflowRunner() if config.workflow_sandbox else UnsandboxedWorkflowRunner(),
        max_concurrent_workflow_tasks=WORKFLOW_TASK_SLOTS,
        # A burst's diagnoses are local activities (patch `diagnose-in-task`): the SDK's default
        # of 100 at once would hold the rest of a larger burst back.
        max_concurrent_local_activities=SHORT_ACTIVITY_SLOTS,
        sticky_queue_schedule_to_start_timeout=STICKY_WAIT,
        # Pollers follow the backlog (a burst) instead of five each, fixed; at least five wait.
        workflow_task_poller_behavior=WORKFLOW_POLLERS,
        activity_task_poller_behavior=PollerBehaviorAutoscaling(),
        # Eager dispatch stays on: it hands a run's next activity to the worker that scheduled it,
        # so a second worker gets none of a run the first holds, but through the task queue each
        # activity waited ~1 s more in a burst on one host (benchmarks/concurrent_runs.py).
        max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
        interceptors=[ActivityContext(scheduler.name), SchedulerGuard(config.scheduler), *interceptors],
    )


async def ensure_discovery(client: Client, scheduler: Discoverable, config: WorkerConfig, queue: str) -> None:
    """Start the cluster's discovery workflow unless it already runs (one per cluster)."""
    try:
        cluster = config.slurm.cluster or await scheduler.cluster_name()
    except SchedulerError as e:
        log.error("discovery not started: cannot ask Slurm for the cluster name", error=str(e))
        return
    inp = DiscoveryInput(interval_seconds=config.discovery.interval.total_seconds(), task_queue=queue)
    try:
        await client.start_workflow(SlurmDiscovery.run, inp, id=f"recovery-discovery-{cluster}", task_queue=queue)
        log.info("discovery started", cluster=cluster)
    except WorkflowAlreadyStartedError:
        log.info("discovery already running", cluster=cluster)


async def serve(client: Client, scheduler: Scheduler, config: WorkerConfig) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    queue = settings.task_queue()
    # Whether a recovery is under way here: the observer's log reads wait while one is, and the
    # heap is walked (where freezing is on) and watches are handed on only at a quiet moment.
    quiet = Quiet()
    watch = watch_activities(scheduler, config, quiet)
    worker = build_worker(client, scheduler, config, queue, interceptors=[quiet], watch=watch)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    pauses = GcPauses(runtime_meter(client), freeze=config.gc_freeze)  # a long full collection stalls every run
    with pauses:
        async with worker:
            if isinstance(scheduler, Discoverable) and config.discovery.enabled:
                await ensure_discovery(client, scheduler, config, queue)
            log.info("worker started", task_queue=queue, scheduler=scheduler.name, mode=config.effective_mode)
            counting = _count_runs(client, config, stop)
            # A dead worker of this host leaves its watches to wait out their heartbeat timeout;
            # this one hands them on at once (worker/orphans.py).
            releasing = asyncio.create_task(release_while_serving(client, queue, stop))
            # A worker holding more than its share of the queue's watches hands the surplus on.
            sharing = asyncio.create_task(share_while_serving(client, queue, watch.observer, stop, quiet))
            thawing = asyncio.create_task(pauses.thawing(stop, quiet)) if config.gc_freeze else None
            await stop.wait()
            log.info("worker stopping")
            await releasing
            await sharing
            if thawing is not None:
                await thawing
            if counting is not None:
                await counting


def _count_runs(client: Client, config: WorkerConfig, stop: asyncio.Event) -> asyncio.Task[None] | None:
    """The runs-by-state gauge, only where metrics are served: it costs visibility queries."""
    if not config.metrics:
        return None
    return asyncio.create_task(publish_run_states(client, config.metrics_interval.total_seconds(), stop))
