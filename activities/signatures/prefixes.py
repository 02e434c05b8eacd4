"""Who wrote a log line: rank and host from the prefixes launchers and loggers put on lines.

    3: ...                               srun --label (the task, i.e. global rank, 3)
    [rank3]: ...                         PyTorch's per-rank log prefix
    [default3]: ...                      torchrun's local-rank prefix (local rank 3)
    node7:12345:12399 [0] NCCL WARN ...  NCCL's host:pid:tid prefix
    Mar  3 12:34:56 node7 kernel: ...    syslog (also ISO timestamps)
    [node7] ...                          a bracketed host name (with a digit in it)
    node7: ...                           pdsh/clush host prefix (with a digit in it)

Only the first few hundred characters are looked at, with anchored patterns, so this is cheap
and cannot be slowed down by long lines.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_HEAD = 300
_SRUN = re.compile(r"\s*(\d{1,6}): ")
_PDSH = re.compile(r"([A-Za-z][\w.-]{0,62}): ")
_RANK = re.compile(r"\[rank(\d{1,6})\]:")
_LOCAL = re.compile(r"\[default(\d{1,4})\]:")
_NCCL = re.compile(r"(?:^|[\s\]:])([A-Za-z][\w.-]{0,62}):\d{1,9}:\d{1,9} \[\d{1,3}\]")
_SYSLOG = re.compile(
    r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S{0,20})"  # the time
    r" ([\w.-]{1,63}) [\w./-]{1,40}(?:\[\d+\])?: "  # host, then program[pid]:
)
_BRACKET = re.compile(r"\[([A-Za-z][\w.-]{0,62})\] ")


@dataclass(frozen=True, slots=True)
class LineContext:
    rank: int | None = None
    host: str | None = None
    local_rank: int | None = None


def _named(host: str) -> bool:
    """Node names carry a digit (node7, gpu-a12); words like `RuntimeError` do not."""
    return any(c.isdigit() for c in host)


def line_context(text: str) -> LineContext:
    head = text[:_HEAD]
    rank: int | None = None
    host: str | None = None
    if m := _SRUN.match(head):
        rank, head = int(m.group(1)), head[m.end() :]
    elif (m := _PDSH.match(head)) and _named(m.group(1)):
        host, head = m.group(1), head[m.end() :]
    if rank is None and (m := _RANK.search(head)):
        rank = int(m.group(1))
    local = _LOCAL.search(head)
    if host is None:
        host = _host(head)
    return LineContext(
        rank=rank,
        host=node_name(host) if host else None,
        local_rank=int(local.group(1)) if local else None,
    )


def line_rank(text: str) -> int | None:
    """Just the rank, as `line_context` would find it (cheaper, for every progress line)."""
    head = text[:_HEAD]
    if m := _SRUN.match(head):
        return int(m.group(1))
    m = _RANK.search(head)
    return int(m.group(1)) if m else None


def _host(head: str) -> str | None:
    if m := _NCCL.search(head):
        return m.group(1)
    if m := _SYSLOG.match(head):
        return m.group(1)
    if (m := _BRACKET.match(head)) and _named(m.group(1)) and not m.group(1).startswith(("rank", "default")):
        return m.group(1)
    return None


def node_name(host: str) -> str:
    """The short name schedulers use for a node (`node7` for `node7.cluster.local`); IPs stay."""
    return host if is_ip(host) else host.split(".", 1)[0]


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
