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
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from recovery.activities.signatures import dialect, engines, unwrap
from recovery.activities.signatures.catalog import Catalog, builtin_catalog

MAX_LINE = 1 << 20
TEXT_LIMIT = 4096
# Terminal escape sequences a log keeps when a program colours its output for a terminal and the
# output goes to a file or is copied from a web console: rich's, loguru's and IPython's coloured
# tracebacks (`\x1b[0;31mValueError\x1b[0m: ...`), Ray's coloured worker prefixes, progress bars'
# cursor moves. They sit inside the words the patterns look for, so they go before matching:
# ECMA-48 control sequences (ESC [ parameters, intermediates, final byte), operating-system
# commands (ESC ] ... BEL or ESC \, rich's hyperlinks) and the short ESC-intermediates-final ones
# (whose final byte is never `[` or `]`: those open the two longer kinds, perhaps cut by a read).
_ESCAPE = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-Z\\^-~])")
_ESCAPE_MAX = 64  # a longer unfinished sequence at a feed's end is not held back for the next
SAMPLED_PREFIX = "progress:"


@dataclass(frozen=True, slots=True)
class LineMatch:
    line: int  # 1-based
    pattern: str  # the signature id (or the name of an extra pattern)
    text: str  # the line, decoded, at most `text_limit` characters
    groups: Mapping[str, str] = field(default_factory=dict)


class PatternSet:
    """Named patterns compiled once for the engine and for RE2; share it between scanners."""

    def __init__(
        self,
        patterns: Sequence[tuple[str, str]],
        engine: str | None = None,
        *,
        followers: Iterable[str] = (),
        wakers: Iterable[str] = (),
    ) -> None:
        """`followers` and `wakers` name the patterns a closed `Gate` holds back, and those whose
        line opens it: the followers get an engine of their own, run only where they count."""
        for name, pattern in patterns:
            try:
                dialect.check_pattern(pattern, groups=None)  # callers decide what groups mean
            except ValueError as e:
                raise engines.EngineError(f"pattern {name!r}: {e}") from None
        self.names = [name for name, _ in patterns]
        self._regexes = [dialect.compile_line_pattern(p) for _, p in patterns]
        follow = set(followers)
        # Each engine numbers its own patterns; these map its numbers back to this set's.
        self._leading = [i for i, name in enumerate(self.names) if name not in follow]
        self._following = [i for i, name in enumerate(self.names) if name in follow]
        self.engine = engines.build([patterns[i] for i in self._leading], engine)
        self._followers = engines.build([patterns[i] for i in self._following], engine) if self._following else None
        self._follower_ids = frozenset(self._following)
        waking = set(wakers)
        self.wakers = frozenset(i for i, name in enumerate(self.names) if name in waking)
        # Patterns whose lines may be sampled (progress lines: a long run prints millions).
        self.sampled = frozenset(i for i, name in enumerate(self.names) if name.startswith(SAMPLED_PREFIX))

    @classmethod
    def from_catalog(
        cls,
        catalog: Catalog,
        extra: Sequence[tuple[str, str]] = (),
        engine: str | None = None,
        *,
        followers: Iterable[str] = (),
        wakers: Iterable[str] = (),
    ) -> PatternSet:
        return cls([(s.id, s.pattern) for s in catalog] + list(extra), engine, followers=followers, wakers=wakers)

    def scan_block(
        self,
        data: bytes,
        start: int,
        end: int,
        lines_before: int,
        text_limit: int = TEXT_LIMIT,
        sampler: Sampler | None = None,
        gate: Gate | None = None,
    ) -> tuple[list[LineMatch], int]:
        """Matches in `data[start:end]`, whole lines each ending in `\\n`, in line order; and the
        number of lines there (counted once, for both). Nothing is copied but matched lines.
        With a `sampler`, lines matched only by sampled patterns are thinned out (see Sampler);
        with a closed `gate`, its followers' lines before its first waker's are dropped (Gate)."""
        found: list[tuple[int, int, int, Any]] = []  # line start, pattern, line end, RE2 match
        candidates, woke = self._candidates(data, start, end, gate)
        if sampler is not None and self.sampled:
            candidates = sampler.thin(candidates, self.sampled)
        for pid, at in candidates:
            if at == engines.ANYWHERE:
                found.extend(self._search(data, start, end, pid))
            elif at < end - start:
                line_end = start + at
                line_start = max(start, data.rfind(b"\n", start, line_end) + 1)
                m = self._regexes[pid].search(data, line_start, line_end)
                if m is not None:
                    found.append((line_start, pid, line_end, m))
        if woke:
            # The engine may not say where its candidates are (RE2's set): the followers count
            # from the first waker's line on, exactly.
            first = min((f[0] for f in found if f[1] in self.wakers), default=end)
            found = [f for f in found if f[0] >= first or f[1] not in self._follower_ids]
        if not found:
            return [], data.count(b"\n", start, end)
        found.sort(key=lambda f: (f[0], f[1]))
        matches, counted_to, line = self._located(data, start, found, lines_before, text_limit)
        return matches, line - lines_before - 1 + data.count(b"\n", counted_to, end)

    def _candidates(self, data: bytes, start: int, end: int, gate: Gate | None) -> tuple[list[tuple[int, int]], bool]:
        """The engines' candidates in this set's numbering, the followers' only from the first
        waker's line on while the gate is closed; and whether a waker opened it here."""
        view = memoryview(data)[start:end]
        if self._followers is None:
            return self.engine.candidates(view), False  # one engine, numbered as this set
        leading = self._leading
        found = [(leading[pid], at) for pid, at in self.engine.candidates(view)]
        skip, woke = 0, False
        if gate is not None and not gate.open:
            wake = min((at for pid, at in found if pid in self.wakers), default=None)
            if wake is None:
                return found, False
            gate.open = woke = True
            if wake != engines.ANYWHERE:
                skip = max(start, data.rfind(b"\n", start, start + wake) + 1) - start
        following = self._following
        for pid, at in self._followers.candidates(view[skip:]):
            found.append((following[pid], at if at == engines.ANYWHERE else at + skip))
        return found, woke

    def _search(self, data: bytes, start: int, end: int, pid: int) -> Iterator[tuple[int, int, int, Any]]:
        """Every line in data[start:end] where pattern `pid` matches (RE2 keeps matches in lines)."""
        line_end = -1
        for m in self._regexes[pid].finditer(data, start, end):
            at = m.start()
            if at < line_end:
                continue  # one match per line and pattern is enough
            line_end = data.find(b"\n", at, end)
            yield max(start, data.rfind(b"\n", start, at) + 1), pid, line_end, m

    def _located(
        self,
        data: bytes,
        start: int,
        found: list[tuple[int, int, int, Any]],
        lines_before: int,
        text_limit: int,
    ) -> tuple[list[LineMatch], int, int]:
        """LineMatches for sorted candidates; also how far newlines were counted, and the line there."""
        matches, counted_to, line = [], start, lines_before + 1
        for line_start, pid, line_end, m in found:
            line += data.count(b"\n", counted_to, line_start)
            counted_to = line_start
            text = data[line_start : min(line_end, line_start + text_limit)].decode("utf-8", "replace")
            groups = {
                k.decode("ascii"): v.decode("utf-8", "replace") for k, v in m.groupdict().items() if v is not None
            }
            matches.append(LineMatch(line, self.names[pid], text, groups))
        return matches, counted_to, line


