"""`recovery whatif` offline, on the histories recorded from the real dev server: the recorded
policy reproduces every recorded decision; a stricter one gives up where a run restarted, a
looser one restarts where a run gave up; bad input gets one line and exit status 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter

from recovery.client.whatif import evaluate, read_history_files, recorded_failures

HISTORIES = Path(__file__).resolve().parents[1] / "histories"
MANIFESTS = {p.parent: json.loads(p.read_text()) for p in HISTORIES.glob("*/manifest.json")}


def workflow_type(path: Path) -> str:
    started = json.loads(path.read_text())["events"][0]["workflowExecutionStartedEventAttributes"]
    return str(started["workflowType"]["name"])


# whatif reads TrainingRun histories; the node history's and pipelines' are recorded beside them
RUN_FILES = sorted(
    str(folder / name)
    for folder, manifest in MANIFESTS.items()
    for name in manifest["histories"]
    if workflow_type(folder / name) == "TrainingRun"
)


def run_id(name: str) -> str:
    (found,) = {m["histories"][f"{name}.json"]["workflow_id"] for m in MANIFESTS.values()}
    return found


def whatif(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recovery.worker", "whatif", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def strict(tmp_path: Path) -> str:
    path = tmp_path / "strict.yaml"
    path.write_text("name: strict\nbudgets: {hardware: 1}\n")
    return str(path)


async def test_the_recorded_policy_reproduces_every_recorded_decision() -> None:
    runs = await recorded_failures(zip(RUN_FILES, read_history_files(RUN_FILES), strict=True), pydantic_data_converter)
    failures = [f for r in runs for f in r.failures]
    assert len(failures) >= 10 and any(f.context.restarts_done for f in failures)
    for run in runs:
        if run.failures:
            same = evaluate([run], run.failures[0].policy)
            assert same.changed == [], same.changed


def test_a_stricter_policy_gives_up_where_a_run_restarted(strict: str) -> None:
    done = whatif("--policy", strict, "--json", "--history", *RUN_FILES)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    (change,) = result["changed"]
    assert change["run"] == run_id("repeated_failures") and change["attempt_index"] == 1
    assert change["recorded"]["operation"] == "restart" and change["whatif"]["operation"] == "give_up"
    assert "hardware budget of 1" in change["why"]
    totals = result["totals"]
    assert totals["restarts_whatif"] == totals["restarts_recorded"] - 1
    assert totals["gave_up_whatif"] == totals["gave_up_recorded"] + 1
    assert totals["node_hours_delta"] < 0, "the run would have stopped an attempt earlier"
    assert result["failures"] == len(
        [1 for f in RUN_FILES for e in json.loads(Path(f).read_text())["events"] if _records_advice(e)]
    )


def _records_advice(event: dict[str, object]) -> bool:
    attrs = event.get("activityTaskScheduledEventAttributes")
    return isinstance(attrs, dict) and attrs["activityType"]["name"] == "record_advice"


def test_a_looser_policy_restarts_where_a_run_gave_up() -> None:
    done = whatif("--policy", "default", "--history", *RUN_FILES)
    assert done.returncode == 0, done.stderr
    assert f"{run_id('budget_spent')} attempt 1: give_up -> restart" in done.stdout
    assert "runs given up: 2 recorded, 1 with 'default'" in done.stdout


def test_run_filter_and_a_policy_that_changes_exclusions_and_backoff(tmp_path: Path) -> None:
    policy = tmp_path / "no-exclude.yaml"
    policy.write_text("name: no-exclude\nexclude_implicated_nodes: false\nbackoff: {first: 1m}\n")
    target = run_id("crash_recovered")
    done = whatif("--policy", str(policy), "--json", "--run", target, "--history", *RUN_FILES)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["failures"] == 1
    (change,) = result["changed"]
    assert change["run"] == target and change["whatif"]["excluded_nodes"] == []
    assert change["whatif"]["backoff_seconds"] == 60 and change["recorded"]["backoff_seconds"] == 0
    assert "excluding none instead of" in change["why"] and "waiting 60s" in change["why"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--policy", "nightly", "--history", "x.json"], "unknown policy 'nightly'"),
        (["--policy", "default", "--history", "/nonexistent.json"], "cannot read history /nonexistent.json"),
        (["--policy", "default", "--run", 'a"b'], "not a run id: 'a\"b'"),
        (
            ["--policy", "default", "--history", str(next(iter(MANIFESTS)) / "manifest.json")],
            "is not a Temporal history",
        ),
    ],
)
def test_bad_input_is_one_line(args: list[str], expected: str) -> None:
    done = whatif(*args)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("recovery: ") and expected in line
