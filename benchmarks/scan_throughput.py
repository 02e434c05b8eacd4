"""Scan throughput of the whole signature catalog, against GNU grep and Python's `re`.

    .venv/bin/python benchmarks/scan_throughput.py              # 1 GiB log in /tmp, all scanners
    .venv/bin/python benchmarks/scan_throughput.py --size-mib 256 --flat-gib 2

Writes a realistic training log (NCCL chatter, Megatron iteration lines, per-rank warnings, srun
and rank prefixes, a few real failures) to /tmp, then scans it with each contender in its own
process, pinned to one CPU, and prints MiB/s (wall time of the whole process, start-up
included; and scan time where the contender reports it) and peak RSS:

- recovery LogScanner with Hyperscan, and with the RE2 fallback engine (best of 3 runs)
- GNU grep -E -f (the catalog translated to POSIX ERE), output to a pipe that is read, GNU grep
  -P (one PCRE alternation) and Python `re` (one alternation, line by line), on a prefix of the
  log: all three are far too slow for all of it with a catalog this size
- `recovery diagnose` (scanner, progress parsing and diagnosis) for the whole pipeline

The machine may be shared: best-of-3 keeps other load out of the comparison as far as it can.

Then it feeds `--flat-gib` GiB (10 by default) of generated log through a LogScanner without a
file and reports the peak RSS, which must not grow with the input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MIB = 1 << 20
CHUNK = 8 * MIB


# --- the log -----------------------------------------------------------------------------------


def _lines(rnd: random.Random, step: int) -> list[str]:
    """The lines one training step leaves in a 64-rank job's log."""
    node, rank = rnd.randrange(8), rnd.randrange(64)
    out = [
        f"0: [rank0]: iteration {step:8d}/ 1000000 | consumed samples: {step * 1024:12d} |"
        f" elapsed time per iteration (ms): {800 + rnd.random() * 50:.1f} | learning rate: 2.500E-04 |"
        " global batch size:  1024 |"
        f" lm loss: {2 + rnd.random():.6E} | loss scale: 65536.0 | grad norm: {rnd.random():.3f} |"
        " number of skipped iterations:   0 | number of nan iterations:   0 |",
        f"{rank}: node{node}:{4000 + rank}:{4100 + rank} [{rank % 8}] NCCL INFO Channel {rank % 32:02d}/32 :"
        f" {rank}[{rank % 8}] -> {(rank + 1) % 64}[{(rank + 1) % 8}] via P2P/IPC/read",
        f"{rank}: [rank{rank}]:[W socket.cpp:663] [c10d] The client socket has failed to connect to"
        f" [node0]:29500 (errno: 111 - Connection refused).",
        f"{rank}: [rank{rank}]: /opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:91:"
        " UserWarning: None of the inputs have requires_grad=True. Gradients will be None",
        f"{rank}: node{node}:{4000 + rank}:{4100 + rank} [{rank % 8}] NCCL INFO comm 0x55d1c0 rank {rank}"
        " nranks 64 cudaDev 0 busId 3b000 - Init COMPLETE",
        f"{rank}: [rank{rank}]: data loader: shard {rnd.randrange(10000):05d} opened, {rnd.randrange(10**6)}"
        " samples, prefetch 4",
    ]
    if rnd.random() < 0.02:
        out.append(
            f"{rank}: [rank{rank}]: [deepspeed] OVERFLOW! Rank {rank} Skipping step. Attempted loss scale:"
            " 131072, reducing to 65536"
        )
    if rnd.random() < 0.0005:  # a caught error the run survives, now and then
        out.append(f"{rank}: [rank{rank}]: KeyError: 'shard-{rnd.randrange(100)}/sample-{rnd.randrange(10**6)}'")
    return out


FAILURE = [
    "3: [rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
    "Mar  3 12:34:56 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.",
    "0: [rank0]:[E ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 0] Watchdog caught"
    " collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for"
    " 600031 milliseconds before timing out.",
    "srun: error: node1: task 3: Exited with exit code 1",
]


def generate(size: int, seed: int = 1) -> Iterator[bytes]:
    """About `size` bytes of log in ~8 MiB pieces (the same bytes for the same seed)."""
    rnd = random.Random(seed)
    written, step, buf = 0, 1, []
    while written < size:
        buf.extend(_lines(rnd, step))
        step += 1
        if len(buf) >= 20000:
            piece = ("\n".join(buf) + "\n").encode()
            buf.clear()
            written += len(piece)
            yield piece
    yield ("\n".join(FAILURE) + "\n").encode()


