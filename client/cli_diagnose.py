"""`recovery diagnose FILE...` and `recovery signatures`: the detectors, offline.

`diagnose --json` prints one object per file and line (the shape in interfaces.md, plus `file`
and `explanation`); without `--json`, an explanation with its evidence lines. `-` is standard
input. A file that cannot be read is one line on stderr and exit status 2; the other files are
still reported. With `--exit-code`, a symptom found in any file makes the exit status 1 (as
`grep` and `git diff --exit-code`: 0 healthy, 1 found, 2 trouble).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import yaml

from recovery.activities.text import clip
from recovery.client.cli_parser import fail
from recovery.client.console import SYMPTOM_STYLES, Column, paint, table
from recovery.client.render import EVIDENCE_SHOWN

if TYPE_CHECKING:
    from recovery.activities.straggler import StragglerConfig
    from recovery.workflows.policy import Policy

Command = Callable[[argparse.Namespace], int]
READ_SIZE = 8 << 20
STDIN = "-"
FOUND = 1  # --exit-code: a symptom was found
TROUBLE = 2  # bad input: a file, a catalog, a layout, a pattern, a policy


class LayoutError(ValueError):
    """A task layout that cannot be read."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("diagnose", help="classify log files offline")
    p.add_argument("files", nargs="+", metavar="FILE", help="a log file; - reads standard input")
    p.add_argument("--json", action="store_true", help="one JSON object per file, one per line")
    p.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 1 when any file shows a symptom (0: all healthy; 2: a file or option could not be read)",
    )
    p.add_argument(
        "--layout",
        metavar="MAP",
        help="which node ran which rank: 'node1:0-3,node2:4-7', or a YAML/JSON file {rank: node}",
    )
    _catalog_option(p)
    p.add_argument(
        "--policy",
        metavar="NAME|FILE",
        help="a built-in policy name or a YAML file, as `submit --policy` takes, checked whole: its straggler"
        " keys apply to the log's pace (min_drop; sustain as the bound); a log file has no clock to time a hang by",
    )
    p.add_argument(
        "--progress-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="a progress line format with named groups (step, total, throughput, step_time, ...)",
    )
    p.set_defaults(func=_guarded(_diagnose))

    s = subparsers.add_parser("signatures", help="the failure signature catalog")
    s.add_argument("--json", action="store_true", help="one JSON document (a list)")
    _catalog_option(s)
    s.set_defaults(func=_guarded(_signatures))


def _catalog_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--signatures",
        action="append",
        default=[],
        metavar="FILE",
        help="a YAML file adding or changing signatures by id (repeatable; see docs/signatures.md)",
    )


def _guarded(command: Command) -> Command:
    """Bad input (a catalog file, a layout, a pattern, a policy) is one line on stderr and exit
    status 2."""

    def run(args: argparse.Namespace) -> int:
        from recovery.activities.progress import ProgressError
        from recovery.activities.signatures.catalog import CatalogError
        from recovery.activities.signatures.engines import EngineError
        from recovery.workflows.policy_files import PolicyError

        try:
            return command(args)
        except (CatalogError, EngineError, ProgressError, LayoutError, PolicyError) as err:
            return fail(str(err), TROUBLE)
        except BrokenPipeError:
            # The reader (`| head`) has gone: not an error. Point stdout at /dev/null so the
            # interpreter's final flush does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0

    return run


def _diagnose(args: argparse.Namespace) -> int:
    from recovery.activities.progress import ProgressParser
    from recovery.activities.signatures.catalog import load_catalog

    catalog = load_catalog(*args.signatures) if args.signatures else None
    parser = ProgressParser(args.progress_pattern) if args.progress_pattern else None
    layout = parse_layout(args.layout) if args.layout else {}
    policy = _policy(args.policy) if args.policy else None
    trouble = found = False
    for name in args.files:
        try:
            result = diagnose_input(name, catalog, parser, layout, policy=policy)
        except OSError as err:
            fail(f"{name}: {err.strerror or err}")
            trouble = True
            continue
        found = found or result["symptom"] != "none"
        if args.json:
            sys.stdout.write(json.dumps({"file": name, **result}) + "\n")
        else:
            print(render("stdin" if name == STDIN else name, result))
        sys.stdout.flush()  # each file's answer as soon as it is known
    if trouble:
        return TROUBLE
    return FOUND if args.exit_code and found else 0


def _policy(name_or_path: str) -> Policy:
    """The policy `submit --policy` would run with: a built-in name or a YAML file, checked whole."""
    from recovery.workflows.policy_files import PolicyError, load_policy

    policy = load_policy(name_or_path)
    if policy.straggler.sustain.total_seconds() <= 0:
        raise PolicyError(f"{name_or_path}: straggler.sustain must be longer than 0s")
    return policy


