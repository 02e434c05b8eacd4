"""`recovery cluster ...`: start, stop and inspect the embedded local scheduler."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.activities.schedulers.local.protocol import ClusterStatus
from recovery.client.cli_parser import PREFIX, fail
from recovery.client.console import JSON_HELP, Column, print_json, table

Command = Callable[[argparse.Namespace], int]
NOT_RUNNING = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cluster = subparsers.add_parser("cluster", help="the embedded local scheduler (a background daemon)")
    commands = cluster.add_subparsers(dest="cluster_command", metavar="COMMAND", required=True)

    start = commands.add_parser("start", help="start the local cluster unless it runs")
    start.add_argument("--nodes", type=int, default=local_cluster.DEFAULT_NODES, help="number of nodes")
    start.add_argument("--json", action="store_true", help=JSON_HELP)
    start.set_defaults(func=_guarded(_start))

    stop = commands.add_parser("stop", help="stop the local cluster and every job it runs")
    stop.add_argument("--json", action="store_true", help=JSON_HELP)
    stop.set_defaults(func=_guarded(_stop))

    status = commands.add_parser("status", help="nodes and jobs")
    status.add_argument("--json", action="store_true", help="print nodes and jobs as one JSON object on stdout")
    status.set_defaults(func=_guarded(_status))

    down = commands.add_parser("node-down", help="fail a node: kill its work, stop scheduling")
    down.add_argument("--reason", default="", help="shown in status")
    down.set_defaults(func=_guarded(_node_down))

    drain = commands.add_parser("node-drain", help="let a node's job finish, start nothing new there")
    drain.add_argument("--reason", default="", help="shown in status")
    drain.set_defaults(func=_guarded(_node_drain))

    up = commands.add_parser("node-up", help="bring a down or drained node back")
    up.set_defaults(func=_guarded(_node_up))
    for node_command in (down, drain, up):
        node_command.add_argument("name", metavar="NAME", help="the node (node1, node2, ...)")
        node_command.add_argument("--json", action="store_true", help=f"{JSON_HELP}: the node's state after it")


def _guarded(command: Command) -> Command:
    """Turn the cluster's own errors into one line on stderr and exit status 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (SchedulerError, local_cluster.ClusterError) as err:
            return fail(str(err))

    return run


def _start(args: argparse.Namespace) -> int:
    info = local_cluster.start(args.nodes)
    if info.note:
        print(f"{PREFIX}{info.note}", file=sys.stderr)
    if args.json:
        print_json(info)
        return 0
    verb = "started" if info.started else "already running"
    print(f"local cluster {verb}: {info.nodes} nodes, pid {info.pid}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    stopped = local_cluster.stop()
    if args.json:
        print_json({"stopped": stopped})
    else:
        print("local cluster stopped" if stopped else "local cluster was not running")
    return 0


def _status(args: argparse.Namespace) -> int:
    status = local_cluster.status()
    if args.json:
        print(status.model_dump_json())
    else:
        print(render_status(status))
    if status.running:
        return 0
    # Like `systemctl status`: scripts can test whether it runs by the exit status.
    return fail("the local cluster is not running", NOT_RUNNING)


def _node_down(args: argparse.Namespace) -> int:
    local_cluster.node_down(args.name, args.reason)
    return _node_done(args, "down")


def _node_drain(args: argparse.Namespace) -> int:
    local_cluster.node_drain(args.name, args.reason)
    return _node_done(args, "drained")


def _node_up(args: argparse.Namespace) -> int:
    local_cluster.node_up(args.name)
    return _node_done(args, "up")


def _node_done(args: argparse.Namespace, what: str) -> int:
    """The result of a node command: with --json, the node as the cluster now reports it."""
    if not args.json:
        print(f"{args.name} is {what}")
        return 0
    node = next((n for n in local_cluster.status().nodes if n.name == args.name), None)
    print_json(node.model_dump(mode="json") if node else {"name": args.name})
    return 0


def render_status(status: ClusterStatus) -> str:
    if status.running:
        head = f"local cluster running (pid {status.pid}), {len(status.nodes)} nodes"
    else:
        head = "local cluster not running" + (" (last saved state)" if status.nodes else "")
    lines = [head]
    if status.nodes:
        nodes = [[node.name, node.state, node.reason] for node in status.nodes]
        lines += ["", table(NODE_COLUMNS, nodes)]
    if status.jobs:
        jobs = [
            [
                job.job_id,
                _one_line(job.name),
                job.state.value + (" (held)" if job.held else ""),
                str(job.restart_count),
                ",".join(job.nodes) or "-",
                _exit(job.exit_code, job.signal),
                job.reason,
            ]
            for job in status.jobs
        ]
        lines += ["", table(JOB_COLUMNS, jobs)]
    return "\n".join(lines)


NODE_STYLES = {"down": "red", "drained": "yellow", "draining": "yellow"}
NODE_COLUMNS = (Column("NODE"), Column("STATE", style=NODE_STYLES.get), Column("REASON", fit=True))
JOB_COLUMNS = (*(Column(h) for h in ("JOB", "NAME", "STATE", "RESTARTS", "NODES", "EXIT")), Column("REASON", fit=True))


def _exit(code: int | None, signal: int | None) -> str:
    if signal is not None:
        return f"signal {signal}"
    return "-" if code is None else str(code)


def _one_line(text: str) -> str:
    return text.replace("\n", "\\n")[:40]
