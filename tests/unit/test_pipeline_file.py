"""`recovery submit pipeline.yaml`: the file is read whole and checked before anything starts; each
problem is one line naming the file and the line it is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from recovery.client.pipeline_file import PipelineError, is_pipeline_file, load_pipeline
from recovery.workflows.pipeline_models import stage_run_id

GOOD = """\
name: pretrain-eval
stages:
  - name: prep
    script: prep.sbatch
    args: [--fast]
    nodes: 1
    policy: default
  - name: train
    script: jobs/train.sbatch
    nodes: 2
    needs: [prep]
  - name: eval
    script: eval.sbatch
    needs: [train]
    on_dependency_failure: hold
"""


def write(
    tmp_path: Path, text: str, scripts: tuple[str, ...] = ("prep.sbatch", "jobs/train.sbatch", "eval.sbatch")
) -> str:
    for name in scripts:
        script = tmp_path / name
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text("#!/bin/bash\n#SBATCH --nodes=3\ntrue\n")
    path = tmp_path / "pipeline.yaml"
    path.write_text(text)
    return str(path)


def problem(tmp_path: Path, text: str, **kw: tuple[str, ...]) -> str:
    path = write(tmp_path, text, **kw)
    with pytest.raises(PipelineError) as caught:
        load_pipeline(path, "local")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(path)
    return message.removeprefix(path)


def test_a_good_file_gives_every_stage_its_run_spec(tmp_path: Path) -> None:
    loaded = load_pipeline(write(tmp_path, GOOD), "local")
    assert loaded.name == "pretrain-eval"
    assert loaded.pipeline_id.startswith("pretrain-eval-")
    prep, train, evaluate = loaded.stages
    assert [s.name for s in loaded.stages] == ["prep", "train", "eval"]
    assert train.needs == ["prep"] and evaluate.needs == ["train"] and prep.needs == []
    assert evaluate.on_dependency_failure == "hold" and train.on_dependency_failure == "cancel"
    assert train.spec.run_id == stage_run_id(loaded.pipeline_id, "train")
    assert train.spec.script_path == str(tmp_path / "jobs" / "train.sbatch")  # relative to the file
    assert train.spec.workdir == str(tmp_path)
    assert prep.spec.args == ["--fast"] and prep.spec.nodes == 1
    assert train.spec.nodes == 2
    assert evaluate.spec.nodes == 3  # the script's own #SBATCH --nodes
    assert prep.spec.policy.name == "default"
    assert train.memo["pipeline"] == loaded.pipeline_id


def test_stage_run_ids_are_derived_from_pipeline_and_stage() -> None:
    assert stage_run_id("p-1a2b3c", "train") == stage_run_id("p-1a2b3c", "train")
    assert stage_run_id("p-1a2b3c", "train") != stage_run_id("p-1a2b3c", "eval")


def test_a_cycle_is_named_with_its_stages(tmp_path: Path) -> None:
    text = GOOD.replace("    nodes: 1\n", "    nodes: 1\n    needs: [eval]\n")
    assert problem(tmp_path, text) == ":7: the stages' needs form a cycle: prep -> eval -> train -> prep"


def test_a_stage_needing_itself_is_a_cycle(tmp_path: Path) -> None:
    text = GOOD.replace("needs: [train]", "needs: [eval]")
    assert problem(tmp_path, text) == ":14: the stages' needs form a cycle: eval -> eval"


def test_an_unknown_stage_in_needs(tmp_path: Path) -> None:
    text = GOOD.replace("needs: [prep]", "needs: [prep, pre]")
    assert problem(tmp_path, text) == ":11: stage 'train' needs unknown stage 'pre'"


def test_a_stage_named_twice(tmp_path: Path) -> None:
    text = GOOD.replace("name: eval", "name: prep")
    assert problem(tmp_path, text) == ":12: stage 'prep' is named twice"


def test_a_missing_script_is_named_relative_to_the_file(tmp_path: Path) -> None:
    message = problem(tmp_path, GOOD, scripts=("prep.sbatch", "eval.sbatch"))
    assert message.startswith(":9: stage 'train': ")
    assert str(tmp_path / "jobs" / "train.sbatch") in message
    assert "cannot read the batch script" in message


def test_a_bad_on_dependency_failure(tmp_path: Path) -> None:
    message = problem(tmp_path, GOOD.replace("on_dependency_failure: hold", "on_dependency_failure: wait"))
    assert message.startswith(":15: key 'stages.2.on_dependency_failure': ")
    assert "'cancel' or 'hold'" in message


def test_an_unknown_key_and_an_unknown_policy(tmp_path: Path) -> None:
    assert problem(tmp_path, GOOD.replace("nodes: 2", "node: 2")) == ":10: unknown key 'stages.1.node'"
    message = problem(tmp_path, GOOD.replace("policy: default", "policy: nosuch"))
    assert message.startswith(":7: stage 'prep': unknown policy 'nosuch'")


def test_malformed_files(tmp_path: Path) -> None:
    assert problem(tmp_path, "name: x\nstages: [\n").startswith(":3: not valid YAML")
    assert problem(tmp_path, "- a\n") == ":1: a pipeline must be a mapping of keys"
    assert problem(tmp_path, "name: x\nstages: []\n").startswith(":2: key 'stages': List should have at least 1 item")
    assert problem(tmp_path, GOOD.replace("name: train", "name: 'tr ain'")).startswith(":8: key 'stages.1.name'")


def test_a_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.yaml")
    with pytest.raises(PipelineError, match=r"nope.yaml: cannot read pipeline file"):
        load_pipeline(path, "local")


def test_pipeline_files_are_told_apart_by_suffix() -> None:
    assert is_pipeline_file("p.yaml") and is_pipeline_file("dir/p.yml")
    assert not is_pipeline_file("job.sbatch") and not is_pipeline_file("job.sh")
