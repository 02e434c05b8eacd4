"""Connecting to Temporal with the data converter every part of `recovery` shares."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError

from worker import settings


class TemporalUnavailable(RuntimeError):
    pass


async def connect(address: str | None = None) -> Client:
    target = address or settings.temporal_address()
    try:
        return await Client.connect(
            target, namespace=settings.namespace(), data_converter=pydantic_data_converter
        )
    except (RuntimeError, RPCError) as e:
        raise TemporalUnavailable(
            f"cannot reach Temporal at {target} ({str(e).splitlines()[0]}); "
            "start the embedded one with `recovery dev-server start`"
        ) from None
