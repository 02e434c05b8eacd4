"""The command line's pipeline parts: `submit PIPELINE.yaml` and `status PIPELINE`. `list` shows
pipelines beside runs (`runs.iter_runs`); `pause`, `resume` and `cancel` need nothing of their own."""

from __future__ import annotations

import argparse

from temporalio.client import Client

from recovery.client import pipelines
from recovery.client.console import print_json
from recovery.client.pipeline_file import PipelineError, load_pipeline
from recovery.client.runs import RunError
from recovery.client.temporal_client import connect

JSON_SUBMIT = '{"pipeline": ID, "workflow_id": ..., "stages": {NAME: RUN_ID}}'
# submit's options that a pipeline file sets per stage instead.
_PER_STAGE = {"args": "ARGS", "nodes": "--nodes", "run": "--run", "sbatch_options": "sbatch options"}


async def submit(args: argparse.Namespace, scheduler: str, client: Client | None = None) -> int:
    """Check the whole file, then start the pipeline (nothing starts when the file is bad)."""
    given = [flag for key, flag in _PER_STAGE.items() if getattr(args, key, None)]
    if args.policy != "default":
        given.append("--policy")
    if given:
        raise PipelineError(
            f"{args.script}: {', '.join(given)} apply to a batch script; a pipeline file sets them per stage"
        )
    inp = load_pipeline(args.script, scheduler)
    await pipelines.start_pipeline(client or await connect(), inp)
    stages = {s.name: s.spec.run_id for s in inp.stages}
    if args.json:
        print_json({"pipeline": inp.pipeline_id, "workflow_id": inp.pipeline_id, "stages": stages})
    else:
        print(f"pipeline {inp.pipeline_id} started on the {scheduler} scheduler: {len(stages)} stages")
        for name, run in stages.items():
            print(f"  {name}: run {run}")
    return 0


async def show_status(client: Client, pipeline_id: str, as_json: bool, watch: bool = False) -> int:
    if watch:
        raise RunError(f"{pipeline_id!r} is a pipeline: --watch follows one run; watch a stage's run instead")
    status = await pipelines.pipeline_status(client, pipeline_id)
    if as_json:
        print_json(status)
    else:
        print(pipelines.pipeline_timeline(status))
    return 0
