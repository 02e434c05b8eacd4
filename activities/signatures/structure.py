"""Structure in a log beyond single lines: Python tracebacks and the exception each ends in.

A traceback's last line names the exception that ended the program (`KeyError: 'lr'`,
`torch.distributed.DistStoreError: ...`). When no signature recognises the failure, that class
still says what kind of failure it was (the `exceptions` table), and a log that ends in one is
never healthy. Chained tracebacks ("The above exception was the direct cause of the following
exception:") print the root cause first, so the earliest exception speaks for the chain.

Ranks print tracebacks at the same time, so their lines interleave. Each writer (the rank or host
its line prefix names, see `prefixes.py`) has its own open traceback; an exception line closes
the traceback its own writer opened.

The scanner finds the lines with `PATTERNS`; `Tracebacks.line` is told each of them in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from recovery.activities.signatures.prefixes import LineContext
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.signatures.tables import Fact, lookup

# The launcher and logger prefixes an exception line may carry before the class name: srun's
# `3: `, `[rank3]:`, torchrun's `[default0]:`, mpirun's `[1,0]<stderr>:`, Ray's
# `(RayTrainWorker pid=123, ip=10.0.0.1)`, pdsh's `node7: `.
_PREFIX = r"(?:\s*\d{1,6}: |\[[\w.,:<>= -]{1,60}\]:? ?|\([\w.,:=/ -]{1,100}\) |[\w.-]{1,63}: |\s*\"message\": \")*"
# A class: dotted module path, then a capitalised name of the kinds exceptions are named.
_CLASS = r"(?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Failed|Timeout)"
PATTERNS = [
    ("struct:traceback", r"Traceback \(most recent call last\):"),
    # Ray wraps the task's error: `ray.exceptions.RayTaskError(ActorDiedError): ...`.
    ("struct:exception", r"^" + _PREFIX + r"(?P<exc>" + _CLASS + r")(?:\((?P<inner>\w+)\))?(?::\s[^\n]*|:?\s*)$"),
]
TRACEBACK_SPAN = 400  # lines from `Traceback` to its exception line, with other ranks' lines between


@dataclass(frozen=True)
class Uncaught:
    """An exception line: the class, what the table knows of it, and whether a traceback led to it."""

    match: LineMatch
    name: str
    fact: Fact | None
    traceback: bool  # closes a traceback (else a bare `Name: message` line)


def exception_fact(name: str) -> Fact | None:
    """What the exceptions table says of a class, by its full dotted name or its own name."""
    table = lookup("exceptions")
    return table.get(name) or table.get(name.rsplit(".", 1)[-1])


class Tracebacks:
    """Tracks open tracebacks per writer; `line` returns an `Uncaught` for each exception line."""

    def __init__(self) -> None:
        self._open: dict[tuple[int | None, str | None], int] = {}

    def line(self, match: LineMatch, context: LineContext) -> Uncaught | None:
        writer = (context.rank, context.host)
        if match.pattern == "struct:traceback":
            self._open[writer] = match.line
            if len(self._open) > 4096:  # a writer per rank: bounded even on a huge job
                self._open.pop(next(iter(self._open)))
            return None
        name = match.groups.get("exc", "")
        fact = exception_fact(name)
        if (inner := match.groups.get("inner")) and (fact is None or fact.cascade):
            name, fact = inner, exception_fact(inner)  # a wrapper speaks for what it wraps
        opened = self._open.pop(writer, None)
        closes = opened is not None and match.line - opened <= TRACEBACK_SPAN
        return Uncaught(match, name, fact, traceback=closes)
