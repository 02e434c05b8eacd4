"""Client-side operations on pipelines: start one, tell a pipeline's id from a run's, read its
status, and its timeline for people. Signals need nothing of their own: a pipeline takes
`pause`, `resume` and `cancel` under the same names as a run (`runs.signal_run`)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from recovery import settings
from recovery.activities.clock import utcnow
from recovery.client.pipeline_view import PipelineView, build_view
from recovery.client.runs import RunError, get_status, raise_namespace_problem
from recovery.workflows import search_attributes as sa
from recovery.workflows.pipeline_models import PIPELINE, PipelineInput, PipelineStatus, ReleaseRequest, StageState


async def start_pipeline(client: Client, inp: PipelineInput) -> WorkflowHandle[object, PipelineStatus]:
    memo = {"name": inp.name, "owner": inp.owner, "script": inp.file, "submitted": inp.submitted_at.isoformat()}
    try:
        return await client.start_workflow(
            PIPELINE,
            inp,
            id=inp.pipeline_id,
            task_queue=settings.task_queue(),
            search_attributes=sa.at_start(inp.scheduler, inp.owner, inp.pipeline_id),
            memo=memo,
            static_summary=f"pipeline {' '.join(inp.name.split())}: {len(inp.stages)} stages from {inp.file}",
            result_type=PipelineStatus,
        )
    except RPCError as e:
        raise_namespace_problem(e, client.namespace)
        raise


async def is_pipeline(client: Client, workflow_id: str) -> bool:
    """Whether the id is a pipeline's (False for a run's, and for an id nothing has)."""
    try:
        description = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return description.workflow_type == PIPELINE


async def pipeline_status(client: Client, pipeline_id: str) -> PipelineStatus:
    """Its result once it has finished, else a live query to a worker."""
    handle = client.get_workflow_handle(pipeline_id, result_type=PipelineStatus)
    description = await handle.describe()
    if description.status == WorkflowExecutionStatus.COMPLETED:
        result: PipelineStatus = await handle.result()
        return result
    try:
        status: PipelineStatus = await handle.query(
            "status", result_type=PipelineStatus, rpc_timeout=timedelta(seconds=10)
        )
    except RPCError as e:
        raise RunError(
            f"pipeline {pipeline_id!r} did not answer the status query ({e.message}); is `recovery worker` running?"
        ) from None
    return status


async def pipeline_view(client: Client, pipeline_id: str) -> PipelineView:
    """The pipeline's status with each started stage's run status: its timeline and goodput."""
    status = await pipeline_status(client, pipeline_id)
    stage_runs = {}
    for stage in status.stages:
        if stage.state in (StageState.WAITING, StageState.HELD):
            continue  # never released: no run yet
        try:
            stage_runs[stage.name] = await get_status(client, stage.run)
        except RunError:
            continue  # released an instant ago, or its run is gone: the stage's own line says enough
    return build_view(status, stage_runs, utcnow())


async def release_held(client: Client, target: str) -> tuple[str, list[str]]:
    """`release PIPELINE[.STAGE]`: send the pipeline's `release` signal for that held stage, or
    for all its held stages; (pipeline id, stages released). RunError (one line), nothing sent,
    for an unknown pipeline or stage, a stage that is not held, or none held."""
    pipeline_id, stage = target, None
    if not await is_pipeline(client, target):
        pipeline_id, _, stage = target.rpartition(".")
        if not pipeline_id or not await is_pipeline(client, pipeline_id):
            raise RunError(f"no pipeline {target!r} (give PIPELINE or PIPELINE.STAGE)")
    handle = client.get_workflow_handle(pipeline_id)
    if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
        raise RunError(f"pipeline {pipeline_id!r} has already ended")
    status = await pipeline_status(client, pipeline_id)
    held = [s.name for s in status.stages if s.state is StageState.HELD]
    if stage is not None:
        found = next((s for s in status.stages if s.name == stage), None)
        if found is None:
            raise RunError(f"pipeline {pipeline_id!r} has no stage {stage!r}")
        if found.state is not StageState.HELD:
            raise RunError(f"stage {stage!r} of pipeline {pipeline_id!r} is not held (it is {found.state.value})")
        held = [stage]
    if not held:
        raise RunError(f"pipeline {pipeline_id!r} has no held stage")
    await handle.signal("release", ReleaseRequest(stages=held))
    return pipeline_id, held


async def run_of(client: Client, run_id: str) -> str:
    """The run `logs` reads for an id: the id itself, or the stage's run of a one-stage pipeline
    (a run chained with `submit --after`, whose id is its pipeline's). RunError (one line) for a
    pipeline of several stages, or one whose stage has no job yet."""
    if not await is_pipeline(client, run_id):
        return run_id
    status = await pipeline_status(client, run_id)
    if len(status.stages) != 1:
        runs = ", ".join(s.run for s in status.stages)
        raise RunError(f"{run_id!r} is a pipeline: logs read one run, so give one of its stages' ({runs})")
    stage = status.stages[0]
    if stage.state in (StageState.WAITING, StageState.HELD):
        raise RunError(f"run {run_id!r} has not started yet ({stage.detail or stage.state.value})")
    return stage.run