def write_log(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    print(f"writing {size / MIB:.0f} MiB of log to {path} ...", flush=True)
    with path.open("wb") as f:
        for piece in generate(size):
            f.write(piece)


# --- patterns for the other tools --------------------------------------------------------------

_CLASS = {r"\d": "0-9", r"\w": "_[:alnum:]", r"\s": "[:space:]"}
_OUTSIDE = {r"\d": "[0-9]", r"\w": "[_[:alnum:]]", r"\s": "[[:space:]]", r"\S": "[^[:space:]]"}


def to_ere(pattern: str) -> str:
    """Translate a catalog pattern (RE2 syntax) to POSIX ERE for `grep -E`."""
    pattern = re.sub(r"\(\?P<\w+>|\(\?:", "(", pattern).replace(r"[^\n]", ".")
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            escape = pattern[i : i + 2]
            out.append(_OUTSIDE.get(escape, escape))
            i += 2
        elif pattern[i] == "[":
            i, bracket = _bracket(pattern, i)
            out.append(bracket)
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _bracket(pattern: str, i: int) -> tuple[int, str]:
    """A bracket expression from `[` at i: (index after it, its ERE form)."""
    i += 1
    negate = pattern.startswith("^", i)
    i += negate
    items, close = [], ""
    while pattern[i] != "]":
        if pattern.startswith("\\]", i):
            close = "]"  # in ERE a literal ] comes first in the brackets
        elif pattern[i] == "\\":
            items.append(_CLASS.get(pattern[i : i + 2], pattern[i + 1]))
        else:
            items.append(pattern[i])
        i += 2 if pattern[i] == "\\" else 1
    return i + 1, "[" + ("^" if negate else "") + close + "".join(items) + "]"


def plain_alternation(patterns: list[str]) -> str:
    """One alternation without group names (they repeat across signatures); a pattern's leading
    flags (`(?i)`) scoped to it, as an alternative cannot set them for the whole expression."""
    return "|".join(_scoped(re.sub(r"\(\?P<\w+>", "(?:", p)) for p in patterns)


def _scoped(pattern: str) -> str:
    flags = re.match(r"\(\?([a-z]+)\)", pattern)
    return f"(?{flags.group(1)}:{pattern[flags.end() :]})" if flags else f"(?:{pattern})"


# --- contenders (each runs in its own process) -------------------------------------------------


def worker(kind: str, path: str, engine: str, limit: int) -> dict[str, object]:
    t0 = time.perf_counter()
    if kind == "scanner":
        from recovery.activities.signatures.catalog import builtin_catalog
        from recovery.activities.signatures.scanner import LogScanner, PatternSet

        scanner = LogScanner(PatternSet.from_catalog(builtin_catalog(), engine=engine))
        t1 = time.perf_counter()
        matches, size = 0, 0
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                size += len(chunk)
                matches += len({m.line for m in scanner.feed(chunk)})
        matches += len({m.line for m in scanner.finish()})
        return {"bytes": size, "scan_seconds": time.perf_counter() - t1, "lines": matches}
    if kind == "diagnose":
        from recovery.client.cli_diagnose import diagnose_file

        result = diagnose_file(Path(path), None, None, {})
        return {
            "bytes": os.path.getsize(path),
            "scan_seconds": time.perf_counter() - t0,
            "lines": len(result["evidence"]),
        }
    if kind == "python-re":
        from recovery.activities.signatures.catalog import builtin_catalog

        rx = re.compile(plain_alternation([s.pattern for s in builtin_catalog()]).encode())
        t1, size, matches = time.perf_counter(), 0, 0
        with open(path, "rb") as f:
            for line in f:
                size += len(line)
                matches += rx.search(line) is not None
                if limit and size >= limit:
                    break
        return {"bytes": size, "scan_seconds": time.perf_counter() - t1, "lines": matches}
    if kind == "flat":
        from recovery.activities.signatures.scanner import LogScanner

        scanner, size = LogScanner(), 0
        block = b"".join(generate(8 * MIB, seed=2))  # small, so the input is what could grow
        t1 = time.perf_counter()
        while size < limit:
            for i in range(0, len(block), CHUNK):
                scanner.feed(block[i : i + CHUNK])
            size += len(block)
        return {"bytes": size, "scan_seconds": time.perf_counter() - t1, "lines": scanner.lines}
    raise SystemExit(f"unknown worker {kind}")


def _pin() -> None:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})  # one core, the same for all


class ContenderFailed(Exception):
    """A contender could not run (GNU grep -P refuses a catalog this size as one expression)."""