def straggler_config(policy: Policy | None) -> StragglerConfig | None:
    """The policy's straggler keys for the log's own pace: the smallest drop to detect, and
    `sustain` as the longest it may take (counted in the log's step times, or its steps)."""
    from recovery.activities.straggler import StragglerConfig

    if policy is None:
        return None
    return StragglerConfig(min_drop=policy.straggler.min_drop, sustain=policy.straggler.sustain.total_seconds())


def diagnose_input(
    name: str, catalog: Any, parser: Any, layout: dict[int, str], *, policy: Policy | None = None
) -> dict[str, Any]:
    """The `diagnose --json` object (without `file`) for a file, or standard input for `-`."""
    if name == STDIN:
        return diagnose_stream(sys.stdin.buffer, catalog, parser, layout, policy=policy)
    return diagnose_file(Path(name), catalog, parser, layout, policy=policy)


def diagnose_file(
    path: Path, catalog: Any, parser: Any, layout: dict[int, str], *, policy: Policy | None = None
) -> dict[str, Any]:
    """The `diagnose --json` object for one file (without `file`)."""
    with path.open("rb") as f:
        return diagnose_stream(f, catalog, parser, layout, policy=policy)


def diagnose_stream(
    stream: BinaryIO, catalog: Any, parser: Any, layout: dict[int, str], *, policy: Policy | None = None
) -> dict[str, Any]:
    """Read in chunks, so a log of any size (or a pipe that never ends before EOF) fits in memory."""
    from recovery.activities.signatures.diagnosis import LogDiagnoser

    diagnoser = LogDiagnoser(catalog, layout=layout, progress=parser, straggler=straggler_config(policy), whole=True)
    while chunk := stream.read(READ_SIZE):
        diagnoser.feed(chunk)
    diagnoser.finish()
    result: dict[str, Any] = diagnoser.diagnosis().model_dump(mode="json")
    return result


def render(name: str, result: dict[str, Any]) -> str:
    symptom = result["symptom"]
    if symptom == "none":
        return f"{name}: {paint('healthy', SYMPTOM_STYLES[symptom])} ({result['explanation']})"
    retry = "retryable" if result["retryable"] else "not retryable"
    head = f"{name}: {paint(symptom, 'bold ' + SYMPTOM_STYLES[symptom])}, {result['category']}, {retry}"
    lines = [head, f"  {result['explanation']}"]
    implicated = result["implicated"]
    where = [f"{key} {', '.join(map(str, implicated[key]))}" for key in implicated if implicated[key]]
    if where:
        lines.append(f"  implicated: {'; '.join(where)}")
    lines.append("  evidence:")
    for item in result["evidence"]:
        lines.append(f"    line {item['line']} [{item['signature']}] {clip(item['text'], EVIDENCE_SHOWN)}")
    return "\n".join(lines)


def _signatures(args: argparse.Namespace) -> int:
    from recovery.activities.signatures.catalog import builtin_catalog, load_catalog

    catalog = load_catalog(*args.signatures) if args.signatures else builtin_catalog()
    entries = [sig.summary() for sig in catalog]
    if args.json:
        sys.stdout.write(json.dumps(entries) + "\n")
        return 0
    print(table(SIGNATURE_COLUMNS, [_signature_row(e) for e in entries]))
    return 0


SIGNATURE_COLUMNS = (
    Column("ID"),
    Column("SYMPTOM", style=SYMPTOM_STYLES.get),
    Column("CATEGORY"),
    Column("RETRY"),
    Column("DESCRIPTION", fit=True),
)


def _signature_row(entry: dict[str, Any]) -> list[str]:
    retry = ("yes" if entry["retryable"] else "no") + (", cascade" if entry["cascade"] else "")
    return [entry["id"], entry["symptom"], entry["category"], retry, entry["description"]]


def parse_layout(spec: str) -> dict[int, str]:
    """`node1:0-3,node2:4-7` (ranks per node), or a YAML/JSON file mapping rank to node."""
    path = Path(spec)
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            raise LayoutError(f"{spec}: cannot read the layout: {err}") from None
        if not isinstance(data, dict) or not all(str(k).isdigit() for k in data):
            raise LayoutError(f"{spec}: a layout file maps ranks (numbers) to node names")
        return {int(k): str(v) for k, v in data.items()}
    layout: dict[int, str] = {}
    for part in filter(None, spec.split(",")):
        node, _, ranks = part.rpartition(":")
        first, _, last = ranks.partition("-")
        if not node or not first.isdigit() or not (last or first).isdigit():
            raise LayoutError(f"layout {spec!r}: expected NODE:RANK or NODE:FIRST-LAST, comma separated")
        layout.update({rank: node for rank in range(int(first), int(last or first) + 1)})
    return layout
