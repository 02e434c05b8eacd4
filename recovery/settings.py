"""Where things are: the environment variables of the public contract, read in one place."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """`RECOVERY_HOME`: state of the embedded dev server and local cluster, and logs."""
    value = os.environ.get("RECOVERY_HOME")
    path = Path(value) if value else Path.home() / ".local" / "state" / "recovery"
    return path.expanduser().absolute()


def temporal_address() -> str:
    return os.environ.get("RECOVERY_TEMPORAL_ADDRESS", "127.0.0.1:7233")


def temporal_ui_port() -> int:
    return int(os.environ.get("RECOVERY_TEMPORAL_UI_PORT", "8233"))


def namespace() -> str:
    return os.environ.get("RECOVERY_NAMESPACE", "default")


def task_queue() -> str:
    return os.environ.get("RECOVERY_TASK_QUEUE", "recovery")


def config_path() -> Path | None:
    value = os.environ.get("RECOVERY_CONFIG")
    return Path(value) if value else None


def scheduler() -> str | None:
    """`RECOVERY_SCHEDULER`: the scheduler `submit` uses when `--scheduler` is not given."""
    return os.environ.get("RECOVERY_SCHEDULER") or None
