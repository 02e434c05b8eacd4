"""A small checkpointing "training" loop in pure Python, for the demo and tests.

Each node's copy plays one rank. Rank 0 saves a checkpoint every few steps; every attempt
resumes from the latest checkpoint. It prints one progress line per step:

    recovery-progress step=12 total=30 rank=0 loss=0.4123

Faults for demonstrations, on the first attempt only (SLURM_RESTART_COUNT=0), by environment:
RECOVERY_EXAMPLE_FAULT=crash|hang, RECOVERY_EXAMPLE_FAULT_NODE=<node> (or RECOVERY_EXAMPLE_FAULT_RANK=<rank>),
RECOVERY_EXAMPLE_FAULT_STEP=<n>.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=int(os.environ.get("RECOVERY_EXAMPLE_STEPS", 30)))
    parser.add_argument("--step-seconds", type=float, default=0.2)
    parser.add_argument("--checkpoint-every", type=int, default=5)
    parser.add_argument("--checkpoint-dir", default=os.environ.get("SLURM_SUBMIT_DIR", "."))
    args = parser.parse_args()

    rank = int(os.environ.get("SLURM_PROCID", "0"))
    node = os.environ.get("SLURMD_NODENAME", "localhost")
    restart = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
    checkpoint = Path(args.checkpoint_dir) / "checkpoint.json"

    step = load(checkpoint)
    how = f"resumed from checkpoint at step {step}" if step else "starting from step 0"
    say(f"rank {rank} on {node} (restart {restart}): {how}")
    while step < args.steps:
        step += 1
        time.sleep(args.step_seconds)
        maybe_fail(step, node, restart)
        say(f"recovery-progress step={step} total={args.steps} rank={rank} loss={1 / math.sqrt(step):.4f}")
        if rank == 0 and step % args.checkpoint_every == 0:
            save(checkpoint, step)
    say(f"rank {rank} on {node}: training done at step {step}")
    return 0


def maybe_fail(step: int, node: str, restart: int) -> None:
    fault = os.environ.get("RECOVERY_EXAMPLE_FAULT")
    rank = os.environ.get("SLURM_PROCID")
    targeted = node == os.environ.get("RECOVERY_EXAMPLE_FAULT_NODE") or (
        rank is not None and rank == os.environ.get("RECOVERY_EXAMPLE_FAULT_RANK")
    )
    if restart or fault not in ("crash", "hang") or not targeted:
        return
    if step != int(os.environ.get("RECOVERY_EXAMPLE_FAULT_STEP", "1")):
        return
    if fault == "hang":  # stuck as in a collective whose peer never comes: alive, silent
        while True:
            time.sleep(3600)
    say(f"[{node}] NVRM: Xid (PCI:0000:3b:00): 79, pid={os.getpid()}, GPU has fallen off the bus.")
    say("RuntimeError: CUDA error: unspecified launch failure")
    sys.exit(1)


def load(checkpoint: Path) -> int:
    try:
        return int(json.loads(checkpoint.read_text())["step"])
    except (OSError, ValueError, KeyError):
        return 0


def save(checkpoint: Path, step: int) -> None:
    tmp = checkpoint.with_suffix(".tmp")
    tmp.write_text(json.dumps({"step": step}))
    os.replace(tmp, checkpoint)  # atomic: a crash mid-save never leaves a torn checkpoint


def say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
