"""Durations, times and cut lines as people read them in `status`, `nodes` and `diagnose`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from recovery.activities.signatures.diagnosis import LogDiagnoser
from recovery.activities.text import ELLIPSIS, clip
from recovery.client.format import between, duration, when
from recovery.client.render import EVIDENCE_SHOWN, timeline
from recovery.workflows.models import Attempt, Evidence, RunRecord, RunSpec, RunState, Symptom
from recovery.workflows.policy import Policy
from recovery.workflows.status import build_status

T0 = datetime(2026, 11, 29, 1, 0, tzinfo=UTC)


@pytest.fixture
def zone() -> Iterator[None]:
    """Central European time (UTC+1 in November), as an operator in Berlin has it."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ")
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.42, "0.4s"),
        (7.25, "7.2s"),
        (36.4, "36s"),
        (98, "1m 38s"),
        (3600, "1h 0m 0s"),
        (36012.3, "10h 0m 12s"),
        (2 * 86400 + 3 * 3600 + 59, "2d 3h 0m"),
        (None, "-"),
    ],
)
def test_durations(seconds: float | None, text: str) -> None:
    assert duration(seconds) == text


def test_between_needs_both_ends() -> None:
    assert between(T0, T0 + timedelta(hours=10, seconds=12.3)) == "10h 0m 12s"
    assert between(T0, None) == "-"


def test_times_carry_the_readers_zone(zone: None) -> None:
    assert when(T0) == "2026-11-29 02:00:00 CET"
    assert when(T0.replace(tzinfo=None)) == "2026-11-29 02:00:00 CET"  # naive means UTC
    assert when(None) == "-"


def test_clip_marks_the_cut() -> None:
    assert clip("short", 10) == "short"
    cut = clip("x" * 300, 200)
    assert len(cut) == 200 and cut.endswith(ELLIPSIS)


def status_of(evidence_text: str) -> str:
    spec = RunSpec(
        run_id="r-1",
        name="r",
        scheduler="local",
        script_path="/j.sbatch",
        script="#!/bin/sh\n",
        nodes=1,
        workdir="/",
        owner="me",
        policy=Policy(),
        submitted_at=T0,
    )
    record = RunRecord(
        state=RunState.RUNNING,
        attempts=[Attempt(index=0, job_id="7", started_at=T0, ended_at=T0 + timedelta(seconds=36012.3))],
        symptoms=[
            Symptom(
                attempt_index=0, kind="crash", detected_at=T0, evidence=[Evidence(source="log", text=evidence_text)]
            )
        ],
    )
    return timeline(build_status(spec, record, T0 + timedelta(hours=11)))


def test_status_shows_human_durations_zoned_times_and_cut_evidence(zone: None) -> None:
    text = status_of("NCCL WARN " + "y" * 400)
    assert "ran 10h 0m 12s" in text and "36012" not in text
    assert "started 2026-11-29 02:00:00 CET" in text
    shown = next(line.strip() for line in text.splitlines() if "NCCL WARN" in line)
    assert len(shown) == EVIDENCE_SHOWN and shown.endswith(ELLIPSIS)


def test_a_long_log_line_is_recorded_with_an_ellipsis() -> None:
    diagnoser = LogDiagnoser()
    diagnoser.feed(b"RuntimeError: CUDA error: an illegal memory access was encountered " + b"z" * 2000 + b"\n")
    diagnoser.finish()
    text = diagnoser.diagnosis().evidence[0].text
    assert text.endswith(ELLIPSIS) and text.startswith("RuntimeError: CUDA error")