class Sampler:
    """Thins out lines that only sampled patterns (progress lines) match: every one of the first
    `warm` such lines is kept; after that every k-th, k growing with how many were seen (at most
    `max_stride`), and always the last of each block, so the newest progress is never lost.
    Statistics over progress (pace, stragglers) need a sample, not every line of a million-step
    log; `hold` keeps every line while someone needs each step (a failure awaiting survival)."""

    def __init__(self, warm: int = 1024, max_stride: int = 256) -> None:
        self.warm = warm
        self.max_stride = max_stride
        self.seen = 0
        self.hold = False

    def stride(self) -> int:
        return 1 if self.hold or self.seen < self.warm else min(self.max_stride, self.seen // self.warm)

    def thin(self, candidates: list[tuple[int, int]], sampled: frozenset[int]) -> list[tuple[int, int]]:
        stride = self.stride()
        if stride == 1:
            self.seen += len({at for pid, at in candidates if pid in sampled})  # lines, not matches
            return candidates
        other = {at for pid, at in candidates if pid not in sampled}  # lines a signature matched
        lines = sorted({at for pid, at in candidates if at not in other})
        kept = {at for i, at in enumerate(lines, self.seen) if i % stride == 0}
        if lines:
            kept.add(lines[-1])
        self.seen += len(lines)
        return [(pid, at) for pid, at in candidates if at in other or at in kept]


class Gate:
    """Whether a scanner reads its patterns' followers (`PatternSet`): lines that only matter
    once a waker's line came (a phase's closers and further output, after the line that opened
    it), and that a log may print on every other line (NCCL's INFO chatter). Matching each of
    them costs far more than scanning it. A waker's line opens the gate, for itself and every
    line after it; the consumer closes it when nothing it reads from the followers is awaited."""

    def __init__(self) -> None:
        self.open = False


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
        self._escape = b""  # an escape sequence the last feed ended inside, completed by the next
        self.sampler: Sampler | None = None
        self.gate: Gate | None = None
        self.wrap_width: int | None = None  # decided on the first block of enough lines (unwrap.py)

    def feed(self, data: bytes) -> list[LineMatch]:
        self.bytes_fed += len(data)
        data, pos = self._normalize(data)
        found: list[LineMatch] = []
        # Blocks end at the last line break within max_line bytes, so every line in a block is at
        # most max_line long, except a carried first line, which is cut explicitly.
        while pos < len(data):
            window = min(pos + self.max_line, len(data))
            last = data.rfind(b"\n", pos, window)
            if last < 0:
                self._append_carry(data, pos, window)
                pos = window
                continue
            found.extend(self._scan(data, pos, last + 1))
            pos = last + 1
        self._append_carry(data, pos, len(data))
        return found

    def finish(self) -> list[LineMatch]:
        """Scan the last line if it has no line break; the stream is complete."""
        if self._escape:  # an escape the stream ended inside: its bytes are the line's end
            self._append_carry(self._escape, 0, len(self._escape))
            self._escape = b""
        if not self._carry:
            return []
        block, self._carry = self._carry + b"\n", b""
        found, lines = self.patterns.scan_block(block, 0, len(block), self.lines, self.text_limit, gate=self.gate)
        self.lines += lines
        return found

    def _normalize(self, data: bytes) -> tuple[bytes, int]:
        """The data with `\\r` and `\\r\\n` as `\\n`, and where to start in it."""
        start = 1 if self._cr and data.startswith(b"\n") else 0  # a \r\n split between two feeds
        self._cr = data.endswith(b"\r")
        if b"\r" in data:  # rare (progress bars): only then is the data copied
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if self._escape or b"\x1b" in data:  # rare (coloured output): only then is it copied
            data = _ESCAPE.sub(b"", self._escape + data[start:])
            start, self._escape = 0, b""
            tail = data.rfind(b"\x1b", max(0, len(data) - _ESCAPE_MAX))
            if tail >= 0 and b"\n" not in data[tail:]:
                data, self._escape = data[:tail], data[tail:]
        return data, start

    def _scan(self, data: bytes, start: int, end: int) -> list[LineMatch]:
        """Scan whole lines data[start:end], after the carried start of the first one."""
        if self._carry:
            first = data.find(b"\n", start, end)
            head = b"".join((self._carry, memoryview(data)[start:first]))[: self.max_line]
            data, start, end = b"".join((head, memoryview(data)[first:end])), 0, len(head) + end - first
            self._carry = b""
        if self.wrap_width is None and data.count(b"\n", start, min(end, start + unwrap.SAMPLE)) >= 2 * unwrap.MIN_ROWS:
            self.wrap_width = unwrap.wrap_width(data[start : start + unwrap.SAMPLE])
        if self.wrap_width:
            return self._scan_unwrapped(data[start:end], self.wrap_width)
        found, lines = self.patterns.scan_block(data, start, end, self.lines, self.text_limit, self.sampler, self.gate)
        self.lines += lines
        return found

    def _scan_unwrapped(self, block: bytes, width: int) -> list[LineMatch]:
        """A console-wrapped block: matched with its rows joined, reported at its physical rows."""
        joined, origin = unwrap.join(block, width)
        found, _ = self.patterns.scan_block(joined, 0, len(joined), 0, self.text_limit, self.sampler, self.gate)
        found = [replace(m, line=self.lines + origin[m.line - 1] + 1) for m in found]
        self.lines += block.count(b"\n")
        return found

    def _append_carry(self, data: bytes, start: int, end: int) -> None:
        room = self.max_line - len(self._carry)
        if room > 0 and end > start:
            self._carry += data[start : min(end, start + room)]


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
        # A stat says "nothing new" without opening the file, and the read goes through a raw
        # descriptor: a worker watching 10,000 logs polls 2,000 a second, and Python's buffered
        # open() was most of what a poll cost (py-spy, cProfile of benchmarks/observer_look.py).
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        if (st.st_dev, st.st_ino) == self._identity and st.st_size == self.offset:
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            st = os.fstat(fd)  # the file opened, which may be newer than the one stat'ed
            identity = (st.st_dev, st.st_ino)
            reset = self._identity is not None and (identity != self._identity or st.st_size < self.offset)
            if reset:
                self.offset = 0
            self._identity = identity
            if st.st_size <= self.offset and not reset:
                return None
            data = os.pread(fd, self.read_size, self.offset)
        finally:
            os.close(fd)
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
