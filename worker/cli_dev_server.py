"""`recovery dev-server start|stop|status`: the embedded Temporal dev server, with subcommands
as `recovery cluster` has them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from recovery.client.console import JSON_HELP, print_json
from recovery.worker.devserver import DevServer

NOT_RUNNING = 3  # like `systemctl status` and `recovery cluster status`


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = subparsers.add_parser("dev-server", help="the embedded Temporal dev server (SQLite under RECOVERY_HOME)")
    commands = server.add_subparsers(dest="dev_server_command", metavar="COMMAND", required=True)
    actions: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
        "start": ("start it unless something already serves RECOVERY_TEMPORAL_ADDRESS", _start),
        "stop": ("stop the dev server this command started", _stop),
        "status": ("whether it serves (exit status 3 when it does not)", _status),
    }
    for name, (text, handler) in actions.items():
        p = commands.add_parser(name, help=text, description=text)
        p.add_argument("--json", action="store_true", help=JSON_HELP)
        p.set_defaults(func=handler)


def _start(args: argparse.Namespace) -> int:
    server = DevServer.from_env()
    started = server.start()
    if args.json:
        print_json({"address": server.address, "ui": server.ui_url, "started": started})
    else:
        how = "started" if started else "already running"
        print(f"Temporal dev server {how} at {server.address}; UI {server.ui_url}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    stopped = DevServer.from_env().stop()
    if args.json:
        print_json({"stopped": stopped})
    else:
        print("dev server stopped" if stopped else "no dev server of ours was running")
    return 0


def _status(args: argparse.Namespace) -> int:
    server = DevServer.from_env()
    serving = server.serving()
    if args.json:
        print_json({"address": server.address, "ui": server.ui_url, "serving": serving})
    else:
        print(f"dev server at {server.address}: {'serving' if serving else 'not running'}")
    return 0 if serving else NOT_RUNNING
