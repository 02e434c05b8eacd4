"""Whose watch is an orphan: a holder named `pid@host` of this host whose process is gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from recovery.worker.orphans import gone_holder

HOST = socket.gethostname()


def test_a_holder_is_gone_only_when_it_names_this_host_and_a_process_that_is_not() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert gone_holder(f"{dead.pid}@{HOST}", HOST) == dead.pid
    assert gone_holder(f"{dead.pid}@elsewhere", HOST) is None  # another host's: its heartbeat decides
    assert gone_holder(f"{os.getpid()}@{HOST}", HOST) is None  # this very worker
    assert gone_holder(f"{os.getppid()}@{HOST}", HOST) is None  # alive
    for malformed in ("", "@", f"@{HOST}", f"abc@{HOST}", f"-5@{HOST}", f"0@{HOST}", str(dead.pid)):
        assert gone_holder(malformed, HOST) is None, malformed
