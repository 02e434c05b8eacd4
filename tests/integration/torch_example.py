"""The PyTorch example (docs/examples/pytorch-ddp) as a run on the Slurm dev cluster: submit it
with a fault, and read back from its own output what happened (which node the fault hit, when,
the checkpoints, where each attempt resumed, whether all steps were done).

Used by `test_pytorch_recovery.py` and `benchmarks/pytorch_recovery.py`, with `recovery_rig`.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from recovery.workflows.models import RunSpec, Tuning
from recovery.workflows.policy import format_duration
from recovery.workflows.policy_files import parse_policy
from tests.integration.recovery_rig import FAST, Rig

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "pytorch-ddp"
STEPS = 60
FAULT_STEP = 20
# Policies for the tests (and the benchmark), the example's own files: short windows, so a run
# takes a minute.
POLICIES = {
    "crash": "name: torch-crash\n",
    "hang": (EXAMPLE / "torch-hang.yaml").read_text(),
    "slow": (EXAMPLE / "torch-slow.yaml").read_text(),
}
# the hang policy's min_timeout (steps take ~0.25 s, so the learned one is lower)
HANG_TIMEOUT = format_duration(parse_policy(POLICIES["hang"], "torch-hang.yaml").hang.min_timeout)
BARRIER_TIMEOUT = 8  # seconds: the example names the missing rank this long into a hang
# Longer than the hang timeout (and than the whole recovery): no log line names the hung rank
# before recovery acts, so only the ranks' stacks can.
LONG_BARRIER_TIMEOUT = 600
STRAGGLER_SUSTAIN = format_duration(parse_policy(POLICIES["slow"], "torch-slow.yaml").straggler.sustain)
SLOW_SECONDS = 1.0  # extra per step on the slow rank: a 0.25 s step becomes 1.25 s


def have_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def prepare(workdir: Path, fault: str) -> tuple[Path, Path]:
    """The example's files in the run's directory (the job resumes from ./checkpoints there),
    and the policy for this fault."""
    for name in ("train.py", "job.sbatch"):
        shutil.copy(EXAMPLE / name, workdir / name)
    policy = workdir / f"policy-{fault}.yaml"
    policy.write_text(POLICIES[fault])
    return workdir / "job.sbatch", policy


def fault_env(
    fault: str,
    *,
    steps: int = STEPS,
    fault_step: int = FAULT_STEP,
    node: str | None = None,
    barrier_timeout: float = BARRIER_TIMEOUT,
) -> dict[str, str]:
    env = {
        "RECOVERY_PYTHON": sys.executable,
        "RECOVERY_EXAMPLE_FAULT": fault,
        "RECOVERY_EXAMPLE_FAULT_STEP": str(fault_step),
        "RECOVERY_EXAMPLE_STEPS": str(steps),
        "RECOVERY_EXAMPLE_BARRIER_TIMEOUT": f"{barrier_timeout:g}",
        "RECOVERY_EXAMPLE_SLOW_SECONDS": str(SLOW_SECONDS),
    }
    if node is not None:
        env["RECOVERY_EXAMPLE_FAULT_NODE"] = node
    return env


async def submit_example(
    rig: Rig, fault: str, *, tuning: Tuning = FAST, env: dict[str, str] | None = None
) -> tuple[RunSpec, str, Path]:
    """What `recovery submit --scheduler slurm --policy P job.sbatch` does, with the fault's
    environment for the job: (the run's spec, its job id, its directory)."""
    workdir = rig.workdir(f"torch-{fault}")
    script, policy = prepare(workdir, fault)
    environment = env if env is not None else fault_env(fault)
    spec, job_id = await rig.submit_run(script, tuning, f"torch-{fault}", str(policy), environment)
    return spec, job_id, workdir


# --- the job's own account ------------------------------------------------------------------------

_START = re.compile(r"^(\d+): rank (\d+)/\d+ on (\S+) \(restart (\d+)\)")
_RESUME = re.compile(r"^0: rank 0 resuming from the checkpoint of step (\d+)")
_SAVED = re.compile(r"^0: rank 0 saved the checkpoint of step (\d+)")
_STEP = re.compile(r"^(\d+): recovery-progress step=(\d+) ")
_FAULT = re.compile(r"recovery-example: injecting fault (\w+) on (\S+) at step (\d+) at (\S+)")
_DONE = re.compile(r"^(\d+): rank \d+ on \S+: training done at step (\d+)")


@dataclass
class AttemptOutput:
    restart: int
    nodes: dict[int, str] = field(default_factory=dict)  # rank -> node
    resumed_from: int = 0
    saved: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)  # rank 0's progress, in order
    done: dict[int, int] = field(default_factory=dict)  # rank -> its last step, when it finished


@dataclass
class JobOutput:
    attempts: list[AttemptOutput]
    fault: tuple[str, str, int, datetime] | None  # kind, node, step, when

    @property
    def faulty_node(self) -> str:
        assert self.fault is not None, "the job never injected its fault"
        return self.fault[1]


def read_output(workdir: Path, job_id: str) -> JobOutput:
    """slurm-JOB.out (appended across requeues): one section per attempt, from each one's start
    line on rank 0 (`rank 0/2 on node1 (restart N)`)."""
    text = (workdir / f"slurm-{job_id}.out").read_text(errors="replace")
    attempts: list[AttemptOutput] = []
    fault = None
    for line in text.splitlines():
        if m := _START.match(line):
            restart = int(m.group(4))
            if not attempts or attempts[-1].restart != restart:
                attempts.append(AttemptOutput(restart=restart))
            attempts[-1].nodes[int(m.group(2))] = m.group(3)
        if not attempts:
            continue
        current = attempts[-1]
        if m := _RESUME.match(line):
            current.resumed_from = int(m.group(1))
        elif m := _SAVED.match(line):
            current.saved.append(int(m.group(1)))
        elif (m := _STEP.match(line)) and m.group(1) == "0":
            current.steps.append(int(m.group(2)))
        elif m := _DONE.match(line):
            current.done[int(m.group(1))] = int(m.group(2))
        if m := _FAULT.search(line):
            fault = (m.group(1), m.group(2), int(m.group(3)), datetime.fromisoformat(m.group(4)))
    return JobOutput(attempts=attempts, fault=fault)
