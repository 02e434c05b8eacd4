"""The worker's background loops pace themselves on its stop event (SIGTERM, SIGINT)."""

from __future__ import annotations

import asyncio
import contextlib


async def stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Wait `seconds`, or less if `stop` is set meanwhile; whether it is set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()
