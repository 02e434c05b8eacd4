"""The streaming scanner: line numbers, line breaks, long lines, junk, no rescans, engines, follow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recovery.activities.signatures import engines
from recovery.activities.signatures.catalog import builtin_catalog
from recovery.activities.signatures.scanner import Chunk, FileFollower, LineMatch, LogScanner, PatternSet, follow
from tests.unit import scanner_scenarios

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def re2_results() -> dict[str, list[list[object]]]:
    return scanner_scenarios.run_all("re2")


@pytest.fixture(scope="module")
def patterns() -> PatternSet:
    # In this process only RE2: Hyperscan runs in a child (test_hyperscan_gives_identical_results).
    return PatternSet([("oops", r"OOPS (?P<rank>\d+)"), ("tail", r"tail$")], engine="re2")


def lines_of(found: list[LineMatch]) -> list[tuple[int, str]]:
    return [(m.line, m.pattern) for m in found]


def test_reports_one_based_line_numbers_and_groups(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns)
    found = scanner.feed(b"hello\nOOPS 3 here\nnothing\nOOPS 4\n")
    assert lines_of(found) == [(2, "oops"), (4, "oops")]
    assert found[0].groups == {"rank": "3"} and found[0].text == "OOPS 3 here"
    assert scanner.lines == 4


def test_lines_split_across_feeds_match_once(patterns: PatternSet) -> None:
    data = b"a\nOOPS 1 x\nb\nc OOPS 2\n"
    whole = LogScanner(patterns).feed(data)
    scanner = LogScanner(patterns)
    pieces = [m for i in range(len(data)) for m in scanner.feed(data[i : i + 1])]
    assert pieces == whole


def test_carriage_returns_break_lines_and_crlf_is_one_break(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns)
    found = scanner.feed(b"10%\r50%\rOOPS 1\r\nx\r")
    found += scanner.feed(b"\nOOPS 2 tail\r\n")
    assert lines_of(found) == [(3, "oops"), (5, "oops"), (5, "tail")]
    assert scanner.lines == 5


def test_the_last_line_without_a_break_waits_for_finish(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns)
    assert scanner.feed(b"one\nOOPS 9") == []
    assert lines_of(scanner.finish()) == [(2, "oops")]
    assert scanner.lines == 2


def test_long_lines_are_cut_but_still_counted(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns, max_line=1000)
    early = b"OOPS 1 " + b"x" * 5000 + b"\n"
    late = b"y" * 5000 + b" OOPS 2\n"
    found = scanner.feed(early + late + b"OOPS 3\n")
    assert lines_of(found) == [(1, "oops"), (3, "oops")]
    assert len(found[0].text) <= scanner.text_limit
    assert scanner.lines == 3


def test_a_line_longer_than_a_mebibyte_fed_in_small_pieces(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns)
    for _ in range(40):
        scanner.feed(b"z" * 100_000)  # 4 MB without a line break: memory must not follow it
        assert len(scanner._carry) <= scanner.max_line
    found = scanner.feed(b" OOPS 1\nOOPS 2\n")
    assert lines_of(found) == [(2, "oops")]


def test_invalid_utf8_nul_bytes_and_junk_are_fine(patterns: PatternSet) -> None:
    scanner = LogScanner(patterns)
    found = scanner.feed(b"\x00\xff\xfe\nOOPS 5 \x00\xc3(\xff end\n\x80\x81\x82")
    assert lines_of(found) == [(2, "oops")]
    assert "\ufffd" in found[0].text
    assert scanner.finish() == [] and scanner.lines == 3


def test_no_byte_is_scanned_twice(patterns: PatternSet, monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[int] = []
    real = patterns.engine.candidates

    def counting(block: bytes) -> list[tuple[int, int]]:
        scanned.append(len(block))
        return real(block)

    monkeypatch.setattr(patterns.engine, "candidates", counting)
    scanner = LogScanner(patterns)
    data = b"".join(b"line %d OOPS %d\n" % (i, i) for i in range(5000))
    for i in range(0, len(data), 777):
        scanner.feed(data[i : i + 777])
    assert sum(scanned) == len(data)


def test_the_builtin_catalog_finds_real_lines() -> None:
    scanner = LogScanner(PatternSet.from_catalog(builtin_catalog(), engine="re2"))
    found = scanner.feed(
        b"ok\nMar  3 12:34:56 node7 kernel: NVRM: Xid (PCI:0000:3B:00): 79, pid=1, GPU has fallen off the bus.\n"
    )
    by_id = {m.pattern: m for m in found}
    assert {"xid-79", "xid", "gpu-fallen-off-bus"} <= set(by_id)
    assert by_id["xid-79"].groups == {"pci": "0000:3B:00"}


def test_engines_reject_bad_patterns_with_the_name() -> None:
    with pytest.raises(engines.EngineError, match="'bad'"):
        PatternSet([("bad", "a(?=b)")], engine="re2")
    with pytest.raises(engines.EngineError, match="unknown scanner engine"):
        PatternSet([("ok", "x")], engine="grep")


def test_hyperscan_gives_identical_results_and_does_not_crash(re2_results: dict[str, object], tmp_path: Path) -> None:
    """Run in a child: a freed match callback would segfault the interpreter, not fail a test.

    Three children share a cache directory: the first compiles the databases and stores them,
    the second loads them, the third finds them damaged and compiles again. All agree with RE2."""
    if "hyperscan" not in engines.available():
        pytest.skip("no hyperscan wheel on this platform")
    expected = json.loads(json.dumps(re2_results))
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "RECOVERY_CACHE_DIR": str(tmp_path)}
    for run in range(3):
        if run == 2:
            for cached in tmp_path.glob("hyperscan-*.db"):
                cached.write_bytes(cached.read_bytes()[:-100] + b"\0" * 100)
        child = subprocess.run(
            [sys.executable, "-m", "tests.unit.scanner_scenarios", "hyperscan"],
            cwd=ROOT,
            capture_output=True,
            timeout=300,
            env=env,
        )
        assert child.returncode == 0, child.stderr.decode()[-2000:]
        assert json.loads(child.stdout) == expected
        assert len(list(tmp_path.glob("hyperscan-*.db"))) == 4  # the catalog's, TRICKY's, GATED's two


def test_a_closed_gate_holds_its_followers_back_until_a_wakers_line(re2_results: dict[str, list[list[object]]]) -> None:
    for piece in (1 << 20, 3):
        found = [tuple(row[:2]) for row in re2_results[f"gated-{piece}"]]
        assert found == [
            (2, "other"),
            (4, "waker"),
            (4, "follower"),
            (5, "follower"),
            (6, "other"),
            (8, "waker"),
            (9, "follower"),
        ]


def test_matches_never_span_lines(re2_results: dict[str, list[list[object]]]) -> None:
    found = [tuple(row[:2]) for row in re2_results["tricky"] if len(row) > 1]
    assert found == [
        (3, "spaces"),
        (6, "negated"),
        (7, "anchored"),
        (9, "empty-tail"),
        (10, "empty-tail"),
        (11, "empty-tail"),
    ]


def test_scenarios_are_not_trivial(re2_results: dict[str, list[list[object]]]) -> None:
    results = re2_results
    found = results["1-4093"]
    assert len(found) > 300
    assert found == results["1-1048576"]
    texts = [str(row[2]) for row in found if len(row) > 1]
    assert any("before_the_cut" in t for t in texts)
    assert not any("beyond_the_cut" in t for t in texts)


def test_follower_waits_for_the_file_then_reads_appends(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    follower = FileFollower(path)
    assert follower.poll() is None
    path.write_bytes(b"one\n")
    assert follower.poll() == Chunk(b"one\n")
    assert follower.poll() is None
    with path.open("ab") as f:
        f.write(b"two\n")
    assert follower.poll() == Chunk(b"two\n")


def test_follower_restarts_after_truncation_and_replacement(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    path.write_bytes(b"first attempt, long line\n")
    follower = FileFollower(path)
    assert follower.poll() is not None
    path.write_bytes(b"new\n")  # truncated and rewritten shorter
    assert follower.poll() == Chunk(b"new\n", reset=True)
    replacement = tmp_path / "other"
    replacement.write_bytes(b"rotated file with more bytes than before\n")
    os.replace(replacement, path)
    assert follower.poll() == Chunk(b"rotated file with more bytes than before\n", reset=True)


def test_follow_yields_until_stopped(tmp_path: Path) -> None:
    path = tmp_path / "job.out"
    writes = [b"a\n", b"b\n", b""]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        with path.open("ab") as f:
            f.write(writes.pop(0))

    chunks = list(follow(path, interval=0.1, stop=lambda: not writes, sleep=sleep, read_size=1))
    assert b"".join(c.data for c in chunks) == b"a\nb\n"
    assert sleeps and all(s == 0.1 for s in sleeps)
