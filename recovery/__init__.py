"""`recovery`: keeps distributed training runs going overnight.

The installed distribution is this one package. Its parts live in the repository's top-level
folders and install beneath it (see `pyproject.toml`'s package-dir mapping):

- `recovery.workflows`  the shared models, the pure `decide`, the Temporal workflows
- `recovery.activities` what touches the world: schedulers, watching, diagnosing, acting
- `recovery.worker`     the processes: the `recovery` command, the worker, the demo

This module is the public API for training scripts. A training script runs on compute nodes,
whose Python may lack the worker's dependencies, so importing `recovery` loads the standard
library only:

    from recovery import report_progress
    report_progress(step, total=5000, step_time=0.41, loss=2.31)
"""

from __future__ import annotations

from recovery.activities.report import KEYS, format_progress, report_progress

__all__ = ["KEYS", "format_progress", "report_progress"]
