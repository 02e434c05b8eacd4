"""A requeued job whose last run still cleans up (Slurm's PENDING|COMPLETING), as squeue and
pyslurm print it on Slurm 25.11 right after `scontrol release`: it must not read as running
on its old nodes (captured on the 25.11 dev cluster: COMPLETING, reason None, EndTime NONE)."""

from __future__ import annotations

from datetime import UTC, datetime

from recovery.activities.schedulers import slurm_facts as facts
from recovery.workflows.models import JobState


def row(state: str, reason: str, restarts: int, ended: datetime | None, priority: int = 1) -> facts.SqueueJob:
    return facts.SqueueJob(
        job_id="29", raw_state=state, reason=reason, restart_count=restarts, priority=priority,
        exit_text="0:0", nodes=["node1"], batch_host="node1",
        submitted_at=datetime(2026, 12, 2, 0, 16, 26, tzinfo=UTC),
        started_at=datetime(2026, 12, 2, 0, 16, 27, tzinfo=UTC), ended_at=ended,
        partition="debug", user="root", array_job_id="29", array_task_id="", workdir="/tmp",
        stdout="slurm-%j.out", stderr="", name="wrap", comment="",
    )  # fmt: skip


def test_released_requeued_job_still_completing_is_pending_not_running() -> None:
    obs = facts.observation(row("COMPLETING", "None", 1, None), excluded=["node1"])
    assert (obs.state, obs.held, obs.nodes) == (JobState.PENDING, False, [])


def test_held_requeued_job_still_completing_is_pending_and_held() -> None:
    obs = facts.observation(row("COMPLETING", "job requeued in held state", 1, None, priority=0), excluded=[])
    assert (obs.state, obs.held) == (JobState.PENDING, True)


def test_a_run_that_ends_is_still_running_while_it_completes() -> None:
    ended = datetime(2026, 12, 2, 0, 17, tzinfo=UTC)
    assert row("COMPLETING", "None", 1, ended).state == (JobState.RUNNING, False)
    assert row("COMPLETING", "None", 0, None).state == (JobState.RUNNING, False)
