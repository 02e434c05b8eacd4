"""Client-side operations on pipelines: start one, tell a pipeline's id from a run's, read its
status, and its timeline for people. Signals need nothing of their own: a pipeline takes
`pause`, `resume` and `cancel` under the same names as a run (`runs.signal_run`)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from recovery import settings
from recovery.client.format import when
from recovery.client.runs import RunError, raise_namespace_problem
from recovery.workflows import search_attributes as sa
from recovery.workflows.pipeline_models import PIPELINE, PipelineInput, PipelineStatus


async def start_pipeline(client: Client, inp: PipelineInput) -> WorkflowHandle[object, PipelineStatus]:
    memo = {"name": inp.name, "owner": inp.owner, "script": inp.file, "submitted": inp.submitted_at.isoformat()}
    try:
        return await client.start_workflow(
            PIPELINE,
            inp,
            id=inp.pipeline_id,
            task_queue=settings.task_queue(),
            search_attributes=sa.at_start(inp.scheduler, inp.owner),
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


def pipeline_timeline(status: PipelineStatus) -> str:
    p = status.pipeline
    paused = " (paused)" if p.paused and p.state.value != "paused" else ""
    lines = [f"pipeline {p.id}  {p.name}  state {p.state.value}{paused}", f"  owner {p.owner}", "", "stages:"]
    for s in status.stages:
        needs = f"  needs {', '.join(s.needs)}" if s.needs else ""
        detail = f"  ({s.detail})" if s.detail else ""
        lines.append(f"  {s.name:<16} {s.state.value:<10} run {s.run}{needs}{detail}")
    lines += ["", "actions:"]
    lines += [f"  {when(a.at)}  {a.kind:<11} {a.stage}  {a.detail}" for a in status.actions]
    lines.append("")
    lines.append("each stage's attempts and recoveries: recovery status RUN")
    return "\n".join(lines)
