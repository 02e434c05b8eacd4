"""What one look of the observer costs with 10,000 quiet watches (no job changed, no log due):
the per-look bookkeeping that stays when the scheduler is read as a list-and-watch. With
`--seconds N`: what the observer's own loop costs over N seconds of 10,000 healthy runs whose
logs grow (each gets a progress line every --progress-every seconds, 20 as in
concurrent_runs.py, from another process), at the local tuning's 0.25 s poll: looks and log reads
a second, the share of a core the process used, and its CPU per log read.

    .venv/bin/python benchmarks/observer_look.py [--watches 10000] [--looks 20]
        [--seconds 30 [--progress-every 20]]

Run by hand, never in tests. In-process: a scheduler that answers every change request with
"nothing changed", watches with a long poll so the loop itself stays asleep, and `look()`
called directly. 2026-12-02, 2 cores, right after a test suite (noisy), two rounds side by side:
7a20f40 (before e9d37e8) 40.4 and 53.9 ms a look, 0afe59f 24.1 and 37.6 ms. To compare a
commit, run this file with a worktree of it first on PYTHONPATH, from outside the repository
(python puts the script's and the current directory first on the path):

    cd /tmp && PYTHONPATH=$WORKTREE python $WORKTREE/benchmarks/observer_look.py --seconds 30

2026-12-03, helpers' probes on the host, `--seconds 30` (10,000 logs, a line each every 20 s),
two rounds: 15dd5a0 (a look judges what changed) 3.2 and 3.3 looks a second, 2,000 log reads a
second, 13.4 % and 12.3 % of a core (67 and 61 us a read); 494ee99 0.8 looks a second, 1,973
and 2,000 reads, 14.1 % and 16.6 % (71 and 83 us). Quiet looks: 0.0 ms against 26.7-38.5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from recovery.activities.logwatch import AttemptLog, LogReading
from recovery.activities.observer.loop import Observer
from recovery.activities.schedulers.base import JobChanges
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.workflows.models import Attempt, JobObservation, JobState, WatchInput
from recovery.workflows.policy import Policy


class Quiet:
    """Every job running, and nothing ever changes (`logs`: each writes its output there)."""

    name = "local"

    def __init__(self, count: int, logs: Path | None = None) -> None:
        started = datetime.now(UTC) if logs is not None else None
        self.jobs = {
            str(i): JobObservation(
                job_id=str(i),
                state=JobState.RUNNING,
                nodes=["node1"],
                output_path=str(logs / f"{i}.out") if logs is not None else None,
                started_at=started,
            )
            for i in range(count)
        }

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


# The jobs' side, in a process of its own: every 0.25 s a share of the logs get a progress line,
# so that each gets one every `argv[2]` seconds.
WRITER = """
import sys, time
from pathlib import Path
files = sorted(Path(sys.argv[1]).glob("*.out"))
every = max(1, round(float(sys.argv[2]) / 0.25))
step = 0
while True:
    step += 1
    for path in files[step % every :: every]:
        with path.open("a") as out:
            out.write(f"recovery-progress step={step} throughput=100.0 step_time=0.5\\n")
    time.sleep(0.25)
"""


class Reads:
    """Counts the observer's log reads (AttemptLog.poll), to put its CPU per read."""

    count = 0

    @classmethod
    def install(cls) -> None:
        poll = AttemptLog.poll

        def counted(log: AttemptLog, now: float) -> None:
            cls.count += 1
            poll(log, now)

        AttemptLog.poll = counted  # type: ignore[method-assign]


async def measure_growing(watches: int, seconds: float, every: float) -> tuple[float, float, float]:
    """The observer's own loop over 10,000 growing logs, as in a worker: looks and log reads a
    second, and the share of a core this process used (only the observer runs in it)."""
    Reads.install()
    with tempfile.TemporaryDirectory(prefix="observer-look-") as tmp:
        logs = Path(tmp)
        for i in range(watches):
            (logs / f"{i}.out").write_text("starting\n")
        writer = subprocess.Popen([sys.executable, "-c", WRITER, tmp, str(every)])
        try:
            observer = Observer(CoalescingObserver(Quiet(watches, logs), 0.0), LogReading())  # type: ignore[arg-type]
            policy = Policy()
            for i in range(watches):  # each made its first progress already: no news in a step
                attempt = Attempt(index=0, job_id=str(i), nodes=["node1"], first_step=0)
                observer.attach(WatchInput(run_id=f"run{i}", attempt=attempt, poll_seconds=0.25, policy=policy))
            await asyncio.sleep(10)  # every log opened and read once
            looks, reads, cpu, wall = observer.looks, Reads.count, time.process_time(), time.monotonic()
            await asyncio.sleep(seconds)
            took = time.monotonic() - wall
            looked, read = (observer.looks - looks) / took, (Reads.count - reads) / took
            share = (time.process_time() - cpu) / took
            assert observer.wakes == 0, "healthy runs wake nobody"
            for run in range(watches):  # let go of every watch: the loop ends
                observer.detach(f"run{run}", observer._watched[f"run{run}"].waiter)
            return looked, read, share
        finally:
            writer.kill()
            writer.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watches", type=int, default=10000)
    parser.add_argument("--looks", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=0.0, help="growing logs this long (0: quiet looks only)")
    parser.add_argument("--progress-every", type=float, default=20.0, help="seconds between a log's progress lines")
    args = parser.parse_args()
    if args.seconds:
        looks, reads, share = asyncio.run(measure_growing(args.watches, args.seconds, args.progress_every))
        print(
            f"{args.watches} growing logs, {args.seconds:.0f} s: {looks:.1f} looks and {reads:.0f} log reads a second,"
            f" {share:.1%} of a core, {share / max(reads, 1) * 1e6:.0f} us of CPU a read"
        )
        return
    per_look = asyncio.run(measure(args.watches, args.looks))
    print(f"one look over {args.watches} quiet watches: {per_look * 1000:.1f} ms")


if __name__ == "__main__":
    main()
