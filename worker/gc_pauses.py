"""The worker's garbage-collection pauses: timed, exported, logged when long, and kept short.

A worker that holds thousands of cached runs has millions of Python objects. CPython's full
(generation 2) collection walks all of them while it holds the GIL, so the event loop, the
observer's look and every workflow task stop for as long as it takes. The SDK then reports a
workflow that "didn't yield within 2 seconds" without saying why. These pauses are timed here
(`gc.callbacks`), counted in `recovery_worker_gc_pause_seconds{generation}` on `--metrics`, and
a collection longer than `LONG` is logged with what it freed.

Keeping them short. At 10,000 runs on two workers (benchmarks/concurrent_runs.py, `cached_runs:
2500` each) every worker stood still 1-3 s in a full collection about every 40 s, and two fell
in a burst of failures (2.0 s and 3.7 s). Most of what such a collection walks is alive and stays alive
(cached workflows, the observer's watches); what it frees (55,000-105,000 objects each time) are
the reference cycles of workflows let go of from the cache. So after a long full collection the
survivors are frozen (`gc.freeze()`): the collections after it walk only what is newer. A
workflow that was frozen and is then let go of stays in memory, though: its cycles are in the
frozen set. So every `THAW`, at the first quiet moment after it (no recovery under way on this
worker, `Quiet`), the frozen set is given back (`gc.unfreeze()`) and the whole heap is collected
there and then, freeing those workflows; what survives is frozen again. A worker then walks its
whole heap about once per `THAW`, when it is idle, not every 40 s in the middle of a burst, and
holds at most a `THAW`'s worth of let-go workflows (a worker that is never quiet thaws after
twice `THAW`). Left to the collector, that walk comes wherever the next allocations trigger
it, a burst of failures included; at 10,000 runs it took 3.8-6.4 s.

What a thaw frees the allocator would keep (its heaps keep freed pages between live blocks),
so after it the pages are handed back to the system (`heap.trim`): at 2,000 runs on one worker
that alone took its resident size from 595 to 555 MiB, in 6 ms. And while runs start, a full
cache lets workflows go faster than one thaw every `THAW` frees them: a worker that has grown
by `GROWTH` since its last thaw thaws at its next quiet moment, without waiting for `THAW`.

Between thaws the collector still walks, in full collections of its own, what is newer than
the frozen set, once that has grown by a quarter of what the last full collection kept: at
10,000 runs such a walk took 0.6 s, and one fell in a burst. So every `SETTLE`, at a quiet
moment, what is newer is collected and frozen there and then, and the collections a burst
triggers find little to walk. `gc_freeze: false` (worker config) turns it all off.
"""

from __future__ import annotations

import asyncio
import gc
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import structlog
from temporalio import activity
from temporalio.common import MetricMeter
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from recovery.activities import heap
from recovery.activities.metrics import DESCRIPTIONS, GC_PAUSE
from recovery.worker.stopping import stopped_within
from recovery.workflows.models import SubmitInput

log = structlog.get_logger("recovery.worker")

LONG = 0.5  # seconds: a pause the workflow tasks and the observer feel
THAW = 300.0  # seconds between giving the frozen objects back to the collector
QUIET = 10.0  # seconds since the last recovery activity ended: none is under way
# Bytes a worker may grow by before it gives memory back without waiting for THAW: while runs
# start, workflows are let go of from a full cache faster than THAW frees them.
GROWTH = 128 * 2**20
SETTLE = 60.0  # seconds between quiet collections of what is newer than the frozen set
# Activities that only wait (for news of an attempt, for other runs): always running, they say
# nothing of a recovery under way.
WAITS = frozenset({"watch_attempt", "await_runs"})


def _grown(since: int | None, now: int | None, growth: int) -> bool:
    return since is not None and now is not None and now - since >= growth


def _thaw() -> None:
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()  # long: the callback freezes what survived
    heap.trim()


def _settle() -> None:
    # Only once freezing is under way (a full collection was long): the young objects that
    # survive now are frozen here, at a quiet moment, rather than walked by the next full
    # collection the allocations trigger, which may come in a burst of failures.
    if gc.get_freeze_count():
        gc.collect()
        gc.freeze()


