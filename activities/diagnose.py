"""Diagnosis from what the scheduler knows: which node failed, or whose task failed first.

Log signatures and the attribution providers come later; this is the scheduler-facts rule set
they extend.
"""

from __future__ import annotations

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
)

_UNUSABLE = ("down", "drain", "fail", "not_responding")


class DiagnoseActivities:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    @activity.defn
    async def diagnose(self, inp: DiagnoseInput) -> DiagnoseResult:
        with scheduler_errors():
            nodes = await self.scheduler.nodes()
        usable = [n.name for n in nodes if not any(u in n.state.lower() for u in _UNUSABLE)]
        diagnosis = from_scheduler_facts(inp.observation, inp.attempt.index)
        diagnosis.evidence = inp.symptom.evidence
        return DiagnoseResult(diagnosis=diagnosis, usable_nodes=usable)


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
