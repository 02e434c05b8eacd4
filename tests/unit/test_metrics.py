"""Our metrics through the SDK's meter and its Prometheus endpoint, recorded by real activities
in Temporal's ActivityEnvironment (no server needed)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import socket
import weakref
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from temporalio.common import MetricMeter
from temporalio.exceptions import ApplicationError
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.testing import ActivityEnvironment

from recovery.activities import heap, metrics
from recovery.activities.actions import ActionActivities
from recovery.activities.errors import PermanentActionError, scheduler_errors
from recovery.activities.schedulers.base import JobNotFound, SchedulerUnavailable
from recovery.client.config import WorkerConfig
from recovery.worker.gc_pauses import GcPauses
from recovery.workflows.models import Advice, RecordAdviceInput
from tests.fakes import ScriptedScheduler
from tests.prometheus import Sample, scrape, value

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def prometheus() -> Iterator[tuple[MetricMeter, int]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = PrometheusConfig(bind_address=f"127.0.0.1:{port}", histogram_bucket_overrides=metrics.BUCKET_OVERRIDES)
    runtime = Runtime(telemetry=TelemetryConfig(metrics=config))
    yield runtime.metric_meter, port


def env_for(meter: MetricMeter, activity_type: str) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.metric_meter = meter
    env.info = dataclasses.replace(ActivityEnvironment.default_info(), activity_type=activity_type)
    return env


def advice(operation: str = "restart") -> Advice:
    return Advice(
        generation=1,
        attempt_index=0,
        operation=operation,  # type: ignore[arg-type]
        reason="r",
        explanation="e",
        created_at=T0,
    )


def test_seconds_between() -> None:
    assert metrics.seconds_between(T0, T0 + timedelta(seconds=90)) == 90.0
    assert metrics.seconds_between(T0 + timedelta(seconds=5), T0) == 0.0  # another host's clock was ahead
    assert metrics.seconds_between(None, T0) is None and metrics.seconds_between(T0, None) is None


def test_outside_an_activity_nothing_is_recorded_and_nothing_fails() -> None:
    metrics.attempt_started("submit")
    metrics.advice_recorded("restart", "act", 3.0)
    with pytest.raises(PermanentActionError), scheduler_errors():
        raise JobNotFound("7")


async def test_scheduler_errors_are_counted_by_scheduler_command_and_kind(prometheus: tuple[MetricMeter, int]) -> None:
    meter, port = prometheus

    async def refused() -> None:
        token = metrics.SCHEDULER.set("slurm")
        try:
            with scheduler_errors():
                raise SchedulerUnavailable("slurmctld is away")
        finally:
            metrics.SCHEDULER.reset(token)

    for _ in range(2):
        with pytest.raises(ApplicationError, match="scheduler unavailable"):
            await env_for(meter, "requeue_hold").run(refused)
    got = scrape(port)
    labels = {"scheduler": "slurm", "command": "requeue_hold", "kind": "SchedulerUnavailable"}
    assert value(got, "recovery_scheduler_errors_total", **labels) == 2
    assert value(got, "recovery_scheduler_errors_total", activity_type="requeue_hold") == 2  # the SDK's label


async def test_record_advice_counts_and_times_it(prometheus: tuple[MetricMeter, int]) -> None:
    meter, port = prometheus
    acting = ActionActivities(ScriptedScheduler(["complete"]), WorkerConfig(mode="act"))
    observing = ActionActivities(ScriptedScheduler(["complete"]), WorkerConfig(mode="observe"))
    failed_at = datetime.now(UTC) - timedelta(seconds=42)
    env = env_for(meter, "record_advice")
    await env.run(acting.record_advice, RecordAdviceInput(run_id="r1", advice=advice(), failed_at=failed_at))
    await env.run(observing.record_advice, RecordAdviceInput(run_id="r2", advice=advice()))
    await env.run(acting.record_advice, RecordAdviceInput(run_id="r3", advice=advice("give_up")))
    got: list[Sample] = scrape(port)
    assert value(got, "recovery_advice_total", operation="restart", mode="act") == 1
    assert value(got, "recovery_advice_total", operation="restart", mode="observe") == 1
    assert value(got, "recovery_advice_total", operation="give_up", mode="act") == 1
    resolved = "recovery_advice_resolved_total"
    assert value(got, resolved, operation="restart", status="abandoned", acted="false") == 1
    assert value(got, resolved, operation="give_up", status="converged", acted="false") == 1
    assert value(got, resolved, operation="restart", status="converged") == 0  # only once the successor runs
    # Only the advice that said when its attempt failed is timed.
    assert value(got, "recovery_failure_to_advice_seconds_count", operation="restart") == 1
    assert 42 <= value(got, "recovery_failure_to_advice_seconds_sum") < 60
    assert value(got, "recovery_failure_to_advice_seconds_bucket", le="30") == 0
    assert value(got, "recovery_failure_to_advice_seconds_bucket", le="60") == 1


def test_the_workers_garbage_collections_are_timed_and_a_long_one_is_logged(
    prometheus: tuple[MetricMeter, int],
) -> None:
    meter, port = prometheus
    before = value(scrape(port), "recovery_worker_gc_pause_seconds_count", generation="2")
    with capture_logs() as logs, GcPauses(meter, long=0.0, freeze=False):  # every collection counts as long
        gc.collect()
    gc.collect()  # after it is removed: not timed
    got = scrape(port)
    assert value(got, "recovery_worker_gc_pause_seconds_count", generation="2") == before + 1
    assert value(got, "recovery_worker_gc_pause_seconds_bucket", generation="2", le="5") == before + 1
    assert [(e["event"], e["generation"]) for e in logs] == [("long garbage collection", 2)]


class _Held:
    """An object the collector tracks and a weak reference can watch."""


def test_what_a_long_full_collection_kept_is_frozen_out_of_the_next(prometheus: tuple[MetricMeter, int]) -> None:
    meter, _ = prometheus
    survivors = [_Held() for _ in range(1000)]
    gc.unfreeze()
    try:
        with capture_logs() as logs, GcPauses(meter, long=0.0):  # every collection counts as long
            gc.collect()
            frozen = gc.get_freeze_count()
            assert frozen >= len(survivors)
            walked = {id(o) for o in gc.get_objects(2)}
            assert not any(id(o) in walked for o in survivors)  # the next full collection skips them
            gc.collect(1)  # a young one freezes nothing more
            assert gc.get_freeze_count() == frozen
        assert logs[0]["frozen"] == frozen and logs[1]["frozen"] is None
        # A frozen object still goes with its last reference.
        watched = weakref.ref(survivors[0])
        del survivors[0]
        assert watched() is None
    finally:
        gc.unfreeze()


async def test_what_was_frozen_is_given_back_to_the_collector(prometheus: tuple[MetricMeter, int]) -> None:
    meter, _ = prometheus
    stop = asyncio.Event()
    pauses = GcPauses(meter, long=0.0)
    try:
        with capture_logs(), pauses:
            gc.collect()
        assert gc.get_freeze_count() > 0
        thawing = asyncio.create_task(pauses.thawing(stop, quiet=lambda: True, every=0.01))
        for _ in range(100):
            if gc.get_freeze_count() == 0:
                break
            await asyncio.sleep(0.01)
        assert gc.get_freeze_count() == 0
        stop.set()
        await asyncio.wait_for(thawing, 5)
    finally:
        gc.unfreeze()


async def test_frozen_garbage_is_freed_at_a_quiet_moment_or_after_another_period(
    prometheus: tuple[MetricMeter, int],
) -> None:
    meter, _ = prometheus
    # every=0.2: quiet, it thaws at 0.2 s; never quiet, it waits another 0.2 s.
    for quiet, kept_until, freed_by in ((True, 0.1, 0.35), (False, 0.3, 0.55)):
        stop = asyncio.Event()
        pauses = GcPauses(meter, long=0.0)
        cycle = _Held()
        cycle.me = cycle  # type: ignore[attr-defined]  # only the collector can free it
        watched = weakref.ref(cycle)
        try:
            with capture_logs(), pauses:
                gc.collect()  # "long": the cycle is frozen with everything else
                del cycle
                thawing = asyncio.create_task(pauses.thawing(stop, quiet=quiet.__bool__, every=0.2, poll=0.01))
                await asyncio.sleep(kept_until)
                gc.collect(1)
                assert watched() is not None, "frozen: no collection frees it before its time"
                await asyncio.sleep(freed_by - kept_until)
                assert watched() is None, f"quiet={quiet}: given back and collected"
                stop.set()
                await asyncio.wait_for(thawing, 5)
        finally:
            gc.unfreeze()


async def test_a_worker_that_grew_gives_memory_back_without_waiting_for_the_period(
    prometheus: tuple[MetricMeter, int],
) -> None:
    """While runs start, a worker lets go of workflows faster than one thaw a period frees them:
    grown by `growth` since its last thaw, it thaws at its next quiet moment; then it waits again."""
    meter, _ = prometheus
    size = 1000
    stop = asyncio.Event()
    pauses = GcPauses(meter, long=0.0)

    def frozen_cycle() -> weakref.ref[_Held]:
        cycle = _Held()
        cycle.me = cycle  # type: ignore[attr-defined]  # only the collector can free it
        with capture_logs():
            gc.collect()  # "long": the cycle is frozen with everything else
        assert gc.get_freeze_count() > 0
        return weakref.ref(cycle)

    try:
        with pauses:
            first = frozen_cycle()
            thawing = asyncio.create_task(
                pauses.thawing(stop, quiet=lambda: True, every=60.0, poll=0.01, growth=100, resident=lambda: size)
            )
            await asyncio.sleep(0.1)
            gc.collect(1)
            assert first() is not None, "grown by less than `growth`: it waits for the period"
            size += 100
            await asyncio.sleep(0.1)
            assert first() is None, "grown by `growth`: thawed and collected at once"
            second = frozen_cycle()
            await asyncio.sleep(0.1)
            assert second() is not None, "measured again after the thaw: not grown since"
            size += 150
            await asyncio.sleep(0.1)
            assert second() is None
            stop.set()
            await asyncio.wait_for(thawing, 5)
    finally:
        gc.unfreeze()


async def test_between_thaws_what_is_newer_is_collected_and_frozen_at_a_quiet_moment(
    prometheus: tuple[MetricMeter, int],
) -> None:
    """So that the full collection the allocations trigger, maybe in a burst, finds little new
    to walk. Never while a recovery is under way."""
    meter, _ = prometheus
    for quiet in (True, False):
        stop = asyncio.Event()
        pauses = GcPauses(meter, long=0.0)
        try:
            with capture_logs(), pauses:
                gc.collect()  # "long": freezing is under way
                young = [_Held() for _ in range(1000)]
                garbage = _Held()
                garbage.me = garbage  # type: ignore[attr-defined]  # only the collector can free it
                watched = weakref.ref(garbage)
                del garbage
                thawing = asyncio.create_task(
                    pauses.thawing(stop, quiet=quiet.__bool__, every=60.0, poll=0.01, settle=0.05)
                )
                await asyncio.sleep(0.3)
                # Frozen objects are in none of the collector's generations.
                collected = any(o is young for o in gc.get_objects())
                if quiet:
                    assert not collected, "the young survivors are frozen"
                    assert watched() is None, "and the young garbage freed"
                else:
                    assert collected
                    assert watched() is not None
                stop.set()
                await asyncio.wait_for(thawing, 5)
        finally:
            gc.unfreeze()


def test_trimming_hands_freed_pages_back_to_the_system() -> None:
    """glibc keeps freed blocks that sit between live ones; `heap.trim` returns their pages.
    Blocks of 1,000 bytes are above Python's small-object allocator: they come from malloc."""
    if heap.resident_bytes() is None:
        pytest.skip("no /proc: the resident size cannot be read here")
    blocks = [bytearray(1000) for _ in range(60_000)]
    kept = blocks[::16]  # one live block in every 16: no freed run reaches the heap's top
    del blocks
    before = heap.resident_bytes()
    heap.trim()
    after = heap.resident_bytes()
    assert before is not None and after is not None
    assert before - after > 20 * 2**20, f"{before / 2**20:.0f} MiB -> {after / 2**20:.0f} MiB"
    assert len(kept) == 3750


def test_without_freeze_a_long_collection_is_only_logged(prometheus: tuple[MetricMeter, int]) -> None:
    meter, _ = prometheus
    gc.unfreeze()
    with capture_logs() as logs, GcPauses(meter, long=0.0, freeze=False):
        gc.collect()
    assert gc.get_freeze_count() == 0
    assert logs[0]["frozen"] is None


def test_a_short_collection_is_timed_but_not_logged(prometheus: tuple[MetricMeter, int]) -> None:
    meter, _ = prometheus
    with capture_logs() as logs, GcPauses(meter, long=60.0):
        gc.collect(0)
    assert logs == []


def test_every_metric_is_in_the_operators_table() -> None:
    table = (Path(__file__).parents[2] / "docs" / "operations.md").read_text()
    assert [name for name in metrics.DESCRIPTIONS if f"| `{name}` |" not in table] == []
