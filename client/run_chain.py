"""`recovery submit JOB.sbatch --after RUN[,RUN]`: a run chained after others.

The chained run is a one-stage pipeline (its id is the run id `submit` prints) whose stage, the
run itself (`RUN_ID.run`), is released once every run it follows completed. The dependency is
owned by that durable workflow, not by the scheduler's job ids: a run it follows that is
recovered as a new job still releases it, and a worker killed meanwhile loses nothing.
"""

from __future__ import annotations

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from recovery.client import pipelines
from recovery.client.runs import RunError, memo
from recovery.workflows.models import TRAINING_RUN, RunSpec
from recovery.workflows.pipeline_models import AFTER_STAGE, PIPELINE, PipelineInput, PipelineStage, stage_run_id


def parse_after(value: str) -> list[str]:
    """The run ids of `--after RUN[,RUN]`, each once, in order; RunError (one line) if none."""
    runs = list(dict.fromkeys(run.strip() for run in value.split(",") if run.strip()))
    if not runs:
        raise RunError("--after needs a run id (RUN[,RUN])")
    return runs


async def check_after(client: Client, runs: list[str]) -> None:
    """Every run named exists and is a run or a pipeline, or is a stage of a pipeline (which has
    no run before it starts); RunError otherwise, before anything is started."""
    for run in runs:
        try:
            description = await client.get_workflow_handle(run).describe()
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND:
                if await _is_stage(client, run):
                    continue
                raise RunError(f"--after: no run {run!r}; nothing was started") from None
            raise
        if description.workflow_type not in (TRAINING_RUN, PIPELINE):
            raise RunError(
                f"--after: {run!r} is a {description.workflow_type} workflow, not a run; nothing was started"
            )


async def _is_stage(client: Client, run: str) -> bool:
    """Whether `run` is `PIPELINE.STAGE` of a pipeline that has such a stage."""
    pipeline_id, _, name = run.rpartition(".")
    if not pipeline_id or not await pipelines.is_pipeline(client, pipeline_id):
        return False
    status = await pipelines.pipeline_status(client, pipeline_id)
    return any(stage.name == name for stage in status.stages)


def chained(spec: RunSpec, after: list[str]) -> PipelineInput:
    """The one-stage pipeline that runs `spec` after the runs named: it takes the run's id, and
    the run itself becomes its stage `run`."""
    pipeline_id = spec.run_id
    stage_spec = spec.model_copy(update={"run_id": stage_run_id(pipeline_id, AFTER_STAGE)})
    stage = PipelineStage(name=AFTER_STAGE, spec=stage_spec, memo={**memo(stage_spec), "pipeline": pipeline_id})
    return PipelineInput(
        pipeline_id=pipeline_id,
        name=spec.name,
        owner=spec.owner,
        scheduler=spec.scheduler,
        file=spec.script_path,
        submitted_at=spec.submitted_at,
        stages=[stage],
        after=after,
    )
