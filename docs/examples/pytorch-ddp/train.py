"""A small data-parallel PyTorch training run that `recovery` can keep going.

Real `torch.distributed` (gloo, CPU), one process per node, a small MLP on synthetic data,
wrapped in DistributedDataParallel. What makes it recoverable, and what recovery reads:

- It saves a checkpoint every `--checkpoint-every` steps, atomically (a temporary file in the
  same directory, fsync, then rename), and every attempt resumes from the latest one. (Its own
  messages say "step 15", never "step=15": a `step=N` line would read as progress.)
- Every rank prints one structured progress line per step:

      recovery-progress step=31 total=60 rank=0 step_time=0.312 compute_time=0.301 loss=0.8123

  `step_time` is the step's wall time (the same on every rank: the ranks wait for each other in
  the gradient all-reduce); `compute_time` is the rank's own work, without that wait, so a slow
  rank stands out from the others.
- Before the gradient all-reduce of each step the ranks meet in `monitored_barrier` (gloo's
  debugging barrier): if a rank does not arrive within `--barrier-timeout`, rank 0 logs which
  ranks are missing ("Ranks 1 failed to pass monitoredBarrier ...") and keeps waiting. That
  line is how a hang names its node; the hang itself is judged by whoever watches the job.

Faults for demonstrations and tests, on the first attempt of a run only, by environment:

    RECOVERY_EXAMPLE_FAULT=crash|hang|slow   what goes wrong
    RECOVERY_EXAMPLE_FAULT_NODE=node2        on which node (SLURMD_NODENAME); default the last rank's
    RECOVERY_EXAMPLE_FAULT_STEP=20           at which step (default 10)
    RECOVERY_EXAMPLE_STEPS=60                total steps (or --steps)
    RECOVERY_EXAMPLE_SLOW_SECONDS=1.0        extra seconds per step for `slow`

`crash` prints an NVIDIA Xid 79 "fallen off the bus" line naming the node and a CUDA error, and
exits 1; `hang` blocks that rank for ever (the others wait in the barrier and the all-reduce);
`slow` sleeps the extra seconds on every step from the fault step on. "First attempt" is
Slurm's first run of the job (SLURM_RESTART_COUNT unset or 0) and, for a restart that
resubmits the job under a new id (where the count starts at 0 again), a marker file
`fault-injected` in the checkpoint directory, created when the fault is injected.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # the CPU wheel works without it
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

CHECKPOINT = "checkpoint.pt"
MARKER = "fault-injected"


def main() -> int:
    args = parse_args()
    rank, world = int(env("RANK", "SLURM_PROCID", "0")), int(env("WORLD_SIZE", "SLURM_NTASKS", "1"))
    node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename
    restart = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
    ckpt_dir = Path(args.checkpoint_dir)
    ckpt_dir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(0)
    torch.set_num_threads(1)  # one small rank per node; on a shared 2-core machine, fair
    dist.init_process_group(
        "gloo",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=args.collective_timeout),
    )
    # The barrier gets its own group so that its timeouts never touch the training group.
    monitor = dist.new_group(backend="gloo")
    master = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
    say(f"rank {rank}/{world} on {node} (restart {restart}), master {master}")

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    step = load(ckpt_dir / CHECKPOINT, model, optimizer)
    if step:
        say(f"rank {rank} resuming from the checkpoint of step {step}")
    else:
        say(f"rank {rank} starting from step 0 (no checkpoint)")
    fault = Fault.from_env(rank, world, node, restart, ckpt_dir)

    teacher = torch.Generator().manual_seed(1234)
    true_w = torch.randn(32, 1, generator=teacher)
    while step < args.steps:
        step += 1
        started = time.monotonic()
        data = torch.Generator().manual_seed(step * 1000 + rank)  # each rank its own shard of the step
        x = torch.randn(args.batch, 32, generator=data)
        y = x @ true_w + 0.1 * torch.randn(args.batch, 1, generator=data)
        loss = nn.functional.mse_loss(ddp(x), y)
        time.sleep(args.step_seconds)  # stands in for the real work of a bigger model
        fault.maybe(step)
        waited = meet(monitor, rank, args.barrier_timeout)
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]  # DDP all-reduces the gradients here
        optimizer.step()
        elapsed = time.monotonic() - started
        say(
            f"recovery-progress step={step} total={args.steps} rank={rank} "
            f"step_time={elapsed:.3f} compute_time={max(0.0, elapsed - waited):.3f} loss={loss.item():.4f}"
        )
        if step % args.checkpoint_every == 0 or step == args.steps:
            if rank == 0:
                save(ckpt_dir / CHECKPOINT, step, model, optimizer)
                say(f"rank 0 saved the checkpoint of step {step}")
            dist.barrier()  # nobody runs ahead of a checkpoint it might have to resume from
    say(f"rank {rank} on {node}: training done at step {step}")
    dist.destroy_process_group()
    return 0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--steps", type=int, default=int(os.environ.get("RECOVERY_EXAMPLE_STEPS", 60)))
    p.add_argument("--step-seconds", type=float, default=float(os.environ.get("RECOVERY_EXAMPLE_STEP_SECONDS", 0.25)))
    p.add_argument("--checkpoint-every", type=int, default=int(os.environ.get("RECOVERY_EXAMPLE_CHECKPOINT_EVERY", 5)))
    p.add_argument(
        "--checkpoint-dir",
        default=os.environ.get("RECOVERY_EXAMPLE_CHECKPOINT_DIR", str(Path.cwd() / "checkpoints")),
    )
    p.add_argument("--batch", type=int, default=64)
    p.add_argument(
        "--barrier-timeout",
        type=float,
        default=float(os.environ.get("RECOVERY_EXAMPLE_BARRIER_TIMEOUT", 60)),
        help="seconds before rank 0 names the ranks missing at the barrier (keep it below the hang timeout)",
    )
    p.add_argument("--collective-timeout", type=float, default=1800.0, help="gloo's own timeout, seconds")
    return p.parse_args()


def env(*names_then_default: str) -> str:
    *names, default = names_then_default
    return next((os.environ[n] for n in names if os.environ.get(n)), default)


def meet(group: Any, rank: int, timeout: float) -> float:
    """All ranks meet before the all-reduce; seconds this rank waited there. Rank 0 names the
    ranks that do not come in time, then keeps waiting (in the all-reduce that follows)."""
    started = time.monotonic()
    try:
        dist.monitored_barrier(group=group, timeout=datetime.timedelta(seconds=timeout), wait_all_ranks=True)
    except RuntimeError as e:
        if rank != 0:
            raise
        say(f"[rank0]: {e}".replace("\n", " "))
    return time.monotonic() - started


class Fault:
    def __init__(self, kind: str, step: int, node: str, slow: float, marker: Path | None) -> None:
        self.kind, self.step, self.node, self.slow, self.marker = kind, step, node, slow, marker
        self.active = False

    @classmethod
    def from_env(cls, rank: int, world: int, node: str, restart: int, ckpt_dir: Path) -> Fault:
        kind = os.environ.get("RECOVERY_EXAMPLE_FAULT", "")
        target = os.environ.get("RECOVERY_EXAMPLE_FAULT_NODE")
        targeted = node == target if target else rank == world - 1
        marker = ckpt_dir / MARKER
        first_attempt = restart == 0 and not marker.exists()
        if kind not in ("crash", "hang", "slow") or not targeted or not first_attempt:
            return cls("", 0, node, 0.0, None)
        step = int(os.environ.get("RECOVERY_EXAMPLE_FAULT_STEP", 10))
        slow = float(os.environ.get("RECOVERY_EXAMPLE_SLOW_SECONDS", 1.0))
        return cls(kind, step, node, slow, marker)

    def maybe(self, step: int) -> None:
        if not self.kind or step < self.step:
            return
        if not self.active:
            self.active = True
            if self.marker is not None:
                with contextlib.suppress(FileExistsError):
                    self.marker.open("x").write(f"{self.kind} on {self.node} at step {step}\n")
            now = datetime.datetime.now(datetime.UTC).isoformat()
            say(f"recovery-example: injecting fault {self.kind} on {self.node} at step {step} at {now}")
        if self.kind == "slow":
            time.sleep(self.slow)
        elif self.kind == "hang":  # alive and silent, as a rank stuck in a kernel or a dead NIC
            threading.Event().wait()
        elif self.kind == "crash":
            say(f"[{self.node}] NVRM: Xid (PCI:0000:3b:00): 79, pid={os.getpid()}, GPU has fallen off the bus.")
            say("RuntimeError: CUDA error: unspecified launch failure")
            sys.stdout.flush()
            os._exit(1)  # as a process whose GPU vanished: no clean shutdown of the process group


def load(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    if not path.exists():
        return 0
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return int(state["step"])


def save(path: Path, step: int, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Atomically: a crash in the middle of a save never leaves a torn checkpoint."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as f:
        torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
