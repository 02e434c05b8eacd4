"""Every recorded history replays against today's workflow code; a non-deterministic change fails.

The histories were recorded from the real dev server by tests/histories/record.py, one folder
per version of `recovery` that wrote them (docs/upgrades.md). None is removed while that version
can have runs in flight.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from recovery.client.replay import replay
from recovery.workflows.discovery import SlurmDiscovery
from recovery.workflows.node_history import NodeHistory
from recovery.workflows.pipeline import Pipeline
from tests.histories.next_version import next_version

HERE = Path(__file__).resolve().parent
VERSIONS = sorted(p for p in HERE.iterdir() if (p / "manifest.json").is_file())
# Pipelines, and `submit --after` (a one-stage pipeline that waits for other runs); each also
# recorded as `NAME_unheld`, before waiting stages were queued held (no `pipeline-held-stages` marker).
PIPELINE_PATHS = {"pipeline", "pipeline_stage", "pipeline_hold_release", "chained_run"}
# The paths a run can take (tests/histories/record.py and record_slurm.py).
PATHS = {
    "adopted_slurm_job",
    "resubmitted_job",
    "crash_recovered",
    "node_failure",
    "hang",
    "straggler",
    "give_up_user_bug",
    "pause_resume",
    "cancel",
    "continue_as_new",
    "node_history",
    *PIPELINE_PATHS,
}


def load(folder: Path) -> list[WorkflowHistory]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return [
        WorkflowHistory.from_json(about["workflow_id"], json.loads((folder / name).read_text()))
        for name, about in manifest["histories"].items()
    ]


def activities_of(history: WorkflowHistory) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


def test_the_pipeline_paths_are_recorded_and_take_the_paths_they_name() -> None:
    histories = {}
    for folder in VERSIONS:
        manifest = json.loads((folder / "manifest.json").read_text())
        histories |= {name.removesuffix(".json"): folder / name for name in manifest["histories"]}
    assert set(histories) >= PIPELINE_PATHS, f"no recording of {sorted(PIPELINE_PATHS - set(histories))}"
    events = {name: json.loads(histories[name].read_text())["events"] for name in PIPELINE_PATHS}

    def count(name: str, event_type: str) -> int:
        return sum(e["eventType"] == f"EVENT_TYPE_{event_type}" for e in events[name])

    def activities(name: str) -> list[str]:
        return [
            e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
            for e in events[name]
            if "activityTaskScheduledEventAttributes" in e
        ]

    assert count("pipeline", "START_CHILD_WORKFLOW_EXECUTION_INITIATED") == 3
    assert activities("pipeline").count("dag_release") == 2  # the stages that waited were queued held
    assert count("pipeline_hold_release", "START_CHILD_WORKFLOW_EXECUTION_INITIATED") == 3  # one cancelled
    assert "dag_cancel" in activities("pipeline_hold_release")  # the cancelled stage's held job
    assert count("pipeline_hold_release", "WORKFLOW_EXECUTION_SIGNALED") == 1  # the release
    assert activities("chained_run") == ["submit_attempt", "await_runs", "dag_release"]
    assert count("chained_run", "START_CHILD_WORKFLOW_EXECUTION_INITIATED") == 1
    assert "requeue_hold" in activities("pipeline_stage")  # a recovery


def test_every_version_folder_names_its_version_and_covers_every_path() -> None:
    assert VERSIONS, "no recorded histories"
    for folder in VERSIONS:
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["recovery"] == folder.name
        # A continue-as-new chain is NAME-1.json, NAME-2.json, ...
        recorded = {re.sub(r"-\d+$", "", name.removesuffix(".json")) for name in manifest["histories"]}
        assert recorded >= PATHS, f"{folder.name} lacks {sorted(PATHS - recorded)}"
        for name in manifest["histories"]:
            assert (folder / name).is_file(), f"{folder.name}/{name} is in the manifest but missing"


@pytest.mark.parametrize("folder", VERSIONS, ids=lambda p: p.name)
async def test_recorded_histories_replay_on_todays_code(folder: Path) -> None:
    failures = await replay(load(folder), pydantic_data_converter, full_sandbox=True)
    assert failures == [], "\n".join(f"{f.workflow_id}: {f.error}" for f in failures)


async def test_an_unguarded_change_to_the_restart_path_fails_exactly_the_runs_that_restarted(
    tmp_path: Path,
) -> None:
    changed = next_version(tmp_path, guarded=False).TrainingRun
    histories = [h for folder in VERSIONS for h in load(folder)]
    failures = await replay(histories, pydantic_data_converter, (changed, Pipeline, NodeHistory, SlurmDiscovery))
    restarted = {h.run_id for h in histories if "requeue_hold" in activities_of(h)}
    assert restarted, "the recorded histories should include restarts"
    assert {f.run_id for f in failures} == restarted
    assert all("Nondeterminism" in f.error or "nondetermin" in f.error.lower() for f in failures), failures


async def test_the_same_change_behind_workflow_patched_replays_everything(tmp_path: Path) -> None:
    changed = next_version(tmp_path, guarded=True).TrainingRun
    histories = [h for folder in VERSIONS for h in load(folder)]
    assert await replay(histories, pydantic_data_converter, (changed, Pipeline, NodeHistory, SlurmDiscovery)) == []


async def test_replay_spread_over_processes_finds_the_same_failures(tmp_path: Path) -> None:
    changed = next_version(tmp_path, guarded=False).TrainingRun
    histories = [h for folder in VERSIONS for h in load(folder)]
    workflows = (changed, Pipeline, NodeHistory, SlurmDiscovery)
    alone = await replay(histories, pydantic_data_converter, workflows, processes=1)
    spread = await replay(histories, pydantic_data_converter, workflows, processes=2, batch=4)
    assert alone and sorted(alone, key=lambda f: f.run_id) == sorted(spread, key=lambda f: f.run_id)
    assert await replay(histories, pydantic_data_converter, processes=2, batch=4) == []
