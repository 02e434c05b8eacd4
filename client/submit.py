"""Turning `recovery submit JOB.sbatch` into a RunSpec, checking everything before Temporal sees it."""

from __future__ import annotations

import getpass
import re
import secrets
from pathlib import Path

from recovery.activities.clock import utcnow
from recovery.activities.schedulers.sbatch_script import min_nodes
from recovery.workflows.models import RunSpec, Tuning
from recovery.workflows.policy_files import load_policy

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")

TUNING = {
    # One observer per worker looks at every watched job and log (activities/observer/), so a
    # short poll costs one scheduler read per worker, not one per run. What an idle run costs
    # is its watch's heartbeat, one every half of this timeout (10,000 runs at 60 s: 330 a
    # second, more than the dev server keeps up with; at 300 s, 67; at 1,800 s, 11). The
    # timeout is also how long a dead worker's watches wait before they move, except that a
    # worker hands on at once those of a dead worker of its own host (worker/orphans.py).
    # The local scheduler's workers are all on its host, so its runs take the long timeout;
    # Slurm's workers may be on other hosts, whose watches only the timeout moves.
    "local": Tuning(watch_heartbeat_timeout_seconds=1800.0),
    "slurm": Tuning(
        poll_seconds=1.0,
        heartbeat_timeout_seconds=60.0,
        verify_timeout_seconds=600.0,
        watch_heartbeat_timeout_seconds=300.0,
    ),
}


class SubmitError(ValueError):
    """Bad input to submit; the message is one line."""


def read_script(path: str) -> tuple[Path, str]:
    script = Path(path)
    try:
        data = script.read_bytes()
    except OSError as e:
        raise SubmitError(f"{path}: cannot read the batch script: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmitError(f"{path}: the batch script is not UTF-8 text") from None
    if "\0" in text:
        raise SubmitError(f"{path}: the batch script contains NUL bytes")
    return script.absolute(), text


def make_run_id(name: str) -> str:
    stem = _SAFE.sub("-", name).strip("-.")[:40] or "run"
    return f"{stem}-{secrets.token_hex(3)}"


def build_spec(
    script_path: str,
    args: list[str],
    scheduler: str,
    policy: str,
    name: str | None,
    nodes: int | None,
    workdir: Path,
    sbatch_options: list[str] | None = None,
) -> RunSpec:
    path, text = read_script(script_path)
    loaded = load_policy(policy)
    count = nodes or min_nodes(text) or 1
    if count < 1:
        raise SubmitError(f"--nodes must be at least 1, got {count}")
    run_name = name or path.stem
    return RunSpec(
        run_id=make_run_id(run_name),
        name=run_name,
        scheduler=scheduler,
        script_path=str(path),
        script=text,
        args=args,
        nodes=count,
        workdir=str(workdir),
        owner=getpass.getuser(),
        policy=loaded,
        submitted_at=utcnow(),
        tuning=TUNING[scheduler],
        sbatch_options=sbatch_options or [],
    )
