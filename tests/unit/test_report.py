"""The progress helper: what it prints, that recovery reads it back, and that it is light."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from recovery.activities.progress import ProgressParser
from recovery.activities.report import format_progress, report_progress

ROOT = Path(__file__).resolve().parents[2]


def test_prints_the_structured_line_and_flushes() -> None:
    out = io.StringIO()
    report_progress(120, total=5000, throughput=812.5, step_time=0.41, loss=2.3100001, rank=None, file=out)
    assert out.getvalue() == "recovery-progress step=120 total=5000 throughput=812.5 step_time=0.41 loss=2.31\n"


def test_round_trip_through_the_parser() -> None:
    line = format_progress(7, rank=3, checkpoint="saving", loss=0.5)
    record = ProgressParser().parse(line)
    assert record is not None
    assert (record.step, record.rank, record.checkpoint, record.loss) == (7, 3, "saving", 0.5)


def test_values_never_break_the_line() -> None:
    assert format_progress(1, note="two words") == "recovery-progress step=1 note=two_words"
    with pytest.raises(ValueError, match="identifiers"):
        format_progress(1, **{"a=b": 1})


def test_importing_it_pulls_in_nothing_heavy() -> None:
    code = (
        "import sys, recovery\n"
        "heavy = ('pydantic', 'temporalio', 'yaml', 're2', 'hyperscan', 'structlog', 'recovery.activities.signatures', 'recovery.workflows')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
