"""Turning `recovery submit pipeline.yaml` into a PipelineInput, checking everything first: the
file's keys, the stages' graph, every script and policy. A problem is one line naming the file and
its line; nothing is started."""

from __future__ import annotations

import getpass
from pathlib import Path

from recovery.activities.clock import utcnow
from recovery.client.runs import memo
from recovery.client.submit import SubmitError, build_spec, make_run_id
from recovery.workflows.pipeline_models import (
    PipelineFile,
    PipelineInput,
    PipelineStage,
    StageFile,
    graph_problem,
    stage_run_id,
)
from recovery.workflows.policy_files import PolicyError
from recovery.workflows.yaml_models import KeyLines, YamlModelError, parse_model_lines, place, read_text

SUFFIXES = (".yaml", ".yml")


class PipelineError(YamlModelError, SubmitError):
    """A pipeline file that cannot be used; the message is one line naming file and line (a
    SubmitError too: `submit` reports it as it reports a bad batch script)."""


def is_pipeline_file(path: str) -> bool:
    """`submit` takes a pipeline file where it would take a batch script: told apart by suffix."""
    return Path(path).suffix in SUFFIXES


def load_pipeline(path: str, scheduler: str) -> PipelineInput:
    text = read_text(path, "pipeline", PipelineError)
    parsed, lines = parse_model_lines(text, path, PipelineFile, "pipeline", PipelineError)
    problem = graph_problem(parsed.stages)
    if problem is not None:
        raise PipelineError(f"{place(path, lines, 'stages', str(problem.index), problem.key)}: {problem.message}")
    pipeline_id = make_run_id(parsed.name)
    stages = [_stage(path, lines, i, stage, pipeline_id, scheduler) for i, stage in enumerate(parsed.stages)]
    return PipelineInput(
        pipeline_id=pipeline_id,
        name=parsed.name,
        owner=getpass.getuser(),
        scheduler=scheduler,
        file=str(Path(path).absolute()),
        submitted_at=utcnow(),
        stages=stages,
    )


def _stage(path: str, lines: KeyLines, index: int, stage: StageFile, pipeline_id: str, scheduler: str) -> PipelineStage:
    """The stage's run spec, as `submit` builds one for its script (read relative to the file)."""
    base = Path(path).absolute().parent
    try:
        spec = build_spec(str(base / stage.script), stage.args, scheduler, stage.policy, stage.name, stage.nodes, base)
    except (SubmitError, PolicyError) as e:
        key = "script" if isinstance(e, SubmitError) else "policy"
        raise PipelineError(f"{place(path, lines, 'stages', str(index), key)}: stage {stage.name!r}: {e}") from None
    spec.run_id = stage_run_id(pipeline_id, stage.name)
    return PipelineStage(
        name=stage.name,
        needs=stage.needs,
        on_dependency_failure=stage.on_dependency_failure,
        spec=spec,
        memo={**memo(spec), "pipeline": pipeline_id},
    )
