"""Print the structured progress line `recovery` reads from a training log.

    from recovery.activities.report import report_progress
    report_progress(step, total=5000, throughput=812.5, step_time=0.41, loss=2.31)
    report_progress(step, checkpoint="saving")   # a slow save is not a hang
    report_progress(step, checkpoint="saved")

prints `recovery-progress step=120 total=5000 ...` on standard output and flushes it, which is
all a script without this package needs to print itself. Standard library only: importing this
module costs nothing.
"""

from __future__ import annotations

import sys
from typing import TextIO

KEYS = ("total", "rank", "throughput", "step_time", "loss", "epoch", "checkpoint")


def format_progress(step: int, **fields: float | int | str | None) -> str:
    """The line for one step; fields that are None are left out."""
    parts = [f"recovery-progress step={int(step)}"]
    for key, value in fields.items():
        if value is None:
            continue
        if not key.isidentifier():
            raise ValueError(f"progress field names are identifiers, not {key!r}")
        text = f"{value:.6g}" if isinstance(value, float) else str(value)
        parts.append(f"{key}={'_'.join(text.split()) or '_'}")
    return " ".join(parts)


def report_progress(step: int, *, file: TextIO | None = None, **fields: float | int | str | None) -> None:
    """Print the progress line for `step` (fields: see KEYS) and flush, so it is seen at once."""
    out = file if file is not None else sys.stdout
    out.write(format_progress(step, **fields) + "\n")
    out.flush()
