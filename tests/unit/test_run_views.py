"""Finding and following runs without a server: list's filters and their visibility query,
where each attempt's output lies, reading it as it grows, and when a watch redraws."""

from __future__ import annotations

import argparse
import io
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from recovery.client.cli_options import CONNECTION_FLAGS, OptionError, apply_connection_options
from recovery.client.render import run_table
from recovery.client.run_list import ListError, RunFilter, parse_filter, visibility_query
from recovery.client.run_logs import Segment, SegmentReader, attempt_number, pick_attempt, segments
from recovery.client.run_watch import StatusWatch, change_key
from recovery.client.runs import RunError
from recovery.worker.cli import build_parser
from recovery.workflows.models import Attempt, Goodput, JobState, RunState, RunStatus, RunSummary

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


# --- list ------------------------------------------------------------------------------------


def test_no_filter_is_no_clause() -> None:
    assert visibility_query(parse_filter(None, None, None, None, None), NOW) == ""


def test_each_filter_is_a_clause_on_its_search_attribute() -> None:
    wanted = parse_filter("running", "alice", "1234", "2h", "5")
    assert visibility_query(wanted, NOW) == (
        'RecoveryState = "running" AND RecoveryOwner = "alice" AND RecoveryJobIds = "1234"'
        ' AND StartTime >= "2026-12-01T10:00:00Z"'
    )
    assert wanted.limit == 5


def test_several_states_are_one_in_clause() -> None:
    wanted = parse_filter("running, RECOVERING,Running", None, None, None, None)
    assert wanted.states == (RunState.RUNNING, RunState.RECOVERING)
    assert visibility_query(wanted, NOW) == 'RecoveryState IN ("running", "recovering")'


