"""The built-in attribution rules, each a small function over scheduler facts and the log's account.

- The log's root cause says what went wrong; the scheduler's word wins when it saw a node fail
  or ended the job itself (cancel, time limit, preemption).
- NODE_FAIL, or a node the scheduler reports down, drained or not responding, implicates it.
- Otherwise the node whose task failed first is implicated (the others were killed after it).
- A peer the log names (an NCCL socket or InfiniBand error, a Gloo connection closed) implicates
  the one node of the allocation with that address or host name: the peer went away, not the
  rank that reported it.
- A job cancelled outside recovery is not retried; time limit and preemption are `scheduler`
  endings, resumed without spending budgets (see `workflows.decide`).
- A hang or slowdown of a job still allocated implicates no node unless the log names one (a
  hang's ranks' stacks may, after these rules: `activities.diagnose.with_hang_stacks`).
"""

from __future__ import annotations

from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.observer.news import describe_exit, failed_tasks
from recovery.workflows.models import Diagnosis, ImplicatedNode, JobObservation, JobState, NodeInfo


def still_running(kind: str, what: str, attempt_index: int) -> Diagnosis:
    """A hang or slowdown of a job that is still allocated: restart it, terminating it first."""
    return Diagnosis(
        attempt_index=attempt_index, category="unknown", retryable=True, explanation=what, provider="watch"
    )


def combine(log: Diagnosis, facts: Diagnosis) -> Diagnosis:
    """The log says what went wrong; the scheduler's word wins when it saw a node fail, or ended
    the job itself (a cancel, a time limit, a preemption). The ranks' dying words after such an
    ending (NCCL errors, connections reset) neither make a cancelled job run again nor name
    nodes to avoid."""
    provider = f"{log.provider}+{facts.provider}"
    both = f"{facts.explanation}; the log shows: {log.explanation}"
    if facts.category == "scheduler":
        return facts.model_copy(update={"provider": provider, "explanation": both})
    lead = facts if facts.category == "hardware" else log
    implicated = list(log.implicated) + [i for i in facts.implicated if i.node not in log.implicated_nodes]
    explanation = log.explanation if lead is log else both
    update = {"implicated": implicated, "provider": provider, "explanation": explanation, "peers": log.peers}
    return lead.model_copy(update=update)


def with_node_facts(diagnosis: Diagnosis, obs: JobObservation, nodes: list[NodeInfo]) -> Diagnosis:
    """Nodes of the allocation that the scheduler reports unhealthy are implicated, with its reason."""
    known = set(diagnosis.implicated_nodes)
    own = set(obs.nodes)
    extra = [
        ImplicatedNode(
            node=n.name, reason=f"the scheduler reports it {n.state}" + (f": {n.reason}" if n.reason else "")
        )
        for n in nodes
        if n.name in own and n.name not in known and unusable(n)
    ]
    if not extra:
        return diagnosis
    category = "hardware" if diagnosis.category == "unknown" else diagnosis.category
    return diagnosis.model_copy(update={"implicated": [*diagnosis.implicated, *extra], "category": category})


def with_peer_nodes(diagnosis: Diagnosis, obs: JobObservation, nodes: list[NodeInfo]) -> Diagnosis:
    """Each peer the log names that is exactly one node of the allocation implicates that node."""
    if not diagnosis.peers:
        return diagnosis
    own = set(obs.nodes)
    allocation = NodeIndex.of(n for n in nodes if n.name in own)
    known = set(diagnosis.implicated_nodes)
    extra: list[ImplicatedNode] = []
    for peer in diagnosis.peers:
        node = allocation.peer_node(peer)
        if node is not None and node not in known:
            known.add(node)
            extra.append(ImplicatedNode(node=node, reason=f"the log names it as a failed peer ({peer})"))
    if not extra:
        return diagnosis
    return diagnosis.model_copy(update={"implicated": [*diagnosis.implicated, *extra]})


def as_cluster_nodes(diagnosis: Diagnosis, allocation: list[str], nodes: NodeIndex) -> Diagnosis:
    """Implicated names as the scheduler's node names. A log names a host as the machine calls
    itself (`gpu7.cluster`, a hostname unlike its NodeName), looked up in the failed run's
    allocation first, then in the cluster. A name that is no node (a file server, a login node)
    is dropped: excluding a name the scheduler does not know would make the restart itself fail."""
    if not diagnosis.implicated or (not allocation and not len(nodes)):
        return diagnosis
    own = NodeIndex.of(nodes.get(name) or NodeInfo(name=name, state="") for name in allocation)
    kept: dict[str, ImplicatedNode] = {}
    strangers: list[str] = []
    for item in diagnosis.implicated:
        known = own.get(item.node) is not None or nodes.get(item.node) is not None
        name = item.node if known else own.peer_node(item.node) or nodes.peer_node(item.node)
        if name is None:
            strangers.append(item.node)
        elif name not in kept:
            renamed = "" if name == item.node else f" (logged as {item.node})"
            kept[name] = item.model_copy(update={"node": name, "reason": item.reason + renamed})
    if not strangers and all(i.node in kept for i in diagnosis.implicated):
        return diagnosis
    note = f"; not excluded, no node of this cluster: {', '.join(strangers)}" if strangers else ""
    update = {"implicated": list(kept.values()), "explanation": diagnosis.explanation + note}
    return diagnosis.model_copy(update=update)


def peer_node(peer: str, allocation: list[NodeInfo]) -> str | None:
    """The node of `allocation` a peer is, by address or by (short) host name; None when none or
    several are (see `NodeIndex.peer_node`, which matches)."""
    return NodeIndex.of(allocation).peer_node(peer)


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
