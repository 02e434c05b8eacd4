"""What one look of the observer costs with 10,000 quiet watches (no job changed, no log due):
the per-look bookkeeping that stays when the scheduler is read as a list-and-watch.

    .venv/bin/python benchmarks/observer_look.py [--watches 10000] [--looks 20]

Run by hand, never in tests. In-process: a scheduler that answers every change request with
"nothing changed", watches with a long poll so the loop itself stays asleep, and `look()`
called directly. 2026-12-02, 2 cores, right after a test suite (noisy), two rounds side by side:
7a20f40 (before e9d37e8) 40.4 and 53.9 ms a look, 0afe59f 24.1 and 37.6 ms. To compare a
commit, run this file with a worktree of it first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from recovery.activities.logwatch import LogReading
from recovery.activities.observer.loop import Observer
from recovery.activities.schedulers.base import JobChanges
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import Attempt, JobObservation, JobState, WatchInput
from recovery.workflows.policy import Policy


class Quiet:
    """Every job running, and nothing ever changes."""

    name = "local"

    def __init__(self, count: int) -> None:
        self.jobs = {str(i): JobObservation(job_id=str(i), state=JobState.RUNNING) for i in range(count)}

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        return {i: self.jobs[i] for i in job_ids if i in self.jobs}

    async def changes(self, since: str | None) -> JobChanges:
        return JobChanges(cursor="quiet:0", complete=since is not None)


async def measure(watches: int, looks: int) -> float:
    observer = Observer(CoalescingObserver(Quiet(watches), 0.0), LogReading())  # type: ignore[arg-type]
    policy = Policy()
    for i in range(watches):
        attempt = Attempt(index=0, job_id=str(i), nodes=["node1"])
        observer.attach(WatchInput(run_id=f"run{i}", attempt=attempt, poll_seconds=1000, policy=policy))
    await observer.look()  # the first look reads every job in full
    start = time.perf_counter()
    for _ in range(looks):
        await observer.look()
    assert observer.wakes == 0, "a quiet look wakes nobody"
    return (time.perf_counter() - start) / looks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watches", type=int, default=10000)
    parser.add_argument("--looks", type=int, default=20)
    args = parser.parse_args()
    per_look = asyncio.run(measure(args.watches, args.looks))
    print(f"one look over {args.watches} quiet watches: {per_look * 1000:.1f} ms")


if __name__ == "__main__":
    main()
