"""A TLS front for the plain-text Temporal dev server, which has no TLS options of its own.

It terminates TLS (optionally requiring a client certificate signed by its CA, i.e. mTLS) and
passes the decrypted HTTP/2 bytes to the dev server, the way a TLS-terminating load balancer
in front of a Temporal frontend would. It records the subject of every client certificate it
accepted, so a test can tell that the client really presented one.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Pki:
    """PEM files: a CA, a server certificate for `server_name` only, and client certificates."""

    dir: Path
    server_name: str = "temporal.test"

    @property
    def ca(self) -> Path:
        return self.dir / "ca.pem"

    def cert(self, name: str) -> Path:
        return self.dir / f"{name}.pem"

    def key(self, name: str) -> Path:
        return self.dir / f"{name}.key"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _issue(pki: Pki, ca: str, name: str, subject: str, extensions: str) -> None:
    ext = pki.dir / f"{name}.ext"
    ext.write_text(extensions)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=pki.dir)  # fmt: skip
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-extfile", ext.name, cwd=pki.dir)  # fmt: skip


def _make_ca(pki: Pki, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=pki.dir)  # fmt: skip


def make_pki(directory: Path) -> Pki:
    """A CA with a server and a client certificate, and a rogue CA with a client certificate."""
    pki = Pki(directory)
    _make_ca(pki, "ca")
    _make_ca(pki, "rogue-ca")
    leaf = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
    _issue(pki, "ca", "server", f"/CN={pki.server_name}",
           leaf + f"extendedKeyUsage=serverAuth\nsubjectAltName=DNS:{pki.server_name}\n")  # fmt: skip
    _issue(pki, "ca", "client", "/CN=recovery-worker", leaf + "extendedKeyUsage=clientAuth\n")
    _issue(pki, "rogue-ca", "rogue", "/CN=intruder", leaf + "extendedKeyUsage=clientAuth\n")
    return pki


@dataclass
class TlsProxy:
    """Listens on 127.0.0.1:`port` with TLS and forwards to `upstream` (HOST:PORT) in plain text."""

    pki: Pki
    upstream: str
    require_client_cert: bool = True
    port: int = 0
    clients: list[str] = field(default_factory=list)  # CNs of the client certificates accepted
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    def _context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.pki.cert("server"), self.pki.key("server"))
        ctx.set_alpn_protocols(["h2"])  # gRPC is HTTP/2
        if self.require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(self.pki.ca)
        return ctx

    def start(self) -> TlsProxy:
        """Serve in a thread of its own, so tests that block do not stall the proxy."""
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            assert self._loop is not None
            server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self._context())
            )
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            server.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert") or {}
        subject = dict(pair[0] for pair in peer.get("subject", ()))
        if "commonName" in subject:
            self.clients.append(subject["commonName"])
        host, port = self.upstream.rsplit(":", 1)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, ssl.SSLError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, ssl.SSLError, RuntimeError):
        writer.close()
