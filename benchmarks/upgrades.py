"""`recovery upgrade-check` over open runs and `recovery whatif` over their recorded failures, on the
embedded default: wall time and peak memory, each beside its baseline in the same run.

    .venv/bin/python benchmarks/upgrades.py [--runs 500]

Run by hand, never in tests. It starts its own dev server (SQLite in a temporary RECOVERY_HOME,
free ports), its own local cluster (runs + 100 nodes) and a `recovery worker` subprocess, and
starts --runs runs of a 1-node job that crashes with a GPU Xid on its first two attempts and
then sleeps: every run stays open after two recoveries (about 75 history events each), so the
runs hold 2 x --runs recorded failures. The worker is then stopped, so the measurements compete
with nothing of ours, and each command runs as a subprocess under /usr/bin/time (wall seconds,
peak RSS):

- `recovery upgrade-check --json`, beside the baseline: the same histories fetched one after
  another and replayed each by its own `Replayer.replay_workflow` (the SDK's one-history API);
- `recovery whatif --policy strict --json` (live, from Temporal), beside the baseline: replaying
  the same histories (`upgrade-check`), which a what-if by replay would cost at the least;
- `recovery whatif --history FILE...` on the same histories exported to files (offline).

At the end it cancels its runs and stops all of it, on Ctrl-C or on error too. Making 500 runs
fail twice took 28 minutes here (the cluster's one NodeHistory workflow and the local daemon are
the bottlenecks; see concurrent_runs.py); `--keep-home` keeps the dev server's SQLite and
`--reuse HOME` measures again on it in three minutes.

What it found (2 cores shared with three other sessions' tests, 2026-12-02; 500 open runs of
about 141 events each, 1,000 recorded failures; each row one command, in one run):

                                          first run      --reuse, later   --reuse, busier
    upgrade-check (open + closed 1d)      33.5 s (*)     21.6 s, 193 MiB  26.4 s, 172 MiB
    baseline: fetch+replay one by one     53.1 s         68.7 s,  99 MiB  96.9 s,  99 MiB
    whatif --policy strict (live)          4.1 s, 172 MiB 12.0 s, 170 MiB  13.2 s, 171 MiB
    whatif --history (500 files)           9.0 s (**)    34.9 s (**)      14.8 s, 138 MiB

    (*) one replay process; (**) before it parsed only the events it reads.
    Once more, with upgrade-check limited to the runs' task queue: 27.9 s (baseline 65.1 s),
    whatif 6.2 s live and 8.5 s offline.

- Replaying is CPU-bound: about 0.6 ms an event through the SDK (its payload visitor and the
  sandbox take half), 60-90 ms a history of 141 events on this machine. Two processes (one per
  CPU) halve it; fetching 500 histories (32 at a time) costs the dev server 6-12 s of CPU, and
  overlaps with the replay. The baseline pays both one after the other, and the sandbox's
  re-import of the workflow module for every history.
- whatif replays nothing: it decodes a dozen payloads a run; live, most of its time is the
  fetch. Offline, protobuf's pure-Python JSON parser is most of it (15 ms a file).
- The figures move with the other sessions' load by up to 3x; the baseline in the same run
  shows by how much.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from concurrent_runs import Rig, cancel_all, leave, start_worker, stop_worker, submit_all, wind_down  # noqa: E402
from recovery_latency import setup_env  # noqa: E402

JOB = """#!/bin/bash
#SBATCH --nodes=1
# Two GPU crashes, each after a progress step further than the last; then idle (the run stays open).
restart=${SLURM_RESTART_COUNT:-0}
if [ "$restart" -lt 2 ]; then
  echo "recovery-progress step=$((restart + 1)) rank=$SLURM_PROCID"
  echo "[$SLURMD_NODENAME] NVRM: Xid (PCI:0000:3b:00): 79, pid=$$, GPU has fallen off the bus."
  exit 1
fi
exec sleep 100000
"""
STRICT = "name: strict\nbudgets: {hardware: 1}\n"

# The baseline of upgrade-check: one history at a time, fetched and then replayed on its own.
NAIVE_UPGRADE_CHECK = """
import asyncio, sys
from temporalio.worker import Replayer
from recovery.client.replay import WORKFLOWS
from recovery.client.temporal_client import connect

async def main():
    client = await connect()
    replayer = None
    failed = checked = 0
    async for wf in client.list_workflows('WorkflowType = "TrainingRun" AND ExecutionStatus = "Running"'):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        result = await Replayer(workflows=WORKFLOWS, data_converter=client.data_converter).replay_workflow(
            history, raise_on_replay_failure=False)
        checked += 1
        failed += result.replay_failure is not None
    print(checked, failed)

asyncio.run(main())
"""


def timed(*command: str) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MiB) of one command, and its stdout."""
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", *command], capture_output=True, text=True, cwd=ROOT, check=False
    )
    last = done.stderr.strip().splitlines()[-1]
    if done.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    wall, rss_kib = last.split()
    return float(wall), int(rss_kib) / 1024, done.stdout


async def wait_recovered_twice(client: object, count: int, timeout: float) -> float:
    from temporalio.client import Client

    assert isinstance(client, Client)
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        done = (await client.count_workflows('WorkflowType = "TrainingRun" AND RecoveryAttempts = 3')).count
        if done >= count:
            return time.monotonic() - start
        print(f"  {done}/{count} runs recovered twice after {time.monotonic() - start:.0f}s", flush=True)
        await asyncio.sleep(15)
    raise TimeoutError(f"not all {count} runs recovered twice within {timeout:.0f}s")


