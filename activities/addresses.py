"""Node addresses for attribution: logs name a failed peer by IP (`Got completion from peer
10.0.0.5`), schedulers name nodes by host name. Resolving the allocation's names bridges the two.

Resolution is best effort and bounded: a node whose name does not resolve in time keeps the
addresses the scheduler gave, and attribution simply cannot map an IP to it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Protocol

from recovery.activities.signatures.prefixes import is_ip
from recovery.workflows.models import NodeInfo

RESOLVE_TIMEOUT = 2.0


def canonical_address(text: str) -> str:
    """`10.0.0.5`, `[10.0.0.5]`, `::ffff:10.0.0.5` and `Node7.Cluster` compared alike."""
    text = text.strip().strip("[]").lower()
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return text
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


class Addressed(Protocol):
    """Nodes that can say whether one of them has an address (`node_index.NodeIndex`)."""

    def knows_address(self, address: str) -> bool: ...


def needs_resolving(peers: list[str], nodes: Addressed) -> bool:
    """Some peer is an IP that no node's known addresses already name."""
    return any(is_ip(p) and not nodes.knows_address(p) for p in map(canonical_address, peers))


async def resolved(nodes: list[NodeInfo], timeout: float = RESOLVE_TIMEOUT) -> list[NodeInfo]:
    """These nodes with the IPs their names (and non-IP addresses) resolve to."""
    found = await asyncio.gather(*(resolve(n, timeout) for n in nodes))
    return [_with(n, ips) for n, ips in zip(nodes, found, strict=True)]


async def resolve(node: NodeInfo, timeout: float) -> list[str]:
    names = dict.fromkeys([node.name, *(a for a in node.addresses if not is_ip(a))])
    found: list[str] = []
    for name in names:
        found += await lookup(name, timeout)
    return found


async def lookup(name: str, timeout: float) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(loop.getaddrinfo(name, None, type=socket.SOCK_STREAM), timeout)
    except (OSError, TimeoutError):  # socket.gaierror is an OSError
        return []
    return [str(info[4][0]) for info in infos]


def _with(node: NodeInfo, ips: list[str]) -> NodeInfo:
    merged = list(dict.fromkeys([*node.addresses, *ips]))
    return node if merged == node.addresses else node.model_copy(update={"addresses": merged})
