"""Detection in the running loop: a silent job is found hung, terminated and restarted; the log
explains a crash; progress milestones tell a restarted allocation from restored training."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.client import runs
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import start

HANG_TIMEOUT = 2.0


@pytest.fixture
def fast_hang_policy(tmp_path: Path) -> str:
    policy = tmp_path / "hang.yaml"
    policy.write_text(
        "name: fast-hang\nhang: {min_timeout: 2s, max_timeout: 2s, startup_grace: 20s, checkpoint_grace: 5s}\n"
    )
    return str(policy)


@pytest.mark.timeout(120)
async def test_silent_job_is_detected_terminated_and_restarted(
    embedded: Embedded, client: Client, fast_hang_policy: str
) -> None:
    embedded.start_worker()
    script = embedded.job_script("hang", fault_kind="hang", fault_rank=1, fault_step=6, steps=14)
    spec = await start(client, script, fast_hang_policy)
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None and status.run.state == "completed"
    (symptom,) = status.symptoms
    assert symptom.kind == "hang"
    assert "no progress" in symptom.evidence[0].text
    (advice,) = status.advice
    assert advice.operation == "restart" and advice.status == "converged"
    first, second = status.attempts
    assert first.started_at is not None and second.restart_count == 1
    # Rank 1 goes silent after step 5 (0.1 s steps); the other rank finishes its 14 steps by
    # about 1.4 s. Detection must come within the timeout plus 2 s of the last progress.
    last_progress_by = first.started_at.timestamp() + 14 * 0.1 + 1.0
    assert symptom.detected_at.timestamp() <= last_progress_by + HANG_TIMEOUT + 2.0
    names = [m.name for m in status.milestones]
    assert "progress_started" in names and "progress_restored" in names
    restored = next(m for m in status.milestones if m.name == "progress_restored")
    assert restored.detail != "step 1", "the restart resumed from its checkpoint, not step 0"
    embedded.stop_workers()


@pytest.mark.timeout(120)
async def test_crash_is_explained_from_the_log(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    spec = await start(client, embedded.job_script("xid", fault_kind="crash", fault_rank=1))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None and status.run.state == "completed"
    (diagnosis,) = status.diagnoses
    assert diagnosis.category == "hardware"
    assert "Xid 79" in diagnosis.explanation
    bad = status.attempts[0].nodes[1]
    assert diagnosis.implicated_nodes == [bad]
    assert any(e.signature and e.line for e in diagnosis.evidence)
    assert bad in status.advice[0].excluded_nodes  # with any node the session made suspect
    assert ".out:" in status.advice[0].explanation, "the explanation cites the log file and line"
    embedded.stop_workers()
