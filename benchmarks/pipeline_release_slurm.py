"""`pipeline_release.py --scheduler slurm`: a stage finishing -> its dependant running, on the
real Slurm dev cluster, beside Slurm's own `sbatch --dependency=afterok:JOBID` chain on the same
cluster, alternating one pipeline and one chain so that both see the same machine.

Both sides are timed by slurmctld's own log (milliseconds): the first job's `_job_complete ...
done` line, the dependant's first `Allocate` / `Started` line. A pipeline's path: the stage's run
sees its job completed (a poll every `--poll` seconds), its child workflow ends, the pipeline's
`dag_release` runs `scontrol release` on the dependant queued held since the start, and Slurm's
scheduler starts it. The afterok chain is Slurm alone.

Then what happens to afterok where recovery acts: the first job fails and is resubmitted as a new
job (a new id); the dependant keeps waiting on the old id (`DependencyNeverSatisfied`), and is
still pending after the new job completed.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.integration.recovery_rig, shared with the tests

from recovery.workflows.pipeline_models import PipelineStatus  # noqa: E402
from tests.integration.recovery_rig import (  # noqa: E402
    FAST,
    Rig,
    TemporalDev,
    ctld_log_lines,
    job_facts,
    log_time,
    new_rig,
    sbatch,
    slurm,
)

STAGE = "#!/bin/bash\n#SBATCH --nodes=1\nsleep 1\n"
PIPELINE = """\
name: bench{i}
stages:
  - {{name: first, script: stage.sbatch}}
  - {{name: second, script: stage.sbatch, needs: [first]}}
"""
ENDED = r"_job_complete: JobId=\d+ done"
RELEASED = r"release hold on JobId="
STARTED = r"Allocate JobId=|_start_job: Started JobId="


@dataclass
class Afterok:
    """What became of an afterok dependant whose first job failed and was resubmitted."""

    failed_job: str
    resubmitted_job: str
    dependant: str
    reason_after_failure: str
    state_after_resubmission_completed: str
    reason_after_resubmission_completed: str


def first_line(state_dir: Path, job_id: str, pattern: str) -> datetime:
    regex = re.compile(pattern)
    for line in ctld_log_lines(state_dir, job_id):
        if regex.search(line):
            return log_time(line)
    raise RuntimeError(f"no slurmctld log line for job {job_id} matching {pattern!r}")


def gap(state_dir: Path, first_job: str, dependant: str) -> float:
    return (first_line(state_dir, dependant, STARTED) - first_line(state_dir, first_job, ENDED)).total_seconds()


def wait_ended(job_id: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = job_facts(job_id).state
        if state not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING"):
            return state
        time.sleep(0.2)
    raise RuntimeError(f"job {job_id} still {job_facts(job_id).state} after {timeout:.0f}s")


async def one_pipeline(rig: Rig, i: int, poll: float) -> tuple[float, float]:
    """(first job ended -> second running, first job ended -> second released)."""
    workdir = rig.workdir(f"bench{i}")
    (workdir / "stage.sbatch").write_text(STAGE)
    path = workdir / "pipeline.yaml"
    path.write_text(PIPELINE.format(i=i))
    inp = await rig.start_pipeline(path, FAST.model_copy(update={"poll_seconds": poll}))
    handle = rig.client.get_workflow_handle(inp.pipeline_id, result_type=PipelineStatus)
    try:
        result = await asyncio.wait_for(handle.result(), 180)
    except TimeoutError:
        status = await handle.query("status", result_type=PipelineStatus)
        raise RuntimeError(f"{status.model_dump_json(indent=1)}\n{rig.worker_logs()}") from None
    if result.pipeline.state.value != "completed":
        raise RuntimeError(result.model_dump_json(indent=1))
    first, second = [await rig.status(s.spec.run_id) for s in inp.stages]
    assert first is not None and second is not None
    jobs = [first.attempts[-1].job_id, second.attempts[0].job_id]
    rig.jobs.extend(jobs)
    released = first_line(rig.slurm_dir, jobs[1], RELEASED) - first_line(rig.slurm_dir, jobs[0], ENDED)
    return gap(rig.slurm_dir, *jobs), released.total_seconds()


def one_chain(rig: Rig, i: int) -> float:
    workdir = rig.workdir(f"afterok{i}")
    script = workdir / "stage.sbatch"
    script.write_text(STAGE)
    out = f"--output={workdir}/slurm-%j.out"
    first = sbatch(out, script=script)
    second = sbatch(out, f"--dependency=afterok:{first}", script=script)
    rig.jobs += [first, second]
    wait_ended(second)
    return gap(rig.slurm_dir, first, second)


def afterok_after_a_resubmission(rig: Rig) -> Afterok:
    """The first job fails; a resubmission of its script (a new job id, as `restart_via:
    resubmit` makes) completes; the afterok dependant, chained to the old id, never runs."""
    workdir = rig.workdir("afterok-resubmit")
    failing = workdir / "fails.sbatch"
    failing.write_text("#!/bin/bash\n#SBATCH --nodes=1\nsleep 1\nexit 3\n")
    fine = workdir / "stage.sbatch"
    fine.write_text(STAGE)
    out = f"--output={workdir}/slurm-%j.out"
    failed = sbatch(out, script=failing)
    dependant = sbatch(out, f"--dependency=afterok:{failed}", script=fine)
    rig.jobs += [failed, dependant]
    wait_ended(failed)
    time.sleep(3)  # the next scheduler pass re-evaluates the dependency
    reason_failed = job_facts(dependant).reason
    again = sbatch(out, script=fine)
    rig.jobs.append(again)
    wait_ended(again)
    time.sleep(3)
    after = job_facts(dependant)
    return Afterok(failed, again, dependant, reason_failed, after.state, after.reason)


async def bench(count: int, poll: float, state_dir: Path) -> tuple[list[float], list[float], list[float], Afterok]:
    dev = TemporalDev.start()
    rig = await new_rig(dev, state_dir)
    pipelines: list[float] = []
    releases: list[float] = []
    chains: list[float] = []
    try:
        rig.start_worker(mode="act", backend="commands")
        for i in range(count):
            running, released = await one_pipeline(rig, i, poll)
            pipelines.append(running)
            releases.append(released)
            chains.append(one_chain(rig, i))
            print(
                f"  {i + 1:2d}: pipeline {running:6.3f}s (released {released:6.3f}s)   afterok {chains[-1]:6.3f}s",
                flush=True,
            )
        afterok = afterok_after_a_resubmission(rig)
    finally:
        await rig.close()
        dev.stop()
    return pipelines, releases, chains, afterok


def sched_parameters(state_dir: Path) -> str:
    for line in (state_dir / "etc" / "slurm.conf").read_text().splitlines():
        if line.startswith("SchedulerParameters="):
            return line.partition("=")[2]
    return "(Slurm's defaults)"


def slurm_release() -> str:
    return slurm("scontrol", "--version").stdout.strip()
