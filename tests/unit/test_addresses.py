"""Resolving node names for attribution, with this machine's real resolver."""

from __future__ import annotations

from recovery.activities.addresses import needs_resolving, with_resolved
from recovery.workflows.models import NodeInfo


def test_only_an_ip_peer_that_no_node_is_known_by_needs_resolving() -> None:
    nodes = [NodeInfo(name="n1", state="idle", addresses=["10.0.0.1"])]
    assert needs_resolving(["10.0.0.2"], nodes)
    assert not needs_resolving(["10.0.0.1", "::ffff:10.0.0.1"], nodes)
    assert not needs_resolving(["gpu-a9.cluster"], nodes)  # a host name is matched by name
    assert not needs_resolving([], nodes)


async def test_the_allocations_names_resolve_and_others_are_left_alone() -> None:
    nodes = [
        NodeInfo(name="localhost", state="idle"),
        NodeInfo(name="nowhere.invalid", state="idle", addresses=["nowhere.invalid"]),
        NodeInfo(name="elsewhere", state="idle"),
    ]
    out = await with_resolved(nodes, ["localhost", "nowhere.invalid"], timeout=5)
    assert "127.0.0.1" in out[0].addresses or "::1" in out[0].addresses, out[0]
    assert out[1].addresses == ["nowhere.invalid"]  # RFC 6761: never resolves; kept as it was
    assert out[2] is nodes[2]  # not in the allocation: not looked up
