"""`status PIPELINE`: each stage's timeline from its run's status, and the pipeline's goodput,
the runs' own goodput added up over the stages (built from real RunRecords by build_status)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recovery.client.pipeline_view import added_up, build_view, pipeline_timeline
from recovery.client.render import run_table, with_stages
from recovery.workflows.models import (
    Advice,
    Attempt,
    JobState,
    Milestone,
    RunRecord,
    RunState,
    RunStatus,
    RunSummary,
)
from recovery.workflows.pipeline_models import (
    PipelineAction,
    PipelineStatus,
    PipelineSummary,
    StageState,
    StageStatus,
)
from recovery.workflows.status import build_status
from tests.workflow.conftest import make_spec

T0 = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def prep_run() -> RunStatus:
    """Ran 0-100 s on node1,node2, crashed (detected at 110 s), successor on node1,node3 from
    130 s, completed at 200 s: 30 s lost to detection and restart."""
    record = RunRecord(
        state=RunState.COMPLETED,
        attempts=[
            Attempt(index=0, job_id="7", state=JobState.FAILED, nodes=["node1", "node2"],
                    started_at=at(0), ended_at=at(100)),
            Attempt(index=1, job_id="8", state=JobState.COMPLETED, nodes=["node1", "node3"],
                    excluded_nodes=["node2"], started_at=at(130), ended_at=at(200)),
        ],
        advice=[Advice(generation=1, attempt_index=0, operation="restart", excluded_nodes=["node2"],
                       reason="hardware", explanation="Xid 79 on node2: restart without it",
                       status="converged", acted=True, created_at=at(111))],
        milestones=[
            Milestone(name="failure_observed", at=at(100), attempt_index=0),
            Milestone(name="symptom_detected", at=at(110), attempt_index=0),
            Milestone(name="successor_running", at=at(130), attempt_index=0),
            Milestone(name="completed", at=at(200)),
        ],
    )  # fmt: skip
    return build_status(make_spec(), record, at(500))


def train_run() -> RunStatus:
    """Released at 201 s, ran 205-305 s without a failure, completed."""
    record = RunRecord(
        state=RunState.COMPLETED,
        attempts=[Attempt(index=0, job_id="9", state=JobState.COMPLETED, nodes=["node4"],
                          started_at=at(205), ended_at=at(305))],
        milestones=[Milestone(name="completed", at=at(305))],
    )  # fmt: skip
    return build_status(make_spec(), record, at(500))


def pipeline(train: StageState, eval_: StageState) -> PipelineStatus:
    return PipelineStatus(
        pipeline=PipelineSummary(id="p-1", name="p", state=RunState.RUNNING, owner="me", scheduler="local"),
        stages=[
            StageStatus(name="prep", run="p-1.prep", state=StageState.COMPLETED, needs=[]),
            StageStatus(name="train", run="p-1.train", state=train, needs=["prep"]),
            StageStatus(name="eval", run="p-1.eval", state=eval_, needs=["train"]),
        ],
        actions=[
            PipelineAction(kind="dag_release", stage="prep", run="p-1.prep", at=at(-1), detail="needs nothing"),
            PipelineAction(kind="dag_release", stage="train", run="p-1.train", at=at(201), detail="prep completed"),
        ],
    )


def test_each_stage_has_its_span_attempts_and_recoveries() -> None:
    view = build_view(pipeline(StageState.RUNNING, StageState.WAITING), {"prep": prep_run()}, at(250))
    prep, train, eval_ = view.stages
    assert (prep.released_at, prep.started_at, prep.ended_at) == (at(-1), at(0), at(200))
    assert [a.job_id for a in prep.attempts] == ["7", "8"] and prep.attempts[1].excluded_nodes == ["node2"]
    assert [a.operation for a in prep.advice] == ["restart"]
    assert train.released_at == at(201) and train.started_at is None and train.attempts == []
    assert eval_.released_at is None
    assert view.started_at == at(0) and view.ended_at is None  # not finished: the span runs to now
    assert view.span_seconds == 250


def test_the_pipeline_goodput_is_the_stages_added_up() -> None:
    status = pipeline(StageState.COMPLETED, StageState.CANCELLED)
    view = build_view(status, {"prep": prep_run(), "train": train_run()}, at(500))
    g = view.goodput
    assert g.elapsed_seconds == 200 + 100 and g.lost_seconds == 30 and g.failures == 1
    assert g.productive_seconds == 270 and g.ettr == pytest.approx(270 / 300)
    assert g.lost_detection_seconds == 10 and g.lost_restart_seconds == 20
    assert view.ended_at == at(305) and view.span_seconds == 305
    assert added_up([]).ettr is None


def test_the_json_keeps_every_key_of_the_status_and_the_text_tells_the_story() -> None:
    status = pipeline(StageState.COMPLETED, StageState.CANCELLED)
    view = build_view(status, {"prep": prep_run(), "train": train_run()}, at(500))
    data = view.model_dump(mode="json")
    assert set(status.model_dump(mode="json")) <= set(data)
    assert set(data) >= {"pipeline", "stages", "actions", "goodput", "started_at", "ended_at", "span_seconds"}
    assert {"name", "run", "state", "needs", "attempts", "advice", "goodput"} <= set(data["stages"][0])
    text = pipeline_timeline(view)
    assert "#0 job 7.0  FAILED" in text and "nodes node1,node2" in text
    assert "#1 job 8.0  COMPLETED  nodes node1,node3 excluding node2" in text
    assert "advice restart -> converged: Xid 79 on node2: restart without it" in text
    assert "goodput  ETTR 0.90  productive 4m 30s of 5m 0s" in text
    assert "lost 30s to 1 failure" in text


def summary(run_id: str, kind: str = "run", pipeline: str | None = None) -> RunSummary:
    return RunSummary(
        id=run_id, name=run_id, state=RunState.RUNNING, paused=False, owner="me", policy="default", attempts=1,
        job_id=None,
        scheduler="local", kind=kind, pipeline=pipeline,  # type: ignore[arg-type]
    )  # fmt: skip


def test_list_shows_each_pipeline_with_its_stages_under_it() -> None:
    # Visibility lists the newest first: stages (started later) before their pipeline.
    runs = [
        summary("p-1.train", pipeline="p-1"), summary("r-9"), summary("p-1.prep", pipeline="p-1"),
        summary("p-1", kind="pipeline"), summary("q-2.eval", pipeline="q-2"),
    ]  # fmt: skip
    assert [(r.id, stage) for r, stage in with_stages(runs)] == [
        ("r-9", False), ("p-1", False), ("p-1.train", True), ("p-1.prep", True), ("q-2.eval", False),
    ]  # fmt: skip
    rows = run_table(runs).splitlines()[1:]
    assert [row.split()[0:2] for row in rows] == [
        ["r-9", "r-9"], ["p-1", "p-1"], ["└", "p-1.train"], ["└", "p-1.prep"], ["q-2.eval", "q-2.eval"],
    ]  # fmt: skip
    assert "p-1 (pipeline)" in rows[1]