def test_since_is_counted_back_from_now_in_utc() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert visibility_query(RunFilter(since=timedelta(days=7)), local) == 'StartTime >= "2026-11-24T12:00:00Z"'


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"state": "runing"}, "unknown state 'runing' for --state (one of pending, running,"),
        ({"state": ","}, "--state needs a state"),
        ({"since": "soon"}, "--since: expected a duration like 30s, 10m, 2h or 7d, got 'soon'"),
        ({"since": "0s"}, "--since '0s': the window must be longer than 0s"),
        ({"since": "-3h"}, "--since: expected a duration"),
        ({"limit": "0"}, "--limit '0': expected at least 1"),
        ({"limit": "-2"}, "--limit '-2': expected at least 1"),
        ({"limit": "ten"}, "--limit 'ten': expected a whole number of runs"),
        ({"owner": ""}, "--owner needs a value"),
        ({"owner": 'a" OR "1"="1'}, '--owner \'a" OR "1"="1\': quotes, backslashes and control characters'),
        ({"job": "12\n3"}, "--job '12\\n3': quotes"),
    ],
)
def test_bad_filters_are_one_line_naming_the_option(options: dict[str, str], message: str) -> None:
    values = {"state": None, "owner": None, "job": None, "since": None, "limit": None, **options}
    with pytest.raises((ListError, OptionError)) as caught:  # the CLI reports both as one line
        parse_filter(**values)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_the_table_has_a_zoned_start_column(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")  # times show in the reader's zone, with its name
    time.tzset()
    started = datetime(2026, 12, 1, 13, 4, 5, tzinfo=UTC)
    run = RunSummary(
        id="r-1",
        name="r",
        state=RunState.RUNNING,
        paused=False,
        owner="alice",
        policy="default",
        attempts=1,
        scheduler="local",
        job_id="7",
        created_at=started,
    )
    head, row = run_table([run]).splitlines()
    assert head.split()[3] == "STARTED"
    assert "2026-12-01 14:04:05 CET" in row
    monkeypatch.undo()
    time.tzset()


# --- logs ------------------------------------------------------------------------------------


def attempt(index: int, path: str | None, offset: int, **more: object) -> Attempt:
    return Attempt(index=index, job_id="5", restart_count=index, output_path=path, log_offset=offset, **more)  # type: ignore[arg-type]


def test_an_attempt_ends_where_its_successor_starts_in_the_same_file() -> None:
    found = segments([attempt(0, "/o/5.out", 0), attempt(1, "/o/5.out", 120), attempt(2, "/o/5.out", 300)])
    assert found[0] == Segment(attempt=0, path="/o/5.out", start=0, end=120)
    assert found[1] == Segment(attempt=1, path="/o/5.out", start=120, end=300)
    assert found[2] == Segment(attempt=2, path="/o/5.out", start=300, end=None)


def test_a_resubmitted_successor_with_its_own_file_leaves_the_old_file_whole() -> None:
    found = segments([attempt(0, "/o/5.out", 0), attempt(1, "/o/9.out", 0), attempt(2, None, 0)])
    assert found[0].end is None and found[1] == Segment(attempt=1, path="/o/9.out", start=0, end=None)
    assert 2 not in found  # no file known yet


def test_attempt_choice() -> None:
    attempts = [attempt(0, "/o", 0), attempt(1, "/o", 10)]
    assert pick_attempt("r", attempts, None).index == 1
    assert pick_attempt("r", attempts, 0).index == 0
    with pytest.raises(RunError, match=r"run 'r' has no attempt #4 \(it has #0 to #1\)"):
        pick_attempt("r", attempts, 4)
    with pytest.raises(RunError, match="run 'r' has no attempt yet"):
        pick_attempt("r", [], None)
    assert attempt_number("3") == 3 and attempt_number(None) is None
    for bad in ("x", "-1"):
        with pytest.raises(OptionError, match="--attempt"):
            attempt_number(bad)


def test_a_reader_copies_what_arrives_and_stops_at_the_segment_end(tmp_path: Path) -> None:
    log = tmp_path / "slurm-5.out"
    log.write_bytes(b"attempt 0 line\n")
    out, note = io.BytesIO(), io.StringIO()
    reader = SegmentReader(Segment(attempt=0, path=str(log), start=0, end=None), note)
    reader.copy(out)
    with log.open("ab") as f:
        f.write(b"more of 0\n")
    reader.copy(out)
    assert out.getvalue() == b"attempt 0 line\nmore of 0\n"
    with log.open("ab") as f:
        f.write(b"attempt 1 starts\n")
    reader.segment = Segment(attempt=0, path=str(log), start=0, end=25)  # a successor starts at 25
    reader.copy(out)
    assert out.getvalue() == b"attempt 0 line\nmore of 0\n" and reader.done


def test_a_truncated_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "slurm-5.out"
    log.write_bytes(b"x" * 100)
    out, note = io.BytesIO(), io.StringIO()
    reader = SegmentReader(Segment(attempt=1, path=str(log), start=100, end=None), note)
    log.write_bytes(b"fresh\n")
    reader.copy(out)
    assert out.getvalue() == b"fresh\n" and "truncated" in note.getvalue()


def test_an_unreadable_output_is_one_line(tmp_path: Path) -> None:
    reader = SegmentReader(Segment(attempt=2, path=str(tmp_path / "gone.out"), start=0, end=None), io.StringIO())
    with pytest.raises(RunError, match=r"attempt #2's output .*gone.out does not exist on this machine"):
        reader.copy(io.BytesIO(), must_exist=True)
    note = io.StringIO()
    waiting = SegmentReader(Segment(attempt=2, path=str(tmp_path / "later.out"), start=0, end=None), note)
    waiting.copy(io.BytesIO())  # while following, a file not written yet is waited for, said once
    waiting.copy(io.BytesIO())
    assert note.getvalue().count("later.out is not there yet") == 1
    (tmp_path / "later.out").write_bytes(b"now\n")
    out = io.BytesIO()
    waiting.copy(out)
    assert out.getvalue() == b"now\n"


# --- status --watch --------------------------------------------------------------------------


def status(state: RunState, ettr: float | None = None, attempts: int = 1) -> RunStatus:
    run = RunSummary(
        id="r",
        name="r",
        state=state,
        paused=False,
        owner="o",
        policy="default",
        attempts=attempts,
        scheduler="local",
        job_id="5",
    )
    return RunStatus(
        run=run,
        attempts=[attempt(i, "/o", 0, state=JobState.RUNNING) for i in range(attempts)],
        symptoms=[],
        diagnoses=[],
        advice=[],
        actions=[],
        milestones=[],
        goodput=Goodput(ettr=ettr),
    )


def test_a_watch_draws_changes_only_and_not_the_goodput_ticking() -> None:
    out = io.StringIO()
    watch = StatusWatch(lambda s: f"{s.run.state.value} with {len(s.attempts)}", out, clear=False)
    for view in (status(RunState.RUNNING), status(RunState.RUNNING, ettr=0.9), status(RunState.RECOVERING, 0.8)):
        watch.draw(view)
    watch.draw(status(RunState.RUNNING, attempts=2))
    assert out.getvalue() == "running with 1\n\nrecovering with 1\n\nrunning with 2\n"
    assert change_key(status(RunState.RUNNING)) == change_key(status(RunState.RUNNING, ettr=0.5))


def test_on_a_terminal_a_watch_redraws_the_screen() -> None:
    out = io.StringIO()
    watch = StatusWatch(lambda s: s.run.state.value, out, clear=True)
    watch.draw(status(RunState.RUNNING))
    watch.draw(status(RunState.COMPLETED))
    assert out.getvalue() == "\x1b[H\x1b[2Jrunning\n\x1b[H\x1b[2Jcompleted\n"


# --- the command line ------------------------------------------------------------------------


def _json_flags(parser: argparse.ArgumentParser, path: str = "recovery") -> list[tuple[str, str | None]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _json_flags(child, f"{path} {name}")
        elif "--json" in action.option_strings:
            found.append((path, action.help))
    return found


def test_every_json_flag_says_what_it_prints() -> None:
    flags = _json_flags(build_parser())
    assert {"recovery pause", "recovery resume", "recovery cancel", "recovery list"} <= {p for p, _ in flags}
    assert [path for path, text in flags if not text] == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--address", "h:1", "--namespace", "ns", "--task-queue", "q", "list"],
        ["list", "--address", "h:1", "--namespace", "ns", "--task-queue", "q"],
        ["--address", "elsewhere:9", "list", "--address", "h:1", "--namespace", "ns", "--task-queue", "q"],
        ["nodes", "clear", "node3", "--address", "h:1", "--namespace", "ns", "--task-queue", "q"],
        ["logs", "-f", "r", "--address", "h:1", "--namespace", "ns", "--task-queue", "q"],
    ],
)
def test_connection_flags_before_or_after_the_command_beat_the_environment(argv: list[str]) -> None:
    env = {"RECOVERY_TEMPORAL_ADDRESS": "env:7233", "RECOVERY_NAMESPACE": "envns", "RECOVERY_TASK_QUEUE": "envq"}
    apply_connection_options(build_parser().parse_args(argv), env)
    assert env == {"RECOVERY_TEMPORAL_ADDRESS": "h:1", "RECOVERY_NAMESPACE": "ns", "RECOVERY_TASK_QUEUE": "q"}


def test_without_flags_the_environment_stays() -> None:
    env = {"RECOVERY_NAMESPACE": "envns"}
    apply_connection_options(build_parser().parse_args(["status", "r"]), env)
    assert env == {"RECOVERY_NAMESPACE": "envns"}


def test_every_command_that_talks_to_temporal_has_the_flags() -> None:
    parser = build_parser()
    for command in ("submit", "list", "status", "logs", "pause", "resume", "cancel", "nodes", "worker", "demo"):
        shown = _help_of(parser, command)
        for flag in CONNECTION_FLAGS:
            assert flag in shown, (command, flag)


def test_an_empty_flag_is_refused() -> None:
    with pytest.raises(OptionError, match="--namespace needs a value"):
        apply_connection_options(build_parser().parse_args(["list", "--namespace", " "]), {})


def _help_of(parser: argparse.ArgumentParser, command: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command].format_help()
    raise AssertionError("no subcommands")
