"""Waiting for other runs to end: the activity behind `recovery submit JOB.sbatch --after RUN`.

A workflow cannot await a workflow that is not its child, so this activity reads the named runs'
workflows from Temporal until each has ended, heartbeating as it goes. It only reads: retried
after a worker died, it simply looks again.
"""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from recovery.workflows.models import TRAINING_RUN, RunState, RunStatus
from recovery.workflows.pipeline_models import PIPELINE, AwaitRunsInput, PipelineStatus, RunEnd, StageState

# A workflow in these has not ended: its run may still complete.
_OPEN = (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW)


class RunWaitActivities:
    def __init__(self, client: Client) -> None:
        self.client = client

    @activity.defn(name="await_runs")
    async def await_runs(self, inp: AwaitRunsInput) -> list[RunEnd]:
        """The runs' ends once all completed, or as soon as one gave up or was cancelled (then
        that one's end and those of the ones that completed before it)."""
        ended: dict[str, RunEnd] = {}
        while True:
            for run in inp.runs:
                if run in ended:
                    continue
                end = await self.run_end(run)
                if end is None:
                    continue
                ended[run] = end
                if end.state is not RunState.COMPLETED:
                    return list(ended.values())
            if len(ended) == len(inp.runs):
                return [ended[run] for run in inp.runs]
            activity.heartbeat(f"{len(ended)} of {len(inp.runs)} runs ended")
            await asyncio.sleep(inp.poll_seconds)

    async def run_end(self, run: str) -> RunEnd | None:
        """How the run ended, or None while it goes on (its latest execution, across continue-as-new)."""
        handle = self.client.get_workflow_handle(run)
        try:
            description = await handle.describe()
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND:
                return await self.unstarted_stage_end(run)
            raise  # the server away: retried, and the next try looks again
        status = description.status
        if status is None or status in _OPEN:
            return None
        if status == WorkflowExecutionStatus.COMPLETED:
            return RunEnd(run=run, state=await self.final_state(run, description.workflow_type))
        if status == WorkflowExecutionStatus.CANCELED:
            return RunEnd(run=run, state=RunState.CANCELLED, detail="its workflow was cancelled")
        return RunEnd(run=run, state=RunState.GAVE_UP, detail=f"its workflow {status.name.lower().replace('_', ' ')}")

    async def unstarted_stage_end(self, run: str) -> RunEnd | None:
        """A run with no workflow: a pipeline's stage not started yet (`PIPELINE.STAGE`), or gone.
        None while the stage may still run; its end once its pipeline says it never will."""
        gone = RunEnd(run=run, state=RunState.GAVE_UP, detail="Temporal does not know it (any more)")
        pipeline_id, _, name = run.rpartition(".")
        if not pipeline_id:
            return gone
        handle = self.client.get_workflow_handle(pipeline_id, result_type=PipelineStatus)
        try:
            description = await handle.describe()
            if description.workflow_type != PIPELINE:
                return gone
            if description.status not in (*_OPEN, WorkflowExecutionStatus.COMPLETED):
                return RunEnd(run=run, state=RunState.CANCELLED, detail=f"its pipeline {pipeline_id} ended")
            status: PipelineStatus = await (
                handle.result()
                if description.status == WorkflowExecutionStatus.COMPLETED
                else handle.query("status", result_type=PipelineStatus)
            )
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND:
                return gone
            raise  # the server away, or no worker answered the query yet: the next try looks again
        stage = next((s for s in status.stages if s.name == name), None)
        if stage is None:
            return gone
        if not stage.state.failed:
            return None  # waiting, held, or started since (its run exists now: the next look reads it)
        state = RunState.GAVE_UP if stage.state is StageState.GAVE_UP else RunState.CANCELLED
        return RunEnd(run=run, state=state, detail=f"a stage of {pipeline_id} that never ran: {stage.detail}")

    async def final_state(self, run: str, workflow_type: str) -> RunState:
        """A completed workflow's own verdict: a run (or pipeline) that gave up still completes its workflow."""
        if workflow_type == TRAINING_RUN:
            status: RunStatus = await self.client.get_workflow_handle(run, result_type=RunStatus).result()
            return status.run.state
        if workflow_type == PIPELINE:
            pipeline: PipelineStatus = await self.client.get_workflow_handle(run, result_type=PipelineStatus).result()
            return pipeline.pipeline.state
        return RunState.COMPLETED  # another workflow type: its completion is all it says
