"""Issue 3's acceptance: recovery driving the real 4-node Slurm 22.05 dev cluster, with a real
Temporal dev server and `recovery worker --scheduler slurm` subprocesses.

Each test follows one acceptance bullet of the issue. Slurm's side is checked with Slurm's own
commands (`scontrol show job`, `sacct`, slurmctld's log), the run's side with its status query
and `recovery list --json`.

Order matters in one place: the never-touched test runs last, because a worker started later
with discovery on would (rightly) adopt its opted-in `other`-partition job while it is recent.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from recovery.workflows.models import RunStatus
from tests.integration.recovery_rig import (
    FAST,
    JobFacts,
    Rig,
    accounting_runs,
    ctld_log_lines,
    dev_cluster,
    failing_node,
    job_facts,
    job_script,
    sbatch,
    tasks_started,
)

if TYPE_CHECKING:
    from tests.integration.conftest import SlurmDevCluster

pytestmark = [pytest.mark.slow, pytest.mark.temporal]

HOSTILE_NAME = "a'b;$(touch /tmp/pwned)\"c"
PWNED = Path("/tmp/pwned")


async def successor_running(rig: Rig, job_id: str, run_id: str, timeout: float = 90) -> JobFacts:
    """Slurm's own view of the job once it runs again after a restart."""

    def check() -> JobFacts | None:
        facts = job_facts(job_id)
        return facts if facts.state == "RUNNING" and facts.restarts >= 1 else None

    return await rig.until(f"job {job_id} running again", check, timeout, every=0.3, run_id=run_id)


def check_converged_restart(status: RunStatus, bad: str) -> None:
    """One restart advice, excluding `bad`, carried out and verified."""
    assert len(status.advice) == 1, status.advice
    (advice,) = status.advice
    assert advice.operation == "restart", advice
    assert advice.excluded_nodes == [bad], advice
    assert advice.acted is True, advice
    assert advice.status == "converged", advice


# --- 1. a hardware-looking failure on the second node ---------------------------------------------


@pytest.mark.timeout(150)
async def test_hardware_failure_on_second_node_restarts_excluding_it(rig: Rig) -> None:
    rig.start_worker(mode="act")
    # The user's own exclusion (a node they know is bad) must survive recovery's.
    script = job_script(rig.workdir("xid"), first_run="xid", seconds=6, directives=("--exclude=node4",))
    spec, job = await rig.submit_run(script)

    again = await successor_running(rig, job, spec.run_id)
    bad = failing_node(script.parent)
    # Slurm's own record: requeued once, with both exclusions, running on the two other nodes
    assert again.restarts == 1, again.raw
    assert sorted(again.excluded) == sorted([bad, "node4"]), again.raw
    assert bad not in again.nodes and len(again.nodes) == 2, again.raw

    status = await rig.result(spec.run_id, timeout=90)
    assert status.run.state == "completed", await rig.describe(spec.run_id)
    assert status.diagnoses[0].category == "hardware", status.diagnoses[0]
    assert bad in status.diagnoses[0].implicated_nodes, status.diagnoses[0]
    check_converged_restart(status, bad)
    assert [a.restart_count for a in status.attempts] == [0, 1]
    assert {a.job_id for a in status.attempts} == {job}
    assert bad in status.attempts[0].nodes and bad not in status.attempts[1].nodes
    final = job_facts(job)
    assert (final.state, final.restarts) == ("COMPLETED", 1), final.raw


# --- 2. a node's slurmd dies under an opted-in job ------------------------------------------------


def kill_slurmd(state_dir: Path, node: str) -> int:
    """SIGKILL the slurmd of `node`, found by the pid file the dev cluster writes
    (SlurmdPidFile=$SLURM_DEV_DIR/run/slurmd-%n.pid), checked to be that node's slurmd."""
    pid = int((state_dir / "run" / f"slurmd-{node}.pid").read_text().strip())
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert Path(cmdline[0].decode()).name == "slurmd" and node.encode() in cmdline, cmdline
    os.kill(pid, signal.SIGKILL)
    return pid


