"""The Slurm adapter's cost per poll with 2,000 jobs queued, for each backend side by side in one
run: pyslurm (libslurm in a child process), `squeue` text (the commands backend) and slurmrestd.

    .venv/bin/python benchmarks/slurm_poll_cost.py [--jobs 2000] [--watched 10] [--rounds 10]

Needs the Slurm dev cluster running (`deploy/slurm-dev-cluster start`, as root; this script never
starts or stops it) and, for the pyslurm column, pyslurm installed against its Slurm (`.[slurm]`).
It queues --jobs held jobs (`sbatch --hold`: they stay pending and use no node), then, per round
and per backend in turn (so that all see the same cluster at the same moment):

- `observe(watched)`: the poll of one worker's --watched runs (`watch_attempt`'s read);
- `observe(all)`: one poll of every queued job;
- `opted_in_jobs()`: the discovery workflow's read of every opted-in job.

It prints the median and the slowest of --rounds rounds, in milliseconds, and cancels its jobs at
the end (also on error or Ctrl-C). The REST column uses the dev cluster's slurmrestd socket.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog

ROOT = Path(__file__).resolve().parents[1]
DEV_CLUSTER = ROOT / "deploy" / "slurm-dev-cluster"

from recovery.activities.schedulers.base import SchedulerUnavailable  # noqa: E402
from recovery.activities.schedulers.slurm_factory import Backend, SlurmBackend, make_slurm_scheduler  # noqa: E402
from recovery.activities.schedulers.slurm_pyslurm import PyslurmScheduler  # noqa: E402
from recovery.activities.schedulers.slurmrestd import RestSlurmScheduler  # noqa: E402

BACKENDS: list[Backend] = ["pyslurm", "commands", "rest"]
LABELS = {"pyslurm": "pyslurm", "commands": "squeue text", "rest": "slurmrestd"}


def cluster_env() -> dict[str, str]:
    """The running dev cluster's exports (SLURM_CONF, PATH, SLURM_RESTD_SOCKET); exits if it is down."""
    status = subprocess.run([str(DEV_CLUSTER), "status"], capture_output=True, text=True, timeout=60, check=False)
    if status.returncode != 0:
        sys.exit("slurm_poll_cost: the Slurm dev cluster is not running (deploy/slurm-dev-cluster start)")
    out = subprocess.run([str(DEV_CLUSTER), "env"], capture_output=True, text=True, timeout=60, check=True).stdout
    return {
        key: value
        for line in out.splitlines()
        if line.startswith("export ")
        for key, _, value in [line.removeprefix("export ").partition("=")]
    }


async def queue_held_jobs(count: int, workdir: str) -> list[str]:
    """`count` held jobs that opt in to recovery, 16 sbatch at a time."""
    gate = asyncio.Semaphore(16)

    async def one(i: int) -> str:
        argv = [
            "sbatch", "--parsable", "--hold", f"--chdir={workdir}", f"--job-name=poll-cost-{i}",
            f"--comment=recovery:token=recovery:poll-cost-{os.getpid()}-{i}:0", "--wrap", "true",
        ]  # fmt: skip
        async with gate:
            proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
            out, _ = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"sbatch exited {proc.returncode}")
        return out.decode().strip().split(";")[0]

    return list(await asyncio.gather(*(one(i) for i in range(count))))


def cancel(job_ids: list[str]) -> None:
    for start in range(0, len(job_ids), 500):
        subprocess.run(["scancel", *job_ids[start : start + 500]], capture_output=True, timeout=120, check=False)


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    t0 = time.perf_counter()
    await call()
    return (time.perf_counter() - t0) * 1000


async def bench(schedulers: dict[Backend, SlurmBackend], ids: list[str], watched: int, rounds: int) -> None:
    few = ids[:watched]
    polls: dict[str, Callable[[SlurmBackend], Awaitable[object]]] = {
        f"observe({watched} watched)": lambda s: s.observe(few),
        f"observe(all {len(ids)})": lambda s: s.observe(ids),
        "opted_in_jobs()": lambda s: s.opted_in_jobs(),
    }
    samples: dict[tuple[str, Backend], list[float]] = {}
    done = 0
    while done < rounds:
        try:
            if done == 0:  # warm up: pyslurm's child, REST's API version
                for scheduler in schedulers.values():
                    found = await scheduler.observe(few)
                    assert len(found) == len(few), f"{scheduler} sees {len(found)} of {len(few)} jobs"
            one = {
                (poll, backend): await timed(lambda c=call, s=scheduler: c(s))
                for poll, call in polls.items()
                for backend, scheduler in schedulers.items()
            }
        except SchedulerUnavailable as err:  # slurmctld restarted by someone else: redo the round
            print(f"round {done + 1} repeated: {err}", file=sys.stderr, flush=True)
            await asyncio.sleep(5)
            continue
        for key, ms in one.items():
            samples.setdefault(key, []).append(ms)
        done += 1
    print(f"\n{len(ids)} jobs queued; ms per poll, median (slowest) of {rounds} rounds:\n")
    print(f"{'':28}" + "".join(f"{LABELS[b]:>22}" for b in schedulers))
    for poll in polls:
        cells = [samples[(poll, b)] for b in schedulers]
        print(f"{poll:28}" + "".join(f"{statistics.median(c):12.1f} ({max(c):7.1f})" for c in cells))


async def run(args: argparse.Namespace) -> None:
    os.environ.update(cluster_env())
    schedulers: dict[Backend, SlurmBackend] = {}
    for backend in BACKENDS:
        try:
            schedulers[backend] = make_slurm_scheduler(backend, restd_socket=os.environ.get("SLURM_RESTD_SOCKET"))
        except Exception as err:  # noqa: BLE001 - a backend that cannot start is reported, not fatal
            print(f"{LABELS[backend]}: not measured ({err})", file=sys.stderr)
    ids: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="poll-cost-") as workdir:
            t0 = time.monotonic()
            ids = await queue_held_jobs(args.jobs, workdir)
            print(f"queued {len(ids)} held jobs in {time.monotonic() - t0:.0f} s", flush=True)
            await bench(schedulers, ids, args.watched, args.rounds)
    finally:
        cancel(ids)
        for scheduler in schedulers.values():
            if isinstance(scheduler, RestSlurmScheduler):
                await scheduler.aclose()
            elif isinstance(scheduler, PyslurmScheduler):
                scheduler.close()


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--watched", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=10)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
