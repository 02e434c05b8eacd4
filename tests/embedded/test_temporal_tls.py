"""TLS and mTLS to Temporal for real: the dev server behind a TLS front that requires a client
certificate (tests/embedded/tls_proxy.py), reached by `connect()`, the CLI and a worker that
recovers a run, all configured by the RECOVERY_TEMPORAL_TLS_* variables.

What this cannot show: the dev server itself speaking TLS (`temporal server start-dev` has no TLS
flags), and an API key being checked (the dev server accepts any); tests/unit/test_connection.py
covers how the API key is handed to the SDK.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.client import runs
from recovery.client.temporal_client import TemporalUnavailable, connect
from tests.conftest import need
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import check_one_clean_recovery, start
from tests.embedded.tls_proxy import Pki, TlsProxy, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    need(shutil.which("openssl") is not None, "the `openssl` command (to make test certificates)")
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def proxy(embedded: Embedded, pki: Pki) -> Iterator[TlsProxy]:
    front = TlsProxy(pki, embedded.server.address).start()
    yield front
    front.stop()


def tls_env(pki: Pki, proxy: TlsProxy, client: str | None = "client") -> dict[str, str]:
    env = {
        "RECOVERY_TEMPORAL_ADDRESS": proxy.address,
        "RECOVERY_TEMPORAL_TLS_CA": str(pki.ca),
        "RECOVERY_TEMPORAL_TLS_SERVER_NAME": pki.server_name,
    }
    if client:
        env |= {"RECOVERY_TEMPORAL_TLS_CERT": str(pki.cert(client)), "RECOVERY_TEMPORAL_TLS_KEY": str(pki.key(client))}
    return env


def use(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    monkeypatch.delenv("RECOVERY_CONFIG", raising=False)
    for name, val in env.items():
        monkeypatch.setenv(name, val)


async def test_mtls_client_presents_its_certificate(pki: Pki, proxy: TlsProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, tls_env(pki, proxy))
    seen = len(proxy.clients)
    client = await connect()
    assert (await client.count_workflows()).count >= 0
    assert proxy.clients[seen:] and set(proxy.clients[seen:]) == {"recovery-worker"}


@pytest.mark.parametrize(
    ("client_cert", "server_name"),
    [(None, "temporal.test"), ("rogue", "temporal.test"), ("client", None)],
    ids=["no-client-cert", "cert-from-another-ca", "server-name-not-in-its-cert"],
)
async def test_refused_connections_are_one_clear_line(
    pki: Pki, proxy: TlsProxy, monkeypatch: pytest.MonkeyPatch, client_cert: str | None, server_name: str | None
) -> None:
    env = tls_env(pki, proxy, client_cert)
    if server_name is None:
        env.pop("RECOVERY_TEMPORAL_TLS_SERVER_NAME")
        monkeypatch.delenv("RECOVERY_TEMPORAL_TLS_SERVER_NAME", raising=False)
    use(monkeypatch, env)
    with pytest.raises(TemporalUnavailable) as err:
        await asyncio.wait_for(connect(), 60)
    text = str(err.value)
    assert "\n" not in text and f"cannot reach Temporal at {proxy.address} over TLS" in text


async def test_plain_text_to_tls_and_tls_to_plain_text_fail(
    embedded: Embedded, pki: Pki, proxy: TlsProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, {"RECOVERY_TEMPORAL_ADDRESS": proxy.address})
    with pytest.raises(TemporalUnavailable, match="in plain text"):
        await asyncio.wait_for(connect(), 60)
    use(monkeypatch, tls_env(pki, proxy) | {"RECOVERY_TEMPORAL_ADDRESS": embedded.server.address})
    with pytest.raises(TemporalUnavailable, match="over TLS"):
        await asyncio.wait_for(connect(), 60)


@pytest.mark.timeout(180)
async def test_worker_and_cli_over_mtls_recover_a_run(
    embedded: Embedded, client: Client, pki: Pki, proxy: TlsProxy, tmp_path: Path
) -> None:
    env = tls_env(pki, proxy)
    embedded.stop_workers()  # only the worker over mTLS may run the run
    embedded.start_worker(**env)
    spec = await start(client, embedded.job_script("mtls", fault_node="node2"))
    status = await asyncio.wait_for(runs.wait_result(client, spec.run_id), 150)
    assert status is not None
    check_one_clean_recovery(status, "node2")
    listed = await asyncio.to_thread(embedded.recovery, "list", "--json", **env)
    assert listed.returncode == 0, listed.stderr
    assert spec.run_id in {row["id"] for row in json.loads(listed.stdout)}
    refused = await asyncio.to_thread(
        embedded.recovery, "list", **{k: v for k, v in env.items() if "CERT" not in k and "KEY" not in k}
    )
    assert refused.returncode == 1 and refused.stderr.startswith("recovery: cannot reach Temporal")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "recovery-worker" in proxy.clients
    embedded.stop_workers()
