"""The embedded dev server is started with settings sized for bursts (worker/devserver.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from recovery.worker.devserver import SERVER_SETTINGS, DevServer
from tests.embedded.conftest import free_port


@pytest.mark.timeout(120)
def test_the_dev_server_keeps_its_database_in_wal_mode(temporal_bin: str, tmp_path: Path) -> None:
    """WAL: history fetches and queries do not wait for the server's writes."""
    server = DevServer(tmp_path, f"127.0.0.1:{free_port()}", free_port())
    assert server.start(timeout=60)
    try:
        with sqlite3.connect(server.db) as db:
            (mode,) = db.execute("PRAGMA journal_mode").fetchone()
        assert mode == "wal"
    finally:
        server.stop()


def test_every_setting_is_one_the_server_knows(temporal_bin: str) -> None:
    """The server ignores a dynamic-config key it does not know, silently: a misspelled cache
    size would leave 10,000 runs thrashing the CLI's 8,192 (benchmarks/concurrent_runs.py
    measures the effect). Each key must be one of the names compiled into the server."""
    binary = Path(temporal_bin).read_bytes()
    for key, _ in SERVER_SETTINGS:
        assert key.encode() in binary, f"{key} is not a setting of this server"