def measure(name: str, argv: list[str], size_hint: int) -> dict[str, object]:
    """Run one contender; wall time, peak RSS (wait4), and what it reported or printed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_pin, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    out_lines, tail = 0, b""
    for line in proc.stdout:  # grep writes into a pipe that is read, as the issue asks
        out_lines += 1
        tail = line
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    # grep exits 1 when nothing matched; a Python contender's 1 is an uncaught exception.
    if proc.returncode not in ((0,) if argv[0] == sys.executable else (0, 1)):
        raise ContenderFailed(f"{name} failed ({proc.returncode}): {err.decode().strip().splitlines()[-1:]}")
    report = json.loads(tail) if argv[0] == sys.executable else {"bytes": size_hint, "lines": out_lines}
    scanned = int(report["bytes"])  # type: ignore[call-overload]
    seconds = float(report.get("scan_seconds", wall))  # type: ignore[arg-type]
    return {
        "name": name,
        "mib": scanned / MIB,
        "wall_mib_s": scanned / MIB / wall,
        "scan_mib_s": scanned / MIB / seconds,
        "rss_mib": usage.ru_maxrss / 1024,
        "lines": report["lines"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", default="/tmp/recovery-bench.log")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--slow-mib", type=int, default=32, help="how much of the log grep -P and Python's re scan")
    parser.add_argument("--flat-gib", type=float, default=10.0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="hyperscan", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.log, args.engine, args.limit)))
        return
    run_all(args)


def run_all(args: argparse.Namespace) -> None:
    from recovery.activities.signatures.catalog import builtin_catalog
    from recovery.activities.signatures.engines import available

    path, size = Path(args.log), args.size_mib * MIB
    write_log(path, size)
    size = path.stat().st_size
    prefix = _prefix(path, args.slow_mib * MIB)
    patterns = [s.pattern for s in builtin_catalog()]
    ere, pcre = Path(f"{path}.ere"), Path(f"{path}.pcre")
    ere.write_text("\n".join(to_ere(p) for p in patterns) + "\n")
    pcre.write_text(plain_alternation(patterns) + "\n")
    me = [sys.executable, str(Path(__file__).resolve())]
    # (name, argv, bytes it reads, runs): the slow ones read a prefix of the log, once.
    runs = [
        (f"recovery scanner ({e})", [*me, "--log", str(path), "--worker", "scanner", "--engine", e], size, 3)
        for e in available()
    ]
    runs += [
        # GNU grep's DFA grows with the catalog: at 1,359 patterns it reads 0.08 MiB/s, so it
        # gets the prefix too (it read the whole log while the catalog had 84).
        ("grep -E -f (prefix)", ["grep", "-E", "-f", str(ere), str(prefix)], prefix.stat().st_size, 1),
        ("grep -P (prefix)", ["grep", "-P", "-f", str(pcre), str(prefix)], prefix.stat().st_size, 1),
        (
            "python re (prefix)",
            [*me, "--log", str(prefix), "--worker", "python-re"],
            prefix.stat().st_size,
            1,
        ),
        ("recovery diagnose", [*me, "--log", str(path), "--worker", "diagnose"], size, 1),
    ]
    env = f"{len(patterns)} signatures, {size / MIB:.0f} MiB log, one core, grep {_grep_version()}, best of runs"
    print(f"\n{env}\n{'':<28}{'MiB':>8}{'MiB/s':>9}{'scan MiB/s':>12}{'peak RSS MiB':>14}{'lines':>8}{'runs':>6}")
    results: dict[str, dict[str, object]] = {}
    for name, argv, scanned, repeat in runs:
        try:
            r = max((measure(name, argv, scanned) for _ in range(repeat)), key=lambda r: float(r["wall_mib_s"]))
        except ContenderFailed as e:
            print(f"{name:<28}{str(e)[len(name) + 1 :]}", flush=True)
            continue
        results[name] = r
        print(
            f"{name:<28}{r['mib']:>8.0f}{_rate(r['wall_mib_s']):>9}{_rate(r['scan_mib_s']):>12}{r['rss_mib']:>14.0f}"
            f"{r['lines']:>8}{repeat:>6}",
            flush=True,
        )
    first = results[runs[0][0]]
    grep = float(results["grep -E -f (prefix)"]["wall_mib_s"])
    print(f"\n{first['name']} vs grep -E -f: {float(first['wall_mib_s']) / grep:.0f}x")
    if args.flat_gib > 0:
        limit = str(int(args.flat_gib * 1024 * MIB))
        flat = measure("flat", [*me, "--log", str(path), "--worker", "flat", "--limit", limit], 0)
        print(f"{flat['mib'] / 1024:.1f} GiB fed to one LogScanner: peak RSS {flat['rss_mib']:.0f} MiB")


def _rate(mib_s: object) -> str:
    """MiB/s to a precision that still shows the slow contenders' figure."""
    rate = float(mib_s)  # type: ignore[arg-type]
    return f"{rate:.0f}" if rate >= 10 else f"{rate:.2f}"


def _prefix(path: Path, size: int) -> Path:
    """The first `size` bytes of the log (whole lines), for the contenders too slow for all of it."""
    prefix = path.with_name(path.name + ".prefix")
    if not prefix.exists() or abs(prefix.stat().st_size - size) > MIB:
        with path.open("rb") as f:
            head = f.read(size)
        prefix.write_bytes(head[: head.rfind(b"\n") + 1])
    return prefix


def _grep_version() -> str:
    out = subprocess.run(["grep", "--version"], capture_output=True, text=True, check=False).stdout
    return out.split("\n", 1)[0].rsplit(" ", 1)[-1]


if __name__ == "__main__":
    main()
