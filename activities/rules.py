"""The built-in attribution rules, each a small function over scheduler facts and the log's account.

- The log's root cause says what went wrong; the scheduler's word wins when it saw a node fail.
- NODE_FAIL, or a node the scheduler reports down, drained or not responding, implicates it.
- Otherwise the node whose task failed first is implicated (the others were killed after it).
- A job cancelled outside recovery is not retried; time limit and preemption are `scheduler`
  endings, resumed without spending budgets (see `workflows.decide`).
- A hang or slowdown of a job still allocated implicates no node unless the log names one.
"""

from __future__ import annotations

from activities.watch import describe_exit, failed_tasks
from workflows.models import Diagnosis, ImplicatedNode, JobObservation, JobState, NodeInfo

_UNUSABLE = ("down", "drain", "fail", "not_responding")


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
