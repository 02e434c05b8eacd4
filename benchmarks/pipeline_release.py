"""A stage finishing -> its dependant running, on the embedded default: median and p95 over N
two-stage pipelines (first -> second), each stage a one-node job that exits at once.

    .venv/bin/python benchmarks/pipeline_release.py [--pipelines 20]

Starts its own dev server and local cluster in a temporary RECOVERY_HOME on free ports and runs
an in-process worker. Times are the scheduler's: the first stage's job end, the second stage's
job start. The issue's baseline, Slurm's own `afterok` chain on the same cluster, needs the Slurm
dev cluster and is not measured here (the Slurm side of pipelines is not built yet).
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    samples = on_embedded(lambda home: measure(args.pipelines, home))
    from recovery.client.submit import TUNING

    print(f"{args.pipelines} two-stage pipelines on the embedded default (dev server + local scheduler)")
    print(f"poll interval {TUNING['local'].poll_seconds}s")
    print(f"{'latency':36} {'median':>8} {'p95':>8} {'max':>8}")
    name = "first stage ended -> second running"
    print(f"{name:36} {statistics.median(samples):7.3f}s {percentile(samples, 0.95):7.3f}s {max(samples):7.3f}s")
    print("baseline (Slurm afterok chain): not measured here, needs the Slurm dev cluster")
    sys.stdout.flush()
    os._exit(0)  # see shared notes: temporalio's runtime may abort at interpreter exit


if __name__ == "__main__":
    main()
