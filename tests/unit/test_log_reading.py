"""A worker's `LogReading`: the site's catalog overrides and progress patterns, compiled once and
shared by every attempt it reads (a worker watches thousands), each log still read whole."""

from __future__ import annotations

from pathlib import Path

from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.signatures.catalog import load_catalog
from recovery.workflows.policy import Policy

# A site's own progress line and a signature the site added (an override file, as `signatures:`
# in the worker's config names it).
SITE_PATTERN = r"^it (?P<step>\d+) done"
OVERRIDE = """\
signatures:
  - id: site-fs-gone
    description: the site's scratch filesystem went away
    pattern: 'SCRATCH UNAVAILABLE'
    category: system_software
    retryable: true
    symptom: crash
    examples: ['SCRATCH UNAVAILABLE on /scratch']
    counterexamples: ['scratch available']
"""


def _reading(tmp_path: Path) -> LogReading:
    override = tmp_path / "site.yaml"
    override.write_text(OVERRIDE)
    return LogReading(load_catalog(str(override)), (SITE_PATTERN,))


def test_every_log_shares_one_compiled_pattern_set(tmp_path: Path) -> None:
    reading = _reading(tmp_path)
    first, second = reading.diagnoser({0: "n1"}), reading.diagnoser({0: "n2"})
    assert first.scanner.patterns is second.scanner.patterns is reading.patterns


def test_a_shared_pattern_set_still_reads_each_log_on_its_own(tmp_path: Path) -> None:
    reading = _reading(tmp_path)
    healthy, failing = tmp_path / "a.out", tmp_path / "b.out"
    healthy.write_text("it 1 done\nit 2 done\n")
    failing.write_text("it 1 done\nSCRATCH UNAVAILABLE on /scratch\n")
    logs = [AttemptLog(str(p), 0, ["n1"], Policy(), 0.0, False, reading) for p in (healthy, failing)]
    for log in logs:
        log.poll(1.0)
    assert [log.last_step for log in logs] == [2, 1]
    assert logs[0].diagnosis(0) is None
    found = logs[1].diagnosis(0)
    assert found is not None and found.category == "system_software"
    assert found.evidence[0].signature == "site-fs-gone"
