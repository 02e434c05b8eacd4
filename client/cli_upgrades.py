"""`recovery upgrade-check` and `recovery whatif`: what an upgrade or a policy change would do to
runs, from their recorded histories. Both are read-only."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime

from recovery import settings
from recovery.client.replay import HistoryFetchError
from recovery.client.temporal_client import connect
from recovery.client.upgrade_check import check_upgrade, render
from recovery.client.whatif import (
    WhatIf,
    WhatIfError,
    evaluate,
    live_histories,
    offline_converter,
    query_for,
    read_history_files,
    recorded_failures,
)
from recovery.client.whatif import render as render_whatif
from recovery.workflows.policy import parse_duration
from recovery.workflows.policy_files import load_policy

Command = Callable[[argparse.Namespace], int]
# upgrade-check's exit status when some run would break (1 stays "could not check").
WOULD_BREAK = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser(
        "upgrade-check",
        help="replay the histories of the task queue's open runs against the installed code (before a rollout)",
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

    whatif = subparsers.add_parser(
        "whatif", help="decide the recorded failures of past runs again with another policy (read-only)"
    )
    whatif.add_argument("--policy", required=True, metavar="NAME|FILE", help="the policy to try")
    whatif.add_argument("--since", type=_duration, metavar="DURATION", help="only failures within this long")
    whatif.add_argument("--run", nargs="+", action="extend", default=[], metavar="RUN", help="only these runs")
    whatif.add_argument(
        "--history",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="exported histories (JSON) instead of asking Temporal",
    )
    whatif.add_argument("--json", action="store_true", help="one JSON document on stdout")
    whatif.set_defaults(func=_guarded(_whatif))


def _duration(text: str) -> object:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _guarded(command: Command) -> Command:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (HistoryFetchError, WhatIfError) as err:
            print(f"recovery: {err}", file=sys.stderr)
            return 1

    return run


def _upgrade_check(args: argparse.Namespace) -> int:
    async def go() -> int:
        result = await check_upgrade(await connect(), args.closed_since, datetime.now(UTC), settings.task_queue())
        if args.json:
            print(json.dumps(result.model_dump(mode="json")))
        else:
            print(render(result))
        return WOULD_BREAK if result.failed else 0

    return asyncio.run(go())


def _whatif(args: argparse.Namespace) -> int:
    policy = load_policy(args.policy)  # a bad policy stops here, before anything is read
    since = datetime.now(UTC) - args.since if args.since is not None else None

    async def go() -> WhatIf:
        if args.history:
            named = list(zip(args.history, read_history_files(args.history), strict=True))
            runs = await recorded_failures(named, offline_converter())
            runs = [r for r in runs if not args.run or r.run in args.run]
        else:
            query_for(since, args.run)  # a run id that cannot be queried fails before connecting
            client = await connect()
            histories = await live_histories(client, since, args.run)
            runs = await recorded_failures(((h.workflow_id, h) for h in histories), client.data_converter)
        return evaluate(runs, policy, since)

    result = asyncio.run(go())
    if args.json:
        print(json.dumps(result.model_dump(mode="json")))
    else:
        print(render_whatif(result))
    return 0
