"""The pattern dialect every signature is written in, and its one reference matcher (RE2).

A pattern is matched against one log line at a time, as bytes. The dialect is what RE2 and
Hyperscan both accept: ASCII text, no backreferences or lookaround (neither engine has them, so
no pattern can backtrack catastrophically), named groups `(?P<name>...)`. RE2 is the reference:
whatever engine finds candidate lines, RE2 decides whether a line matches and what its groups
captured, so every engine gives the same answer.

Lines are bytes decoded as Latin-1 (every byte is one character), so invalid UTF-8 and NUL bytes
never stop a match. `never_nl` keeps a match inside one line even when RE2 searches a whole block
of lines; `(?m)` makes `^` and `$` mean the start and end of a line.
"""

from __future__ import annotations

import gc
import re
from functools import lru_cache
from typing import Any, cast

import re2

from recovery.activities import heap

# The groups a pattern may capture. host, rank, ranks (a list: `8-15`, `1,3,5-7`), gpu, pci and
# peer say what a failure implicates; local_rank is a rank within its node (torchelastic's
# `local_rank: 5`), a global rank only where the log says how they map; exit_code and signal
# describe how a process ended.
GROUPS = frozenset({"host", "rank", "ranks", "local_rank", "gpu", "pci", "peer", "exit_code", "signal"})

# Anchors that mean "start/end of the whole text" differ between block and line matching.
_TEXT_ANCHOR = re.compile(r"(?<!\\)(?:\\\\)*\\[AzZC]")


def _options(max_mem: int) -> re2.Options:
    opts = re2.Options()
    opts.never_nl = True
    opts.encoding = cast(Any, re2.Options).Encoding.LATIN1
    opts.max_mem = max_mem
    return opts


# Large catalogs need more than RE2's default 8 MiB for the multi-pattern set's DFA.
OPTIONS = _options(256 << 20)
# One pattern alone keeps RE2's default budget: a catalog holds a thousand of them.
_LINE_OPTIONS = _options(8 << 20)

Compiled = Any  # re2's compiled pattern over bytes; google-re2's stubs do not model it well


@lru_cache(maxsize=4096)
def compile_line_pattern(pattern: str) -> Compiled:
    """Compile a validated pattern for matching inside lines (of one line or a block of lines).

    Cached: a catalog's signature and every scanner built from it share one compiled pattern."""
    return checking_pattern(pattern)


def checking_pattern(pattern: str) -> Compiled:
    """The pattern compiled afresh, to check it and its test lines and then let go. RE2 grows a
    pattern's DFA with every text it searches, and never shrinks it: a table's long alternation
    grows about 1 MB on its few example lines, about 200 MB for the whole catalog, which a
    worker would otherwise keep for its life (the scanner needs only what real lines grow)."""
    return re2.compile(b"(?m)" + pattern.encode("ascii"), _LINE_OPTIONS)


def release_checked() -> None:
    """Hand the memory of patterns compiled only to be checked back to the system. glibc keeps
    freed memory inside its heap when live allocations sit between the freed blocks, so a
    worker's resident size would keep the checks' ~180 MB; `heap.trim` returns those pages."""
    gc.collect()  # checked patterns caught in a reference cycle (a raised error) go now
    heap.trim()


def check_pattern(pattern: str, groups: frozenset[str] | None = GROUPS) -> None:
    """Raise ValueError saying what is wrong with a pattern, in one line.

    `groups` are the group names it may capture (None: any).
    """
    if not pattern:
        raise ValueError("the pattern is empty")
    if not pattern.isascii():
        raise ValueError("patterns must be ASCII (escape other bytes as \\xNN)")
    if "\n" in pattern or "\r" in pattern:
        raise ValueError("a pattern matches within one line: it cannot contain a line break")
    if _TEXT_ANCHOR.search(pattern):
        raise ValueError("use ^ and $ (line anchors), not \\A, \\z, \\Z or \\C")
    if any(i != len(pattern) - 1 for i in _line_ends(pattern)):
        raise ValueError("$ may only end a pattern (write a line end inside one as (?:x|y)$)")
    try:
        compiled = checking_pattern(pattern)
    except re2.error as e:
        raise ValueError(f"not a valid pattern: {e}") from None
    unknown = sorted(set(group_names(compiled)) - groups) if groups is not None else []
    if unknown:
        raise ValueError(f"unknown group {unknown[0]!r}; groups may be {', '.join(sorted(groups or ()))}")
    if compiled.search(b"") is not None:
        raise ValueError("the pattern matches an empty line, so it would match every line")


def _line_ends(pattern: str) -> list[int]:
    """Positions of `$` anchors: not escaped, not inside a bracket expression."""
    found, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "[":
            i = _class_end(pattern, i)
        else:
            if pattern[i] == "$":
                found.append(i)
            i += 1
    return found


def _class_end(pattern: str, i: int) -> int:
    """The index just past the bracket expression that starts at i."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1  # a ] first in the brackets is literal
    while i < len(pattern) and pattern[i] != "]":
        if pattern[i] == "\\":
            i += 2
        elif pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) >= 0:
            i = end + 2  # a class name such as [:alpha:]
        else:
            i += 1
    return i + 1


def ends_with_line_end(pattern: str) -> bool:
    """Whether the pattern already ends with `$` (an engine then need not extend it)."""
    return bool(pattern) and _line_ends(pattern)[-1:] == [len(pattern) - 1]


def alternatives(pattern: str) -> list[str]:
    """The pattern's top-level alternatives (`a|(b|c)|d` gives `a`, `(b|c)`, `d`)."""
    found, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            found.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*found, pattern[start:]]


def group_names(compiled: Compiled) -> list[str]:
    return [bytes(name).decode("ascii") for name in compiled.groupindex]


def matches(compiled: Compiled, line: str) -> bool:
    """Whether a pattern matches one line of text (as the scanner would see its bytes)."""
    return compiled.search(line.encode("utf-8", "surrogateescape")) is not None