@pytest.mark.timeout(240)
async def test_slurmd_killed_node_fail_recovered_on_other_nodes(rig: Rig, slurm_cluster: SlurmDevCluster) -> None:
    rig.start_worker(mode="act")
    script = job_script(rig.workdir("nodefail"), first_run="long", seconds=4)
    spec, job = await rig.submit_run(script)

    first = await rig.until("the job running on 2 nodes", running_on_two(job), 30, run_id=spec.run_id)
    # Kill only once the step runs on both nodes: killed during the step's launch, srun fails
    # at once and the job ends FAILED rather than NODE_FAIL (the next test's story).
    await rig.until(
        "both tasks started", lambda: tasks_started(script.parent) == sorted(first.nodes), 30, run_id=spec.run_id
    )
    victim = first.nodes[1]
    kill_slurmd(slurm_cluster.state_dir, victim)
    try:
        # Slurm notices after SlurmdTimeout (~30 s to DOWN), ends the run NODE_FAIL and
        # requeues it; recovery must then see the node failure and keep the job off it.
        status = await rig.result(spec.run_id, timeout=180)
    finally:
        dev_cluster("start")  # brings the killed slurmd back (start is idempotent)

    history = accounting_runs(job)
    shown = status.model_dump_json(indent=1)
    assert history and history[0][0] == "NODE_FAIL" and victim in history[0][1], (history, shown)
    assert history[-1][0] == "COMPLETED" and victim not in history[-1][1], history
    assert job_facts(job).restarts == 1, "one requeue (Slurm's own), and no second one by recovery"

    assert status.run.state == "completed", shown
    assert status.attempts[0].state == "NODE_FAIL", shown
    assert victim in status.diagnoses[0].implicated_nodes, shown
    check_converged_restart(status, victim)
    successor = status.attempts[-1]
    assert successor.restart_count == 1 and successor.nodes, shown
    assert victim not in successor.nodes, shown


@pytest.mark.timeout(240)
async def test_node_dead_at_step_launch_recovered_on_other_nodes(rig: Rig, slurm_cluster: SlurmDevCluster) -> None:
    """A node that dies between the allocation and the step's launch: srun cannot launch there
    and the job FAILS before Slurm declares the node down. Only srun's words name the node."""
    rig.start_worker(mode="act")
    script = job_script(rig.workdir("launchfail"), first_run="gated", seconds=4)
    spec, job = await rig.submit_run(script)
    first = await rig.until("the job running on 2 nodes", running_on_two(job), 30, run_id=spec.run_id)
    victim = first.nodes[1]
    kill_slurmd(slurm_cluster.state_dir, victim)
    (script.parent / "go").touch()
    try:
        status = await rig.result(spec.run_id, timeout=180)
    finally:
        dev_cluster("start")

    history = accounting_runs(job)
    shown = status.model_dump_json(indent=1)
    assert history[-1][0] == "COMPLETED" and victim not in history[-1][1], (history, shown)
    assert status.run.state == "completed", shown
    assert status.attempts[0].state == "FAILED", shown
    assert victim in status.diagnoses[0].implicated_nodes, shown
    check_converged_restart(status, victim)
    assert victim not in status.attempts[-1].nodes, shown


def running_on_two(job: str) -> Callable[[], JobFacts | None]:
    def running() -> JobFacts | None:
        facts = job_facts(job)
        return facts if facts.state == "RUNNING" and len(facts.nodes) == 2 else None

    return running


# --- 3. observe mode ------------------------------------------------------------------------------


@pytest.mark.timeout(120)
async def test_observe_mode_records_advice_and_leaves_slurm_alone(rig: Rig) -> None:
    rig.start_worker(mode="observe")
    script = job_script(rig.workdir("observe"), first_run="xid", seconds=3)
    # observe mode waits (verify timeout) for someone else to run the job again: keep that short
    spec, job = await rig.submit_run(script, tuning=FAST.model_copy(update={"verify_timeout_seconds": 10.0}))

    status = await rig.result(spec.run_id, timeout=90)
    bad = failing_node(script.parent)
    assert len(status.advice) == 1, status.advice
    (advice,) = status.advice
    assert advice.operation == "restart" and advice.excluded_nodes == [bad], advice
    assert advice.acted is False, advice
    assert status.actions == [], status.actions
    assert status.run.state == "gave_up", status.run

    facts = job_facts(job)
    assert (facts.state, facts.restarts, facts.excluded) == ("FAILED", 0, []), facts.raw
    mutations = [line for line in ctld_log_lines(rig.slurm_dir, job) if "Requeu" in line or "_update_job" in line]
    assert mutations == [], mutations


