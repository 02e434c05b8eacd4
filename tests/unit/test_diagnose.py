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


def test_gpu_health_readings_implicate_a_bad_node_as_hardware() -> None:
    from activities.diagnose import with_gpu_health
    from workflows.models import GpuHealth, GpuReading

    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=1), 0)
    bad = GpuHealth(
        node="n2", available=True, gpus=[GpuReading(index=0, pci_bus_id="0000:3b:00", ecc_uncorrected_volatile=4)]
    )
    good = GpuHealth(node="n1", available=True, gpus=[GpuReading(index=0, ecc_uncorrected_volatile=0)])
    absent = GpuHealth(node="n3", available=False, reason="no NVIDIA driver here")
    out = with_gpu_health(d, [good, bad, absent])
    assert out.implicated_nodes == ["n2"] and out.category == "hardware"
    assert "NVML" in out.implicated[0].reason
    assert any(e.source == "nvml" for e in out.evidence)
    assert with_gpu_health(d, [good, absent]).category == d.category


async def test_probing_on_this_machine_carries_on_without_a_gpu() -> None:
    from activities.diagnose import DiagnoseActivities, HealthProbing
    from tests.fakes import ScriptedScheduler
    from workflows.models import Attempt, DiagnoseInput, Symptom

    failed = obs(JobState.FAILED, exit_code=1, tasks=[TaskResult(node="n1", exit_code=1, ended_at=T)])
    activities = DiagnoseActivities(ScriptedScheduler(["fail:n1"]), health=HealthProbing(enabled=True, timeout=20))
    symptom = Symptom(attempt_index=0, kind="crash", detected_at=T)
    result = await activities.diagnose(
        DiagnoseInput(run_id="r", attempt=Attempt(index=0, job_id="7"), observation=failed, symptom=symptom)
    )
    assert result.diagnosis.implicated_nodes == ["n1"]  # NVML absent here: the rules' answer stands