async def export(client: object, into: Path) -> list[str]:
    from temporalio.client import Client

    from recovery.client.whatif import live_histories

    assert isinstance(client, Client)
    into.mkdir()
    files = []
    for history in await live_histories(client, None, []):
        path = into / f"{history.run_id}.json"
        path.write_text(history.to_json())
        files.append(str(path))
    return files


async def prepare(args: argparse.Namespace, rig: Rig) -> tuple[list[str], list[str], float]:
    from recovery.activities.schedulers.local import launcher as local_cluster
    from recovery.client.temporal_client import connect
    from recovery.worker.devserver import DevServer

    server = DevServer.from_env()
    rig.server = True
    server.start(timeout=60)
    rig.cluster = True
    local_cluster.start(args.runs + 100, timeout=60)
    rig.workers.append(start_worker(rig.home, 1))
    client = await connect()
    workdir = rig.home / "job"
    workdir.mkdir()
    (workdir / "job.sbatch").write_text(JOB)
    t0 = time.monotonic()
    run_ids = list(await submit_all(client, workdir / "job.sbatch", args.runs))
    took = await wait_recovered_twice(client, args.runs, timeout=args.runs * 3.0 + 300)
    print(f"{args.runs} runs recovered twice in {time.monotonic() - t0:.0f}s", flush=True)
    stop_worker(rig.workers.pop())
    files = await export(client, rig.home / "histories")
    return run_ids, files, took


async def reopen(rig: Rig) -> tuple[list[str], list[str]]:
    """--reuse: the dev server again on the SQLite an earlier run kept; its runs as they were."""
    from recovery.client.temporal_client import connect
    from recovery.worker.devserver import DevServer

    rig.server = True
    DevServer.from_env().start(timeout=60)
    client = await connect()
    query = 'WorkflowType = "TrainingRun" AND ExecutionStatus = "Running"'
    listed = [wf async for wf in client.list_workflows(query)]
    run_ids = [wf.id for wf in listed]
    if listed:  # upgrade-check checks the runs of its own task queue: theirs
        os.environ["RECOVERY_TASK_QUEUE"] = listed[0].task_queue
    shutil.rmtree(rig.home / "histories", ignore_errors=True)
    return run_ids, await export(client, rig.home / "histories")


def measure(args: argparse.Namespace, files: list[str], home: Path) -> list[tuple[str, float, float, str]]:
    recovery = [sys.executable, "-m", "recovery.worker"]
    strict = home / "strict.yaml"
    strict.write_text(STRICT)
    rows = []
    for label, command in (
        ("upgrade-check (open + closed 1d)", [*recovery, "upgrade-check", "--json"]),
        ("baseline: fetch+replay one by one", [sys.executable, "-c", NAIVE_UPGRADE_CHECK]),
        ("whatif --policy strict (live)", [*recovery, "whatif", "--policy", str(strict), "--json"]),
        (
            "whatif --history (offline files)",
            [*recovery, "whatif", "--policy", str(strict), "--json", "--history", *files],
        ),
    ):
        wall, rss, out = timed(*command)
        rows.append((label, wall, rss, _summary(out)))
        print(f"  {label}: {wall:.1f}s, {rss:.0f} MiB ({rows[-1][3]})", flush=True)
    return rows


def _summary(out: str) -> str:
    try:
        data = json.loads(out)
    except ValueError:
        return out.strip()[:60]
    if "checked" in data:
        return f"checked {data['checked']}, failed {len(data['failed'])}"
    return f"failures {data['failures']}, changed {len(data['changed'])}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--keep-home", action="store_true", help="keep RECOVERY_HOME (logs) afterwards")
    parser.add_argument("--reuse", metavar="HOME", type=Path, help="measure again on a RECOVERY_HOME kept earlier")
    args = parser.parse_args()
    home = setup_env()
    if args.reuse is not None:
        shutil.rmtree(home, ignore_errors=True)
        home, args.keep_home = args.reuse, True
        os.environ["RECOVERY_HOME"] = str(home)
    os.environ["RECOVERY_TASK_QUEUE"] = f"recovery-bench-{secrets.token_hex(3)}"
    rig = Rig(home)
    code = 1
    try:
        if args.reuse is not None:
            run_ids, files = asyncio.run(reopen(rig))
        else:
            run_ids, files, _ = asyncio.run(prepare(args, rig))
        rows = measure(args, files, home)
        print(f"\n{'':36} {'wall':>8} {'peak RSS':>10}  result")
        for label, wall, rss, summary in rows:
            print(f"{label:36} {wall:7.1f}s {rss:7.0f} MiB  {summary}")
        print(f"\ncommand: .venv/bin/python benchmarks/upgrades.py {' '.join(sys.argv[1:])}")

        async def cancel() -> None:
            from recovery.client.temporal_client import connect

            await cancel_all(await connect(), run_ids)

        asyncio.run(cancel())
        code = 0
    except KeyboardInterrupt:
        print("interrupted; cleaning up", file=sys.stderr)
    finally:
        wind_down(rig, keep_home=args.keep_home or code != 0)
    leave(code)


if __name__ == "__main__":
    main()
