"""What people read, from a real run on the dev server and local cluster: times with their zone,
durations in units, tables with a header, and no colour codes when the output is not a terminal."""

from __future__ import annotations

import json
import re

from tests.embedded.conftest import Embedded, wait_for

ZONED = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CET"  # TZ=Europe/Berlin below: the reader's zone, named
DURATION = r"(\d+\.\ds|\d+s|\d+m \d+s|\d+h \d+m \d+s)"


def test_status_and_list_read_as_people_read(embedded: Embedded) -> None:
    script = embedded.job_script("readable", steps=6)
    embedded.start_worker()
    try:
        done = embedded.recovery("submit", "--json", str(script), cwd=script.parent)
        assert done.returncode == 0, done.stderr
        run = json.loads(done.stdout)["run"]

        def finished() -> bool:
            shown = embedded.recovery("status", run, "--json")
            return shown.returncode == 0 and json.loads(shown.stdout)["run"]["state"] == "completed"

        assert wait_for(finished, timeout=120)
        berlin = {"TZ": "Europe/Berlin", "NO_COLOR": ""}
        status = embedded.recovery("status", run, **berlin)
        assert status.returncode == 0, status.stderr
        assert re.search(rf"started {ZONED}  ran {DURATION}$", status.stdout, re.M), status.stdout
        listed = embedded.recovery("list", **berlin)
        head, *rows = listed.stdout.splitlines()
        assert head.split()[:4] == ["RUN", "NAME", "STATE", "STARTED"]
        assert re.search(rf"^{re.escape(run)}\s.*\scompleted\s+{ZONED}\s", "\n".join(rows), re.M), listed.stdout
        for text in (status.stdout, listed.stdout):
            assert "\x1b[" not in text  # not a terminal: no colour, NO_COLOR or not
    finally:
        embedded.stop_workers()
