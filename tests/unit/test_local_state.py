"""The local scheduler's durable state at scale: 10,000 jobs, a SIGKILL mid-burst, migration of
an earlier version's state.json. A real daemon in a temporary RECOVERY_HOME, as in
test_local_cluster.py."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from recovery.activities.schedulers.base import SchedulerError, SchedulerUnavailable
from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.activities.schedulers.local import state as local_state
from recovery.workflows.models import JobObservation, JobState, SubmitRequest
from tests.unit.test_local_cluster import home, wait_gone, workdir

__all__ = ["home", "workdir"]  # the fixtures, shared with test_local_cluster

NODES = 8
# Runs until the test stops the cluster (a job that ended would let the next one start).
SLEEPER = "exec sleep 3600\n"


def sleeper(workdir: Path, token: str) -> SubmitRequest:
    return SubmitRequest(script=SLEEPER, nodes=1, workdir=str(workdir), name=token, token=token)


async def submit_many(sched: LocalScheduler, workdir: Path, tokens: list[str]) -> dict[str, str]:
    """Submit concurrently (as many runs' activities do); token -> job id of what was acknowledged."""
    gate = asyncio.Semaphore(32)
    acknowledged: dict[str, str] = {}

    async def one(token: str) -> None:
        async with gate:
            acknowledged[token] = (await sched.submit(sleeper(workdir, token))).job_id

    results = await asyncio.gather(*(one(t) for t in tokens), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, SchedulerUnavailable):
            raise result
    return acknowledged


def assert_consistent(jobs: list[JobObservation], nodes: int) -> None:
    """One job per id, ids 1..N without gaps, one token per job, no node running two jobs."""
    ids = [int(j.job_id) for j in jobs]
    assert ids == list(range(1, len(jobs) + 1))
    assert len({j.token for j in jobs}) == len(jobs)
    busy = [node for j in jobs if j.state is JobState.RUNNING for node in j.nodes]
    assert len(busy) == len(set(busy)) <= nodes


@pytest.mark.timeout(900)
async def test_ten_thousand_jobs_submitted_observed_and_kept(home: Path, workdir: Path) -> None:
    local_cluster.start(nodes=NODES, timeout=30)
    sched = LocalScheduler()
    tokens = [f"tok-{i}" for i in range(10_000)]
    acknowledged = await submit_many(sched, workdir, tokens)

    ids = [acknowledged[t] for t in tokens]
    assert sorted(int(i) for i in ids) == list(range(1, 10_001))
    seen = await sched.observe(ids)
    assert sorted(seen) == sorted(ids)
    assert all(seen[acknowledged[t]].token == t for t in tokens)
    running = [o for o in seen.values() if o.state is JobState.RUNNING]
    waiting = [o for o in seen.values() if o.state is JobState.PENDING]
    assert len(running) == NODES and len(waiting) == 10_000 - NODES
    assert {o.reason for o in waiting} == {"Resources"}
    # First fit in submit order: the first jobs got the nodes.
    assert sorted(int(o.job_id) for o in running) == list(range(1, NODES + 1))
    found = await sched.find("tok-7777")
    assert found is not None and found.job_id == acknowledged["tok-7777"]

    # A node down leaves fewer nodes than a job excluding all the others needs: worked out when asked.
    picky = await sched.submit(
        SubmitRequest(
            script="true",
            nodes=2,
            workdir=str(workdir),
            name="picky",
            token="picky",
            excluded_nodes=[f"node{n}" for n in range(2, 8)],
        )
    )
    local_cluster.node_down("node8", "test")
    assert (await sched.observe([picky.job_id]))[picky.job_id].reason == "ReqNodeNotAvail"

    # The queue moves: cancelling a running job starts the oldest waiting one on its node.
    await sched.cancel(acknowledged["tok-0"])
    nxt = (await sched.observe([acknowledged[f"tok-{NODES}"]]))[acknowledged[f"tok-{NODES}"]]
    assert (nxt.state, nxt.nodes) == (JobState.RUNNING, ["node1"])

    assert local_cluster.stop(timeout=60)
    saved = local_cluster.status()
    assert not saved.running and len(saved.jobs) == 10_001
    assert_consistent(saved.jobs, NODES)

    local_cluster.start(nodes=NODES, timeout=60)
    again = await sched.observe(ids)
    assert all(again[acknowledged[t]].token == t for t in tokens)
    assert (await sched.submit(sleeper(workdir, "after"))).job_id == "10002"
    nodes = {n.name: n.state for n in await sched.nodes()}
    assert nodes["node8"] == "down"


@pytest.mark.timeout(600)
async def test_sigkill_mid_burst_restarts_consistent(home: Path, workdir: Path) -> None:
    local_cluster.start(nodes=NODES, timeout=30)
    daemon = local_cluster.daemon_pid()
    assert daemon is not None
    sched = LocalScheduler(timeout=10)
    tokens = [f"tok-{i}" for i in range(3000)]
    burst = asyncio.create_task(submit_many(sched, workdir, tokens))
    # Kill it while submissions are in flight: some acknowledged, some half done, some not sent.
    while len(list((home / "cluster" / "jobs").glob("*"))) < 500:
        await asyncio.sleep(0.01)
    os.kill(daemon, signal.SIGKILL)
    acknowledged = await burst
    await wait_gone([daemon])
    assert 0 < len(acknowledged) < len(tokens)

    saved = local_cluster.status()  # what the killed daemon left on disk
    assert not saved.running
    assert_consistent(saved.jobs, NODES)
    by_token = {j.token: j.job_id for j in saved.jobs}
    assert all(by_token.get(t) == job_id for t, job_id in acknowledged.items()), "an acknowledged job was lost"

    local_cluster.start(nodes=NODES, timeout=60)
    after = local_cluster.status()
    assert_consistent(after.jobs, NODES)
    assert {j.token: j.job_id for j in after.jobs} == by_token
    lost = [j for j in after.jobs if j.reason == "local cluster daemon restarted"]
    assert all(j.state is JobState.NODE_FAIL for j in lost)
    assert len([j for j in after.jobs if j.state is JobState.RUNNING]) == NODES
    nxt = await sched.submit(sleeper(workdir, "after"))
    assert nxt.job_id == str(len(after.jobs) + 1)
    assert local_cluster.stop(timeout=60)


def legacy_state(home: Path, workdir: Path) -> Path:
    """A state.json as the previous version wrote it: a finished job, a job running when the
    daemon went away (its process long gone), a held job and a down node."""
    root = home / "cluster"
    root.mkdir(mode=0o700)
    common = {"nodes_wanted": 1, "workdir": str(workdir), "submitted_at": "2026-11-25T10:00:00Z"}
    doc = {
        "version": 1,
        "cluster_id": "c0ffee",
        "next_job_id": 4,
        "nodes": [{"name": "node1"}, {"name": "node2", "down": True, "reason": "bad GPU"}],
        "jobs": [
            {"id": 1, "token": "a", "name": "done", "state": "COMPLETED", "exit_code": 0, **common},
            {"id": 2, "token": "b", "name": "was-running", "state": "RUNNING", "nodes": ["node1"], **common},
            {
                "id": 3,
                "token": "c",
                "name": "held",
                "held": True,
                "reason": "JobHeldUser",
                "restart_count": 1,
                **common,
            },
        ],
    }
    path = root / "state.json"
    path.write_text(local_state.ClusterState.model_validate(doc).model_dump_json(indent=1))
    return path


async def test_state_json_of_the_previous_version_is_migrated(home: Path, workdir: Path) -> None:
    legacy = legacy_state(home, workdir)
    assert [j.state for j in local_cluster.status().jobs] == [JobState.COMPLETED, JobState.RUNNING, JobState.PENDING]

    local_cluster.start(nodes=2)
    assert not legacy.exists() and legacy.with_name("state.json.migrated").exists()
    sched = LocalScheduler()
    seen = await sched.observe(["1", "2", "3"])
    assert (seen["1"].state, seen["1"].exit_code) == (JobState.COMPLETED, 0)
    assert (seen["2"].state, seen["2"].reason) == (JobState.NODE_FAIL, "local cluster daemon restarted")
    assert (seen["3"].held, seen["3"].restart_count) == (True, 1)
    assert {n.name: n.state for n in await sched.nodes()} == {"node1": "idle", "node2": "down"}
    assert (await sched.submit(sleeper(workdir, "new"))).job_id == "4"
    found = await sched.find("b")
    assert found is not None and found.job_id == "2"


def test_unreadable_state_json_is_refused_and_left_alone(home: Path, workdir: Path) -> None:
    legacy = legacy_state(home, workdir)
    legacy.write_text('{"version": 1, "jobs": [')
    with pytest.raises(local_cluster.ClusterError, match=r"cannot read .*state\.json") as caught:
        local_cluster.start(nodes=2)
    assert "\n" not in str(caught.value)
    assert legacy.read_text() == '{"version": 1, "jobs": ['
    assert not (home / "cluster" / "state.db").exists()


def test_state_of_a_newer_version_is_refused(home: Path) -> None:
    root = home / "cluster"
    root.mkdir(mode=0o700)
    local_cluster.start(nodes=1)
    local_cluster.stop()
    with sqlite3.connect(root / "state.db") as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
    conn.close()
    with pytest.raises(local_cluster.ClusterError, match="newer recovery"):
        local_cluster.start(nodes=1)
    with pytest.raises(SchedulerError):
        asyncio.run(LocalScheduler().nodes())
