"""`recovery diagnose` and `recovery signatures`, as scripts and operators use them."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from recovery.activities.report import format_progress
from recovery.client.cli_diagnose import LayoutError, parse_layout
from recovery.worker.cli import dispatch

LOGS = Path(__file__).parent / "logs"
KEYS = {"file", "symptom", "category", "retryable", "implicated", "evidence"}


def test_diagnose_json_is_one_object_per_file_and_a_missing_file_fails_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    files = [str(LOGS / "xid_syslog.log"), str(tmp_path / "absent.log"), str(LOGS / "healthy.log")]
    assert dispatch(["diagnose", "--json", *files]) == 2
    out, err = capsys.readouterr()
    objects = [json.loads(line) for line in out.splitlines()]
    assert [o["file"] for o in objects] == [files[0], files[2]]
    assert all(set(o) >= KEYS for o in objects)
    assert set(objects[0]["implicated"]) == {"nodes", "ranks", "gpus", "peers"}
    assert objects[0]["evidence"][0] == {
        "line": 2,
        "signature": "xid-48",
        "text": objects[0]["evidence"][0]["text"],
    }
    assert (objects[1]["symptom"], objects[1]["category"], objects[1]["retryable"]) == ("none", "none", None)
    assert err.strip().splitlines() == [f"recovery: {files[1]}: No such file or directory"]


def test_diagnose_explains_with_evidence_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["diagnose", str(LOGS / "torchelastic_segfault.log"), "--layout", "node3:0-3"]) == 0
    out = capsys.readouterr().out
    assert "crash, unknown, retryable" in out
    assert "implicated: nodes node3; ranks 3" in out
    assert "line 19 [segfault]" in out


def test_a_directory_is_reported_like_an_unreadable_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert dispatch(["diagnose", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"recovery: {tmp_path}: ")


def test_signatures_json_lists_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["signatures", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert all({"id", "pattern", "symptom", "category", "retryable", "cascade"} <= set(e) for e in entries)
    assert len({e["id"] for e in entries}) == len(entries) > 50


def test_user_signatures_apply_to_both_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        "signatures:\n"
        "  - id: our-loader\n"
        "    description: the shard server went away\n"
        "    pattern: 'ShardServerGone: (?P<host>[\\w-]+)'\n"
        "    symptom: crash\n"
        "    category: system_software\n"
        "    retryable: true\n"
        "    examples: ['ShardServerGone: store7']\n"
    )
    log = tmp_path / "job.out"
    log.write_text("starting\nShardServerGone: store7\n")
    assert dispatch(["diagnose", "--json", "--signatures", str(extra), str(log)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["evidence"][0]["signature"], result["implicated"]["nodes"]) == ("our-loader", ["store7"])
    assert dispatch(["signatures", "--signatures", str(extra)]) == 0
    assert "our-loader" in capsys.readouterr().out


def test_a_bad_signature_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    extra = tmp_path / "bad.yaml"
    extra.write_text("signatures:\n  - id: xid-79\n    retryable: perhaps\n")
    assert dispatch(["diagnose", "--signatures", str(extra), str(LOGS / "healthy.log")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and f"{extra}:3:" in err


def test_user_progress_patterns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "job.out"
    log.write_text("KeyError: 'x'\n" + "".join(f"batch {i} done\n" for i in range(1, 5)))
    assert dispatch(["diagnose", "--json", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["category"] == "application"
    assert dispatch(["diagnose", "--json", "--progress-pattern", r"batch (?P<step>\d+) done", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["symptom"] == "none"  # training went on after it


def test_layouts() -> None:
    assert parse_layout("node1:0-1,node2:2-3") == {0: "node1", 1: "node1", 2: "node2", 3: "node2"}
    assert parse_layout("gpu-a:5") == {5: "gpu-a"}
    with pytest.raises(LayoutError):
        parse_layout("node1")


def test_layout_files(tmp_path: Path) -> None:
    path = tmp_path / "layout.yaml"
    path.write_text("0: node1\n1: node2\n")
    assert parse_layout(str(path)) == {0: "node1", 1: "node2"}
    path.write_text("node1: [0, 1]\n")
    with pytest.raises(LayoutError, match="maps ranks"):
        parse_layout(str(path))


def slowing_log(path: Path, *, healthy: int = 60, slow: int = 40, drop: float = 0.2) -> Path:
    """Four-second steps, then `slow` steps `drop` slower: 200 s of slowdown at most."""
    rnd = random.Random(5)
    lines = []
    for step in range(1, healthy + slow + 1):
        seconds = 4.0 * (1 + 0.02 * rnd.gauss(0, 1)) / (1 - drop if step > healthy else 1.0)
        lines.append(f"0: {format_progress(step, total=1000, rank=0, step_time=round(seconds, 3))}\n")
    path.write_text("".join(lines))
    return path


def test_diagnose_applies_a_policys_straggler_keys(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = slowing_log(tmp_path / "job.out")
    assert dispatch(["diagnose", "--json", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["symptom"] == "none"  # the default 10m: too early to tell
    assert dispatch(["diagnose", "--json", "--policy", "default", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["symptom"] == "none"
    quick = tmp_path / "quick.yaml"
    quick.write_text("name: quick\nstraggler: {sustain: 2m}\nhang: {min_timeout: 1m}\n")
    assert dispatch(["diagnose", "--json", "--policy", str(quick), str(log)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["symptom"] == "straggler" and result["evidence"][0]["line"] == 61  # where it began
    coarse = tmp_path / "coarse.yaml"
    coarse.write_text("name: coarse\nstraggler: {sustain: 2m, min_drop: 0.3}\n")
    assert dispatch(["diagnose", "--json", "--policy", str(coarse), str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["symptom"] == "none"  # 20 % is less than its min_drop


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("straggler: {min_drop: 2}\n", ":1:"),
        ("hang: {min_timeout: soon}\n", "hang.min_timeout"),
        ("straggler: {sustain: 0s}\n", "straggler.sustain"),
    ],
)
def test_a_bad_policy_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text(text)
    assert dispatch(["diagnose", "--policy", str(policy), str(LOGS / "healthy.log")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and message in err and str(policy) in err
    assert dispatch(["diagnose", "--policy", "no-such-policy", str(LOGS / "healthy.log")]) == 2
    assert "unknown policy 'no-such-policy'" in capsys.readouterr().err


def diagnose_process(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    """The command as a shell pipeline runs it: a real process reading a real pipe."""
    command = [sys.executable, "-m", "recovery.worker", "diagnose", *args]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120, check=False)


def test_a_dash_reads_standard_input() -> None:
    done = diagnose_process("--json", "-", stdin=(LOGS / "xid_syslog.log").read_bytes())
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["file"], result["symptom"], result["evidence"][0]["signature"]) == ("-", "crash", "xid-48")
    text = diagnose_process("-", stdin=(LOGS / "healthy.log").read_bytes())
    assert text.stdout.decode().startswith("stdin: healthy")


@pytest.mark.parametrize(
    ("logs", "status"),
    [(["healthy.log"], 0), (["healthy.log", "xid_syslog.log"], 1), (["xid_syslog.log"], 1)],
)
def test_exit_code_says_whether_a_symptom_was_found(
    capsys: pytest.CaptureFixture[str], logs: list[str], status: int
) -> None:
    files = [str(LOGS / name) for name in logs]
    assert dispatch(["diagnose", "--exit-code", *files]) == status
    assert dispatch(["diagnose", *files]) == 0  # without it, finding a symptom is a success
    capsys.readouterr()


def test_exit_code_with_an_unreadable_file_is_trouble_not_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert dispatch(["diagnose", "--exit-code", str(LOGS / "xid_syslog.log"), str(tmp_path / "absent")]) == 2
    assert capsys.readouterr().err.startswith("recovery: ")
