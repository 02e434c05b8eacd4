from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from recovery.client.config import ConfigError, WorkerConfig, load_config


def test_defaults_follow_the_scheduler() -> None:
    assert WorkerConfig().effective_mode == "act"
    assert WorkerConfig(scheduler="slurm").effective_mode == "observe"


def test_partitions_narrow_to_observe_only() -> None:
    config = WorkerConfig(scheduler="slurm", mode="act", partitions=["gpu", "debug"], observe_partitions=["gpu"])
    assert config.mode_for("gpu") == "observe" and config.mode_for("debug") == "act"
    assert config.manages("debug") and not config.manages("cpu")
    assert WorkerConfig(mode="observe").mode_for("debug") == "observe"


def test_file(tmp_path: Path) -> None:
    path = tmp_path / "worker.yaml"
    path.write_text("scheduler: slurm\nmode: act\npartitions: [gpu]\ndiscovery: {interval: 1m}\n")
    config = load_config(str(path))
    assert config.partitions == ["gpu"] and config.discovery.interval == timedelta(minutes=1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scheduler: pbs\n", ":1: key 'scheduler'"),
        ("slurm:\n  backend: rest\n  tokn: x\n", ":3: unknown key 'slurm.tokn'"),
        ("mode: yes\n", ":1: key 'mode'"),
    ],
)
def test_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "worker.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(str(path))


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config("/nonexistent/worker.yaml")


def test_bad_signature_override_and_progress_pattern_stop_the_worker_early(tmp_path: Path) -> None:
    from recovery.activities.progress import ProgressError
    from recovery.activities.signatures.catalog import CatalogError
    from recovery.worker.run_worker import log_reading

    bad = tmp_path / "sigs.yaml"
    bad.write_text("- id: x\n")
    with pytest.raises(CatalogError, match=r"sigs\.yaml"):
        log_reading(WorkerConfig(signatures=[str(bad)]))
    with pytest.raises(ProgressError, match="progress pattern 1"):
        log_reading(WorkerConfig(progress_patterns=["step=("]))
    assert log_reading(WorkerConfig()).catalog is None


def test_the_workflow_cache_is_bounded_by_default_not_by_the_runs_watched(tmp_path: Path) -> None:
    """A worker raised to 10,000 watches keeps only 1,000 runs' workflows in memory unless told
    otherwise; `cached_runs: null` keeps every run it can hold, as before."""
    from recovery.worker.run_worker import SHORT_ACTIVITY_SLOTS, cache_size

    assert cache_size(WorkerConfig(max_runs=10_000)) == 1000
    assert cache_size(WorkerConfig(max_runs=10_000, cached_runs=2500)) == 2500
    path = tmp_path / "worker.yaml"
    path.write_text("max_runs: 10000\ncached_runs: null\n")
    assert cache_size(load_config(str(path))) == 10_000 + SHORT_ACTIVITY_SLOTS
    path.write_text("cached_runs: 0\n")
    with pytest.raises(ConfigError, match=":1: key 'cached_runs'"):
        load_config(str(path))
