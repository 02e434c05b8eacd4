"""`recovery submit --after RUN` on the real Slurm dev cluster, where Slurm's own
`--dependency=afterok:JOBID` breaks: the run it follows is recovered as a new job (a resubmit,
so a new job id), and the chained run still runs exactly once, after it. Its job is in the queue
from the start, held, its comment saying what it follows; it is released once.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.recovery_rig import Rig, job_facts, job_script, slurm
from tests.integration.test_slurm_pipeline import order, pending, policy, queued, releases, result, stage_script

pytestmark = [pytest.mark.slow, pytest.mark.temporal]


@pytest.mark.timeout(300)
async def test_a_run_after_a_resubmitted_run_runs_once_after_its_new_job(rig: Rig) -> None:
    rig.start_worker(mode="act")
    workdir = rig.workdir("after")
    first_script = job_script(workdir / "first", first_run="xid", seconds=3)  # an Xid on its first job
    stage_script(workdir, "second")
    resubmit = policy(rig, "restart_via: resubmit")
    done = rig.recovery("submit", "--scheduler", "slurm", "--policy", resubmit, "--json", str(first_script))
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)
    rig.jobs.append(first["job_id"])
    done = rig.recovery(
        "submit", "--scheduler", "slurm", "--json", "--after", first["run"], str(workdir / "second.sbatch")
    )
    assert done.returncode == 0, done.stderr
    chained = json.loads(done.stdout)["run"]
    try:
        # Queued at once, held, saying what it follows.
        await rig.until("the chained job queued held", lambda: pending(chained) == ["run"], 60)
        job_id, _, reason = queued(chained)["run"]
        assert reason == "JobHeldUser" and f"after={first['run']}" in job_facts(job_id).raw

        status = await result(rig, chained, 240)
        assert status.pipeline.state == "completed", status.model_dump_json(indent=1)
        followed = await rig.status(first["run"])
        assert followed is not None and followed.run.state == "completed"
        jobs = [a.job_id for a in followed.attempts]
        assert len(jobs) == 2 and jobs[0] != jobs[1] and jobs[0] == first["job_id"]  # resubmitted: a new job id
        stage = await rig.status(status.stages[0].run)
        assert stage is not None and [a.job_id for a in stage.attempts] == [job_id]  # the held job, adopted
        assert len(releases(rig, job_id)) == 1
        assert order(workdir) == ["start second", "end second"]
        ended, started = followed.attempts[1].ended_at, stage.attempts[0].started_at
        assert ended is not None and started is not None and started >= ended.replace(microsecond=0)
        assert status.actions[0].detail == f"{first['run']} completed; job {job_id} released"
    finally:
        jobs = [job for job, _, _ in queued(chained).values()]
        if jobs:
            slurm("scancel", *jobs, check=False)
