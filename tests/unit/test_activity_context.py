"""The log context bound around each activity: taken from its input, else from its workflow."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from recovery.worker.activity_context import context_fields
from recovery.workflows.models import (
    Advice,
    Attempt,
    AwaitRequeueInput,
    JobActionInput,
    RecordAdviceInput,
    SubmitInput,
    SubmitRequest,
    VerifyInput,
)
from recovery.workflows.node_history.models import NodeFailure, NodeFailureReport

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def fields(activity: str, inp: Any, workflow_type: str = "TrainingRun", workflow_id: str = "run-1") -> dict[str, Any]:
    return context_fields(activity, workflow_type, workflow_id, [inp])


def test_submit_knows_the_attempt_but_not_yet_the_job() -> None:
    request = SubmitRequest(script="", name="n", nodes=1, workdir="/w", token="t")
    got = fields("submit_attempt", SubmitInput(run_id="run-1", attempt_index=2, request=request))
    assert got == {"activity": "submit_attempt", "run_id": "run-1", "attempt": 2, "job_id": None}


def test_an_attempt_in_the_input_gives_index_and_job() -> None:
    inp = AwaitRequeueInput(run_id="r", attempt=Attempt(index=1, job_id="77"), timeout_seconds=1, poll_seconds=1)
    assert fields("await_requeue", inp) == {"activity": "await_requeue", "run_id": "r", "attempt": 1, "job_id": "77"}


def test_advice_names_its_attempt() -> None:
    advice = Advice(generation=1, attempt_index=3, operation="restart", reason="r", explanation="e", created_at=T0)
    got = fields("record_advice", RecordAdviceInput(run_id="r", advice=advice, job_id="9"))
    assert (got["attempt"], got["job_id"]) == (3, "9")
    assert fields("record_advice", RecordAdviceInput(run_id="r", advice=advice))["job_id"] is None


def test_actions_and_verify() -> None:
    step = JobActionInput(run_id="r", advice_generation=1, job_id="5", restart_count=0, attempt_index=0)
    assert (fields("release", step)["attempt"], fields("release", step)["job_id"]) == (0, "5")
    verify = VerifyInput(
        run_id="r", job_id="5", successor_restart_count=1, excluded_nodes=[], timeout_seconds=1, poll_seconds=1
    )
    assert fields("verify_successor", verify)["attempt"] is None  # until the workflow names the successor


def test_run_id_comes_from_the_workflow_when_the_input_has_none() -> None:
    failure = NodeFailure(node="n1", run_id="run-9", attempt_index=0, category="hardware", at=T0)
    report = NodeFailureReport(failures=[failure])
    assert fields("report_failure", report, workflow_id="run-9")["run_id"] == "run-9"
    # Another workflow's activity (node history, discovery) is not a run.
    assert fields("adopt_opted_in_jobs", object(), "SlurmDiscovery", "recovery-discovery-c")["run_id"] is None
    assert context_fields("x", None, None, []) == {"activity": "x", "run_id": None, "attempt": None, "job_id": None}
