"""sbatch's own options before the script of `recovery submit`: read as sbatch's getopt_long
reads them, told apart from recovery's, clashes resolved by the documented rule."""

from __future__ import annotations

import pytest

from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.schedulers.local.adapter import local_request
from recovery.activities.schedulers.sbatch_options import SBATCH_OPTIONS, SbatchOptionError, read_options, typed
from recovery.activities.schedulers.slurm import sbatch_only, sbatch_options
from recovery.activities.schedulers.slurm_comment import parse_comment
from recovery.client.submit import SubmitError
from recovery.client.submit_argv import REFUSED, SAME_AS, command_line, refuse_on_local, split
from recovery.worker.cli import build_parser
from recovery.workflows.models import SubmitRequest

OWN = {"--scheduler": True, "--policy": True, "--run": True, "--nodes": True, "--json": False, "-h": False}


def names(words: list[str]) -> list[tuple[str, str | None]]:
    return [(o.name, o.value) for o in read_options(words)]


def test_getopt_long_spellings() -> None:
    assert (
        names(["-p", "gpu", "-pgpu", "--partition=gpu", "--partition", "gpu", "--part=gpu"])
        == [("partition", "gpu")] * 5
    )
    assert names(["-Hv"]) == [("hold", None), ("verbose", None)]  # short options cluster
    assert names(["-vt", "10"]) == [("verbose", None), ("time", "10")]  # the last of a cluster takes the next word
    # An optional value is only ever attached: `--requeue` then a word leaves the word alone.
    assert names(["--nice", "-k"]) == [("nice", None), ("no-kill", None)]
    assert names(["--nice=5", "-kon"]) == [("nice", "5"), ("no-kill", "on")]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--exclu", "x"], "--exclu is ambiguous for sbatch: --exclude, --exclusive"),
        (["--frobnicate"], "--frobnicate is not an sbatch option"),
        (["-y"], "-y is not an sbatch option"),
        (["-t"], "sbatch's -t needs a value"),
        (["--time"], "sbatch's --time needs a value"),
        (["--hold=yes"], "sbatch's --hold takes no value"),
    ],
)
def test_what_sbatch_would_refuse(words: list[str], message: str) -> None:
    with pytest.raises(SbatchOptionError, match=message):
        read_options(words)


def test_the_table_is_sbatch_s() -> None:
    """Spot checks against sbatch's man page: letters, values, and options only salloc/srun have."""
    assert SBATCH_OPTIONS["partition"][1] == "p" and SBATCH_OPTIONS["exclude"][1] == "x"
    assert SBATCH_OPTIONS["time"][0].value == "required" and SBATCH_OPTIONS["requeue"][0].value == "optional"
    assert "wrap" in SBATCH_OPTIONS and "array" in SBATCH_OPTIONS  # sbatch's own
    assert "pty" not in SBATCH_OPTIONS and "immediate" not in SBATCH_OPTIONS  # srun's, salloc's
    assert set(REFUSED) <= set(SBATCH_OPTIONS) and set(SAME_AS) <= set(SBATCH_OPTIONS)


def test_split_recovery_s_from_sbatch_s() -> None:
    words = split(
        ["-p", "gpu", "--policy", "p.yaml", "-t", "2:00:00", "--json", "--exclude", "node3", "job.sbatch", "--lr", "1"],
        OWN,
    )
    assert words.own == ["--policy", "p.yaml", "--json"]
    assert typed(words.sbatch) == ["-p", "gpu", "-t", "2:00:00", "--exclude", "node3"]
    assert words.script_and_args == ["job.sbatch", "--lr", "1"]  # the script's own options stay its own


def test_double_dash_ends_the_options() -> None:
    words = split(["-p", "gpu", "--", "-odd-name.sbatch", "-x"], OWN)
    assert typed(words.sbatch) == ["-p", "gpu"] and words.script_and_args == ["-odd-name.sbatch", "-x"]


