"""Which Slurm backend `auto` takes, and the worker config's choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from recovery.activities.schedulers.slurm_factory import pyslurm_mismatch
from recovery.activities.schedulers.slurm_pyslurm_calls import Release
from recovery.client.config import ConfigError, WorkerConfig, load_config


@pytest.mark.parametrize(
    ("found", "why"),
    [
        (Release(pyslurm="25.11.2", controller="25.11.7"), None),
        (Release(pyslurm="", controller="", error="pyslurm does not import: No module named 'pyslurm'"), "No module"),
        (Release(pyslurm="", controller=""), "not installed"),
        (Release(pyslurm="25.11.2", controller="22.05.8"), "built for Slurm 25.11, the controller runs 22.05.8"),
        (Release(pyslurm="25.11.2", controller="", error="Unable to contact slurm controller"), "cannot read"),
    ],
)
def test_pyslurm_serves_only_its_own_release(found: Release, why: str | None) -> None:
    reason = pyslurm_mismatch(found)
    if why is None:
        assert reason is None
    else:
        assert reason is not None and why in reason


def test_backend_defaults_to_auto_and_takes_the_four_names(tmp_path: Path) -> None:
    assert WorkerConfig().slurm.backend == "auto"
    for name in ("auto", "pyslurm", "rest", "commands"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"scheduler: slurm\nslurm:\n  backend: {name}\n")
        assert load_config(str(path)).slurm.backend == name
    bad = tmp_path / "bad.yaml"
    bad.write_text("slurm:\n  backend: pyslum\n")
    with pytest.raises(ConfigError, match="backend"):
        load_config(str(bad))
