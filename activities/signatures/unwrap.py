"""Lines a console hard-wrapped, joined back before matching.

A log copied from a terminal (a console capture, `screen`, a web terminal) breaks every long line
at the terminal's width and often pads short rows to it with spaces, so `Watchdog caught
collective operation timeout` arrives as `Watchdog caught collective operation tim` + `eout`.
Such a log shows itself: many rows have exactly the same length, none is longer, and that length
stands out (a cut falls exactly there, so rows one or a few characters shorter are rare; a log of
records of nearly equal length has them in numbers, `step=9` beside `step=10`). Then each
row of that length that ends in a printed character is joined to the row after it; a row that
ends in a space is a short line the console padded (or a break at a space, which costs a match
across that one break). Line numbers stay those of the physical rows.
"""

from __future__ import annotations

SAMPLE = 64 << 10  # bytes of the log's start that decide whether it is wrapped
MIN_WIDTH = 80  # no console is narrower; shorter equal rows are records, not wraps
MIN_ROWS = 3


def wrap_width(block: bytes) -> int:
    """The width a console wrapped the block's lines at, or 0 when they were not wrapped."""
    rows = block[:SAMPLE].split(b"\n")[:-1]  # the last piece is a partial row or empty
    if len(rows) < 2 * MIN_ROWS:
        return 0
    lengths = [len(row.decode("utf-8", "replace")) for row in rows]
    width = max(lengths)
    full = lengths.count(width)
    if width < MIN_WIDTH or full < MIN_ROWS or full * 20 < len(rows):
        return 0
    padded = sum(1 for row, n in zip(rows, lengths, strict=True) if n == width and row.endswith(b" "))
    if padded * 4 >= full:  # a console that pads its rows to its width
        return width
    if full * 10 > len(rows) * 9:  # (nearly) every row that wide and none padded: records
        return 0
    near = sum(1 for n in lengths if width - 3 <= n < width)
    # A cut falls anywhere, mostly inside a word; a fixed-width record ends where its format
    # does (Megatron's iteration lines all end in ` |`).
    midword = sum(1 for row, n in zip(rows, lengths, strict=True) if n == width and row[-1:].isalnum())
    if full < 4 * near or midword * 2 < full:
        return 0
    return 0 if _records(rows, lengths, width) else width


def _records(rows: list[bytes], lengths: list[int], width: int) -> bool:
    """Whether the widest rows are whole records: the row after one starts as those rows do
    (`recovery-progress step=...` after `recovery-progress step=...`), where a wrapped row's
    continuation starts mid-text."""
    heads = {row[:8] for row, n in zip(rows, lengths, strict=True) if n == width}
    following = [rows[i + 1][:8] for i, n in enumerate(lengths[:-1]) if n == width]
    return bool(following) and sum(head in heads for head in following) * 2 > len(following)


def join(block: bytes, width: int) -> tuple[bytes, list[int]]:
    """The block with each `width`-long row joined to the next, and for each joined line the
    index of its first physical row in the block."""
    rows = block.split(b"\n")
    tail = rows.pop()  # after the last line break: empty for a block of whole lines
    joined: list[bytes] = []
    origin: list[int] = []
    pending: list[bytes] = []
    for index, row in enumerate(rows):
        if not pending:
            origin.append(index)
        pending.append(row)
        text = row.decode("utf-8", "replace")
        if len(text) != width or text[-1:].isspace() or index == len(rows) - 1:
            joined.append(b"".join(pending))
            pending = []
    return b"\n".join(joined) + b"\n" + tail, origin
