"""The worker's garbage-collection pauses: timed, exported, and logged when long.

A worker that holds thousands of cached runs has millions of Python objects. CPython's full
(generation 2) collection walks all of them while it holds the GIL, so the event loop, the
observer's look and every workflow task stop for as long as it takes. The SDK then reports a
workflow that "didn't yield within 2 seconds" without saying why. These pauses are timed here
(`gc.callbacks`), counted in `recovery_worker_gc_pause_seconds{generation}` on `--metrics`, and
a collection longer than `LONG` is logged with what it freed.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import structlog
from temporalio.common import MetricMeter

from recovery.activities.metrics import DESCRIPTIONS, GC_PAUSE

log = structlog.get_logger("recovery.worker")

LONG = 0.5  # seconds: a pause the workflow tasks and the observer feel


class GcPauses:
    """Times every collection of this process while installed; one per worker process."""

    def __init__(self, meter: MetricMeter, long: float = LONG) -> None:
        self._histogram = meter.create_histogram_float(GC_PAUSE, DESCRIPTIONS[GC_PAUSE], "s")
        self._long = long
        self._began = 0.0

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        # Runs in whichever thread allocated the object that triggered the collection; CPython
        # holds the GIL throughout, so the two phases of one collection are never interleaved.
        if phase == "start":
            self._began = time.perf_counter()
            return
        seconds = time.perf_counter() - self._began
        generation = int(info["generation"])
        self._histogram.record(seconds, {"generation": str(generation)})
        if seconds >= self._long:
            log.warning(
                "long garbage collection",
                seconds=round(seconds, 3),
                generation=generation,
                collected=info["collected"],
                uncollectable=info["uncollectable"],
            )
