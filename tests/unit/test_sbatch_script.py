"""Reading a batch script's #SBATCH block as sbatch does."""

from __future__ import annotations

import pytest

from recovery.activities.schedulers.sbatch_script import directives, min_nodes, option
from recovery.activities.schedulers.slurm import sbatch_options
from recovery.workflows.models import SubmitRequest

HEAD = "#!/bin/bash\n"


def test_only_the_leading_block_counts_and_a_later_option_wins() -> None:
    script = HEAD + "#SBATCH -N 2\n\n# a remark\n#SBATCH --nodes=3 --time=1:00:00\nsrun x\n#SBATCH -N 9\n"
    assert directives(script) == ["-N", "2", "--nodes=3", "--time=1:00:00"]
    assert option(script, "--nodes", "-N") == "3"
    assert option(script, "--time") == "1:00:00"
    assert option(script, "--partition", "-p") is None


@pytest.mark.parametrize(
    ("line", "nodes"),
    [
        ("#SBATCH --nodes=4", 4),
        ("#SBATCH --nodes 3", 3),
        ("#SBATCH -N 2", 2),
        ("#SBATCH -N2", 2),
        ("#SBATCH --nodes=2-4", 2),
        ("#SBATCH -N 2   # two nodes", 2),
        ("# SBATCH --nodes=9 is commented out", None),
        ("#SBATCH --nodes=$NODES", None),  # sbatch does not expand variables: not a count
        ("#SBATCH --ntasks-per-node=8", None),
    ],
)
def test_min_nodes(line: str, nodes: int | None) -> None:
    assert min_nodes(HEAD + line + "\nsrun x\n") == nodes


def test_quoted_values_and_unbalanced_quotes() -> None:
    assert option(HEAD + "#SBATCH --comment='recovery:policy=big'\n", "--comment") == "recovery:policy=big"
    assert option(HEAD + '#SBATCH --comment="it\'s"\n', "--comment") == "it's"
    assert option(HEAD + "#SBATCH --job-name=a'b --nodes=2\n", "--nodes", "-N") == "2"


def request(script: str, nodes: int) -> SubmitRequest:
    return SubmitRequest(script=script, name="n", nodes=nodes, workdir="/tmp", token="t")


def test_sbatch_leaves_the_scripts_own_node_count_alone() -> None:
    ranged = HEAD + "#SBATCH --nodes=2-4\nsrun x\n"
    assert not any(a.startswith("--nodes") for a in sbatch_options(request(ranged, 2)))
    assert "--nodes=3" in sbatch_options(request(ranged, 3))  # `recovery submit --nodes 3` wins
    assert "--nodes=2" in sbatch_options(request(HEAD + "srun x\n", 2))  # the script says nothing
