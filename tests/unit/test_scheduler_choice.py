"""`submit`'s scheduler: --scheduler, else RECOVERY_SCHEDULER, else the config's, else local."""

from __future__ import annotations

from pathlib import Path

import pytest

from recovery.client.config import load_config
from recovery.client.scheduler_choice import choose_scheduler
from recovery.client.submit import SubmitError


@pytest.fixture
def slurm_config(tmp_path: Path) -> str:
    path = tmp_path / "recovery.yaml"
    path.write_text("scheduler: slurm\n")
    return str(path)


def test_flag_beats_environment_and_config(slurm_config: str) -> None:
    chosen = choose_scheduler("local", "slurm", load_config(slurm_config), slurm_config)
    assert (chosen.name, chosen.source) == ("local", "--scheduler")


def test_environment_beats_config(slurm_config: str) -> None:
    chosen = choose_scheduler(None, "local", load_config(slurm_config), slurm_config)
    assert (chosen.name, chosen.source) == ("local", "RECOVERY_SCHEDULER")


def test_config_beats_default(slurm_config: str) -> None:
    chosen = choose_scheduler(None, None, load_config(slurm_config), slurm_config)
    assert chosen.name == "slurm" and slurm_config in chosen.source


def test_a_config_that_does_not_say_leaves_the_default(tmp_path: Path) -> None:
    path = tmp_path / "recovery.yaml"
    path.write_text("mode: observe\n")
    chosen = choose_scheduler(None, None, load_config(str(path)), str(path))
    assert (chosen.name, chosen.source) == ("local", "the default")
    assert choose_scheduler(None, None, load_config(None), None).name == "local"


def test_a_bad_environment_value_is_one_line() -> None:
    with pytest.raises(SubmitError, match="RECOVERY_SCHEDULER must be one of local, slurm, not 'pbs'"):
        choose_scheduler(None, "pbs", load_config(None), None)
