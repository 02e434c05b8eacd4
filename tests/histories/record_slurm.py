"""The Slurm paths for tests/histories/record.py: they need the real Slurm dev cluster
(`deploy/slurm-dev-cluster start`; its commands first on PATH), and run `recovery worker
--scheduler slurm` subprocesses on a private dev server, as tests/integration does.

- adopted_slurm_job: a job submitted with plain sbatch and `--comment=recovery`, then adopted by
  a run (`adopt_attempt`) as discovery or `recovery submit --scheduler slurm` would; its GPU
  crash is restarted by requeue-hold, exclude, release;
- resubmitted_job: the same with `sbatch --no-requeue`: the restart resubmits it as a new job
  of the same run.

Discovery (the SlurmDiscovery workflow, adopting opted-in jobs it finds) stays off: on a
cluster others use it would adopt, and act on, their opted-in jobs too.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client

from recovery.client import runs
from recovery.client.submit import build_spec
from tests.integration.recovery_rig import FAST, Rig, TemporalDev, dev_cluster, job_script, new_rig, sbatch

Save = Callable[[Client, str, str, str], Awaitable[None]]
SLURM = {
    "adopted_slurm_job": (
        (),
        "a plain sbatch job opted in and adopted by a run; its GPU crash restarted by requeue",
    ),
    "resubmitted_job": (("--no-requeue",), "a --no-requeue job: the restart resubmitted it as a new job of the run"),
}


def slurm_dir() -> Path:
    """Where the running dev cluster keeps its state; its exports go into os.environ."""
    exports = {}
    for line in dev_cluster("env").stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line.removeprefix("export ").partition("=")
            exports[key] = value
    os.environ.update(exports)
    return Path(exports.get("SLURM_DEV_DIR") or Path(exports["SLURM_CONF"]).parents[1])


async def one(rig: Rig, save: Save, name: str) -> None:
    options, path = SLURM[name]
    script = job_script(rig.workdir(name), first_run="xid", seconds=4)
    job = sbatch(*options, "--comment=recovery", f"--chdir={script.parent}", script=script)
    rig.jobs.append(job)
    spec = build_spec(str(script), [], "slurm", "default", None, None, script.parent)
    spec.tuning, spec.adopt_job_id = FAST, job
    await runs.start_run(rig.client, spec, task_queue=rig.task_queue)
    status = await rig.result(spec.run_id, timeout=180)
    if status.run.state != "completed" or len(status.attempts) != 2:
        raise RuntimeError(f"{name}: {status.run.state} after {len(status.attempts)} attempts")
    await save(rig.client, name, spec.run_id, path)


async def record_slurm(names: list[str], save: Save) -> None:
    dev = TemporalDev.start()
    rig = await new_rig(dev, slurm_dir())
    try:
        rig.start_worker(mode="act")
        for name in names:
            await one(rig, save, name)
    finally:
        await rig.close()
        dev.stop()
