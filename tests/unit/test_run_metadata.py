"""What a run shows in the Temporal UI before anything ran (memo, summary, details), and the one
line a refused start turns into."""

from __future__ import annotations

from pathlib import Path

from temporalio.service import RPCError, RPCStatusCode

from recovery.client.runs import details, memo, namespace_problem, summary_line
from recovery.client.submit import build_spec
from recovery.workflows.models import RunSpec


def spec(tmp_path: Path, name: str | None = "nightly 7b") -> RunSpec:
    script = tmp_path / "train.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n")
    return build_spec(str(script), [], "local", "default", name, None, tmp_path)


def test_summary_and_details_carry_name_script_owner_policy(tmp_path: Path) -> None:
    s = spec(tmp_path)
    assert summary_line(s) == f"nightly 7b: {s.script_path} by {s.owner}, policy default"
    lines = details(s).splitlines()
    for line in ("name: nightly 7b", f"script: {s.script_path}", f"owner: {s.owner}", "policy: default"):
        assert line in lines
    assert "scheduler: local" in lines and "nodes: 2" in lines
    assert memo(s) == {
        "name": "nightly 7b",
        "script": s.script_path,
        "owner": s.owner,
        "policy": "default",
        "nodes": "2",
        "submitted": s.submitted_at.isoformat(),
    }


def test_a_name_with_newlines_keeps_the_summary_on_one_line(tmp_path: Path) -> None:
    s = spec(tmp_path, "a\nb\r\nc")
    assert "\n" not in summary_line(s) and "\r" not in summary_line(s)
    assert summary_line(s).startswith("a b c: ")
    assert "name: a b c" in details(s).splitlines()


def test_unregistered_search_attribute_becomes_one_line_with_the_fix() -> None:
    error = RPCError(
        "Namespace default has no mapping defined for search attribute RecoveryState",
        RPCStatusCode.INVALID_ARGUMENT,
        b"",
    )
    line = namespace_problem(error, "default")
    assert line is not None and "\n" not in line
    assert "namespace 'default' lacks recovery's search attributes (RecoveryState)" in line
    assert "`recovery dev-server start`" in line and "`temporal operator search-attribute create`" in line


def test_missing_namespace_and_other_errors() -> None:
    missing = RPCError("Namespace nowhere is not found.", RPCStatusCode.NOT_FOUND, b"")
    assert "namespace 'nowhere' does not exist" in (namespace_problem(missing, "nowhere") or "")
    other = RPCError("deadline exceeded", RPCStatusCode.DEADLINE_EXCEEDED, b"")
    assert namespace_problem(other, "default") is None
    invalid = RPCError("workflow id too long", RPCStatusCode.INVALID_ARGUMENT, b"")
    assert namespace_problem(invalid, "default") is None
