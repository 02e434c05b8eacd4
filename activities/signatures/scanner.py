"""Streaming log scanner: feed it bytes as a log grows, get back the lines that match.

    scanner = LogScanner()                  # the built-in catalog
    for chunk in follow("slurm-1234.out", stop=job_ended):
        if chunk.reset:                     # the file was truncated or replaced
            scanner = LogScanner()
        for match in scanner.feed(chunk.data):
            print(match.line, match.pattern, match.text)
    scanner.finish()                        # the last line, if it has no line break

How it works: incoming bytes are cut into blocks of whole lines (a trailing partial line waits
for its end, so no byte is scanned twice). An engine (`engines.py`) says which patterns occur in
a block; RE2 then finds the lines where each of those matches and what their groups captured.
`\\r` ends a line like `\\n` does (progress bars redraw with it; `\\r\\n` is one break). A line
longer than `max_line` bytes is cut there for matching, and the rest of it is skipped, but it
still counts as one line. Bytes are matched as Latin-1, so invalid UTF-8 and NUL bytes are fine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from activities.signatures import dialect, engines
from activities.signatures.catalog import Catalog, builtin_catalog

MAX_LINE = 1 << 20
TEXT_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class LineMatch:
    line: int  # 1-based
    pattern: str  # the signature id (or the name of an extra pattern)
    text: str  # the line, decoded, at most `text_limit` characters
    groups: Mapping[str, str] = field(default_factory=dict)


class PatternSet:
    """Named patterns compiled once for the engine and for RE2; share it between scanners."""

    def __init__(self, patterns: Sequence[tuple[str, str]], engine: str | None = None) -> None:
        for name, pattern in patterns:
            try:
                dialect.check_pattern(pattern, groups=None)  # callers decide what groups mean
            except ValueError as e:
                raise engines.EngineError(f"pattern {name!r}: {e}") from None
        self.names = [name for name, _ in patterns]
        self._regexes = [dialect.compile_line_pattern(p) for _, p in patterns]
        self.engine = engines.build(patterns, engine)

    @classmethod
    def from_catalog(
        cls, catalog: Catalog, extra: Sequence[tuple[str, str]] = (), engine: str | None = None
    ) -> PatternSet:
        return cls([(s.id, s.pattern) for s in catalog] + list(extra), engine)

    def scan_block(self, block: bytes, lines_before: int, text_limit: int = TEXT_LIMIT) -> list[LineMatch]:
        """Matches in a block of whole lines (each ending in `\\n`), in line order."""
        ids = self.engine.hits(block)
        if not ids:
            return []
        found: list[tuple[int, int, int, Any]] = []
        for pid in sorted(ids):
            line_end = -1
            for m in self._regexes[pid].finditer(block):
                start = m.start()
                if start < line_end:
                    continue  # one match per line and pattern is enough
                line_end = block.find(b"\n", start)
                found.append((block.rfind(b"\n", 0, start) + 1, pid, line_end, m))
        found.sort(key=lambda f: (f[0], f[1]))
        return list(self._located(block, found, lines_before, text_limit))

    def _located(
        self, block: bytes, found: list[tuple[int, int, int, Any]], lines_before: int, text_limit: int
    ) -> Iterator[LineMatch]:
        counted_to, line = 0, lines_before + 1
        for line_start, pid, line_end, m in found:
            line += block.count(b"\n", counted_to, line_start)
            counted_to = line_start
            text = block[line_start : min(line_end, line_start + text_limit)].decode("utf-8", "replace")
            groups = {
                k.decode("ascii"): v.decode("utf-8", "replace")
                for k, v in m.groupdict().items()
                if v is not None
            }
            yield LineMatch(line, self.names[pid], text, groups)


@cache
def builtin_patterns() -> PatternSet:
    return PatternSet.from_catalog(builtin_catalog())


class LogScanner:
    """Scans one log stream incrementally; `feed` returns the new matches, in line order."""

    def __init__(
        self, patterns: PatternSet | None = None, *, max_line: int = MAX_LINE, text_limit: int = TEXT_LIMIT
    ) -> None:
        if max_line < 1:
            raise ValueError("max_line must be positive")
        self.patterns = patterns or builtin_patterns()
        self.max_line = max_line
        self.text_limit = text_limit
        self.lines = 0  # complete lines seen
        self.bytes_fed = 0
        self._carry = b""  # the start of the current, unfinished line (at most max_line bytes)
        self._cr = False  # the last byte fed was \r: a \n right after it is the same line break

    def feed(self, data: bytes) -> list[LineMatch]:
        self.bytes_fed += len(data)
        found: list[LineMatch] = []
        # Pieces of at most max_line bytes keep every line inside a block at most max_line long,
        # except the carried first one, which is cut explicitly.
        for i in range(0, len(data), self.max_line):
            piece = data[i : i + self.max_line] if len(data) > self.max_line else data
            found.extend(self._feed_piece(self._normalize(piece)))
        return found

    def finish(self) -> list[LineMatch]:
        """Scan the last line if it has no line break; the stream is complete."""
        if not self._carry:
            return []
        block, self._carry = self._carry + b"\n", b""
        found = self.patterns.scan_block(block, self.lines, self.text_limit)
        self.lines += 1
        return found

    def _normalize(self, piece: bytes) -> bytes:
        if self._cr and piece.startswith(b"\n"):
            piece = piece[1:]  # the \n of a \r\n split between two feeds
        self._cr = piece.endswith(b"\r")
        if b"\r" in piece:
            piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return piece

    def _feed_piece(self, piece: bytes) -> list[LineMatch]:
        last = piece.rfind(b"\n")
        if last < 0:
            self._append_carry(piece)
            return []
        first = piece.find(b"\n")
        head = (self._carry + piece[:first])[: self.max_line]
        block = head + piece[first : last + 1]
        self._carry = b""
        self._append_carry(piece[last + 1 :])
        found = self.patterns.scan_block(block, self.lines, self.text_limit)
        self.lines += 1 + piece.count(b"\n", first + 1, last + 1)
        return found

    def _append_carry(self, tail: bytes) -> None:
        room = self.max_line - len(self._carry)
        if room > 0 and tail:
            self._carry += tail[:room]


@dataclass(frozen=True, slots=True)
class Chunk:
    data: bytes
    reset: bool = False  # the file was truncated or replaced: data starts at its byte 0 again


class FileFollower:
    """Reads what was appended to a file since the last poll, across creation and truncation."""

    def __init__(self, path: str | Path, *, read_size: int = 8 << 20) -> None:
        self.path = Path(path)
        self.read_size = read_size
        self.offset = 0
        self._identity: tuple[int, int] | None = None

    def poll(self) -> Chunk | None:
        """New bytes (at most read_size), or None when there are none or no file yet."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below; fstat needs the open file
        except FileNotFoundError:
            return None
        with f:
            st = os.fstat(f.fileno())
            identity = (st.st_dev, st.st_ino)
            reset = self._identity is not None and (identity != self._identity or st.st_size < self.offset)
            if reset:
                self.offset = 0
            self._identity = identity
            if st.st_size <= self.offset and not reset:
                return None
            f.seek(self.offset)
            data = f.read(self.read_size)
        self.offset += len(data)
        return Chunk(data, reset) if data or reset else None


def follow(
    path: str | Path,
    *,
    interval: float = 0.5,
    stop: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], None] = time.sleep,
    read_size: int = 8 << 20,
) -> Iterator[Chunk]:
    """Yield a file's new bytes as it grows, until `stop()` is true and nothing is left to read."""
    follower = FileFollower(path, read_size=read_size)
    while True:
        chunk = follower.poll()
        if chunk is not None:
            yield chunk
            continue
        if stop():
            return
        sleep(interval)
