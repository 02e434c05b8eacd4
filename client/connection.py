"""How to reach Temporal: address, namespace, TLS or mTLS, API key, payload codec.

From the config file's `temporal:` section, with environment variables taking precedence (a
systemd EnvironmentFile or a secret store can then override a shared file):

| variable | config key | meaning |
|---|---|---|
| RECOVERY_TEMPORAL_ADDRESS | temporal.address | HOST:PORT of the frontend |
| RECOVERY_NAMESPACE | temporal.namespace | namespace |
| RECOVERY_TEMPORAL_TLS | temporal.tls present | `true`: TLS even with no other TLS setting (system roots) |
| RECOVERY_TEMPORAL_TLS_CA | temporal.tls.ca | CA certificate (PEM file) |
| RECOVERY_TEMPORAL_TLS_CERT | temporal.tls.cert | client certificate (PEM file), for mTLS |
| RECOVERY_TEMPORAL_TLS_KEY | temporal.tls.key | client private key (PEM file), for mTLS |
| RECOVERY_TEMPORAL_TLS_SERVER_NAME | temporal.tls.server_name | name to verify the server's certificate against |
| RECOVERY_TEMPORAL_API_KEY | temporal.api_key_file | the API key itself (the variable), or a file holding it |
| RECOVERY_TEMPORAL_PAYLOAD_CODEC | temporal.payload_codec | `module:attr`, a PayloadCodec or a factory of one |

Secrets (key, API key) are read here and handed to the SDK's connection only: they are never
part of a workflow's input, a log line or an error message.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, PayloadCodec
from temporalio.service import TLSConfig

from recovery.client.config import ConfigError, TemporalConfig, TlsConfig

DEFAULT_ADDRESS = "127.0.0.1:7233"
ENV = "RECOVERY_TEMPORAL_"


@dataclass(frozen=True)
class Connection:
    address: str
    namespace: str
    tls: TLSConfig | bool = field(repr=False)  # may hold the client's private key
    api_key: str | None = field(default=None, repr=False)
    data_converter: DataConverter = pydantic_data_converter

    @property
    def secured(self) -> bool:
        return self.tls is not False or self.api_key is not None


def resolve(temporal: TemporalConfig, env: Mapping[str, str]) -> Connection:
    """The connection the config and environment describe; ConfigError (one line) if unusable."""
    api_key = _api_key(temporal, env)
    tls = _tls(temporal.tls, env)
    return Connection(
        address=env.get(f"{ENV}ADDRESS") or temporal.address or DEFAULT_ADDRESS,
        namespace=env.get("RECOVERY_NAMESPACE") or temporal.namespace or "default",
        # An API key is a bearer token: the SDK sends it over TLS (system roots) unless told how.
        tls=tls if tls is not None else api_key is not None,
        api_key=api_key,
        data_converter=_converter(env.get(f"{ENV}PAYLOAD_CODEC") or temporal.payload_codec),
    )


def _tls(section: TlsConfig | None, env: Mapping[str, str]) -> TLSConfig | None:
    """None when nothing asks for TLS, so that an API key alone can still turn it on."""
    base = section or TlsConfig()
    ca = env.get(f"{ENV}TLS_CA") or base.ca
    cert = env.get(f"{ENV}TLS_CERT") or base.cert
    key = env.get(f"{ENV}TLS_KEY") or base.key
    server_name = env.get(f"{ENV}TLS_SERVER_NAME") or base.server_name
    flag = env.get(f"{ENV}TLS", "").strip().lower()
    if flag in ("0", "false", "no", "off") or not (section or flag or ca or cert or key or server_name):
        return None
    if bool(cert) != bool(key):
        raise ConfigError("temporal TLS: a client key needs its certificate and a certificate its key (mTLS)")
    return TLSConfig(
        server_root_ca_cert=_read(ca, "TLS CA certificate"),
        client_cert=_read(cert, "TLS client certificate"),
        client_private_key=_read(key, "TLS client key"),
        domain=server_name,
    )


def _api_key(temporal: TemporalConfig, env: Mapping[str, str]) -> str | None:
    key = env.get(f"{ENV}API_KEY")
    if key is None and temporal.api_key_file:
        data = _read(temporal.api_key_file, "Temporal API key file")
        key = data.decode().strip() if data else ""
    if key is not None and not key.strip():
        raise ConfigError("the Temporal API key is empty")
    return key.strip() if key else None


def _read(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read the {what} {path}: {e.strerror or e}") from None


def _converter(spec: str | None) -> DataConverter:
    """Pydantic payloads, optionally through a site's codec (encryption, compression)."""
    if not spec:
        return pydantic_data_converter
    return dataclasses.replace(pydantic_data_converter, payload_codec=load_codec(spec))


def load_codec(spec: str) -> PayloadCodec:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"payload codec {spec!r}: write it as module:attribute")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"payload codec {spec!r}: {e}") from None
    try:
        codec = found if isinstance(found, PayloadCodec) or not callable(found) else found()
    except TypeError as e:  # a factory that wants arguments
        raise ConfigError(f"payload codec {spec!r}: cannot make a codec ({e})") from None
    if not isinstance(codec, PayloadCodec):
        raise ConfigError(f"payload codec {spec!r} is not a temporalio PayloadCodec (nor makes one)")
    return codec
