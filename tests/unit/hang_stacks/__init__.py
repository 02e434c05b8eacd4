"""Real py-spy and flight recorder dumps of real hung torch.distributed ranks (see capture.py),
loaded as the node helper reports them."""

from __future__ import annotations

import json
from pathlib import Path

from recovery.activities.hangstacks import flight, pyspy
from recovery.activities.hangstacks.model import NodeStacks, RankProcess, ThreadStack

HERE = Path(__file__).resolve().parent
SCENARIOS = ("sleeper", "ddp", "mismatch", "flight", "example")


def samples(scenario: str, rank: int) -> list[list[ThreadStack]]:
    """The rank's two py-spy dumps, parsed as the node helper parses them."""
    return [pyspy.parse_dump((HERE / scenario / f"pyspy-{rank}-{i}.json").read_text()) for i in range(2)]


def process(scenario: str, rank: int) -> RankProcess:
    facts = next(r for r in json.loads((HERE / scenario / "ranks.json").read_text()) if r["rank"] == rank)
    dump = HERE / scenario / f"fr_rank_{rank}"
    states, note = flight.read_flight(dump) if dump.exists() else ([], "")
    return RankProcess(
        pid=facts["pid"],
        rank=rank,
        world_size=facts["world_size"],
        samples=samples(scenario, rank),
        flight=states,
        flight_note=note,
    )


def nodes(scenario: str) -> list[NodeStacks]:
    """One node per rank (rank r on node r+1), as the capture places them."""
    ranks = json.loads((HERE / scenario / "ranks.json").read_text())
    return [NodeStacks(node=r["node"], processes=[process(scenario, r["rank"])]) for r in ranks]
