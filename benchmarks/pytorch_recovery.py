"""Real PyTorch training on the real Slurm dev cluster, crashed, hung and slowed down on purpose:
how fast recovery notices, how fast the run runs again, and what is left of its goodput; and,
for comparison, what the same job does when nothing watches it.

    .venv/bin/python benchmarks/pytorch_recovery.py [--runs 5] [--faults crash,hang,slow]
                                                    [--time-limit 2] [--keep-cluster]

Needs root (deploy/slurm-dev-cluster) and PyTorch in this interpreter (pip install -e '.[examples]').
The job is docs/examples/pytorch-ddp (2 nodes x 1 process, gloo, 60 steps of ~0.25 s, a
checkpoint every 5 steps, the fault at step 20, on the allocation's second node), run with the
test policies of tests/integration/torch_example.py, under one `recovery worker --scheduler
slurm --mode act` on a private Temporal dev server, one run after another.

Where the times come from:
- fault injected: the job's own line `recovery-example: injecting fault ... at <UTC time>`;
- symptom detected: the run's symptom (`detected_at`, the watch activity's clock);
- failure: the run's `failure_observed` milestone (Slurm's end time for a crash; the last
  progress for a hang; the detection for a straggler, whose attempt is still making progress);
- successor running: the `successor_running` milestone (Slurm's StartTime of the requeued job);
- ETTR and its lost parts: `recovery status RUN --json`'s goodput, at the run's end.

Unwatched: the same job and fault, submitted with plain sbatch and a `--time` limit, with no
worker looking (its comment is not an opt-in): how long it stays allocated after the fault, how
it ends, and how many steps it made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.integration.*, shared with the tests

from slurm_recovery_latency import dev_cluster, ensure_cluster  # noqa: E402 - the same dev cluster handling

from tests.integration.recovery_rig import Rig, TemporalDev, new_rig, slurm  # noqa: E402
from tests.integration.torch_example import (  # noqa: E402
    BARRIER_TIMEOUT,
    FAULT_STEP,
    HANG_TIMEOUT,
    POLICIES,
    SLOW_SECONDS,
    STEPS,
    STRAGGLER_SUSTAIN,
    fault_env,
    have_torch,
    prepare,
    read_output,
    submit_example,
)

SYMPTOM = {"crash": "crash", "hang": "hang", "slow": "straggler"}


@dataclass
class Sample:
    fault: str
    job_id: str
    node: str
    detection: float  # fault injected -> symptom detected
    failure_to_running: float  # failure observed -> successor running
    fault_to_running: float  # fault injected -> successor running
    ettr: float
    goodput: dict[str, Any]


@dataclass
class Unwatched:
    fault: str
    job_id: str
    state: str
    allocated_after_fault: float  # fault injected -> the job's end
    steps: int


async def watched(rig: Rig, fault: str, i: int) -> Sample:
    spec, job, workdir = await submit_example(rig, fault)
    status = await rig.result(spec.run_id, timeout=300)
    if status.run.state != "completed" or len(status.attempts) != 2:
        raise RuntimeError(await rig.describe(spec.run_id))
    out = read_output(workdir, job)
    assert out.fault is not None
    injected = out.fault[3]
    (symptom,) = status.symptoms
    assert symptom.kind == SYMPTOM[fault], symptom
    marks = {m.name: m.at for m in status.milestones if m.attempt_index == 0}
    shown = rig.recovery("status", spec.run_id, "--json")
    goodput: dict[str, Any] = json.loads(shown.stdout)["goodput"]
    sample = Sample(
        fault=fault,
        job_id=job,
        node=out.faulty_node,
        detection=(symptom.detected_at - injected).total_seconds(),
        failure_to_running=(marks["successor_running"] - marks["failure_observed"]).total_seconds(),
        fault_to_running=(marks["successor_running"] - injected).total_seconds(),
        ettr=float(goodput["ettr"]),
        goodput=goodput,
    )
    print(
        f"  {fault:5} run {i + 1}: job {job} fault on {sample.node}; detected after {sample.detection:6.2f}s, "
        f"failure -> running {sample.failure_to_running:6.2f}s, fault -> running {sample.fault_to_running:6.2f}s, "
        f"ETTR {sample.ettr:.3f} (lost: detection {goodput['lost_detection_seconds']:.1f}s, restart "
        f"{goodput['lost_restart_seconds']:.1f}s, recompute {goodput['lost_recompute_seconds']:.1f}s = "
        f"{goodput['recomputed_steps']} steps; elapsed {goodput['elapsed_seconds']:.1f}s)",
        flush=True,
    )
    return sample


_END = re.compile(r"^(\S+)\|(\S+)\|(\S+)$")


async def unwatched(rig: Rig, fault: str, minutes: int) -> Unwatched:
    """Plain sbatch, a time limit, nobody watching: from the fault to the job's end."""
    workdir = rig.workdir(f"unwatched-{fault}")
    script, _ = prepare(workdir, fault)
    env = {**os.environ, **fault_env(fault)}
    job = subprocess.run(
        ["sbatch", "--parsable", f"--time={minutes}", "--comment=unwatched", f"--chdir={workdir}", str(script)],
        capture_output=True, text=True, env=env, check=True, timeout=60,
    ).stdout.strip().split(";")[0]  # fmt: skip
    rig.jobs.append(job)
    deadline = time.monotonic() + minutes * 60 + 120
    while time.monotonic() < deadline:
        line = slurm("sacct", "-n", "-P", "-X", "-j", job, "-o", "State,Start,End").stdout.strip()
        state = line.split("|")[0].split()[0] if line else ""
        if state and state not in ("PENDING", "RUNNING", "REQUEUED", "COMPLETING"):
            break
        await asyncio.sleep(2)
    state, _start, end = line.split("|")
    ended = datetime.fromisoformat(end).astimezone(UTC)
    out = read_output(workdir, job)
    injected = out.fault[3] if out.fault else ended
    steps = max(out.attempts[0].steps) if out.attempts and out.attempts[0].steps else 0
    # sacct's End has whole seconds: a job that ends at once can read a fraction before the fault
    result = Unwatched(fault, job, state.split()[0], max(0.0, (ended - injected).total_seconds()), steps)
    print(
        f"  {fault:5} unwatched: job {job} ended {result.state} {result.allocated_after_fault:6.1f}s after the fault, "
        f"at step {steps} of {STEPS}",
        flush=True,
    )
    return result


