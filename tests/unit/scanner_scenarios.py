"""Scanner scenarios run once per engine: in this process for RE2, in a child for Hyperscan.

A crash inside a C extension kills the process that hosts it, so Hyperscan is exercised in a
subprocess (`python -m tests.unit.scanner_scenarios hyperscan`), whose results, printed as JSON,
must equal the RE2 engine's.
"""

from __future__ import annotations

import gc
import json
import random
import sys

from recovery.activities.signatures.catalog import builtin_catalog
from recovery.activities.signatures.scanner import Gate, LogScanner, PatternSet

NOISE = [
    b"node3:1234:1290 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC/read",
    b" iteration      120/  500000 | consumed samples: 3840 | elapsed time per iteration (ms): 812.5 |",
    b"[rank1]:[W socket.cpp:663] [c10d] The client socket has failed to connect to [node0]:29500",
    b"Epoch 1:  45%|#### | 450/1000 [02:15<02:45,  3.33it/s, loss=0.123]\r",
    b"\x00\x01\xfe\xff binary \x80\x81 junk",
    b"",
    b"A" * 9000 + b" ModuleNotFoundError: No module named 'beyond_the_cut'",
    b"ModuleNotFoundError: No module named 'before_the_cut' " + b"B" * 9000,
]


def corpus(seed: int, lines: int = 3000) -> bytes:
    """A log mixing noise, every catalog example, CR/CRLF endings and junk."""
    rnd = random.Random(seed)
    examples = [line.encode() for sig in builtin_catalog() for line in sig.examples]
    out = []
    for _ in range(lines):
        line = rnd.choice(examples) if rnd.random() < 0.2 else rnd.choice(NOISE)
        out.append(line + rnd.choice([b"\n", b"\n", b"\r\n", b"\r"]))
    return b"".join(out)


def scan(patterns: PatternSet, data: bytes, piece: int) -> list[list[object]]:
    scanner = LogScanner(patterns, max_line=4096)
    found = []
    for n, i in enumerate(range(0, len(data), piece)):
        found.extend(scanner.feed(data[i : i + piece]))
        if n % 2000 == 0:
            gc.collect()  # a freed callback would crash the next scan
    found.extend(scanner.finish())
    return [[m.line, m.pattern, m.text, dict(m.groups)] for m in found] + [[scanner.lines]]


# Patterns that Hyperscan could match across a line break (\s and negated classes match \n
# there): the scanner must still report only matches within one line, like RE2.
TRICKY = [
    ("spaces", r"foo\s+bar"),
    ("negated", r"x[^y]*z"),
    ("anchored", r"^start (?P<host>\w+)$"),
    ("empty-tail", r"end\s*$"),
]
TRICKY_LOG = b"foo\nbar\nfoo  bar\nx\nz\nxaaz\nstart node1\nstart node2 extra\nend\nend  \r\nthe end\n"


# A gate's followers count only from a waker's line on (its own line included), until the
# consumer closes the gate again: NOTE 1, 2 and 5 are held back.
GATED = [("waker", r"BEGIN (?P<name>\w+)"), ("follower", r"NOTE \d+"), ("other", r"OOPS")]
GATED_LOG = (b"NOTE 1\nOOPS\nNOTE 2\nBEGIN x NOTE 3\nNOTE 4\nOOPS\n", b"NOTE 5\nBEGIN y\nNOTE 6\n")


def scan_gated(engine: str, piece: int) -> list[list[object]]:
    patterns = PatternSet(GATED, engine=engine, followers=["follower"], wakers=["waker"])
    scanner = LogScanner(patterns)
    scanner.gate = Gate()
    found = []
    for part in GATED_LOG:
        scanner.gate.open = False  # the consumer awaits nothing of the followers
        found.extend(m for i in range(0, len(part), piece) for m in scanner.feed(part[i : i + piece]))
    return [[m.line, m.pattern, m.text, dict(m.groups)] for m in found]


def run_all(engine: str) -> dict[str, list[list[object]]]:
    patterns = PatternSet.from_catalog(builtin_catalog(), engine=engine)
    results = {"tricky": scan(PatternSet(TRICKY, engine=engine), TRICKY_LOG, 5)}
    results |= {f"gated-{piece}": scan_gated(engine, piece) for piece in (1 << 20, 3)}
    for seed in (1, 2):
        data = corpus(seed)
        for piece in (1 << 20, 4093, 7):
            if piece == 7 and seed == 2:
                continue  # tiny pieces are slow; one corpus is enough
            results[f"{seed}-{piece}"] = scan(patterns, data[: 60000 if piece == 7 else None], piece)
    return results


if __name__ == "__main__":
    json.dump(run_all(sys.argv[1]), sys.stdout)
