"""The `recovery` command line. Each subcommand returns an exit status; errors are one line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from pathlib import Path

from recovery import settings
from recovery.activities.progress import ProgressError
from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.signatures.catalog import CatalogError
from recovery.client import (
    cli_cluster,
    cli_completion,
    cli_diagnose,
    cli_nodes,
    cli_options,
    cli_pipeline,
    cli_policy,
    cli_upgrades,
    run_list,
    run_logs,
)
from recovery.client.cli_options import OptionError
from recovery.client.cli_parser import RecoveryParser, fail
from recovery.client.config import ConfigError
from recovery.client.console import print_json
from recovery.client.runs import RunError
from recovery.client.scheduler_choice import HELP as SCHEDULER_HELP
from recovery.client.submit import SubmitError
from recovery.client.temporal_client import TemporalUnavailable, connect
from recovery.worker import cli_dev_server
from recovery.worker.devserver import DevServer, DevServerError
from recovery.workflows.policy_files import PolicyError

Handler = Callable[[argparse.Namespace], int]
JSON_SUBMIT = '{"run": RUN_ID, "workflow_id": ..., "job_id": ..., "scheduler": ...}'
JSON_SIGNAL = 'print {"run": RUN, "workflow_id": RUN, "action": ..., "signalled": true} on stdout'

SUBMIT_EPILOG = (
    "sbatch's own options may come before the script, as for sbatch (-p gpu -t 2:00:00 --exclude node3), "
    "and are passed on to sbatch; -N/--nodes is --nodes and -J/--job-name is --run. The local scheduler "
    'refuses those it cannot honour. The rule: docs/running-jobs.md, "sbatch\'s own options".'
)


class CliError(Exception):
    """Reported as `recovery: MESSAGE` on stderr with exit status 1."""


def run_async(coro: Awaitable[int]) -> int:
    async def wrapped() -> int:
        return await coro

    return asyncio.run(wrapped())


# --- runs ----------------------------------------------------------------------------------


def cmd_submit(args: argparse.Namespace) -> int:
    from recovery.client import cli_pipeline, run_chain, runs
    from recovery.client.config import load_config
    from recovery.client.pipeline_file import is_pipeline_file
    from recovery.client.scheduler_choice import choose_scheduler
    from recovery.client.submit import build_spec
    from recovery.client.submit_argv import refuse_on_local, typed

    config_path = args.config or (str(p) if (p := settings.config_path()) else None)
    config = load_config(config_path)
    chosen = choose_scheduler(args.scheduler, settings.scheduler(), config, config_path)
    after = run_chain.parse_after(args.after) if args.after is not None else []
    if is_pipeline_file(args.script):
        return run_async(cli_pipeline.submit(args, chosen.name, after=after))
    if chosen.name == "local":
        refuse_on_local(args.sbatch_options)
    sbatch = typed(args.sbatch_options)
    spec = build_spec(args.script, args.args, chosen.name, args.policy, args.run, args.nodes, Path.cwd(), sbatch)
    if after:
        where = f"on the {chosen.name} scheduler (from {chosen.source})"
        return run_async(cli_pipeline.submit_chained(spec, after, args.json, where, config.temporal))

    async def go() -> int:
        client = await connect(temporal=config.temporal)
        if spec.scheduler == "slurm":
            await runs.check_namespace(client)  # a refused start must leave no job behind
            job_id: str | None = await runs.sbatch_for(spec)
            await runs.start_run(client, spec)
        else:
            await runs.start_run(client, spec)
            job_id = await runs.wait_for_job_id(client, spec.run_id, timeout=args.wait)
        if args.json:
            print_json({"run": spec.run_id, "workflow_id": spec.run_id, "job_id": job_id, "scheduler": spec.scheduler})
        else:
            where = f"on the {chosen.name} scheduler (from {chosen.source})"
            print(f"run {spec.run_id} started {where} (job {job_id or 'not yet submitted'})")
        if job_id is None:
            print(
                f"recovery: no worker has picked up run {spec.run_id} yet; is `recovery worker` running?",
                file=sys.stderr,
            )
        return 0

    return run_async(go())


def cmd_list(args: argparse.Namespace) -> int:
    from recovery.activities.clock import utcnow
    from recovery.client.render import run_table

    wanted = run_list.filter_from(args)

    async def go() -> int:
        found = await run_list.find_runs(await connect(), wanted, utcnow())
        if args.json:
            print_json(found)
        else:
            print(run_table(found))
        return 0

    return run_async(go())


def cmd_status(args: argparse.Namespace) -> int:
    from recovery.client import cli_pipeline, pipelines, runs
    from recovery.client.render import timeline
    from recovery.client.run_watch import watch_run

    async def go() -> int:
        client = await connect()
        if await pipelines.is_pipeline(client, args.run):
            return await cli_pipeline.show_status(client, args.run, args.json, args.watch)
        if args.watch:
            text = None if args.json else (lambda s: timeline(s, ui_link(args.run)))
            await watch_run(client, args.run, text, sys.stdout)
            return 0
        status = await runs.get_status(client, args.run)
        if args.json:
            print_json(status)
        else:
            print(timeline(status, ui_link(args.run)))
        return 0

    try:
        return run_async(go())
    except KeyboardInterrupt:
        if args.watch:
            return 0  # Ctrl-C is how a watch ends early
        raise


def ui_link(run_id: str) -> str:
    server = DevServer.from_env()
    return f"{server.ui_url}/namespaces/{settings.namespace()}/workflows/{run_id}"


def cmd_signal(args: argparse.Namespace) -> int:
    from recovery.client import runs

    async def go() -> int:
        kill = bool(getattr(args, "kill_job", False))
        await runs.signal_run(await connect(), args.run, args.command, kill_job=kill)
        if args.json:
            sent = {"run": args.run, "workflow_id": args.run, "action": args.command, "signalled": True}
            print_json({**sent, "kill_job": kill} if args.command == "cancel" else sent)
        else:
            print(f"{args.command} sent to run {args.run}")
        return 0

    return run_async(go())


# --- services ------------------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace) -> int:
    from recovery.client.config import load_config
    from recovery.worker import logs
    from recovery.worker.run_worker import log_reading, make_scheduler, serve

    config = load_config(args.config or (str(p) if (p := settings.config_path()) else None))
    overrides = {"scheduler": args.scheduler, "mode": args.mode, "metrics": args.metrics}
    if args.partitions is not None:
        overrides["partitions"] = [p for p in args.partitions.split(",") if p]
    config = config.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    logs.configure()
    scheduler = make_scheduler(config)
    log_reading(config)  # a bad signature file or progress pattern stops here, in one line

    async def go() -> int:
        await serve(await connect(metrics=config.metrics, temporal=config.temporal), scheduler, config)
        return 0

    return run_async(go())


def cmd_demo(args: argparse.Namespace) -> int:
    from recovery.worker.demo import run_demo

    return run_async(run_demo(nodes=args.nodes, keep=args.keep))


# --- parser --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = RecoveryParser(
        prog="recovery",
        description="Keep distributed training runs going: detect, diagnose, decide, restart.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('recovery')}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "submit",
        help="start a run for a batch script (or a pipeline for a PIPELINE.yaml file)",
        usage="%(prog)s [OPTIONS] [SBATCH OPTIONS] JOB.sbatch [ARGS ...]",
        epilog=SUBMIT_EPILOG,
    )
    p.add_argument("--scheduler", choices=["local", "slurm"], help=SCHEDULER_HELP)
    p.add_argument("--config", metavar="FILE", help="config file (YAML) whose `scheduler:` and `temporal:` apply")
    p.add_argument("--policy", default="default", help="a built-in policy name or a YAML file")
    p.add_argument("--run", help="a name for the run (the run id adds a short suffix)")
    p.add_argument("--nodes", type=int, help="nodes per attempt (default: #SBATCH --nodes, else 1)")
    p.add_argument(
        "--after",
        metavar="RUN[,RUN]",
        help="start the job only once these runs (or pipelines, or stages) completed; cancelled if one does not",
    )
    p.add_argument("--json", action="store_true", help=f"print {JSON_SUBMIT} on stdout")
    # Not `--wait`: that is sbatch's own (-W), which a Slurm user may type.
    p.add_argument("--wait-for-job", dest="wait", type=float, default=15.0, help=argparse.SUPPRESS)
    p.add_argument("script", metavar="JOB.sbatch")
    rest = p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")
    rest.required = False  # else a missing script is reported as "required: JOB.sbatch, ARGS"
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("list", help="list runs (newest open runs first)")
    run_list.add_arguments(p)
    p.add_argument("--json", action="store_true", help="a JSON list of runs on stdout")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("status", help="one run's (or pipeline's) timeline")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--json", action="store_true", help="the status as one JSON object (with --watch: one a line)")
    p.add_argument("--watch", action="store_true", help="draw it again whenever the run changes, until it ends")
    p.set_defaults(func=cmd_status)

    for name, text in (("pause", "stop automatic actions"), ("resume", "allow automatic actions")):
        p = sub.add_parser(name, help=text)
        p.add_argument("run", metavar="RUN")
        p.add_argument("--json", action="store_true", help=JSON_SIGNAL)
        p.set_defaults(func=cmd_signal)
    p = sub.add_parser("cancel", help="stop recovering a run")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--kill-job", action="store_true", help="also cancel the run's job")
    p.add_argument("--json", action="store_true", help=JSON_SIGNAL + " (with kill_job)")
    p.set_defaults(func=cmd_signal)
    run_logs.register(sub)
    cli_pipeline.register(sub)

    p = sub.add_parser("worker", help="run a worker (foreground)")
    p.add_argument("--scheduler", choices=["local", "slurm"])
    p.add_argument("--mode", choices=["observe", "act"], help="default: act on local, observe on Slurm")
    p.add_argument("--partitions", metavar="P1,P2", help="manage opted-in jobs only in these partitions")
    p.add_argument("--metrics", metavar="HOST:PORT", help="serve Prometheus metrics here")
    p.add_argument("--config", metavar="FILE", help="worker config (YAML); also RECOVERY_CONFIG")
    p.set_defaults(func=cmd_worker)

    cli_dev_server.register(sub)
    cli_cluster.register(sub)
    cli_diagnose.register(sub)
    cli_nodes.register(sub)
    cli_policy.register(sub)
    cli_upgrades.register(sub)
    cli_completion.register(sub, parser)

    p = sub.add_parser("demo", help="the one-command showcase")
    p.add_argument("--nodes", type=int, default=4, help=argparse.SUPPRESS)
    p.add_argument("--keep", action="store_true", help="leave the dev server and cluster running")
    p.set_defaults(func=cmd_demo)
    cli_options.add_connection_options(parser, sub)
    return parser


def dispatch(argv: list[str] | None = None) -> int:
    from recovery.client.submit_argv import command_line
    from recovery.worker import logs

    parser = build_parser()
    # stdout is the command's answer (JSON only with --json); whatever the code it calls
    # logs (sbatch's job id, ...) goes to stderr, warnings only: an error stays one line there.
    # structlog's default would print to stdout. `worker` configures its own level.
    logs.configure(logging.WARNING)
    try:
        # `submit` takes sbatch's own options before the script (client/submit_argv.py).
        args, sbatch = command_line(parser, sys.argv[1:] if argv is None else argv)
        if args.command is None:  # a bare `recovery`: what it can do, not an error
            parser.print_help()
            return 0
        args.sbatch_options = sbatch
        cli_options.apply_connection_options(args)
        handler: Handler = args.func
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except (
        CliError,
        OptionError,
        TemporalUnavailable,
        DevServerError,
        PolicyError,
        ConfigError,
        CatalogError,
        ProgressError,
        SubmitError,
        RunError,
        SchedulerError,
    ) as e:
        return fail(str(e).splitlines()[0] if str(e) else type(e).__name__)


def main(argv: list[str] | None = None) -> None:
    code = dispatch(argv)
    # temporalio's native runtime can abort at interpreter exit after a worker ran
    # (shared/notes/temporal-here.md): flush and leave without running finalizers.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
