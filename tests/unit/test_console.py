"""Tables and colour: fitted to a terminal and coloured there, plain and whole elsewhere, and
never coloured with NO_COLOR."""

from __future__ import annotations

import os
import pty
from collections.abc import Iterator
from typing import TextIO

import pytest

from recovery.activities.text import ELLIPSIS
from recovery.client.console import Column, colour_wanted, paint, table
from recovery.worker.cli import dispatch

ESC = "\x1b["
COLUMNS = [Column("ID"), Column("STATE", style=lambda cell: "red" if cell == "down" else None), Column("WHY", fit=True)]
ROWS = [["node1", "idle", ""], ["node2", "down", "GPU has fallen off the bus " * 6]]


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[TextIO]:
    """A real pseudo-terminal, 60 columns wide, with colour allowed."""
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    main, side = pty.openpty()
    with os.fdopen(side, "w") as stream:
        MAINS[stream.fileno()] = main
        yield stream
    os.close(main)


MAINS: dict[int, int] = {}  # the terminal's side -> its other end, to read what was written


def terminal_main(stream: TextIO) -> int:
    return MAINS[stream.fileno()]


def visible(text: str) -> str:
    """The text without its colour codes (SGR sequences only: `ESC [ ... m`)."""
    out, rest = [], text
    while ESC in rest:
        before, _, after = rest.partition(ESC)
        out.append(before)
        rest = after.partition("m")[2]
    return "".join(out) + rest


def test_off_a_terminal_a_table_is_plain_and_whole(tmp_path: os.PathLike[str]) -> None:
    with open(os.path.join(tmp_path, "out"), "w") as stream:
        text = table(COLUMNS, ROWS, stream)
    assert ESC not in text
    lines = text.splitlines()
    assert lines[0].split() == ["ID", "STATE", "WHY"]
    assert lines[2].startswith("node2  down   GPU has") and lines[2].endswith("bus")  # not cut, not wrapped
    assert len(lines) == 3


def test_on_a_terminal_it_fits_the_width_and_is_coloured(terminal: TextIO) -> None:
    text = table(COLUMNS, ROWS, terminal)
    assert ESC in text
    lines = [visible(line) for line in text.splitlines()]
    assert len(lines) == 3 and lines[0].split() == ["ID", "STATE", "WHY"]
    assert all(len(line) <= 60 for line in lines)
    assert lines[2].endswith(ELLIPSIS) and len(lines[2]) == 60
    assert f"{ESC}31mdown" in text  # the style by value


def test_no_color_means_none_even_on_a_terminal(terminal: TextIO, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(terminal)
    text = table(COLUMNS, ROWS, terminal)
    assert ESC not in text and max(len(line) for line in text.splitlines()) == 60  # still fitted
    assert paint("crash", "red", terminal) == "crash"


def test_paint_colours_only_a_terminal(terminal: TextIO, tmp_path: os.PathLike[str]) -> None:
    assert paint("crash", "red", terminal) == f"{ESC}31mcrash{ESC}0m"
    with open(os.path.join(tmp_path, "out"), "w") as stream:
        assert paint("crash", "red", stream) == "crash"


def test_signatures_is_a_table_with_a_header(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["signatures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "SYMPTOM", "CATEGORY", "RETRY", "DESCRIPTION"]
    row = next(line for line in lines if line.startswith("xid-79 "))
    assert row.split()[1:4] == ["crash", "hardware", "yes"]


@pytest.mark.parametrize(("no_color", "coloured"), [("", True), ("1", False)])
def test_the_workers_log_on_a_terminal_obeys_no_color(
    terminal: TextIO, monkeypatch: pytest.MonkeyPatch, no_color: str, coloured: bool
) -> None:
    import logging

    import structlog

    from recovery.worker import logs

    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setattr("sys.stderr", terminal)
    handlers = logging.getLogger().handlers[:]
    try:
        logs.configure()
        structlog.get_logger("test").info("worker started", queue="recovery")
        terminal.flush()
    finally:
        structlog.reset_defaults()
        logging.getLogger().handlers = handlers
    written = os.read(terminal_main(terminal), 4096).decode()
    assert "worker started" in written
    assert (ESC in written) is coloured


@pytest.mark.parametrize(("no_color", "coloured"), [("", True), ("1", False)])
def test_status_colours_state_and_symptom_on_a_terminal_only(
    terminal: TextIO, monkeypatch: pytest.MonkeyPatch, no_color: str, coloured: bool
) -> None:
    from tests.unit.test_format import status_of

    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setattr("sys.stdout", terminal)
    text = status_of("NCCL WARN timeout")
    assert (f"state {ESC}32mrunning" in text) is coloured  # green: running
    assert (f": {ESC}31mcrash" in text) is coloured  # red: a crash
    assert "state running" in visible(text) and ": crash at " in visible(text)