def test_sbatch_spelling_of_recovery_s_own_is_recovery_s() -> None:
    assert split(["-N2", "-J", "big", "job.sbatch"], OWN).own == ["--nodes", "2", "--run", "big"]
    assert split(["--nodes=2", "job.sbatch"], OWN).own == ["--nodes=2"]  # recovery's, as written
    with pytest.raises(SubmitError, match="--nodes given twice: sbatch's -N/--nodes is recovery's --nodes"):
        split(["-N", "2", "--nodes", "3", "job.sbatch"], OWN)
    with pytest.raises(SubmitError, match="-N 2-4: a run needs a node count; write a range in the script's"):
        split(["-N", "2-4", "job.sbatch"], OWN)
    with pytest.raises(SubmitError, match="--run given twice: sbatch's -J/--job-name is recovery's --run"):
        split(["--run", "a", "--job-name=b", "job.sbatch"], OWN)


@pytest.mark.parametrize("option", ["--comment=x", "--requeue", "--no-requeue", "-a", "--wrap=true", "-H", "-W"])
def test_options_recovery_sets_itself_are_refused(option: str) -> None:
    words = [option, "1-3"] if option == "-a" else [option]
    with pytest.raises(SubmitError, match="cannot be given to a run: "):
        split([*words, "job.sbatch"], OWN)


def test_the_local_scheduler_refuses_what_it_cannot_honour() -> None:
    words = split(["-p", "gpu", "--exclude", "node3", "-t", "2:00:00", "job.sbatch"], OWN)
    with pytest.raises(SubmitError, match=r"cannot honour sbatch's -p gpu, -t 2:00:00 \(it honours only --exclude\)"):
        refuse_on_local(words.sbatch)
    refuse_on_local(split(["-x", "node3", "job.sbatch"], OWN).sbatch)


def request(options: list[str], excluded: list[str] | None = None) -> SubmitRequest:
    return SubmitRequest(
        script="#!/bin/bash\n", name="r", nodes=1, workdir="/tmp", token="t",
        excluded_nodes=excluded or [], sbatch_options=options,
    )  # fmt: skip


def test_local_scheduler_honours_exclude_as_exclusions() -> None:
    local = local_request(request(["-x", "node[3-4]", "--exclude=node1"], ["node4"]))
    assert local.excluded_nodes == ["node4", "node3", "node1"] and local.sbatch_options == []
    with pytest.raises(SchedulerError, match="cannot honour sbatch's --partition"):
        local_request(request(["-p", "gpu"]))


def test_slurm_gets_them_as_typed_before_recovery_s_own() -> None:
    argv = sbatch_options(request(["-p", "gpu", "-t", "2:00:00"], ["node9"]))
    assert argv[:5] == ["sbatch", "-p", "gpu", "-t", "2:00:00"]
    # On a clash sbatch takes the last: recovery's exclusions (the job's own included) follow.
    assert argv[-1] == "--exclude=node9" and "--parsable" in argv


def test_the_command_line() -> None:
    argv = ["submit", "-p", "gpu", "--scheduler", "slurm", "-N", "2", "job.sbatch", "--lr", "1"]
    args, options = command_line(build_parser(), argv)
    assert (args.script, args.args, args.nodes, args.scheduler) == ("job.sbatch", ["--lr", "1"], 2, "slurm")
    assert typed(options) == ["-p", "gpu"]
    args, options = command_line(build_parser(), ["list"])
    assert args.command == "list" and options == []


def test_a_pipeline_stage_is_submitted_held_with_its_labels_in_the_comment() -> None:
    held = request([]).model_copy(
        update={"hold": True, "labels": {"pipeline": "p-1a2b", "stage": "eval", "after": "train,prep"}}
    )
    argv = sbatch_options(held)
    assert "--hold" in argv and "--hold" not in sbatch_options(request([]))
    comment = next(a for a in argv if a.startswith("--comment="))
    # the labels before the token (always last); a list stays one item
    assert comment == "--comment=recovery:pipeline=p-1a2b,stage=eval,after=train+prep,token=t"
    parsed = parse_comment(comment.removeprefix("--comment="))
    assert parsed.token == "t" and parsed.extra == {"pipeline": "p-1a2b", "stage": "eval", "after": "train+prep"}
    # pyslurm and slurmrestd hand a held submission to sbatch: one path for it
    assert sbatch_only(held) and not sbatch_only(request([]))
