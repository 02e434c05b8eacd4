"""A stage finishing -> its dependant running: median and p95 over N two-stage pipelines
(first -> second), each stage a one-node job.

    .venv/bin/python benchmarks/pipeline_release.py [--pipelines 20]
    flock -s /work/slurm.lock .venv/bin/python benchmarks/pipeline_release.py --scheduler slurm [--pipelines 20]

`--scheduler local` (the default): its own dev server and local cluster in a temporary
RECOVERY_HOME on free ports, an in-process worker; times are the scheduler's (the first stage's
job end, the second stage's job start).

`--scheduler slurm`: the real Slurm dev cluster (deploy/slurm-dev-cluster, running; needs root),
a private dev server and one `recovery worker --scheduler slurm` subprocess; beside each pipeline,
in the same run, Slurm's own `sbatch --dependency=afterok:JOBID` chain of the same two jobs; both
timed by slurmctld's log. Then what afterok does when the first job is resubmitted as a new job
(see benchmarks/pipeline_release_slurm.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

from recovery_latency import on_embedded, percentile

PIPELINE = """\
name: bench{i}
stages:
  - name: first
    script: stage.sbatch
  - name: second
    script: stage.sbatch
    needs: [first]
"""


def pipeline_file(home: Path, i: int) -> Path:
    workdir = home / "pipelines" / f"bench{i}"
    workdir.mkdir(parents=True)
    (workdir / "stage.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\ntrue\n")
    path = workdir / "pipeline.yaml"
    path.write_text(PIPELINE.format(i=i))
    return path


async def measure(count: int, home: Path) -> list[float]:
    from recovery.activities.schedulers.local import LocalScheduler
    from recovery.client import pipelines, runs
    from recovery.client.config import WorkerConfig
    from recovery.client.pipeline_file import load_pipeline
    from recovery.client.temporal_client import connect
    from recovery.worker.run_worker import build_worker

    client = await connect()
    samples = []
    async with build_worker(client, LocalScheduler(), WorkerConfig()):
        for i in range(count):
            inp = load_pipeline(str(pipeline_file(home, i)), "local")
            handle = await pipelines.start_pipeline(client, inp)
            result = await handle.result()
            assert result.pipeline.state.value == "completed", inp.pipeline_id
            first, second = [await runs.get_status(client, s.spec.run_id) for s in inp.stages]
            ended, started = first.attempts[-1].ended_at, second.attempts[0].started_at
            assert ended is not None and started is not None
            samples.append((started - ended).total_seconds())
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", type=int, default=20)
    parser.add_argument("--scheduler", choices=("local", "slurm"), default="local")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between a stage's observations (slurm)")
    args = parser.parse_args()
    if args.scheduler == "slurm":
        on_slurm(args.pipelines, args.poll)
    else:
        on_local(args.pipelines)
    sys.stdout.flush()
    os._exit(0)  # see shared notes: temporalio's runtime may abort at interpreter exit


def row(name: str, samples: list[float]) -> str:
    return f"{name:44} {statistics.median(samples):7.3f}s {percentile(samples, 0.95):7.3f}s {max(samples):7.3f}s"


HEADER = f"{'latency':44} {'median':>8} {'p95':>8} {'max':>8}"


def on_local(count: int) -> None:
    samples = on_embedded(lambda home: measure(count, home))
    from recovery.client.submit import TUNING

    print(f"{count} two-stage pipelines on the embedded default (dev server + local scheduler)")
    print(f"poll interval {TUNING['local'].poll_seconds}s")
    print(HEADER)
    print(row("first stage ended -> second running", samples))
    print("baseline (Slurm afterok chain): run with --scheduler slurm")


def on_slurm(count: int, poll: float) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    import pipeline_release_slurm as bench
    from slurm_recovery_latency import ensure_cluster

    state_dir, started = ensure_cluster()
    if started:
        print("(the dev cluster was not running: started it)")
    print(f"{count} two-stage pipelines and {count} afterok chains, alternating, on the Slurm dev cluster")
    pipelines, releases, chains, afterok = asyncio.run(bench.bench(count, poll, state_dir))
    print(f"{bench.slurm_release()}; SchedulerParameters={bench.sched_parameters(state_dir)}; stage poll {poll:g}s")
    print(HEADER)
    print(row("pipeline: first job ended -> second running", pipelines))
    print(row("  of which: first job ended -> dag_release", releases))
    print(row("afterok:  first job ended -> second running", chains))
    print(f"afterok when the first job fails (job {afterok.failed_job}) and is resubmitted as job "
          f"{afterok.resubmitted_job}: the dependant (job {afterok.dependant}) waits with reason "
          f"{afterok.reason_after_failure}; after the resubmission completed it is still "
          f"{afterok.state_after_resubmission_completed} ({afterok.reason_after_resubmission_completed})")  # fmt: skip


if __name__ == "__main__":
    main()
