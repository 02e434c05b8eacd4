"""Config and environment -> how the SDK connects: TLS, mTLS, API key, payload codec."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import PayloadCodec
from temporalio.service import TLSConfig

from recovery.client.config import ConfigError, TemporalConfig, TlsConfig, load_config
from recovery.client.connection import Connection, load_codec, resolve
from recovery.client.temporal_client import TemporalUnavailable, connect
from recovery.workflows.models import CancelRequest


class Reverse(PayloadCodec):
    """A stand-in for a site's encryption codec."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [Payload(metadata=p.metadata, data=p.data[::-1]) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return await self.encode(payloads)


REVERSE = Reverse()
NOT_A_CODEC = "just a string"


def pem(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_plain_by_default() -> None:
    conn = resolve(TemporalConfig(), {})
    assert conn == Connection(address="127.0.0.1:7233", namespace="default", tls=False)
    assert conn.data_converter is pydantic_data_converter and not conn.secured


def test_mtls_from_the_config_file(tmp_path: Path) -> None:
    tls = TlsConfig(
        ca=pem(tmp_path, "ca.pem", "CA"),
        cert=pem(tmp_path, "c.pem", "CERT"),
        key=pem(tmp_path, "k.pem", "KEY"),
        server_name="temporal.internal",
    )
    conn = resolve(TemporalConfig(address="t.example:7233", namespace="ml", tls=tls), {})
    assert conn.address == "t.example:7233" and conn.namespace == "ml"
    assert conn.tls == TLSConfig(
        server_root_ca_cert=b"CA", client_cert=b"CERT", client_private_key=b"KEY", domain="temporal.internal"
    )
    assert conn.api_key is None and conn.secured


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    env = {
        "RECOVERY_TEMPORAL_ADDRESS": "other:7233",
        "RECOVERY_NAMESPACE": "prod",
        "RECOVERY_TEMPORAL_TLS_CA": pem(tmp_path, "env-ca.pem", "ENVCA"),
        "RECOVERY_TEMPORAL_TLS_CERT": pem(tmp_path, "env-c.pem", "ENVCERT"),
        "RECOVERY_TEMPORAL_TLS_KEY": pem(tmp_path, "env-k.pem", "ENVKEY"),
        "RECOVERY_TEMPORAL_TLS_SERVER_NAME": "frontend",
    }
    file = TemporalConfig(address="file:7233", namespace="file", tls=TlsConfig(ca=pem(tmp_path, "ca.pem", "CA")))
    conn = resolve(file, env)
    assert (conn.address, conn.namespace) == ("other:7233", "prod")
    assert isinstance(conn.tls, TLSConfig)
    assert (conn.tls.server_root_ca_cert, conn.tls.client_cert, conn.tls.client_private_key) == (
        b"ENVCA",
        b"ENVCERT",
        b"ENVKEY",
    )
    assert conn.tls.domain == "frontend"


def test_tls_with_system_roots() -> None:
    assert resolve(TemporalConfig(tls=TlsConfig()), {}).tls == TLSConfig()
    assert resolve(TemporalConfig(), {"RECOVERY_TEMPORAL_TLS": "true"}).tls == TLSConfig()
    assert resolve(TemporalConfig(tls=TlsConfig()), {"RECOVERY_TEMPORAL_TLS": "false"}).tls is False


def test_api_key_turns_tls_on_and_stays_out_of_repr(tmp_path: Path) -> None:
    key_file = pem(tmp_path, "api-key", "sekrit-from-file\n")
    conn = resolve(TemporalConfig(api_key_file=key_file), {})
    assert conn.api_key == "sekrit-from-file" and conn.tls is True
    assert "sekrit" not in repr(conn)
    assert resolve(TemporalConfig(api_key_file=key_file), {"RECOVERY_TEMPORAL_API_KEY": "env-key"}).api_key == "env-key"
    with_ca = resolve(
        TemporalConfig(tls=TlsConfig(ca=pem(tmp_path, "ca.pem", "CA"))), {"RECOVERY_TEMPORAL_API_KEY": "k"}
    )
    assert with_ca.tls == TLSConfig(server_root_ca_cert=b"CA")


@pytest.mark.parametrize(
    ("temporal", "env", "message"),
    [
        (TemporalConfig(), {"RECOVERY_TEMPORAL_TLS_KEY": "/k.pem"}, "a client key needs its certificate"),
        (TemporalConfig(), {"RECOVERY_TEMPORAL_TLS_CERT": "/c.pem"}, "a certificate its key"),
        (
            TemporalConfig(tls=TlsConfig(ca="/nonexistent/ca.pem")),
            {},
            "cannot read the TLS CA certificate /nonexistent/ca.pem: No such file or directory",
        ),
        (TemporalConfig(api_key_file="/nonexistent/key"), {}, "cannot read the Temporal API key file /nonexistent/key"),
        (TemporalConfig(), {"RECOVERY_TEMPORAL_API_KEY": " "}, "the Temporal API key is empty"),
    ],
)
def test_errors_are_one_line(temporal: TemporalConfig, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve(temporal, env)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_key_without_cert_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "worker.yaml"
    path.write_text("temporal:\n  tls:\n    key: /etc/recovery/key.pem\n")
    with pytest.raises(ConfigError, match="tls needs both cert and key") as err:
        load_config(str(path))
    assert "\n" not in str(err.value)


def test_file_keys(tmp_path: Path) -> None:
    path = tmp_path / "worker.yaml"
    path.write_text(
        "temporal:\n  address: t:7233\n  namespace: ml\n  api_key_file: /run/key\n"
        "  payload_codec: tests.unit.test_connection:REVERSE\n"
        "  tls: {ca: /ca.pem, cert: /c.pem, key: /k.pem, server_name: t}\n"
    )
    temporal = load_config(str(path)).temporal
    assert temporal.tls == TlsConfig(ca="/ca.pem", cert="/c.pem", key="/k.pem", server_name="t")
    assert temporal.payload_codec == "tests.unit.test_connection:REVERSE"


async def test_payload_codec_hook() -> None:
    assert load_codec("tests.unit.test_connection:REVERSE") is REVERSE
    assert isinstance(load_codec("tests.unit.test_connection:Reverse"), Reverse)  # a factory
    conn = resolve(TemporalConfig(payload_codec="tests.unit.test_connection:REVERSE"), {})
    assert conn.data_converter.payload_codec is REVERSE
    assert conn.data_converter.payload_converter_class is pydantic_data_converter.payload_converter_class
    (encoded,) = await conn.data_converter.encode([CancelRequest(kill_job=True)])
    assert encoded.data == b'{"kill_job":true}'[::-1]  # pydantic JSON, then the codec
    (back,) = await conn.data_converter.decode([encoded], [CancelRequest])
    assert back == CancelRequest(kill_job=True)
    env = {"RECOVERY_TEMPORAL_PAYLOAD_CODEC": "tests.unit.test_connection:Reverse"}
    assert isinstance(resolve(TemporalConfig(), env).data_converter.payload_codec, Reverse)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "write it as module:attribute"),
        ("no_such_module_here:X", "No module named 'no_such_module_here'"),
        ("tests.unit.test_connection:Missing", "has no attribute 'Missing'"),
        ("tests.unit.test_connection:NOT_A_CODEC", "is not a temporalio PayloadCodec"),
        ("tests.unit.test_connection:pem", "cannot make a codec"),
    ],
)
def test_payload_codec_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_codec(spec)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_over_tls_says_so_without_the_dev_server_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOVERY_TEMPORAL_API_KEY", "sekrit")
    monkeypatch.delenv("RECOVERY_CONFIG", raising=False)
    address = f"127.0.0.1:{closed_port()}"
    with pytest.raises(TemporalUnavailable) as err:
        await connect(address)
    text = str(err.value)
    assert f"cannot reach Temporal at {address} over TLS" in text and "check the address" in text
    assert "sekrit" not in text and "dev-server" not in text
