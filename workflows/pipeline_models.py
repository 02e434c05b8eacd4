"""Pipelines: the file a person writes (`PipelineFile`), and what the `Pipeline` workflow is
given (`PipelineInput`) and answers (`PipelineStatus`). Pure: no files, no Temporal.

Names follow the public contract (interfaces.md, "Pipelines"): the file's keys, and `pipeline`,
`stages` (`name`, `run`, `state`, `needs`) and `actions` (`dag_release`) in `status --json`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from recovery.workflows.models import Model, RunSpec, RunState

# The pipeline's workflow type, beside TRAINING_RUN: the client lists and queries it by name.
PIPELINE = "Pipeline"

# A stage's name becomes part of its run id (a workflow id and a Slurm job name), so it keeps to
# the characters run ids are made of.
STAGE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"

DependencyFailure = Literal["cancel", "hold"]


class StageFile(Model):
    """One stage as written in the pipeline file."""

    name: str = Field(pattern=STAGE_NAME, max_length=40)
    script: str = Field(min_length=1)  # relative to the pipeline file
    args: list[str] = Field(default_factory=list)
    nodes: int | None = Field(default=None, ge=1)  # default: the script's #SBATCH --nodes, else 1
    policy: str = "default"
    needs: list[str] = Field(default_factory=list)
    # When a stage this one needs gives up or is cancelled: cancel this one too, or hold it
    # until an operator releases or cancels it.
    on_dependency_failure: DependencyFailure = "cancel"


class PipelineFile(Model):
    """`recovery submit pipeline.yaml`: the whole file."""

    name: str = Field(min_length=1)
    stages: list[StageFile] = Field(min_length=1)


class GraphProblem(Model):
    """What is wrong with a pipeline's `needs`: the stage (its index in the file) and why."""

    index: int
    key: Literal["name", "needs"]
    message: str


def graph_problem(stages: list[StageFile]) -> GraphProblem | None:
    """The first duplicate name, unknown need or cycle among the stages; None when they form a DAG."""
    index = {}
    for i, stage in enumerate(stages):
        if stage.name in index:
            return GraphProblem(index=i, key="name", message=f"stage {stage.name!r} is named twice")
        index[stage.name] = i
    for i, stage in enumerate(stages):
        for need in stage.needs:
            if need not in index:
                return GraphProblem(index=i, key="needs", message=f"stage {stage.name!r} needs unknown stage {need!r}")
    cycle = _cycle({s.name: s.needs for s in stages})
    if cycle:
        path = " -> ".join([*cycle, cycle[0]])
        return GraphProblem(index=index[cycle[0]], key="needs", message=f"the stages' needs form a cycle: {path}")
    return None


def _cycle(needs: dict[str, list[str]]) -> list[str]:
    """One cycle of the graph as the list of its stages, or [] (depth-first, in file order)."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return path[path.index(name) :]
        if name in done:
            return []
        for need in needs[name]:
            found = visit(need, [*path, name])
            if found:
                return found
        done.add(name)
        return []

    for name in needs:
        found = visit(name, [])
        if found:
            return found
    return []


def stage_run_id(pipeline_id: str, stage: str) -> str:
    """A stage's run id (its TrainingRun's workflow id): the same stage of the same pipeline always
    gets the same one, so a pipeline that retries a start finds the child it already started."""
    return f"{pipeline_id}.{stage}"


class PipelineStage(Model):
    """A stage as the workflow gets it: its graph place and its run's spec, ready to start."""

    name: str
    needs: list[str] = Field(default_factory=list)
    on_dependency_failure: DependencyFailure = "cancel"
    spec: RunSpec  # run_id = stage_run_id(pipeline, name)
    memo: dict[str, str] = Field(default_factory=dict)  # the child run's memo (as `submit` gives a run)


class PipelineInput(Model):
    pipeline_id: str
    name: str
    owner: str
    scheduler: str
    file: str  # the pipeline file's path, for people
    submitted_at: datetime
    stages: list[PipelineStage] = Field(min_length=1)
    # Runs outside the pipeline (run or pipeline ids) that every stage waits for: `submit
    # JOB.sbatch --after RUN[,RUN]` is a one-stage pipeline with these. One of them giving up or
    # being cancelled cancels every stage.
    after: list[str] = Field(default_factory=list)


class StageState(StrEnum):
    """Where a stage stands: `waiting` for its needs, `held` (a need failed and the file says
    `hold`), `running` while its run lives, then its run's end state."""

    WAITING = "waiting"
    HELD = "held"
    RUNNING = "running"
    COMPLETED = "completed"
    GAVE_UP = "gave_up"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (StageState.COMPLETED, StageState.GAVE_UP, StageState.CANCELLED)

    @property
    def failed(self) -> bool:
        return self in (StageState.GAVE_UP, StageState.CANCELLED)


class StageStatus(Model):
    name: str
    run: str
    state: StageState
    needs: list[str]
    detail: str = ""


class PipelineSummary(Model):
    id: str
    name: str
    state: RunState
    paused: bool = False
    owner: str = ""
    scheduler: str = ""


class PipelineAction(Model):
    """One thing the pipeline did to a stage: `dag_release` starts it once its needs completed;
    `cancel` and `hold` follow a need that gave up or was cancelled."""

    kind: Literal["dag_release", "cancel", "hold"]
    stage: str
    run: str
    at: datetime
    detail: str = ""


class PipelineStatus(Model):
    """`status PIPELINE --json` and the workflow's `status` query."""

    pipeline: PipelineSummary
    stages: list[StageStatus]
    actions: list[PipelineAction] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)  # the outside runs it waits for (PipelineInput.after)


class ReleaseRequest(Model):
    """Signal `release`: start held stages anyway (all of them, or the ones named)."""

    stages: list[str] = Field(default_factory=list)


# Schedulers on which a pipeline submits its waiting stages at the start, held, and releases
# each (`dag_release`) once its needs completed: Slurm, and the local scheduler, which holds
# the same way. Elsewhere a stage's job is submitted when it is released.
HOLDING_SCHEDULERS = ("slurm", "local")


class StageJobInput(Model):
    """`dag_release` / `dag_cancel`: the held job a pipeline submitted for one stage."""

    pipeline_id: str
    stage: str
    run_id: str
    job_id: str
    token: str  # the stage's run's first token: the job is this stage's only while it carries it
    restart_count: int = 0


class StageJobResult(Model):
    changed: bool
    detail: str


# A chained run's one stage (`submit JOB.sbatch --after RUN`): its run id is `PIPELINE_ID.run`.
AFTER_STAGE = "run"


class AwaitRunsInput(Model):
    """Activity `await_runs`: wait until every run named has ended, or one did not complete."""

    runs: list[str] = Field(min_length=1)
    poll_seconds: float = Field(default=1.0, gt=0)


class RunEnd(Model):
    """How an outside run (or pipeline) ended: its final state, as its own status says."""

    run: str
    state: RunState
    detail: str = ""
