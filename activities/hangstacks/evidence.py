"""The judgement's words: evidence lines (one per distinct stack, with the ranks sharing it, so a
thousand waiting ranks are one line), rank and node lists, and their bounds."""

from __future__ import annotations

from collections import Counter

from recovery.activities.hangstacks.frames import RankView, State
from recovery.activities.hangstacks.model import NodeStacks
from recovery.activities.text import clip
from recovery.workflows.models import Evidence

SOURCE = "py-spy"
STACK = "py-spy-stack"  # the signature of one distinct stack and the ranks that share it
UNAVAILABLE = "py-spy-unavailable"
MAX_GROUPS = 6  # distinct stacks shown as evidence; the rest are counted
MAX_TEXT = 480


def stack_evidence(views: list[RankView]) -> list[Evidence]:
    """One line per distinct stack, with the ranks that share it (a thousand waiting ranks are
    one line), culprits' stacks first."""
    groups: dict[tuple[State, str], list[RankView]] = {}
    for v in views:
        if v.state != "unread":
            groups.setdefault((v.state, v.shown), []).append(v)
    order = sorted(groups.items(), key=lambda item: (item[0][0] != "outside", -len(item[1])))
    evidence = []
    for (state, shown), members in order[:MAX_GROUPS]:
        label = {"waiting": "waiting in a collective", "outside": "not in a collective", "moving": "moving"}[state]
        text = f"{ranks_text(members)} on {nodes_text(members)}, {label}: {shown}"
        node = members[0].node if len({m.node for m in members}) == 1 else None
        evidence.append(Evidence(source=SOURCE, text=cut(text), node=node, signature=STACK))
    if len(order) > MAX_GROUPS:
        rest = [v for _, members in order[MAX_GROUPS:] for v in members]
        text = f"{len(rest)} more ranks, in {len(order) - MAX_GROUPS} other stacks"
        evidence.append(Evidence(source=SOURCE, text=text))
    unread: dict[str, list[RankView]] = {}
    for v in views:
        if v.state == "unread":
            unread.setdefault(v.reason, []).append(v)
    for reason, members in unread.items():
        text = f"{ranks_text(members)} on {nodes_text(members)}: no stack: {reason}"
        evidence.append(Evidence(source=SOURCE, text=cut(text), signature=UNAVAILABLE))
    return evidence


def failure_evidence(nodes: list[NodeStacks]) -> list[Evidence]:
    return [
        Evidence(source=SOURCE, text=cut(f"no stacks from {n.node}: {n.reason}"), node=n.node, signature=UNAVAILABLE)
        for n in nodes
        if not n.ok
    ]


def where_text(views: list[RankView]) -> str:
    names = Counter(v.where.name for v in views if v.where is not None)
    return ", ".join(name for name, _ in names.most_common(3)) or "?"


def ranks_text(views: list[RankView]) -> str:
    return ranks_of(sorted({v.rank for v in views}))


def ranks_of(numbers: list[int]) -> str:
    word = "rank" if len(numbers) == 1 else "ranks"
    return f"{word} {compress(numbers)}"


def nodes_text(views: list[RankView]) -> str:
    return ",".join(dict.fromkeys(v.node for v in views))


def compress(numbers: list[int]) -> str:
    """`0,1,2,3,5` -> `0-3,5`."""
    parts: list[str] = []
    start = prev = None
    for n in sorted(set(numbers)):
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def cut(text: str) -> str:
    return clip(text, MAX_TEXT)