# --- 4. the worker dies between requeue-and-hold and release -------------------------------------


@pytest.mark.timeout(150)
async def test_worker_killed_between_requeue_hold_and_release_releases_once(rig: Rig) -> None:
    doomed = rig.start_worker(mode="act", failpoints="after:requeue_hold")
    script = job_script(rig.workdir("failpoint"), first_run="xid", seconds=4)
    spec, job = await rig.submit_run(script)

    await rig.until("the failpoint to kill the worker", lambda: doomed.poll() is not None, 60, run_id=spec.run_id)
    assert doomed.returncode == -signal.SIGKILL, rig.worker_logs()
    held = job_facts(job)
    assert held.restarts == 1 and held.state == "PENDING" and held.held, held.raw

    rig.start_worker(mode="act")
    status = await rig.result(spec.run_id, timeout=120)
    bad = failing_node(script.parent)
    assert status.run.state == "completed", await rig.describe(spec.run_id)
    check_converged_restart(status, bad)
    final = job_facts(job)
    assert (final.state, final.restarts) == ("COMPLETED", 1), final.raw

    changed = [a.kind for a in status.actions if a.changed]
    assert changed.count("release") == 1 and changed.count("requeue_hold") <= 1, status.actions
    # Slurm's own log: one requeue, one release of the hold, and no second release (a release of
    # a job that is not held shows as `set priority`)
    lines = ctld_log_lines(rig.slurm_dir, job)
    assert sum("Requeuing" in line for line in lines) == 1, lines
    assert sum("release hold on" in line for line in lines) == 1, lines
    assert not any("set priority to" in line for line in lines), lines


# --- 5. slurmctld away for 30 s during a recovery ------------------------------------------------


@pytest.mark.timeout(200)
async def test_slurmctld_stopped_30s_during_recovery(rig: Rig) -> None:
    worker = rig.start_worker(mode="act")
    script = job_script(rig.workdir("ctld"), first_run="xid", seconds=4)
    spec, job = await rig.submit_run(script)
    handle = rig.client.get_workflow_handle(spec.run_id)
    # Held by `pause`, the run records its advice and waits: the controller then goes away
    # exactly while the restart is being carried out, not before or after it by luck.
    await handle.signal("pause")

    async def advised() -> bool:
        status = await rig.status(spec.run_id)
        return bool(status and status.advice)

    await rig.until("the advice (run paused)", advised, 60, run_id=spec.run_id)
    dev_cluster("stop-ctld")
    stopped = time.monotonic()
    try:
        await handle.signal("resume")
        await asyncio.sleep(max(0.0, 30 - (time.monotonic() - stopped)))
        during = await rig.status(spec.run_id)
        assert worker.poll() is None, "the worker must survive a slurmctld that is away"
        assert during is not None and during.run.state == "recovering", during
        assert not any(a.changed for a in during.actions), during.actions
    finally:
        back = datetime.now(UTC)
        dev_cluster("start-ctld")

    status = await rig.result(spec.run_id, timeout=150)
    bad = failing_node(script.parent)
    assert status.run.state == "completed", await rig.describe(spec.run_id)
    check_converged_restart(status, bad)
    first_change = min(a.at for a in status.actions if a.changed)
    assert first_change >= back, (first_change, back)
    final = job_facts(job)
    assert (final.state, final.restarts, final.excluded) == ("COMPLETED", 1, [bad]), final.raw


# --- 7. a hostile job name ------------------------------------------------------------------------


@pytest.mark.timeout(150)
async def test_hostile_job_name_is_handled_and_nothing_is_executed(rig: Rig) -> None:
    PWNED.unlink(missing_ok=True)
    rig.start_worker(mode="act", discovery=True)
    script = job_script(rig.workdir("hostile"), first_run="xid", seconds=4)
    job = sbatch(f"--job-name={HOSTILE_NAME}", "--comment=recovery", f"--chdir={script.parent}", script=script)
    rig.jobs.append(job)
    run_id = f"recovery-{job}"

    def adopted() -> bool:
        return any(r["id"] == run_id for r in rig.listed())

    await rig.until(f"discovery to adopt job {job}", adopted, 30, every=1.0)
    status = await rig.result(run_id, timeout=120)
    bad = failing_node(script.parent)
    assert status.run.state == "completed", await rig.describe(run_id)
    assert status.run.name == HOSTILE_NAME
    check_converged_restart(status, bad)
    facts = job_facts(job)
    assert (facts.state, facts.restarts) == ("COMPLETED", 1), facts.raw
    shown = rig.recovery("status", run_id)
    assert shown.returncode == 0, shown.stderr
    assert not PWNED.exists(), "a job name was executed by a shell"


