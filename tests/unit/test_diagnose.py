from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.rules import from_scheduler_facts, unusable, with_node_facts
from workflows.models import JobObservation, JobState, NodeInfo, TaskResult

T = datetime(2026, 11, 29, 3, tzinfo=UTC)


def obs(state: JobState, **kw: object) -> JobObservation:
    return JobObservation.model_validate({"job_id": "7", "state": state, "nodes": ["n1", "n2"], **kw})


def test_first_failing_task_is_implicated_not_the_ones_killed_after() -> None:
    tasks = [
        TaskResult(node="n1", signal=15, ended_at=T + timedelta(seconds=1)),
        TaskResult(node="n2", exit_code=3, ended_at=T),
    ]
    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=3, tasks=tasks), 0)
    assert d.implicated_nodes == ["n2"] and d.retryable and d.category == "unknown"
    assert "exit 3" in d.explanation


def test_node_fail_implicates_the_failed_node() -> None:
    d = from_scheduler_facts(obs(JobState.NODE_FAIL, failed_nodes=["n1"]), 0)
    assert d.implicated_nodes == ["n1"] and d.category == "hardware"


def test_cancelled_outside_is_not_retried() -> None:
    assert from_scheduler_facts(obs(JobState.CANCELLED), 0).retryable is False


def test_timeout_and_preemption_are_scheduler_and_retryable() -> None:
    for state in (JobState.TIMEOUT, JobState.PREEMPTED):
        d = from_scheduler_facts(obs(state), 0)
        assert d.category == "scheduler" and d.retryable and d.implicated == []


def test_unhealthy_nodes_of_the_allocation_are_implicated_with_the_reason() -> None:
    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=1), 0)
    nodes = [
        NodeInfo(name="n1", state="idle"),
        NodeInfo(name="n2", state="drain", reason="ECC errors"),
        NodeInfo(name="n3", state="down", reason="not ours"),
    ]
    d = with_node_facts(d, obs(JobState.FAILED), nodes)
    assert d.implicated_nodes == ["n2"]
    assert "drain: ECC errors" in d.implicated[0].reason
    assert d.category == "hardware"


def test_unusable_states() -> None:
    for state in ("down", "down*", "drain", "drained", "draining", "fail", "idle*", "not_responding"):
        assert unusable(NodeInfo(name="x", state=state))
    for state in ("idle", "allocated", "mixed", "completing"):
        assert not unusable(NodeInfo(name="x", state=state))
