"""The command line's pipeline parts: `submit PIPELINE.yaml` and `status PIPELINE`. `list` shows
pipelines beside runs (`runs.iter_runs`); `pause`, `resume` and `cancel` need nothing of their own."""

from __future__ import annotations

import argparse
import asyncio

from temporalio.client import Client

from recovery.client import pipelines, run_chain
from recovery.client.config import TemporalConfig
from recovery.client.console import print_json
from recovery.client.pipeline_file import PipelineError, load_pipeline
from recovery.client.pipeline_view import pipeline_timeline
from recovery.client.runs import RunError
from recovery.client.temporal_client import connect
from recovery.workflows.models import RunSpec
from recovery.workflows.pipeline_models import AFTER_STAGE

JSON_SUBMIT = '{"pipeline": ID, "workflow_id": ..., "stages": {NAME: RUN_ID}}'
# submit's options that a pipeline file sets per stage instead.
_PER_STAGE = {"args": "ARGS", "nodes": "--nodes", "run": "--run", "sbatch_options": "sbatch options"}


async def submit(
    args: argparse.Namespace, scheduler: str, client: Client | None = None, after: list[str] | None = None
) -> int:
    """Check the whole file (and the runs it follows), then start the pipeline (nothing starts
    when one is bad)."""
    given = [flag for key, flag in _PER_STAGE.items() if getattr(args, key, None)]
    if args.policy != "default":
        given.append("--policy")
    if given:
        raise PipelineError(
            f"{args.script}: {', '.join(given)} apply to a batch script; a pipeline file sets them per stage"
        )
    inp = load_pipeline(args.script, scheduler)
    client = client or await connect()
    if after:
        await run_chain.check_after(client, after)
        inp.after = after
    await pipelines.start_pipeline(client, inp)
    stages = {s.name: s.spec.run_id for s in inp.stages}
    if args.json:
        print_json({"pipeline": inp.pipeline_id, "workflow_id": inp.pipeline_id, "stages": stages})
    else:
        print(f"pipeline {inp.pipeline_id} started on the {scheduler} scheduler: {len(stages)} stages")
        for name, run in stages.items():
            print(f"  {name}: run {run}")
    return 0


async def submit_chained(
    spec: RunSpec, after: list[str], as_json: bool, where: str, temporal: TemporalConfig | None = None
) -> int:
    """`submit JOB.sbatch --after RUN[,RUN]`: the runs named must exist; then the chained run's
    pipeline starts, and its job only once they completed (so no job id yet)."""
    client = await connect(temporal=temporal)
    await run_chain.check_after(client, after)
    inp = run_chain.chained(spec, after)
    await pipelines.start_pipeline(client, inp)
    stages = {s.name: s.spec.run_id for s in inp.stages}
    if as_json:
        print_json(
            {"run": spec.run_id, "workflow_id": spec.run_id, "job_id": None, "scheduler": spec.scheduler,
             "after": after, "stages": stages}
        )  # fmt: skip
    else:
        print(f"run {spec.run_id} started {where}: its job starts once {', '.join(after)} completed")
        print(f"  (its job runs as stage {AFTER_STAGE}, run {stages[AFTER_STAGE]})")
    return 0


async def show_status(client: Client, pipeline_id: str, as_json: bool, watch: bool = False) -> int:
    if watch:
        raise RunError(f"{pipeline_id!r} is a pipeline: --watch follows one run; watch a stage's run instead")
    view = await pipelines.pipeline_view(client, pipeline_id)
    if as_json:
        print_json(view)
    else:
        print(pipeline_timeline(view))
    return 0


JSON_RELEASE = '{"pipeline": ID, "workflow_id": ID, "action": "release", "signalled": true, "stages": [NAME]}'


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("release", help="let a pipeline's held stages run (all of them, or PIPELINE.STAGE)")
    p.add_argument("target", metavar="PIPELINE[.STAGE]")
    p.add_argument("--json", action="store_true", help=f"print {JSON_RELEASE} on stdout")
    p.set_defaults(func=cmd_release)


def cmd_release(args: argparse.Namespace) -> int:
    """A stage held because a stage it needs gave up or was cancelled runs once released."""

    async def go() -> int:
        pipeline_id, stages = await pipelines.release_held(await connect(), args.target)
        if args.json:
            sent = {"pipeline": pipeline_id, "workflow_id": pipeline_id, "action": "release", "signalled": True}
            print_json({**sent, "stages": stages})
        else:
            print(f"release sent to pipeline {pipeline_id}: {', '.join(stages)}")
        return 0

    return asyncio.run(go())
