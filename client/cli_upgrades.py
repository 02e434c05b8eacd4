"""`recovery upgrade-check` and `recovery whatif`: what an upgrade or a policy change would do to
runs, from their recorded histories. Both are read-only."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime

from recovery.client.temporal_client import connect
from recovery.client.upgrade_check import UpgradeCheckError, check_upgrade, render
from recovery.workflows.policy import parse_duration

Command = Callable[[argparse.Namespace], int]
# upgrade-check's exit status when some run would break (1 stays "could not check").
WOULD_BREAK = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser(
        "upgrade-check", help="replay the histories of open runs against the installed code (before a rollout)"
    )
    check.add_argument(
        "--closed-since",
        type=_duration,
        default=parse_duration("1d"),
        metavar="DURATION",
        help="also check runs closed within this long (default 1d)",
    )
    check.add_argument("--json", action="store_true", help="one JSON document on stdout")
    check.set_defaults(func=_guarded(_upgrade_check))


def _duration(text: str) -> object:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _guarded(command: Command) -> Command:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except UpgradeCheckError as err:
            print(f"recovery: {err}", file=sys.stderr)
            return 1

    return run


def _upgrade_check(args: argparse.Namespace) -> int:
    async def go() -> int:
        result = await check_upgrade(await connect(), args.closed_since, datetime.now(UTC))
        if args.json:
            print(json.dumps(result.model_dump(mode="json")))
        else:
            print(render(result))
        return WOULD_BREAK if result.failed else 0

    return asyncio.run(go())
