"""Every `recovery` command that takes `--json`, and the check that its stdout is JSON only.

The list comes from the real argument parser, so a command that gains `--json` later fails the
scheduler tests (tests/embedded/test_json_output.py, tests/integration/test_json_output.py)
until they run it too.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from recovery.worker.cli import build_parser


def json_commands() -> set[tuple[str, ...]]:
    """Command paths (("submit",), ("cluster", "status"), ...) whose parser has --json."""
    found: set[tuple[str, ...]] = set()

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if "--json" in action.option_strings:
                found.add(path)
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


def json_documents(command: tuple[str, ...], stdout: str) -> list[Any]:
    """The JSON documents on stdout: one document, or one per line (`diagnose`). Anything
    else on stdout (a log line, a banner) fails, naming the command and the line."""
    assert stdout.strip(), f"recovery {' '.join(command)} --json printed nothing on stdout"
    try:
        return [json.loads(stdout)]
    except json.JSONDecodeError:
        pass
    documents: list[Any] = []
    for line in stdout.splitlines():
        try:
            documents.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"recovery {' '.join(command)} --json: not JSON on stdout: {line!r}") from None
    return documents