# --- 8. a job that cannot be requeued is resubmitted into the same run ---------------------------


@pytest.mark.timeout(150)
async def test_no_requeue_job_is_resubmitted_into_the_same_run(rig: Rig) -> None:
    rig.start_worker(mode="act", discovery=True)
    script = job_script(rig.workdir("noreq"), first_run="xid", seconds=4)
    # --exclude on sbatch's command line is not in the captured script: the run must keep it.
    job = sbatch("--no-requeue", "--comment=recovery", "--exclude=node4", f"--chdir={script.parent}", script=script)
    rig.jobs.append(job)
    run_id = f"recovery-{job}"

    async def resubmitted() -> str | None:
        status = await rig.status(run_id)
        return status.attempts[-1].job_id if status and len(status.attempts) > 1 else None

    second = await rig.until("the resubmitted job", resubmitted, 90, run_id=run_id)
    rig.jobs.append(second)
    status = await rig.result(run_id, timeout=90)
    bad = failing_node(script.parent)
    assert status.run.state == "completed", await rig.describe(run_id)
    check_converged_restart(status, bad)
    first_attempt, successor = status.attempts
    assert successor.job_id == second != first_attempt.job_id == job
    assert sorted(successor.excluded_nodes) == sorted([bad, "node4"]) and bad not in successor.nodes, successor
    assert any(a.kind == "submit" and a.job_id == second for a in status.actions), status.actions

    original, new = job_facts(job), job_facts(second)
    assert (original.state, original.restarts) == ("FAILED", 0), original.raw
    assert (new.state, sorted(new.excluded)) == ("COMPLETED", sorted([bad, "node4"])), new.raw
    assert bad not in new.nodes, new.raw
    row = next(r for r in rig.listed() if r["id"] == run_id)
    assert row["attempts"] == 2 and row["job_id"] == second, row


# --- 6. jobs that did not opt in, or are outside the allowed partitions ---------------------------


@pytest.mark.timeout(120)
async def test_jobs_not_opted_in_or_outside_partitions_are_never_touched(rig: Rig) -> None:
    rig.start_worker("--partitions", "debug", mode="act", discovery=True)
    not_opted = job_script(rig.workdir("plain"), first_run="xid")
    elsewhere = job_script(rig.workdir("other"), first_run="xid")
    control = job_script(rig.workdir("control"), first_run="fine", seconds=60)
    a = sbatch(f"--chdir={not_opted.parent}", script=not_opted)
    b = sbatch("--comment=recovery", "--partition=other", f"--chdir={elsewhere.parent}", script=elsewhere)
    # An opted-in job in an allowed partition: proof that discovery ran while we watched.
    c = sbatch("--comment=recovery", f"--chdir={control.parent}", script=control)
    rig.jobs += [a, b, c]

    def both_failed() -> bool:
        return all(job_facts(j).state == "FAILED" for j in (a, b))

    await rig.until("both jobs to fail", both_failed, 30)
    await rig.until(
        "discovery to adopt the control job",
        lambda: any(r["id"] == f"recovery-{c}" for r in rig.listed()),
        30,
        every=1.0,
    )
    await asyncio.sleep(6)  # three more discovery rounds (interval 2 s) after the failures

    rows = rig.listed()
    for job in (a, b):
        assert not [r for r in rows if r["id"] == f"recovery-{job}" or r["job_id"] == job], rows
        facts = job_facts(job)
        assert (facts.state, facts.restarts, facts.excluded) == ("FAILED", 0, []), facts.raw
        mutations = [line for line in ctld_log_lines(rig.slurm_dir, job) if "Requeu" in line or "_update_job" in line]
        assert mutations == [], mutations
