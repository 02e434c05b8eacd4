"""Whose fault a hang is, from the ranks' stacks and flight recorder state. Pure.

In synchronous training a rank that stops stops everyone: the healthy ranks wait for it in the
next collective. So, with each rank judged waiting, outside or moving (`frames`):

- The outside ranks are the culprits when some rank waits, none moves, and they are no more
  than the waiting ones (a majority stuck outside is a job-wide stall, not one bad rank).
- Else, from the flight recorder: on a process group, the ranks whose last collective's sequence
  number is below the others' are the culprits (again only a minority: they are the late ones).

A culprit's node is implicated with the evidence quoted. Nothing is implicated when the evidence
does not single anyone out, and the summary says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from recovery.activities.hangstacks.evidence import (
    SOURCE,
    cut,
    failure_evidence,
    nodes_text,
    ranks_of,
    ranks_text,
    stack_evidence,
    where_text,
)
from recovery.activities.hangstacks.frames import RankView, view
from recovery.activities.hangstacks.model import FlightState, NodeStacks
from recovery.workflows.models import Evidence, ImplicatedNode


@dataclass(frozen=True)
class Verdict:
    culprits: list[ImplicatedNode]
    summary: str
    evidence: list[Evidence]


def judge(nodes: list[NodeStacks], expected_nodes: Iterable[str] = ()) -> Verdict:
    views = [view(p, n.node) for n in nodes for p in n.processes if p.rank is not None]
    missing = _missing(nodes, views, expected_nodes)
    culprits, summary = _by_stacks(views)
    if not culprits:
        flight_culprits, flight_summary = _by_flight(nodes)
        if flight_culprits:
            culprits, summary = flight_culprits, flight_summary
        elif flight_summary:
            summary += f"; {flight_summary}"
    if missing:
        summary += f"; {missing}"
    evidence = [Evidence(source=SOURCE, text=cut(summary), signature="hang-culprit" if culprits else "hang-stacks")]
    evidence += stack_evidence(views) + failure_evidence(nodes)
    return Verdict(culprits=culprits, summary=summary, evidence=evidence)


def _by_stacks(views: list[RankView]) -> tuple[list[ImplicatedNode], str]:
    read = [v for v in views if v.state != "unread"]
    if not read:
        return [], "py-spy read no rank's stack"
    waiting = [v for v in read if v.state == "waiting"]
    outside = [v for v in read if v.state == "outside"]
    moving = [v for v in read if v.state == "moving"]
    if moving:
        return [], f"py-spy: {ranks_text(moving)} moved in and out of collectives between samples: not stuck in one"
    if not waiting:
        return [], f"py-spy: no rank waits in a collective ({ranks_text(outside)} outside all): a whole-job stall"
    if not outside:
        return [], f"py-spy: every rank read waits in a collective ({ranks_text(waiting)}, in {where_text(waiting)})"
    if len(outside) > len(waiting):
        return [], (
            f"py-spy: more ranks are outside a collective ({ranks_text(outside)}) than wait in one "
            f"({ranks_text(waiting)}, in {where_text(waiting)}): no single culprit"
        )
    others = f"while {ranks_text(waiting)} {'waits' if len(waiting) == 1 else 'wait'} in {where_text(waiting)}"
    culprits: list[ImplicatedNode] = []
    for node in dict.fromkeys(v.node for v in outside):
        mine = [v for v in outside if v.node == node]
        stuck = " (the same stack in every sample)" if all(v.steady for v in mine) else ""
        stacks = "; ".join(dict.fromkeys(v.shown for v in mine))
        reason = f"hung {ranks_text(mine)}: not in a collective{stuck}, {others} (py-spy: {stacks})"
        culprits.append(ImplicatedNode(node=node, reason=cut(reason)))
    verb = "is" if len(outside) == 1 else "are"
    summary = f"py-spy: {ranks_text(outside)} on {nodes_text(outside)} {verb} not in a collective {others}"
    return culprits, summary


def _by_flight(nodes: list[NodeStacks]) -> tuple[list[ImplicatedNode], str]:
    states: dict[str, dict[int, tuple[FlightState, str]]] = {}
    for n in nodes:
        for p in n.processes:
            rank = p.rank
            if rank is None:
                continue
            for s in p.flight:
                states.setdefault(s.group, {})[rank] = (s, n.node)
    if not states:
        return [], ""
    lagging: dict[str, list[str]] = {}
    for group, by_rank in sorted(states.items()):
        top = max(s.last_seq for s, _ in by_rank.values())
        late = {r: v for r, v in by_rank.items() if v[0].last_seq < top}
        if not late or len(late) > len(by_rank) - len(late):
            continue
        ahead = sorted(r for r in by_rank if r not in late)
        for rank, (state, node) in sorted(late.items()):
            op = f" ({state.op})" if state.op else ""
            text = (
                f"flight recorder: rank {rank}'s last collective on process group {group} is #{state.last_seq}{op};"
                f" {ranks_of(ahead)} reached #{top}"
            )
            lagging.setdefault(node, []).append(text)
    if not lagging:
        return [], "flight recorder: no rank's collective sequence lags the others'"
    culprits = [ImplicatedNode(node=node, reason=cut("; ".join(texts))) for node, texts in lagging.items()]
    return culprits, "; ".join(t for texts in lagging.values() for t in texts)


def _missing(nodes: list[NodeStacks], views: list[RankView], expected: Iterable[str]) -> str:
    """What the evidence does not cover: nodes not read, ranks not seen."""
    notes = []
    failed = [n.node for n in nodes if not n.ok]
    answered = {n.node for n in nodes}
    unasked = [node for node in expected if node not in answered]
    if failed or unasked:
        notes.append(f"no stacks from {', '.join([*failed, *unasked])}")
    sizes = Counter(p.world_size for n in nodes for p in n.processes if p.world_size)
    if sizes:
        world = sizes.most_common(1)[0][0]
        unseen = sorted(set(range(world)) - {v.rank for v in views})
        if unseen:
            notes.append(f"{ranks_of(unseen)} of {world} not seen")
    unread = [v for v in views if v.state == "unread"]
    if unread:
        notes.append(f"{ranks_text(unread)} not read")
    return "; ".join(notes)
