"""Every node of one read of the cluster, indexed for what a diagnosis asks of it.

A diagnosis needs little of a 10,000-node cluster: the failed run's own nodes, the few names a
log or the node history gives, and how many nodes are usable. Walked node by node, each of those
was a pass over all 10,000 `NodeInfo` in Python (17 ms for the usable count, 17 ms for the
allocation's facts, 5 ms for mapping names; with a peer's address, 70 ms to collect every node's
addresses): in a burst of 100 failures a quarter of the worker's CPU, holding the GIL while its
workflow tasks waited (py-spy). A `NodeIndex` is built once per read (by `coalesce.NodeBook`, from
what changed since its last read) and shared by the diagnoses that read it; it is never changed
after, and what only some diagnoses need (the addresses) is worked out on first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from recovery.activities.addresses import canonical_address
from recovery.activities.signatures.prefixes import is_ip, node_name
from recovery.workflows.models import NodeInfo

_UNUSABLE = ("down", "drain", "fail", "not_responding")


def unusable(node: NodeInfo) -> bool:
    """Down, drained, failing or not responding (Slurm marks the last with a `*`)."""
    return _unusable_state(node.state)


@cache
def _unusable_state(state: str) -> bool:
    # A cluster's nodes share a handful of states: each is judged once.
    state = state.lower()
    return state.endswith("*") or any(word in state for word in _UNUSABLE)


class NodeIndex:
    """The nodes of one read by name, with the count of usable ones. Read-only once built."""

    def __init__(self, by_name: dict[str, NodeInfo], usable_count: int | None = None) -> None:
        self.by_name = by_name
        self.usable_count = (
            sum(1 for n in by_name.values() if not unusable(n)) if usable_count is None else usable_count
        )
        self._addresses: dict[str, set[str]] | None = None  # canonical address or short name -> nodes

    @classmethod
    def of(cls, nodes: Iterable[NodeInfo]) -> NodeIndex:
        return cls({n.name: n for n in nodes})

    def __len__(self) -> int:
        return len(self.by_name)

    @property
    def nodes(self) -> list[NodeInfo]:
        return list(self.by_name.values())

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def allocation(self, names: Iterable[str]) -> list[NodeInfo]:
        """The named nodes this read knows, in the names' order."""
        return [node for name in dict.fromkeys(names) if (node := self.by_name.get(name)) is not None]

    def usable(self, names: Iterable[str]) -> list[str]:
        """Those of `names` that are nodes and usable, sorted."""
        return sorted(n for n in set(names) if (node := self.by_name.get(n)) is not None and not unusable(node))

    def knows_address(self, address: str) -> bool:
        """Whether some node has this address (compared canonically)."""
        return canonical_address(address) in self._by_address()

    def peer_node(self, peer: str) -> str | None:
        """The one node a peer is, by address or by (short) host name; None when none or several
        are (on a cluster whose nodes share an address, a peer's address says nothing). A node's
        own name counts as a host name; its addresses' short names too."""
        wanted = canonical_address(peer)
        table = self._by_address()
        found = set(table.get(wanted, ()))
        if not is_ip(wanted):
            found |= table.get(f"name:{node_name(wanted)}", set())
        return found.pop() if len(found) == 1 else None

    def replaced(self, nodes: Iterable[NodeInfo]) -> NodeIndex:
        """A copy with these nodes' entries replaced (the allocation with its resolved addresses);
        their states are unchanged, and so is the usable count."""
        by_name = dict(self.by_name)
        by_name.update((n.name, n) for n in nodes)
        return NodeIndex(by_name, self.usable_count)

    def _by_address(self) -> dict[str, set[str]]:
        if self._addresses is None:
            table: dict[str, set[str]] = {}
            for node in self.by_name.values():
                table.setdefault(f"name:{node.name.lower()}", set()).add(node.name)
                for address in node.addresses:
                    table.setdefault(canonical_address(address), set()).add(node.name)
                    table.setdefault(f"name:{node_name(address.lower())}", set()).add(node.name)
            self._addresses = table
        return self._addresses
