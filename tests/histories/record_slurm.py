"""The Slurm paths for tests/histories/record.py: they need the real Slurm dev cluster
(`deploy/slurm-dev-cluster start`), and run `recovery worker --scheduler slurm` subprocesses on
a private dev server, as tests/integration does.

- adopted_slurm_job: a job submitted with plain sbatch and `--comment=recovery`, adopted by the
  worker's discovery; its GPU crash is restarted by requeue-hold, exclude, release;
- resubmitted_job: the same with `--no-requeue`: the restart resubmits it as a new job;
- slurm_discovery: the cluster's SlurmDiscovery workflow that adopted them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client

from tests.integration.recovery_rig import Rig, TemporalDev, dev_cluster, job_script, new_rig, sbatch

Save = Callable[[Client, str, str, str], Awaitable[None]]


def slurm_dir() -> Path:
    """Where the running dev cluster keeps its state; its SLURM_CONF goes into os.environ."""
    import os

    exports = {}
    for line in dev_cluster("env").stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line.removeprefix("export ").partition("=")
            exports[key] = value
    os.environ.update(exports)
    return Path(exports.get("SLURM_DEV_DIR") or Path(exports["SLURM_CONF"]).parents[1])


async def adopted(rig: Rig, save: Save, name: str, *options: str) -> None:
    script = job_script(rig.workdir(name), first_run="xid", seconds=4)
    job = sbatch(*options, "--comment=recovery", f"--chdir={script.parent}", script=script)
    rig.jobs.append(job)
    run_id = f"recovery-{job}"
    status = await rig.result(run_id, timeout=180)
    if status.run.state != "completed" or len(status.attempts) != 2:
        raise RuntimeError(f"{name}: {status.run.state} after {len(status.attempts)} attempts")
    path = {
        "adopted_slurm_job": "a plain sbatch job opted in, adopted by discovery; GPU crash restarted by requeue",
        "resubmitted_job": "an opted-in --no-requeue job: the restart resubmitted it as a new job",
    }[name]
    await save(rig.client, name, run_id, path)


async def record_slurm(names: list[str], save: Save) -> None:
    dev = TemporalDev.start()
    rig = await new_rig(dev, slurm_dir())
    try:
        rig.start_worker(mode="act", discovery=True)
        if "adopted_slurm_job" in names:
            await adopted(rig, save, "adopted_slurm_job")
        if "resubmitted_job" in names:
            await adopted(rig, save, "resubmitted_job", "--no-requeue")
        if "slurm_discovery" in names:
            async for wf in rig.client.list_workflows('WorkflowType="SlurmDiscovery"'):
                await save(rig.client, "slurm_discovery", wf.id, "the cluster's discovery loop that adopted them")
                break
    finally:
        await rig.close()
        dev.stop()


SLURM = ("adopted_slurm_job", "resubmitted_job", "slurm_discovery")
