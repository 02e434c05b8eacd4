"""The worker's garbage-collection pauses: timed, exported, logged when long, and kept short.

A worker that holds thousands of cached runs has millions of Python objects. CPython's full
(generation 2) collection walks all of them while it holds the GIL, so the event loop, the
observer's look and every workflow task stop for as long as it takes. The SDK then reports a
workflow that "didn't yield within 2 seconds" without saying why. These pauses are timed here
(`gc.callbacks`), counted in `recovery_worker_gc_pause_seconds{generation}` on `--metrics`, and
a collection longer than `LONG` is logged with what it freed.

Keeping them short. At 10,000 runs on two workers (benchmarks/concurrent_runs.py, `cached_runs:
2500` each) every worker stood still 1-3 s in a full collection about every 40 s, and one in a
burst of failures took 3.7 s. Most of what such a collection walks is alive and stays alive
(cached workflows, the observer's watches); what it frees (55,000-105,000 objects each time) are
the reference cycles of workflows let go of from the cache. So after a long full collection the
survivors are frozen (`gc.freeze()`): the collections after it walk only what is newer. A
workflow that was frozen and is then let go of stays in memory, though: its cycles are in the
frozen set. Every `THAW` the frozen set is given back (`gc.unfreeze()`); the next full
collection walks everything once, frees those, and freezes again. So a worker stands still for
a whole-heap walk about once per `THAW`, not every 40 s, and holds at most a `THAW`'s worth of
let-go workflows. `gc_freeze: false` (worker config) turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from typing import Any

import structlog
from temporalio.common import MetricMeter

from recovery.activities.metrics import DESCRIPTIONS, GC_PAUSE

log = structlog.get_logger("recovery.worker")

LONG = 0.5  # seconds: a pause the workflow tasks and the observer feel
THAW = 300.0  # seconds between giving the frozen objects back to the collector


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

    async def thawing(self, stop: asyncio.Event, every: float = THAW) -> None:
        """Until `stop`: every `every` seconds, give what was frozen back to the collector."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
            if gc.get_freeze_count():
                gc.unfreeze()

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