def _recovering(kind: str, args: Sequence[Any]) -> bool:
    """Whether an activity is a step of a recovery. A run's start (its first submit, or the
    adoption of its job) is not one: counted as one, 10,000 runs starting kept a worker from a
    quiet moment for the 9-17 minutes they took, and the workflows it let go of from its cache
    meanwhile stayed frozen, in memory, past the start-up."""
    if kind in WAITS or kind == "adopt_attempt":
        return False
    first_submit = kind == "submit_attempt" and isinstance(args[0], SubmitInput) and args[0].attempt_index == 0
    return not first_submit


class Quiet(Interceptor):
    """Whether no recovery is under way on this worker: none of a recovery's activities running
    (`_recovering`), and none ended within `after` seconds (a recovery's steps follow each other
    within a second or two). Called as `quiet()`."""

    def __init__(self, after: float = QUIET) -> None:
        self._after = after
        self._lock = threading.Lock()  # activities that are not async run in threads
        self._running = 0
        self._ended = -math.inf

    def __call__(self) -> bool:
        with self._lock:
            return self._running == 0 and time.monotonic() - self._ended >= self._after

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Counted(next, self)

    def _begin(self) -> None:
        with self._lock:
            self._running += 1

    def _end(self) -> None:
        with self._lock:
            self._running -= 1
            self._ended = time.monotonic()


class _Counted(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, quiet: Quiet) -> None:
        super().__init__(next)
        self._quiet = quiet

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if not _recovering(activity.info().activity_type, input.args):
            return await self.next.execute_activity(input)
        self._quiet._begin()
        try:
            return await self.next.execute_activity(input)
        finally:
            self._quiet._end()


class GcPauses:
    """Times every collection of this process while installed; one per worker process."""

    def __init__(self, meter: MetricMeter, long: float = LONG, freeze: bool = True) -> None:
        self._histogram = meter.create_histogram_float(GC_PAUSE, DESCRIPTIONS[GC_PAUSE], "s")
        self._long = long
        self._freeze = freeze
        self._began = 0.0

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    async def thawing(
        self,
        stop: asyncio.Event,
        quiet: Callable[[], bool],
        every: float = THAW,
        poll: float = 1.0,
        growth: int = GROWTH,
        resident: Callable[[], int | None] = heap.resident_bytes,
        settle: float = SETTLE,
    ) -> None:
        """Until `stop`: every `every` seconds, or sooner once the worker has grown by `growth`
        bytes since the last time, at the first `quiet()` moment (regardless, `2 * every` after the last),
        give back what was frozen, collect the whole heap now and hand the freed pages back to
        the system. Between thaws, at a quiet moment every `settle` seconds, collect and freeze
        what is newer than the frozen set."""
        since = resident()
        thawed = settled = time.monotonic()
        while not await stopped_within(stop, poll):
            now = time.monotonic()
            due = now - thawed >= every or _grown(since, resident(), growth)
            if due and (quiet() or now - thawed >= 2 * every):
                _thaw()
                since, thawed, settled = resident(), time.monotonic(), time.monotonic()
            elif now - settled >= settle and quiet():
                _settle()
                settled = time.monotonic()

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        # Runs in whichever thread allocated the object that triggered the collection; CPython
        # holds the GIL throughout, so the two phases of one collection are never interleaved.
        if phase == "start":
            self._began = time.perf_counter()
            return
        seconds = time.perf_counter() - self._began
        generation = int(info["generation"])
        self._histogram.record(seconds, {"generation": str(generation)})
        if seconds < self._long:
            return
        frozen = generation == 2 and self._freeze
        if frozen:
            gc.freeze()  # the collection is over: its survivors leave the generations it walks
        log.warning(
            "long garbage collection",
            seconds=round(seconds, 3),
            generation=generation,
            collected=info["collected"],
            uncollectable=info["uncollectable"],
            frozen=gc.get_freeze_count() if frozen else None,
        )
