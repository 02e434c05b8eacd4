"""Connecting to Temporal with the data converter every part of `recovery` shares."""

from __future__ import annotations

import os

from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.service import RPCError

from recovery import settings
from recovery.activities.metrics import BUCKET_OVERRIDES
from recovery.client.config import TemporalConfig, load_config
from recovery.client.connection import Connection, resolve


class TemporalUnavailable(RuntimeError):
    pass


def temporal_config() -> TemporalConfig:
    """The `temporal:` section of RECOVERY_CONFIG, for commands that take no --config."""
    path = settings.config_path()
    return load_config(str(path)).temporal if path else TemporalConfig()


async def connect(
    address: str | None = None, metrics: str | None = None, temporal: TemporalConfig | None = None
) -> Client:
    """A client; with `metrics` (HOST:PORT), the SDK's Prometheus metrics and ours are served there.

    `temporal` is the config's connection section (default: RECOVERY_CONFIG's); environment
    variables override it (`connection`), and `address` overrides both.
    """
    conn = resolve(temporal or temporal_config(), os.environ)
    target = address or conn.address
    runtime = None
    if metrics:
        prometheus = PrometheusConfig(bind_address=metrics, histogram_bucket_overrides=BUCKET_OVERRIDES)
        runtime = Runtime(telemetry=TelemetryConfig(metrics=prometheus))
    try:
        return await Client.connect(
            target,
            namespace=conn.namespace,
            data_converter=conn.data_converter,
            tls=conn.tls,
            api_key=conn.api_key,
            runtime=runtime,
        )
    except (RuntimeError, RPCError) as e:
        raise TemporalUnavailable(_unreachable(target, conn, e)) from None


def _unreachable(target: str, conn: Connection, error: Exception) -> str:
    how = "over TLS" if conn.tls is not False else "in plain text"
    hint = (
        "check the address, the certificates and the API key"
        if conn.secured
        else "start the embedded one with `recovery dev-server start`"
    )
    first = (str(error).splitlines() or [type(error).__name__])[0]
    return f"cannot reach Temporal at {target} {how} ({first}); {hint}"
