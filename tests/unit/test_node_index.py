"""The index a diagnosis reads the cluster's nodes through: a peer's node by address or host
name, the usable count, kept current by the local scheduler's node book."""

from __future__ import annotations

import pytest

from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.schedulers.base import NodeChanges
from recovery.activities.schedulers.coalesce import NodeBook
from recovery.workflows.models import NodeInfo

NODES = [
    NodeInfo(name="n7", state="idle", addresses=["10.0.0.7", "dgx-07.cluster.example"]),
    NodeInfo(name="n8", state="down*", addresses=["10.0.0.8", "dgx-08.cluster.example"]),
    NodeInfo(name="gpu9", state="IDLE+DRAIN"),
    NodeInfo(name="twin-a", state="mixed", addresses=["10.0.0.99"]),
    NodeInfo(name="twin-b", state="allocated", addresses=["::ffff:10.0.0.99"]),
]


@pytest.mark.parametrize(
    ("peer", "node"),
    [("10.0.0.7", "n7"), ("[10.0.0.8]", "n8"), ("::ffff:10.0.0.7", "n7"), ("dgx-07", "n7"),
     ("DGX-08.cluster.example", "n8"), ("gpu9.cluster.example", "gpu9"), ("gpu9", "gpu9"), ("n7", "n7"),
     ("10.0.0.99", None),  # two nodes share it: it says nothing
     ("10.0.0.1", None), ("nfs-server", None)],
)  # fmt: skip
def test_a_peer_is_the_one_node_with_its_address_or_host_name(peer: str, node: str | None) -> None:
    assert NodeIndex.of(NODES).peer_node(peer) == node


def test_usable_names_and_count() -> None:
    index = NodeIndex.of(NODES)
    assert index.usable_count == sum(1 for n in NODES if not unusable(n)) == 3
    assert index.usable(["twin-b", "n8", "gpu9", "n7", "nowhere", "n7"]) == ["n7", "twin-b"]
    assert [n.name for n in index.allocation(["gpu9", "nowhere", "n7", "gpu9"])] == ["gpu9", "n7"]


def test_addresses_are_known_canonically() -> None:
    index = NodeIndex.of(NODES)
    assert index.knows_address("::ffff:10.0.0.7") and index.knows_address("[10.0.0.8]")
    assert not index.knows_address("10.0.0.1")


def test_replaced_nodes_change_their_entries_only() -> None:
    index = NodeIndex.of(NODES)
    resolved = NODES[0].model_copy(update={"addresses": [*NODES[0].addresses, "192.168.1.7"]})
    after = index.replaced([resolved])
    assert after.peer_node("192.168.1.7") == "n7" and index.peer_node("192.168.1.7") is None
    assert after.usable_count == index.usable_count and after.get("gpu9") is index.get("gpu9")


class Changes:
    """A scheduler that answers the book's reads from a script of changes."""

    def __init__(self, *answers: NodeChanges) -> None:
        self.answers = list(answers)

    async def node_changes(self, cursor: str | None) -> NodeChanges:
        return self.answers.pop(0)


async def test_the_book_keeps_the_usable_count_from_the_changes() -> None:
    first = NodeChanges(nodes=NODES, cursor="1", full=True)
    down = NodeChanges(nodes=[NodeInfo(name="n7", state="down", reason="Xid 79")], cursor="2", full=False)
    back = NodeChanges(
        nodes=[NodeInfo(name="n7", state="idle"), NodeInfo(name="n10", state="idle")], cursor="3", full=False
    )
    book = NodeBook(Changes(first, down, back))  # type: ignore[arg-type]
    reads = [await book.read() for _ in range(3)]
    assert [r.usable_count for r in reads] == [3, 2, 4]
    assert [len(r) for r in reads] == [5, 5, 6]
    # An earlier read is not changed by later ones: a diagnosis may still be reading it.
    assert reads[0].get("n7") is NODES[0] and reads[1].get("n7").state == "down"  # type: ignore[union-attr]
    assert reads[2].usable_count == NodeIndex.of(reads[2].nodes).usable_count
