"""`recovery nodes ...`: which nodes keep failing across runs, and clearing one."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from recovery.client.cli_parser import fail
from recovery.client.console import JSON_HELP, Column, print_json, table
from recovery.client.format import when
from recovery.client.nodes import NodesError, clear_node, node_report
from recovery.client.temporal_client import connect
from recovery.workflows.node_history.models import NodeReport, NodeSummary, SuspectRule
from recovery.workflows.policy import format_duration
from recovery.workflows.policy_files import load_policy

Command = Callable[[argparse.Namespace], int]
DEFAULT_CLUSTER = "local"
# The worker keeps node history under the configured `slurm.cluster`, else Slurm's ClusterName,
# else `local` (activities/node_history.py); this command cannot ask Slurm, so it says so.
CLUSTER_HELP = (
    f"whose node history (default: {DEFAULT_CLUSTER}, the embedded scheduler's); for a Slurm worker give its"
    " cluster: the worker config's slurm.cluster, else Slurm's ClusterName (`scontrol show config`)"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    nodes = subparsers.add_parser("nodes", help="node history across runs: failures per node, suspect nodes")
    nodes.add_argument("--cluster", metavar="NAME", help=CLUSTER_HELP)
    nodes.add_argument(
        "--policy", default="default", metavar="NAME|FILE", help="take the suspect rule from this policy (name or file)"
    )
    nodes.add_argument("--json", action="store_true", help="print the nodes as one JSON list on stdout")
    nodes.set_defaults(func=_guarded(_list))
    commands = nodes.add_subparsers(dest="nodes_command", metavar="COMMAND")

    clear = commands.add_parser("clear", help="forget one node's failures")
    clear.add_argument("name", metavar="NAME")
    # Its own dest: a subparser's default would overwrite `nodes --cluster X clear N`.
    clear.add_argument("--cluster", dest="clear_cluster", metavar="NAME", help=CLUSTER_HELP)
    clear.add_argument("--json", dest="clear_json", action="store_true", help=f"{JSON_HELP}: what was forgotten")
    clear.set_defaults(func=_guarded(_clear))


def _guarded(command: Command) -> Command:
    """Node history errors become one line on stderr and exit status 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except NodesError as err:
            return fail(str(err))

    return run


def _run(coro: Coroutine[Any, Any, int]) -> int:
    return asyncio.run(coro)


def _list(args: argparse.Namespace) -> int:
    rule = SuspectRule.of(load_policy(args.policy).suspect_nodes)
    cluster = args.cluster or DEFAULT_CLUSTER

    async def go() -> int:
        report = await node_report(await connect(), cluster, rule)
        if args.json:
            print_json(report.nodes)
        else:
            print(render_report(report))
        return 0

    return _run(go())


def _clear(args: argparse.Namespace) -> int:
    cluster = args.clear_cluster or args.cluster or DEFAULT_CLUSTER

    async def go() -> int:
        forgotten = await clear_node(await connect(), cluster, args.name)
        if args.clear_json or args.json:
            print_json({"cluster": cluster, "node": args.name, "forgotten": forgotten})
            return 0
        noun = "failure" if forgotten == 1 else "failures"
        print(f"{args.name} cleared on cluster {cluster} ({forgotten} {noun} forgotten)")
        return 0

    return _run(go())


def render_report(report: NodeReport) -> str:
    window = format_duration(report.rule.window)
    head = (
        f"node history of cluster {report.cluster}: suspect after failures in "
        f"{report.rule.failures} different runs within {window}"
    )
    if not report.nodes:
        return f"{head}\nno node failures on record"
    columns = [Column(h) for h in ("NODE", "FAILURES", "RUNS", f"RUNS IN {window}", "LAST FAILURE")]
    columns.append(Column("SUSPECT", style=lambda cell: "bold red" if cell == "yes" else None))
    return "\n".join([head, "", table(columns, [_row(n) for n in report.nodes])])


def _row(node: NodeSummary) -> list[str]:
    return [
        node.node,
        str(node.failures),
        str(len(node.runs)),
        str(len(node.runs_in_window)),
        when(node.last_failure_at),
        "yes" if node.suspect else "no",
    ]
