"""The node helper against live hung ranks: real torch.distributed (gloo, CPU) processes, stuck as
`tests/unit/hang_stacks/ranks.py` makes them, found in /proc and dumped with the real py-spy.

Ranks 0 and 1 run "on" node-a and rank 2 "on" node-b (their SLURMD_NODENAME), each in a process
group of its own, as the local scheduler starts a node's copy of a script. The helper finds them
both ways (by the job's environment, as on Slurm, and by process group, as on the local
scheduler), and the judgement names node-b: rank 2 sleeps while the others wait.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from recovery.activities.hangstacks.collect import parse_node_output
from recovery.activities.hangstacks.judge import judge
from recovery.activities.hangstacks.model import NodeStacks
from tests.conftest import need
from tests.embedded.conftest import free_port

pytestmark = pytest.mark.slow
RANKS = Path(__file__).resolve().parents[1] / "unit" / "hang_stacks" / "ranks.py"
NODE_OF = {0: "node-a", 1: "node-a", 2: "node-b"}


@pytest.fixture(scope="module")
def stuck() -> Iterator[tuple[str, list[subprocess.Popen[str]]]]:
    need(importlib.util.find_spec("torch") is not None, "PyTorch (pip install -e '.[examples]')")
    job = str(900000 + uuid.uuid4().int % 99999)
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "3"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(RANKS), "sleeper"],
            env={**env, "RANK": str(rank), "SLURM_JOB_ID": job, "SLURMD_NODENAME": node},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # its own process group, as the local scheduler's copies
        )
        for rank, node in NODE_OF.items()
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith("ready"), "a rank did not get to its hang"
        yield job, procs
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def helper(*args: str) -> NodeStacks:
    done = subprocess.run(
        [sys.executable, "-m", "recovery.activities.hangstacks.node", "--interval=0.5", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return parse_node_output(args[1].removeprefix("--node="), done.stdout)


@pytest.mark.timeout(120)
def test_by_the_jobs_environment_each_node_sees_its_own_ranks(stuck: tuple[str, list[subprocess.Popen[str]]]) -> None:
    job, procs = stuck
    a, b = helper(f"--job-id={job}", "--node=node-a"), helper(f"--job-id={job}", "--node=node-b")
    assert a.ok and b.ok, (a.reason, b.reason)
    assert sorted((p.rank, p.pid) for p in a.processes) == [(0, procs[0].pid), (1, procs[1].pid)]
    assert [(p.rank, p.world_size, p.pid) for p in b.processes] == [(2, 3, procs[2].pid)]
    assert all(len(p.samples) == 2 and not p.error for p in [*a.processes, *b.processes])
    verdict = judge([a, b], ["node-a", "node-b"])
    assert [c.node for c in verdict.culprits] == ["node-b"], verdict.summary
    reason = verdict.culprits[0].reason
    assert "rank 2" in reason and "sleeper (" in reason and "ranks.py:" in reason, reason


@pytest.mark.timeout(120)
def test_by_process_group_as_on_the_local_scheduler(stuck: tuple[str, list[subprocess.Popen[str]]]) -> None:
    job, procs = stuck
    b = helper(f"--job-id={job}", "--node=node-b", f"--pgid={procs[2].pid}", "--no-native")
    assert [p.rank for p in b.processes] == [2]
    frames = [f for t in b.processes[0].samples[0] for f in t.frames]
    assert frames and not any(f.native for f in frames), "--no-native: Python frames only"


@pytest.mark.timeout(60)
def test_a_node_without_the_jobs_python_says_so() -> None:
    found = helper("--job-id=999999999", "--node=node-z")
    assert not found.ok and found.reason == "no Python process of job 999999999 on node-z"
