"""Logging writes to the stderr of the moment: the CLI sets logging up on every call, and a
caller that swapped stderr in for one call may close it afterwards."""

from __future__ import annotations

import io
import logging
import sys

import pytest
import structlog

from recovery.worker import logs


def test_a_line_logged_after_the_swapped_stderr_closed_goes_to_the_current_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    swapped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", swapped)
    logs.configure(logging.WARNING)
    swapped.close()
    current = io.StringIO()
    monkeypatch.setattr(sys, "stderr", current)
    structlog.get_logger("t").warning("sacct unavailable", job_id="41")
    logging.getLogger("temporalio").warning("from the standard library")
    assert "sacct unavailable" in current.getvalue()
    assert "from the standard library" in current.getvalue()
