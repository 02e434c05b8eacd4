"""Capture the real py-spy dumps (and flight recorder dumps) the judgement tests read.

    .venv/bin/python -m tests.unit.hang_stacks.capture [SCENARIO ...]

For each scenario of `ranks.py` it starts the ranks (real torch.distributed, gloo, CPU), waits
until every rank says it is about to block, lets them settle, and then runs `py-spy dump --json
--native` on each rank twice, a second apart, as the node helper does. What it writes, in
`tests/unit/hang_stacks/SCENARIO/`:

- `ranks.json`: each rank's pid, world size and the node the tests place it on (rank r: node r+1);
- `pyspy-RANK-SAMPLE.json`: py-spy's own output, unedited;
- `fr_rank_RANK` (scenario `flight`): the rank's flight recorder dump, as PyTorch wrote it.

Scenario `example` is the PyTorch example itself (docs/examples/pytorch-ddp/train.py) with its
`hang` fault at step 3 and a barrier timeout far longer than the capture: rank 1 blocks in
Python, rank 0 waits in `monitored_barrier`, and no log line names the hung rank.

Needs torch (`pip install -e '.[examples]'`) and py-spy, and the right to ptrace the ranks.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
WORLD = {"sleeper": 3, "ddp": 2, "mismatch": 2, "flight": 3, "example": 2}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def py_spy() -> str:
    found = Path(sys.executable).parent / "py-spy"
    return str(found) if found.exists() else (shutil.which("py-spy") or "py-spy")


def capture(scenario: str) -> None:
    out = HERE / scenario
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    world = WORLD[scenario]
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(world)}
    if scenario == "flight":
        env |= {"TORCH_FR_BUFFER_SIZE": "64", "TORCH_FR_DUMP_TEMP_FILE": str(out / "fr_rank_")}
    argv = [sys.executable, str(HERE / "ranks.py"), scenario]
    if scenario == "example":
        env |= {
            "RECOVERY_EXAMPLE_FAULT": "hang",
            "RECOVERY_EXAMPLE_FAULT_STEP": "3",
            "RECOVERY_EXAMPLE_CHECKPOINT_DIR": str(out / "checkpoints"),
        }
        argv = [sys.executable, str(REPO / "docs/examples/pytorch-ddp/train.py"), "--barrier-timeout", "600"]
    procs = [
        subprocess.Popen(
            argv,
            env={**env, "RANK": str(rank)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for rank in range(world)
    ]
    try:
        waits = [procs[-1]] if scenario == "example" else procs
        for proc in waits:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            while scenario == "example" and line and "injecting fault" not in line:
                line = proc.stdout.readline()
            assert line.startswith("ready") or "injecting fault" in line, line
        time.sleep(4.0)  # past the flight recorder's dump (2 s), and settled in their waits
        ranks = [{"rank": r, "pid": p.pid, "world_size": world, "node": f"node{r + 1}"} for r, p in enumerate(procs)]
        (out / "ranks.json").write_text(json.dumps(ranks, indent=1) + "\n")
        for sample in range(2):
            for rank, proc in enumerate(procs):
                argv = [py_spy(), "dump", "--json", "--native", "--pid", str(proc.pid)]
                done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
                (out / f"pyspy-{rank}-{sample}.json").write_text(done.stdout)
            time.sleep(1.0)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(out / "checkpoints", ignore_errors=True)
    print(f"{scenario}: {sorted(p.name for p in out.iterdir())}")


if __name__ == "__main__":
    for name in sys.argv[1:] or list(WORLD):
        capture(name)
