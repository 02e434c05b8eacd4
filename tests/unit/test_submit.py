from __future__ import annotations

from pathlib import Path

import pytest

from recovery.activities.schedulers.sbatch_script import min_nodes
from recovery.client.submit import SubmitError, build_spec, make_run_id


@pytest.mark.parametrize(
    ("text", "nodes"),
    [
        ("#!/bin/bash\n#SBATCH --nodes=4\n", 4),
        ("#!/bin/bash\n#SBATCH --nodes 3\n", 3),
        ("#!/bin/bash\n#SBATCH -N 2\n", 2),
        ("#!/bin/bash\n#SBATCH -N2\n", 2),
        ("#!/bin/bash\n#SBATCH --nodes=2-4\n", 2),
        ("#!/bin/bash\necho hi\n#SBATCH --nodes=4\n", None),  # after a command: sbatch ignores it
        ("#!/bin/bash\n# SBATCH --nodes=9 is commented out\n", None),
        ("#!/bin/bash\necho hi\n", None),
    ],
)
def test_nodes_from_script(text: str, nodes: int | None) -> None:
    assert min_nodes(text) == nodes


def test_run_id_is_safe_and_unique() -> None:
    a, b = make_run_id("a'b;$(rm -rf /)\"c"), make_run_id("a'b;$(rm -rf /)\"c")
    assert a != b
    assert all(c.isalnum() or c in "-_." for c in a)


def test_build_spec(tmp_path: Path) -> None:
    script = tmp_path / "train.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n")
    spec = build_spec(str(script), ["--lr", "3e-4"], "local", "default", None, None, tmp_path)
    assert spec.nodes == 2 and spec.name == "train" and spec.args == ["--lr", "3e-4"]
    assert spec.script_path == str(script) and "srun" in spec.script
    assert build_spec(str(script), [], "local", "default", "x", 3, tmp_path).nodes == 3


def test_missing_and_binary_scripts(tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match="cannot read"):
        build_spec(str(tmp_path / "nope"), [], "local", "default", None, None, tmp_path)
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01binary")
    with pytest.raises(SubmitError, match="NUL"):
        build_spec(str(junk), [], "local", "default", None, None, tmp_path)
