"""Diagnosis from what the scheduler knows: which node failed, or whose task failed first.

Log signatures and the attribution providers come later; this is the scheduler-facts rule set
they extend.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from temporalio import activity

from activities.errors import scheduler_errors
from activities.schedulers.base import Scheduler
from activities.watch import describe_exit, failed_tasks
from workflows.models import (
    DiagnoseInput,
    DiagnoseResult,
    Diagnosis,
    ImplicatedNode,
    JobObservation,
    JobState,
    NodeInfo,
)

_UNUSABLE = ("down", "drain", "fail", "not_responding")


class DiagnoseActivities:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    @activity.defn
    async def diagnose(self, inp: DiagnoseInput) -> DiagnoseResult:
        with scheduler_errors():
            nodes = await self.scheduler.nodes()
            failed = await self._failed_run(inp)
        usable = [n.name for n in nodes if not unusable(n)]
        if inp.symptom.kind == "crash":
            diagnosis = from_scheduler_facts(failed, inp.attempt.index)
        else:
            diagnosis = still_running(inp.symptom.kind, inp.symptom.evidence[0].text, inp.attempt.index)
        if inp.log_diagnosis is not None:
            diagnosis = combine(inp.log_diagnosis, diagnosis)
        diagnosis = with_node_facts(diagnosis, failed, nodes)
        diagnosis.evidence = inp.symptom.evidence
        return DiagnoseResult(diagnosis=diagnosis, usable_nodes=usable)

    async def _failed_run(self, inp: DiagnoseInput) -> JobObservation:
        """The failed run's own facts: when the scheduler already requeued the job by itself
        (Slurm does on NODE_FAIL), its history says how that run ended."""
        obs = inp.observation
        if obs.restart_count <= inp.attempt.restart_count or not isinstance(self.scheduler, HasHistory):
            return obs
        past = await self.scheduler.runs(obs.job_id)
        return next((r for r in past if r.restart_count == inp.attempt.restart_count), obs)


@runtime_checkable
class HasHistory(Protocol):
    async def runs(self, job_id: str) -> list[JobObservation]: ...


def still_running(kind: str, what: str, attempt_index: int) -> Diagnosis:
    """A hang or slowdown of a job that is still allocated: restart it, terminating it first."""
    return Diagnosis(
        attempt_index=attempt_index, category="unknown", retryable=True, explanation=what, provider="watch"
    )


def combine(log: Diagnosis, facts: Diagnosis) -> Diagnosis:
    """The log says what went wrong; the scheduler's word wins when it saw a node fail."""
    lead = facts if facts.category == "hardware" else log
    implicated = list(log.implicated) + [i for i in facts.implicated if i.node not in log.implicated_nodes]
    explanation = log.explanation if lead is log else f"{facts.explanation}; the log shows: {log.explanation}"
    provider = f"{log.provider}+{facts.provider}"
    return lead.model_copy(update={"implicated": implicated, "provider": provider, "explanation": explanation})


def unusable(node: NodeInfo) -> bool:
    """Down, drained, failing or not responding (Slurm marks the last with a `*`)."""
    state = node.state.lower()
    return state.endswith("*") or any(word in state for word in _UNUSABLE)


def with_node_facts(diagnosis: Diagnosis, obs: JobObservation, nodes: list[NodeInfo]) -> Diagnosis:
    """Nodes of the allocation that the scheduler reports unhealthy are implicated, with its reason."""
    known = set(diagnosis.implicated_nodes)
    extra = [
        ImplicatedNode(
            node=n.name, reason=f"the scheduler reports it {n.state}" + (f": {n.reason}" if n.reason else "")
        )
        for n in nodes
        if n.name in obs.nodes and n.name not in known and unusable(n)
    ]
    if not extra:
        return diagnosis
    category = "hardware" if diagnosis.category == "unknown" else diagnosis.category
    return diagnosis.model_copy(update={"implicated": [*diagnosis.implicated, *extra], "category": category})


def from_scheduler_facts(obs: JobObservation, attempt_index: int) -> Diagnosis:
    def diag(category: str, retryable: bool, why: str, nodes: list[ImplicatedNode]) -> Diagnosis:
        return Diagnosis.model_validate(
            {
                "attempt_index": attempt_index,
                "category": category,
                "retryable": retryable,
                "implicated": nodes,
                "explanation": why,
                "provider": "scheduler",
            }
        )

    if obs.state is JobState.NODE_FAIL:
        names = obs.failed_nodes
        nodes = [ImplicatedNode(node=n, reason="the scheduler reported it failed") for n in names]
        return diag("hardware", True, f"node {', '.join(names) or '?'} failed (NODE_FAIL)", nodes)
    if obs.state is JobState.FAILED:
        first = next(iter(failed_tasks(obs)), None)
        if first is None:
            return diag("unknown", True, f"job failed{describe_exit(obs.exit_code, obs.signal)}", [])
        how = describe_exit(first.exit_code, first.signal)
        nodes = [ImplicatedNode(node=first.node, reason=f"its task failed first{how}")]
        return diag("unknown", True, f"the task on {first.node} failed first{how}", nodes)
    if obs.state is JobState.CANCELLED:
        return diag("scheduler", False, "the job was cancelled outside recovery", [])
    if obs.state in (JobState.TIMEOUT, JobState.PREEMPTED):
        return diag("scheduler", True, f"the job ended {obs.state}", [])
    return diag("unknown", True, f"the job ended {obs.state}: {obs.reason or 'no reason given'}", [])