def describe(values: list[float]) -> str:
    return f"median {statistics.median(values):7.2f}  min {min(values):7.2f}  max {max(values):7.2f}"


async def bench(faults: list[str], runs: int, minutes: int, state_dir: Path) -> None:
    dev = TemporalDev.start()
    rig = await new_rig(dev, state_dir)
    samples: dict[str, list[Sample]] = {}
    alone: dict[str, Unwatched] = {}
    try:
        rig.start_worker(mode="act")
        for fault in faults:
            samples[fault] = [await watched(rig, fault, i) for i in range(runs)]
        rig.stop_workers()
        for fault in faults:
            alone[fault] = await unwatched(rig, fault, minutes)
    finally:
        await rig.close()
        dev.stop()

    print(
        f"\nSettings: {STEPS} steps of ~0.25 s, checkpoint every 5, fault at step {FAULT_STEP} on the second node; "
        f"hang policy min_timeout {HANG_TIMEOUT} (example's barrier names the rank after {BARRIER_TIMEOUT}s); "
        f"straggler policy sustain {STRAGGLER_SUSTAIN} (min_drop 0.3; slow rank +{SLOW_SECONDS:g}s per step); "
        f"worker poll 1 s; Slurm cred_expire=10 (requeued job may start ~11 s after its end)"
    )
    for fault, policy in POLICIES.items():
        if fault in faults:
            print(f"  policy for {fault}: {policy.strip()}")
    print(f"\n{runs} runs per fault; seconds:")
    for fault in faults:
        got = samples[fault]
        print(f"\n{fault} ({SYMPTOM[fault]}):")
        print(f"  fault injected -> symptom detected   {describe([s.detection for s in got])}")
        print(f"  failure observed -> successor running {describe([s.failure_to_running for s in got])}")
        print(f"  fault injected -> successor running  {describe([s.fault_to_running for s in got])}")
        print(f"  ETTR                                 {describe([s.ettr for s in got])}")
        for part in ("lost_detection_seconds", "lost_restart_seconds", "lost_recompute_seconds"):
            print(f"    {part:34} {describe([float(s.goodput[part]) for s in got])}")
    print(f"\nUnwatched (plain sbatch --time={minutes}, no worker):")
    for fault in faults:
        u = alone[fault]
        print(
            f"  {fault:5}: ended {u.state}, allocated {u.allocated_after_fault:.1f}s after the fault, "
            f"reached step {u.steps} of {STEPS}"
        )


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--faults", default="crash,hang,slow")
    parser.add_argument("--time-limit", type=int, default=2, help="minutes, for the unwatched jobs")
    parser.add_argument("--keep-cluster", action="store_true", help="leave a cluster we started running")
    args = parser.parse_args()
    if not have_torch():
        sys.exit("PyTorch is missing: pip install -e '.[examples]'")
    faults = [f for f in args.faults.split(",") if f]
    state_dir, started = ensure_cluster()
    try:
        asyncio.run(bench(faults, args.runs, args.time_limit, state_dir))
    finally:
        if started and not args.keep_cluster:
            dev_cluster("stop")


if __name__ == "__main__":
    main()
