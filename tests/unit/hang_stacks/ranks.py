"""Real torch.distributed (gloo, CPU) ranks that get stuck in chosen ways, for `capture.py`.

    RANK=r WORLD_SIZE=n MASTER_ADDR=127.0.0.1 MASTER_PORT=p python ranks.py SCENARIO

Each rank prints `ready PID` just before it blocks, then blocks for good:

- `sleeper` (3 ranks): rank 2 sleeps in Python; rank 0 waits in all_reduce, rank 1 in barrier.
- `ddp` (2 ranks): DistributedDataParallel; rank 1 sleeps before its backward, rank 0 waits
  in backward for the gradient all-reduce (the wait is in C++, under `loss.backward()`).
- `mismatch` (2 ranks): both wait in an all_reduce, on different process groups: a deadlock
  in which every rank is in a collective.
- `flight` (3 ranks, flight recorder on): ranks 0 and 1 wait in their third all_reduce on the
  default group; rank 2 did two and waits in a barrier on another group. A thread writes each
  rank's flight recorder dump (`TORCH_FR_DUMP_TEMP_FILE` + rank) while the rank waits, as
  PyTorch's watchdog does on a timeout.
"""

from __future__ import annotations

import datetime
import os
import sys
import threading
import time
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402


def ready() -> None:
    print(f"ready {os.getpid()}", flush=True)


def sleeper(rank: int) -> None:
    t = torch.ones(4)
    dist.all_reduce(t)
    ready()
    if rank == 2:
        time.sleep(3600)
    elif rank == 0:
        dist.all_reduce(t)
    else:
        dist.barrier()


def ddp(rank: int) -> None:
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    for step in range(3):
        loss = model(torch.randn(4, 8)).sum()
        if step == 2:
            ready()
            if rank == 1:
                time.sleep(3600)
        loss.backward()  # type: ignore[no-untyped-call]


def mismatch(rank: int) -> None:
    other = dist.new_group([0, 1])
    t = torch.ones(4)
    dist.all_reduce(t)
    ready()
    dist.all_reduce(t, group=None if rank == 0 else other)


def flight(rank: int) -> None:
    other = dist.new_group()
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.all_reduce(t)
    threading.Thread(target=dump_later, args=(rank,), daemon=True).start()
    ready()
    if rank == 2:
        dist.barrier(group=other)
    else:
        dist.all_reduce(t)


def dump_later(rank: int) -> None:
    time.sleep(2.0)
    path = os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(rank)
    with open(path, "wb") as f:
        f.write(torch._C._distributed_c10d._dump_fr_trace())
    print(f"dumped {path}", flush=True)


SCENARIOS = {"sleeper": sleeper, "ddp": ddp, "mismatch": mismatch, "flight": flight}


def main() -> None:
    scenario = SCENARIOS[sys.argv[1]]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=3600))
    scenario(rank)


if __name__ == "__main__":
    main()
