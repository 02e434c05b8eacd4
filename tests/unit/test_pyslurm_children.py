"""The pyslurm calls' child processes end with the worker that spawned them, however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A stand-in for the worker: the adapter's pool (spawn, the same initializer and arguments),
# one call so that a child runs, the child's pid printed, then it waits to be killed.
OWNER = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from recovery.activities.schedulers import slurm_pyslurm_calls as calls
pool = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=calls.prepare, initargs=(None, os.getpid()))
print(pool.submit(os.getpid).result(60), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_pool_child_ends_when_its_worker_is_killed() -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    child = int(owner.stdout.readline())
    try:
        assert _alive(child)
        owner.send_signal(signal.SIGKILL)  # as the OOM killer would: no shutdown, no atexit
        owner.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the pyslurm child outlived the worker that spawned it"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        owner.kill()
