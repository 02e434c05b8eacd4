"""Issue 7's acceptance: real PyTorch training (docs/examples/pytorch-ddp: torch.distributed,
gloo, 2 nodes x 1 process) on the real Slurm dev cluster, watched by a real worker on a real
Temporal dev server, survives a crash, a hang and a straggler without anyone touching it.

For each fault: the symptom is detected, the advice restarts the job without the faulty node,
Slurm runs it again elsewhere, the job resumes from its checkpoint (the job's own output says
so: the first step after the restart follows the last checkpoint, not step 0) and finishes all
steps, in exactly two attempts; `recovery status --json` has a goodput with 0 < ETTR < 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from recovery.workflows.models import RunStatus
from tests.conftest import need
from tests.integration.recovery_rig import Rig, job_facts
from tests.integration.torch_example import (
    FAULT_STEP,
    LONG_BARRIER_TIMEOUT,
    STEPS,
    fault_env,
    have_torch,
    read_output,
    submit_example,
)

if TYPE_CHECKING:
    pass

pytestmark = [pytest.mark.slow, pytest.mark.temporal]


@pytest.fixture(scope="module", autouse=True)
def torch_installed() -> None:
    need(have_torch(), "PyTorch (`make test` installs it: pip install -e '.[examples]')")


async def recovered(
    rig: Rig, fault: str, symptom: str, timeout: float, env: dict[str, str] | None = None
) -> tuple[RunStatus, dict[str, Any]]:
    """Run the example with `fault` under an acting worker; check the whole recovery; return the
    final status and `recovery status --json`."""
    rig.start_worker(mode="act")
    spec, job, workdir = await submit_example(rig, fault, env=env)
    status = await rig.result(spec.run_id, timeout=timeout)
    shown = await rig.describe(spec.run_id)
    out = read_output(workdir, job)
    bad = out.faulty_node
    assert out.fault is not None and out.fault[0] == fault and out.fault[2] == FAULT_STEP, out.fault

    # the run: one symptom of the right kind, one restart without the faulty node, done
    assert status.run.state == "completed", shown
    assert [s.kind for s in status.symptoms] == [symptom], shown
    assert bad in status.diagnoses[0].implicated_nodes, shown
    assert len(status.advice) == 1, shown
    (advice,) = status.advice
    assert (advice.operation, advice.excluded_nodes, advice.acted, advice.status) == (
        "restart",
        [bad],
        True,
        "converged",
    ), shown
    assert len(status.attempts) == 2, shown
    first, second = status.attempts
    assert bad in first.nodes and bad not in second.nodes and len(second.nodes) == 2, shown
    facts = job_facts(job)
    assert (facts.state, facts.restarts, facts.excluded) == ("COMPLETED", 1, [bad]), facts.raw

    # the job's own account: it resumed from its last checkpoint and finished every step
    assert [a.restart for a in out.attempts] == [0, 1], out
    before, after = out.attempts
    assert before.resumed_from == 0 and before.saved, before
    checkpoint = before.saved[-1]
    assert 0 < checkpoint <= max(before.steps), before
    assert after.resumed_from == checkpoint, (after.resumed_from, checkpoint)
    assert after.steps[0] == checkpoint + 1, after.steps[:3]  # not step 1: the steps before were kept
    assert after.steps[-1] == STEPS and after.done == {0: STEPS, 1: STEPS}, after
    assert bad not in after.nodes.values(), after

    # what the run recorded agrees with the job: the failed attempt's last step, the resume
    assert first.last_step == max(before.steps), (first, before.steps[-3:])
    assert second.first_step == checkpoint + 1, second

    # goodput, as `recovery status --json` shows it
    done = rig.recovery("status", spec.run_id, "--json")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    goodput = document["goodput"]
    assert 0 < goodput["ettr"] < 1, goodput
    assert goodput["failures"] == 1, goodput
    assert goodput["recomputed_steps"] == first.last_step - checkpoint, goodput
    assert goodput["lost_restart_seconds"] > 0, goodput
    assert goodput["lost_detection_seconds"] >= 0 and goodput["lost_recompute_seconds"] >= 0, goodput
    lost = goodput["lost_detection_seconds"] + goodput["lost_restart_seconds"] + goodput["lost_recompute_seconds"]
    assert goodput["lost_seconds"] == pytest.approx(lost), goodput
    assert goodput["productive_seconds"] + goodput["lost_seconds"] == pytest.approx(goodput["elapsed_seconds"])
    human = rig.recovery("status", spec.run_id)
    assert human.returncode == 0 and "goodput  ETTR" in human.stdout and "recompute" in human.stdout, human.stdout
    return status, goodput


@pytest.mark.timeout(300)
async def test_crash_with_a_gpu_error_is_restarted_without_that_node_and_resumes(rig: Rig) -> None:
    status, _ = await recovered(rig, "crash", "crash", timeout=240)
    diagnosis = status.diagnoses[0]
    assert diagnosis.category == "hardware", diagnosis
    assert any(e.signature == "xid-79" for e in diagnosis.evidence), diagnosis.evidence


@pytest.mark.timeout(300)
async def test_a_hung_rank_is_found_restarted_without_its_node_and_resumes(rig: Rig) -> None:
    status, goodput = await recovered(rig, "hang", "hang", timeout=240)
    diagnosis = status.diagnoses[0]
    assert any(e.signature == "gloo-monitored-barrier" for e in diagnosis.evidence), diagnosis.evidence
    # a hang fails when its progress stops: the silence before detection is lost time
    assert goodput["lost_detection_seconds"] >= 15, goodput


@pytest.mark.timeout(300)
async def test_a_hung_rank_no_line_names_is_found_by_its_stack_and_restarted_without_its_node(rig: Rig) -> None:
    """Issue 10's acceptance: the barrier timeout is longer than the hang timeout, so the job's
    log never names the hung rank before recovery acts. The worker reads both ranks' stacks with
    py-spy (an `srun --overlap` step into the hung job on each node) before stopping the job;
    the rank that is not in a collective is the culprit, and its node is excluded."""
    env = fault_env("hang", barrier_timeout=LONG_BARRIER_TIMEOUT)
    status, _ = await recovered(rig, "hang", "hang", timeout=240, env=env)
    diagnosis = status.diagnoses[0]
    assert not any(e.signature == "gloo-monitored-barrier" for e in diagnosis.evidence), "a log line named the rank"
    (culprit,) = diagnosis.implicated
    assert "hung rank 1: not in a collective" in culprit.reason, culprit
    assert "Fault.maybe (train.py:" in culprit.reason and "monitored_barrier" in culprit.reason, culprit
    (symptom,) = status.symptoms
    stacks = [e for e in symptom.evidence if e.source == "py-spy"]
    assert stacks and stacks[0].signature == "hang-culprit", symptom.evidence
    assert any("waiting in a collective" in e.text for e in stacks), stacks
    explanation = status.advice[0].explanation
    assert explanation.count("no progress for") == 1 and "py-spy: rank 1 on" in explanation, explanation


@pytest.mark.timeout(300)
async def test_a_straggling_rank_is_found_restarted_without_its_node_and_resumes(rig: Rig) -> None:
    status, goodput = await recovered(rig, "slow", "straggler", timeout=240)
    # a slowdown fails when it begins; until detected it loses the share of its pace it lost
    assert status.symptoms[0].slowdown is not None and status.symptoms[0].slowdown > 0.5, status.symptoms
    assert goodput["lost_detection_seconds"] > 5, goodput
    assert "slowdown" in status.diagnoses[0].explanation or "straggl" in status.diagnoses[0].explanation, (
        status.diagnoses[0]
    )


def test_the_example_is_linked_from_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "docs/examples/pytorch-ddp" in readme
