"""`recovery policy show|check`: the effective policy, and every problem of a file at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recovery.worker.cli import dispatch
from recovery.workflows.policy import Policy
from recovery.workflows.policy_files import load_policy, parse_policy


def test_show_fills_in_every_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "nightly.yaml"
    mine.write_text("name: nightly\nmax_restarts: 9\nbudgets: {unknown: 4}\n")
    assert dispatch(["policy", "show", str(mine)]) == 0
    shown = capsys.readouterr().out
    # What it prints is itself a complete policy file: every key, and the same policy.
    assert parse_policy(shown, "shown") == load_policy(str(mine))
    for line in ("max_restarts: 9", "  unknown: 4", "  hardware: 3", "  max_timeout: 1h", "  window: 7d"):
        assert line in shown.splitlines()


def test_show_json_is_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["policy", "show", "default", "--json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert Policy.model_validate(data) == load_policy("default") == Policy()
    assert data["budgets"]["unknown"] == 1 and data["backoff"]["max"] == "10m"
    assert out.err == ""


def test_show_an_unknown_policy_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["policy", "show", "nightly"]) == 1
    out = capsys.readouterr()
    assert (
        out.out == "" and out.err.strip() == "recovery: unknown policy 'nightly': not a built-in (default) nor a file"
    )


def test_check_lists_every_error_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("max_restarts: many\nbackoff:\n  first: 1s\n  surprise: 3\nbudgets: {hardware: -1}\n")
    assert dispatch(["policy", "check", str(bad)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        f"recovery: {bad}:1: key 'max_restarts': Input should be a valid integer",
        f"recovery: {bad}:4: unknown key 'backoff.surprise'",
        f"recovery: {bad}:5: key 'budgets.hardware': Input should be greater than or equal to 0",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("max_restarts: [1,\n", ":2: not valid YAML"), ("", "the policy is empty"), ("- a\n", "must be a mapping")],
)
def test_check_unreadable_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert dispatch(["policy", "check", str(bad)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert expected in line


def test_check_a_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("name: nightly\nbackoff: {initial: 1m}\n")
    assert dispatch(["policy", "check", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: valid policy 'nightly'\n"
    assert dispatch(["policy", "check", str(tmp_path / "missing.yaml")]) == 1
    assert "cannot read policy file" in capsys.readouterr().err
