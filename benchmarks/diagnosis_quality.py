"""Diagnosis quality on the corpus of real logs, stragglers by drop size, and diagnose throughput.

    .venv/bin/python benchmarks/diagnosis_quality.py                 # everything
    .venv/bin/python benchmarks/diagnosis_quality.py --quality-only --misses
    .venv/bin/python benchmarks/diagnosis_quality.py --quality-only --confusion

1. `recovery diagnose` on `tests/corpus/` (README there): found, false alarms, retryable,
   category and culprit, for the development and the held-out part, side by side with "retry
   everything" (every log a retryable failure); then per labelled category, and the confusion
   matrices of categories and of symptoms. `--misses` lists the development part's misses only, `--confusion` the
   development part's wrong (label -> diagnosed) category pairs and retryable verdicts, most
   frequent first, with their files: the held-out part is never read for tuning.
2. Stragglers: `benchmarks/straggler_quality.py` (recall by drop size, false alarms, delay).
3. Throughput: `benchmarks/scan_throughput.py` (the scanner, `recovery diagnose` and GNU grep
   given the same catalog, on the same generated log, in one run).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus.scoring import CATEGORIES, PARTS, SYMPTOMS, Scores, load, score  # noqa: E402

TARGETS = {"found": 0.92, "false_alarms": 1 / 80, "retryable": 0.88, "category": 0.80, "culprit": 0.65}


def _retry_everything(scores: Scores, retryable_true: int) -> str:
    return f"{retryable_true / scores.failures:.3f}" if scores.failures else "-"


def quality(show_misses: bool, show_confusion: bool = False) -> None:
    results: dict[str, Scores] = {}
    retry_all: dict[str, int] = {}
    for part in PARTS:
        items = load(part)
        results[part] = score(items)
        retry_all[part] = sum(1 for i in items if i.failed and i.retryable is True)
    print("\n## Diagnosis on the corpus of real logs\n")
    header = "| figure | " + " | ".join(f"{p} ({results[p].failures}+{results[p].healthy})" for p in PARTS)
    print(header + " | retry everything (dev / held-out) | target (held-out) |")
    print("|---" * (len(PARTS) + 3) + "|")
    for name, target in TARGETS.items():
        cells = []
        for part in PARTS:
            s, rate = results[part], results[part].rates()[name]
            cells.append(f"{s.false_alarms}/{s.healthy}" if name == "false_alarms" else f"{rate:.3f}")
        base = " / ".join(_retry_everything(results[p], retry_all[p]) for p in PARTS) if name == "retryable" else "-"
        goal = "≤ 1 per 80" if name == "false_alarms" else f"≥ {target:.2f}"
        print(f"| {name} | " + " | ".join(cells) + f" | {base} | {goal} |")
    for part in PARTS:
        _matrix(part, "category", CATEGORIES, results[part].confusion, width=6)
        _matrix(part, "symptom", SYMPTOMS, results[part].symptoms, width=9)
    if show_confusion:
        _confusion(results["dev"])
    if show_misses:
        print("\n## Misses in the development part\n")
        for item, result, why in results["dev"].misses:
            print(f"- {item.file}: {why}\n    label: {item.symptom}/{item.category}: {item.reason}")
            print(f"    got:   {result['symptom']}/{result['category']}: {result['explanation'][:200]}")


def _confusion(s: Scores) -> None:
    """The development part's wrong verdicts grouped by kind: which families to fix first."""
    groups: dict[str, list[str]] = {}
    for item, result, _ in s.misses:
        if not item.failed or result["symptom"] == "none":
            continue  # false alarms and missed failures: `--misses` lists them
        if result["category"] != item.category:
            groups.setdefault(f"category {item.category} -> {result['category']}", []).append(item.file)
        if result["retryable"] is not item.retryable:
            groups.setdefault(f"retryable {item.retryable} -> {result['retryable']}", []).append(item.file)
    print("\n## Development part: wrong verdicts of found failures, by kind\n")
    for kind, files in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"- {kind}: {len(files)}")
        for file in files:
            print(f"    {file}")


def _matrix(part: str, what: str, values: tuple[str, ...], counts: Counter[tuple[str, str]], width: int) -> None:
    """One part's labelled (rows) against diagnosed (columns) counts of `what`."""
    print(f"\n### {part}: labelled {what} (rows) against diagnosed {what} (columns)\n")
    print("| label | n | " + " | ".join(v[:width] for v in values) + " |")
    print("|---" * (len(values) + 2) + "|")
    for label in values:
        row = [counts[(label, got)] for got in values]
        if sum(row):
            print(f"| {label} | {sum(row)} | " + " | ".join(str(n) if n else "." for n in row) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quality-only", action="store_true", help="only the corpus figures")
    parser.add_argument("--misses", action="store_true", help="list the development part's misses")
    parser.add_argument(
        "--confusion", action="store_true", help="the development part's wrong verdicts by kind, with their files"
    )
    parser.add_argument("--size-mib", type=int, default=1024, help="throughput log size")
    args = parser.parse_args()
    quality(args.misses, args.confusion)
    if args.quality_only:
        return
    print("\n## Stragglers\n", flush=True)
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "straggler_quality.py")], check=True)
    print("\n## Throughput\n", flush=True)
    argv = [sys.executable, str(ROOT / "benchmarks" / "scan_throughput.py"), "--size-mib", str(args.size_mib)]
    subprocess.run([*argv, "--flat-gib", "0"], check=True)


if __name__ == "__main__":
    main()
