"""The node helper: this node's ranks of a job, their stacks and flight recorder state, as JSON.

    python -m recovery.activities.hangstacks.node --job-id J --node NODE [--pgid P] [--samples 2]
        [--interval 1] [--timeout 10] [--no-native] [--py-spy PATH]

On Slurm the worker runs it as a step of the hung job (`srun --jobid=J --overlap -w NODE`); for the
local scheduler it runs on this machine with the node's process group. It prints one `NodeStacks`
line and exits 0 whatever it found: a rank py-spy could not read is reported with py-spy's reason.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from recovery.activities.hangstacks import flight, procs, pyspy
from recovery.activities.hangstacks.model import NodeStacks, RankProcess, ThreadStack

MAX_RANKS_PER_NODE = 64  # more than any node has GPUs: beyond it the job is not what we think
PARALLEL_DUMPS = 8


@dataclass(frozen=True)
class Sampling:
    samples: int = 2
    interval: float = 1.0
    timeout: float = 10.0  # per py-spy run
    native: bool = True
    py_spy: str | None = None


async def collect(node: str, job_id: str, pgid: int | None, sampling: Sampling) -> NodeStacks:
    everything = procs.all_procs()
    by_group = pgid is not None
    mine = (
        procs.by_group(everything, pgid, job_id) if pgid is not None else procs.by_environment(everything, job_id, node)
    )
    found, others = procs.ranks(mine)
    if not found:
        why = f"no Python process of job {job_id} on {node}" + (f" (process group {pgid})" if by_group else "")
        return NodeStacks(node=node, ok=False, reason=why, others=others)
    found, dropped = found[:MAX_RANKS_PER_NODE], len(found[MAX_RANKS_PER_NODE:])
    spy = pyspy.find_py_spy(sampling.py_spy)
    results = [_process(r) for r in found]
    if spy is None:
        for result in results:
            result.error = "py-spy is not installed here (pip install py-spy)"
    else:
        await _sample(spy, found, results, sampling)
    for r, result in zip(found, results, strict=True):
        _read_flight(r, result)
    return NodeStacks(node=node, processes=results, others=others + dropped)


def _process(r: procs.Rank) -> RankProcess:
    return RankProcess(pid=r.proc.pid, rank=r.rank, world_size=r.world_size, command=r.proc.command)


async def _sample(spy: str, found: list[procs.Rank], results: list[RankProcess], sampling: Sampling) -> None:
    """`samples` rounds of dumps, `interval` apart; a rank that failed once is not tried again."""
    gate = asyncio.Semaphore(PARALLEL_DUMPS)

    async def one(r: procs.Rank, result: RankProcess) -> None:
        if result.error:
            return
        async with gate:
            try:
                threads: list[ThreadStack] = await pyspy.dump(
                    spy, r.proc.pid, native=sampling.native, timeout=sampling.timeout
                )
            except pyspy.DumpFailed as err:
                result.error = str(err)
                result.samples = []
                return
        result.samples.append(threads)

    for round_ in range(max(1, sampling.samples)):
        if round_:
            await asyncio.sleep(sampling.interval)
        await asyncio.gather(*(one(r, result) for r, result in zip(found, results, strict=True)))


def _read_flight(r: procs.Rank, result: RankProcess) -> None:
    if r.rank is None or not flight.enabled(r.proc.env):
        return
    cwd = _cwd(r.proc.pid)
    path = flight.dump_path(r.proc.env, r.rank, cwd)
    result.flight, result.flight_note = flight.read_flight(path, flight.process_started_at(r.proc.pid))


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recovery.activities.hangstacks.node", description=__doc__)
    parser.add_argument("--job-id", required=True)
    parser.add_argument("--node", required=True, help="the node's name, as the scheduler knows it")
    parser.add_argument("--pgid", type=int, help="the node's process group (local scheduler)")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per py-spy run")
    parser.add_argument("--no-native", action="store_true", help="Python frames only")
    parser.add_argument("--py-spy", help="the py-spy to run (default: beside this Python, else PATH)")
    args = parser.parse_args(argv)
    sampling = Sampling(args.samples, args.interval, args.timeout, not args.no_native, args.py_spy)
    found = asyncio.run(collect(args.node, args.job_id, args.pgid, sampling))
    print(found.model_dump_json(exclude_defaults=True), flush=True)  # stdout: the JSON line only
    return 0


if __name__ == "__main__":
    sys.exit(main())
