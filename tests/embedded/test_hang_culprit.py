"""A hang names its culprit on the embedded local scheduler: real PyTorch (the example's train.py,
gloo, two ranks on two nodes), one rank blocks, and no log line names it (its barrier timeout is
far longer than the hang timeout). Before the hung attempt is stopped, the worker reads both
ranks' stacks with py-spy through the local scheduler's process groups; the restart excludes the
hung rank's node, and the stacks are in `recovery status`."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from recovery.client import runs
from recovery.workflows.training_run import TrainingRun
from tests.conftest import need
from tests.embedded.conftest import Embedded, free_port
from tests.embedded.test_recovery import start

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "pytorch-ddp"
FAULT = re.compile(r"recovery-example: injecting fault hang on (\S+) at step (\d+)")


def torch_job(embedded: Embedded) -> Path:
    """The example's train.py as a 2-node local job: rank = the node's index, the rendezvous on
    this machine, one port per attempt, and rank 1 hanging at step 6 on the first attempt."""
    workdir = embedded.home / "jobs" / f"torch-hang-{uuid.uuid4().hex[:6]}"
    workdir.mkdir(parents=True)
    shutil.copy(EXAMPLE / "train.py", workdir / "train.py")
    script = workdir / "job.sbatch"
    script.write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\nset -euo pipefail\n"
        f"export MASTER_ADDR=127.0.0.1 MASTER_PORT=$(( {free_port()} + ${{SLURM_RESTART_COUNT:-0}} ))\n"
        "export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NNODES\n"
        "export RECOVERY_EXAMPLE_FAULT=hang RECOVERY_EXAMPLE_FAULT_STEP=6 RECOVERY_EXAMPLE_BARRIER_TIMEOUT=600\n"
        f'exec {sys.executable} "$SLURM_SUBMIT_DIR/train.py" --steps 14 --step-seconds 0.2 --checkpoint-every 5\n'
    )
    return script


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_hung_rank_with_no_line_naming_it_is_found_by_its_stack(
    embedded: Embedded, client: Client, tmp_path: Path
) -> None:
    need(importlib.util.find_spec("torch") is not None, "PyTorch (pip install -e '.[examples]')")
    policy = tmp_path / "hang.yaml"
    policy.write_text("name: torch-hang-local\nhang: {min_timeout: 8s, max_timeout: 1m, startup_grace: 2m}\n")
    embedded.start_worker()
    script = torch_job(embedded)
    spec = await start(client, script, str(policy))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None, "the run failed as a workflow"
    assert status.attempts[0].output_path is not None
    fault = FAULT.search(Path(status.attempts[0].output_path).read_text(errors="replace"))
    assert fault is not None, "the job never injected its fault"
    hung = fault.group(1)

    assert status.run.state == "completed", status.model_dump_json(indent=1)
    (symptom,) = status.symptoms
    assert symptom.kind == "hang"
    assert (
        symptom.evidence[0].text.startswith("no progress for ") and symptom.evidence[0].text.count("no progress") == 1
    )
    stacks = [e for e in symptom.evidence if e.source == "py-spy"]
    assert stacks and stacks[0].signature == "hang-culprit", [e.text for e in symptom.evidence]

    (diagnosis,) = status.diagnoses
    assert not any(e.signature == "gloo-monitored-barrier" for e in diagnosis.evidence), "a log line named the rank"
    assert diagnosis.implicated_nodes == [hung], diagnosis
    reason = diagnosis.implicated[0].reason
    assert "hung rank 1: not in a collective" in reason and "Fault.maybe (train.py:" in reason, reason
    assert "monitored_barrier" in reason, reason
    assert "py-spy: rank 1 on" in diagnosis.explanation

    (advice,) = status.advice
    assert advice.operation == "restart" and hung in advice.excluded_nodes and advice.status == "converged"
    first, second = status.attempts
    assert hung in first.nodes and hung not in second.nodes

    shown = embedded.recovery("status", spec.run_id)
    assert shown.returncode == 0, shown.stderr
    assert f"rank 1 on {hung}, not in a collective" in shown.stdout
    assert "        < Fault.maybe (train.py:" in shown.stdout

    # The new activity is behind a patch, and the run's own history replays deterministically.
    history = await client.get_workflow_handle(spec.run_id).fetch_history()
    assert any(
        e.activity_task_scheduled_event_attributes.activity_type.name == "collect_hang_stacks" for e in history.events
    )
    await Replayer(workflows=[TrainingRun], data_converter=pydantic_data_converter).replay_workflow(history)
    embedded.stop_workers()
