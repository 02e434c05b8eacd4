"""Resolving node names for attribution, with this machine's real resolver."""

from __future__ import annotations

from recovery.activities.addresses import needs_resolving, resolved
from recovery.activities.node_index import NodeIndex
from recovery.workflows.models import NodeInfo


def test_only_an_ip_peer_that_no_node_is_known_by_needs_resolving() -> None:
    nodes = NodeIndex.of([NodeInfo(name="n1", state="idle", addresses=["10.0.0.1"])])
    assert needs_resolving(["10.0.0.2"], nodes)
    assert not needs_resolving(["10.0.0.1", "::ffff:10.0.0.1"], nodes)
    assert not needs_resolving(["gpu-a9.cluster"], nodes)  # a host name is matched by name
    assert not needs_resolving([], nodes)


async def test_the_allocations_names_resolve_and_others_are_left_alone() -> None:
    nodes = NodeIndex.of(
        [
            NodeInfo(name="localhost", state="idle"),
            NodeInfo(name="nowhere.invalid", state="idle", addresses=["nowhere.invalid"]),
            NodeInfo(name="elsewhere", state="idle"),
        ]
    )
    out = nodes.replaced(await resolved(nodes.allocation(["localhost", "nowhere.invalid"]), timeout=5))
    assert "127.0.0.1" in out.by_name["localhost"].addresses or "::1" in out.by_name["localhost"].addresses
    assert out.by_name["nowhere.invalid"].addresses == ["nowhere.invalid"]  # RFC 6761: never resolves
    assert out.by_name["elsewhere"] is nodes.by_name["elsewhere"]  # not in the allocation: not looked up
    assert out.usable_count == nodes.usable_count == 3
