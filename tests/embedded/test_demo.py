"""`recovery demo` on the real dev server and local cluster: it recovers, and tells each event
once (its narration is not followed by the same events again as a timeline)."""

from __future__ import annotations

import pytest

from tests.embedded.conftest import Embedded


@pytest.mark.timeout(300)
def test_the_demo_recovers_and_tells_each_event_once(embedded: Embedded) -> None:
    embedded.stop_workers()  # the demo runs its own worker on the session's task queue
    done = embedded.recovery("demo", timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("demo OK")
    told = [line for line in lines if line and not line.startswith("  | ")]  # job output may repeat
    assert len(told) == len(set(told)), done.stdout
    assert sum(line.startswith("attempt 0 running") for line in lines) == 1
    assert not any(line == "attempts:" for line in lines)  # no second telling as a timeline
    assert any(line.startswith("goodput  ETTR") for line in lines)
    assert any(line.startswith("the whole timeline: recovery status demo-") for line in lines)
