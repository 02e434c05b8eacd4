"""Connecting to Temporal with the data converter every part of `recovery` shares."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.service import RPCError

from worker import settings


class TemporalUnavailable(RuntimeError):
    pass


async def connect(address: str | None = None, metrics: str | None = None) -> Client:
    """A client; with `metrics` (HOST:PORT), the SDK's Prometheus metrics are served there."""
    target = address or settings.temporal_address()
    runtime = None
    if metrics:
        telemetry = TelemetryConfig(metrics=PrometheusConfig(bind_address=metrics))
        runtime = Runtime(telemetry=telemetry)
    try:
        return await Client.connect(
            target,
            namespace=settings.namespace(),
            data_converter=pydantic_data_converter,
            runtime=runtime,
        )
    except (RuntimeError, RPCError) as e:
        raise TemporalUnavailable(
            f"cannot reach Temporal at {target} ({str(e).splitlines()[0]}); "
            "start the embedded one with `recovery dev-server start`"
        ) from None
