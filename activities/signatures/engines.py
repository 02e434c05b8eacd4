"""Multi-pattern engines: which of many patterns may match in a block of whole lines, and where.

An engine only narrows the search: it may report a candidate that RE2 then rejects, never miss
a line that matches. The scanner confirms every candidate with RE2 (`dialect.py`), so both
engines give identical results.

- `hyperscan`: Intel's Hyperscan in block mode. Each pattern is compiled as `(?:P)[^\\n]*$`, so a
  match always ends at the end of its line, and Hyperscan (which reports each end offset once)
  calls back exactly once per matching line and pattern however often P occurs in it. Candidates
  are therefore exact lines, and confirming one costs RE2 a search of that line only. Well over
  1 GiB/s on one core for the whole catalog.
- `re2`: RE2's own multi-pattern set, for machines without a Hyperscan wheel (it ships for
  x86_64 only). It says which patterns occur in a block, not where, so RE2 then searches the
  block for each of them. Also linear time, a few times slower.

Both run in time linear in the input whatever the patterns: no backtracking engine is used.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import re2

from recovery.activities.signatures import dialect

try:
    import hyperscan
except ImportError:  # no wheel for this platform: the RE2 set does the same job, slower
    hyperscan = None  # type: ignore[assignment]

ANYWHERE = -1  # a candidate somewhere in the block, rather than at a known line


class EngineError(ValueError):
    """A pattern one engine cannot compile; the message names it."""


class Engine(Protocol):
    name: str

    def candidates(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        """(pattern index, offset of the end of a line that may match, or ANYWHERE) pairs, for a
        block of whole lines each ending in `\\n`."""
        ...


def available() -> list[str]:
    return (["hyperscan"] if hyperscan is not None else []) + ["re2"]


def build(patterns: Sequence[tuple[str, str]], prefer: str | None = None) -> Engine:
    """An engine over (name, pattern) pairs. `prefer` (or $RECOVERY_SCANNER_ENGINE) picks one."""
    choice = prefer or os.environ.get("RECOVERY_SCANNER_ENGINE") or available()[0]
    if choice == "hyperscan":
        if hyperscan is None:
            raise EngineError("the hyperscan package is not installed on this machine")
        return HyperscanEngine(patterns)
    if choice == "re2":
        return Re2SetEngine(patterns)
    raise EngineError(f"unknown scanner engine {choice!r}; use one of {', '.join(available())}")


def to_line_end(pattern: str) -> str:
    """The pattern extended to the end of its line (`$` may only end a pattern, see dialect). In
    `a|b$` the `$` ends only the second alternative, so each top-level alternative is extended on
    its own (Hyperscan refuses a `$` followed by more)."""
    if not dialect.ends_with_line_end(pattern):
        return f"(?:{pattern})[^\\n]*$"
    return "|".join(
        alt if dialect.ends_with_line_end(alt) else f"(?:{alt})[^\\n]*$" for alt in dialect.alternatives(pattern)
    )


class HyperscanEngine:
    name = "hyperscan"

    def __init__(self, patterns: Sequence[tuple[str, str]]) -> None:
        assert hyperscan is not None
        self._db = _compile_hyperscan([(name, to_line_end(p)) for name, p in patterns])
        self._found: list[tuple[int, int]] = []
        # The binding does not keep the match callback alive while C code holds it: an
        # unreferenced callable can be freed mid-scan and crash the process. Keep it on self.
        self._on_match = self._collect
        # One database has one scratch space: scans on it must not overlap.
        self._lock = threading.Lock()

    def _collect(self, pattern_id: int, start: int, end: int, flags: int, context: Any) -> None:
        self._found.append((pattern_id, end))

    def candidates(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        with self._lock:
            self._found = []
            self._db.scan(block, match_event_handler=self._on_match)
            found, self._found = self._found, []
        return found


def _compile_hyperscan(patterns: Sequence[tuple[str, str]]) -> Any:
    assert hyperscan is not None
    flags = hyperscan.HS_FLAG_MULTILINE
    expressions = [p.encode("ascii") for _, p in patterns]
    cache = _cache_path(expressions, flags)
    db = _load_cached(cache)
    if db is not None:
        return db
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=expressions, ids=list(range(len(patterns))), flags=[flags] * len(patterns))
    except hyperscan.error as e:
        culprit = _culprit(patterns, flags)
        raise EngineError(culprit or f"hyperscan cannot compile the patterns: {e}") from None
    _store_cached(cache, hyperscan.dumpb(db))
    return db


# Compiling the catalog takes a few tenths of a second; a process that scans one file (the CLI)
# loads the compiled database from a cache instead. The file holds a SHA-256 of the database
# before it, so a damaged file is recompiled rather than handed to C code.


def _cache_path(expressions: list[bytes], flags: int) -> Path | None:
    assert hyperscan is not None
    root = os.environ.get("RECOVERY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "recovery"
    )
    version = getattr(hyperscan, "__version__", "")
    key = hashlib.sha256(repr((version, flags, expressions)).encode()).hexdigest()[:32]
    return Path(root) / f"hyperscan-{key}.db"


def _load_cached(path: Path | None) -> Any:
    assert hyperscan is not None
    try:
        raw = path.read_bytes() if path is not None else b""
    except OSError:
        return None
    digest, blob = raw[:32], raw[32:]
    if not blob or hashlib.sha256(blob).digest() != digest:
        return None
    try:
        db = hyperscan.loadb(blob, mode=hyperscan.HS_MODE_BLOCK)
        db.scratch = hyperscan.Scratch(db)
    except hyperscan.error:
        return None  # another Hyperscan build or CPU: compile afresh
    return db


def _store_cached(path: Path | None, blob: bytes) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(hashlib.sha256(blob).digest() + blob)
        os.replace(tmp, path)  # readers see the old file or the whole new one
    except OSError:
        pass  # no writable cache: compile every time, which is only slower


def _culprit(patterns: Sequence[tuple[str, str]], flags: int) -> str | None:
    """Hyperscan's error does not say which pattern failed: find it (only on this error path)."""
    assert hyperscan is not None
    for name, pattern in patterns:
        try:
            hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
                expressions=[pattern.encode("ascii")], ids=[0], flags=[flags]
            )
        except hyperscan.error as e:
            return f"signature {name!r}: hyperscan cannot compile the pattern: {e}"
    return None


class Re2SetEngine:
    name = "re2"

    def __init__(self, patterns: Sequence[tuple[str, str]]) -> None:
        self._set = re2.Set.SearchSet(dialect.OPTIONS)
        for name, pattern in patterns:
            try:
                self._set.Add(b"(?m)" + pattern.encode("ascii"))
            except re2.error as e:
                raise EngineError(f"signature {name!r}: RE2 cannot compile the pattern: {e}") from None
        try:
            self._set.Compile()
        except re2.error as e:
            raise EngineError(f"RE2 could not build its pattern set: {e}") from None

    def candidates(self, block: bytes | memoryview) -> list[tuple[int, int]]:
        found: Any = self._set.Match(bytes(block))
        return [(pid, ANYWHERE) for pid in found] if found else []
