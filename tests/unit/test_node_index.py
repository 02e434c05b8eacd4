"""The index a diagnosis reads the cluster's nodes through: the same answers as walking every
node (`rules.peer_node`, the usable count), kept current by the local scheduler's node book."""

from __future__ import annotations

import pytest

from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.rules import peer_node
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
    "peer",
    ["10.0.0.7", "[10.0.0.8]", "::ffff:10.0.0.7", "dgx-07", "DGX-08.cluster.example", "gpu9.cluster.example",
     "gpu9", "10.0.0.99", "10.0.0.1", "nfs-server", "n7"],
)  # fmt: skip
def test_a_peer_is_the_same_node_as_walking_every_node_finds(peer: str) -> None:
    assert NodeIndex.of(NODES).peer_node(peer) == peer_node(peer, NODES)


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
