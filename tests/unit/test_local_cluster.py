"""The embedded local scheduler, end to end: a real daemon in a temporary RECOVERY_HOME."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recovery.activities.schedulers.base import JobNotFound, SchedulerError, SchedulerUnavailable
from recovery.activities.schedulers.coalesce import CoalescingObserver
from recovery.activities.schedulers.local import LocalScheduler
from recovery.activities.schedulers.local import launcher as local_cluster
from recovery.activities.schedulers.local import procs as local_procs
from recovery.client import cli_cluster
from recovery.workflows.models import JobObservation, JobState, SubmitRequest


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # Under /tmp directly: a unix socket path must stay under 108 bytes.
    path = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp"))
    monkeypatch.setenv("RECOVERY_HOME", str(path))
    yield path
    local_cluster.stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sched(home: Path) -> LocalScheduler:
    local_cluster.start(nodes=4)
    return LocalScheduler()


@pytest.fixture
def workdir(home: Path) -> Path:
    path = home / "work"
    path.mkdir()
    return path


def request(
    workdir: Path,
    script: str,
    nodes: int = 1,
    *,
    name: str = "test",
    token: str = "",
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    excluded_nodes: list[str] | None = None,
) -> SubmitRequest:
    return SubmitRequest(
        script=script,
        nodes=nodes,
        workdir=str(workdir),
        name=name,
        token=token,
        args=args or [],
        env=env or {},
        excluded_nodes=excluded_nodes or [],
    )


async def wait_for(
    sched: LocalScheduler,
    job_id: str,
    ok: Callable[[JobObservation], bool],
    timeout: float = 10.0,
) -> JobObservation:
    deadline = time.monotonic() + timeout
    while True:
        obs = (await sched.observe([job_id]))[job_id]
        if ok(obs):
            return obs
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} never got there: {obs}")
        await asyncio.sleep(0.05)


def ended(obs: JobObservation) -> bool:
    return obs.state.ended


async def wait_files(*paths: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() and p.read_text().strip() for p in paths):
        assert time.monotonic() < deadline, f"never written: {paths}"
        await asyncio.sleep(0.05)


def pids(*paths: Path) -> list[int]:
    return [int(p.read_text()) for p in paths]


async def wait_gone(pid_list: list[int], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while any(local_procs.process_alive(pid) for pid in pid_list):
        assert time.monotonic() < deadline, f"still alive: {pid_list}"
        await asyncio.sleep(0.05)


def read_env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


# Each copy records its shell's pid, then becomes `sleep` (same pid) until killed.
SLEEPER = 'echo $$ > "pid.$SLURMD_NODENAME"\nexec sleep 60\n'


async def test_two_node_job_completes_with_slurm_environment(sched: LocalScheduler, workdir: Path) -> None:
    script = '#!/bin/bash\nenv > "env.$SLURM_NODEID"\npwd > "pwd.$SLURM_NODEID"\necho "hi $1"\n'
    sub = await sched.submit(request(workdir, script, nodes=2, name="envjob", args=["there"], env={"MY_VAR": "x"}))
    assert sub.state in (JobState.PENDING, JobState.RUNNING)
    obs = await wait_for(sched, sub.job_id, ended)

    assert obs.state is JobState.COMPLETED
    assert obs.exit_code == 0
    assert obs.nodes == ["node1", "node2"]
    assert sorted(t.node for t in obs.tasks) == ["node1", "node2"]
    assert all(t.exit_code == 0 and t.ended_at is not None for t in obs.tasks)
    assert obs.started_at is not None and obs.ended_at is not None
    assert obs.started_at.tzinfo is not None
    for index, node in enumerate(["node1", "node2"]):
        env = read_env(workdir / f"env.{index}")
        assert env["SLURM_JOB_ID"] == sub.job_id
        assert env["SLURM_JOB_NAME"] == "envjob"
        assert env["SLURM_JOB_NODELIST"] == env["SLURM_NODELIST"] == "node[1-2]"
        assert env["SLURM_JOB_NUM_NODES"] == env["SLURM_NNODES"] == env["SLURM_NTASKS"] == "2"
        assert env["SLURM_NODEID"] == env["SLURM_PROCID"] == str(index)
        assert env["SLURMD_NODENAME"] == node
        assert env["SLURM_RESTART_COUNT"] == "0"
        assert env["SLURM_SUBMIT_DIR"] == str(workdir)
        assert env["RECOVERY_LOCAL_CLUSTER"] == "1"
        assert env["MY_VAR"] == "x"
        assert (workdir / f"pwd.{index}").read_text().strip() == str(workdir)
    assert obs.output_path is not None
    assert Path(obs.output_path).read_text() == "hi there\nhi there\n"


async def test_failure_on_one_node_kills_the_other_copy(sched: LocalScheduler, workdir: Path) -> None:
    script = (
        'echo $$ > "pid.$SLURMD_NODENAME"\n'
        'if [ "$SLURMD_NODENAME" = node2 ]; then\n'
        "  while [ ! -s pid.node1 ]; do sleep 0.02; done\n"
        "  exit 7\n"
        "fi\n"
        "exec sleep 60\n"
    )
    sub = await sched.submit(request(workdir, script, nodes=2))
    obs = await wait_for(sched, sub.job_id, ended)  # within 10 s: node1's 60 s sleep was cut short

    assert obs.state is JobState.FAILED
    assert (obs.exit_code, obs.signal, obs.reason) == (7, None, "NonZeroExitCode")
    assert [t.node for t in obs.tasks] == ["node2", "node1"]
    assert obs.tasks[0].exit_code == 7
    assert obs.tasks[1].signal == signal.SIGTERM
    await wait_gone(pids(workdir / "pid.node1", workdir / "pid.node2"))


async def test_node_down_ends_the_job_node_fail(sched: LocalScheduler, workdir: Path) -> None:
    sub = await sched.submit(request(workdir, SLEEPER, nodes=2))
    files = (workdir / "pid.node1", workdir / "pid.node2")
    await wait_files(*files)

    local_cluster.node_down("node2", reason="test")
    obs = (await sched.observe([sub.job_id]))[sub.job_id]

    assert obs.state is JobState.NODE_FAIL
    assert obs.failed_nodes == ["node2"]
    signals = {t.node: t.signal for t in obs.tasks}
    assert signals == {"node2": signal.SIGKILL, "node1": signal.SIGTERM}
    await wait_gone(pids(*files))
    states = {n.name: (n.state, n.reason) for n in await sched.nodes()}
    assert states["node2"] == ("down", "test")
    assert states["node1"] == ("idle", "")

    # A down node is not schedulable: a 4-node job waits until it is back.
    big = await sched.submit(request(workdir, "true", nodes=4))
    assert (big.state, big.reason) == (JobState.PENDING, "ReqNodeNotAvail")
    local_cluster.node_up("node2")
    assert (await wait_for(sched, big.job_id, ended)).state is JobState.COMPLETED


async def test_requeue_hold_exclude_release_runs_again_elsewhere(sched: LocalScheduler, workdir: Path) -> None:
    script = (
        'echo "attempt $SLURM_RESTART_COUNT on $SLURMD_NODENAME"\n'
        '[ "$SLURM_RESTART_COUNT" = 0 ] && exec sleep 60\n'
        "exit 0\n"
    )
    sub = await sched.submit(request(workdir, script, nodes=2))
    assert sub.output_path is not None
    output = Path(sub.output_path)
    deadline = time.monotonic() + 10
    while not (output.exists() and output.read_text().count("\n") == 2):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)

    await sched.requeue_hold(sub.job_id)
    held = (await sched.observe([sub.job_id]))[sub.job_id]
    assert (held.state, held.held, held.reason) == (JobState.PENDING, True, "JobHeldUser")
    assert held.restart_count == 1
    assert (held.nodes, held.tasks, held.exit_code, held.started_at) == ([], [], None, None)

    await sched.set_excluded_nodes(sub.job_id, ["node1", "node2"])
    await sched.release(sub.job_id)
    obs = await wait_for(sched, sub.job_id, ended)

    assert obs.state is JobState.COMPLETED
    assert obs.restart_count == 1
    assert obs.nodes == ["node3", "node4"]
    assert obs.excluded_nodes == ["node1", "node2"]
    lines = output.read_text().splitlines()
    assert sorted(lines[:2]) == ["attempt 0 on node1", "attempt 0 on node2"]
    assert sorted(lines[2:]) == ["attempt 1 on node3", "attempt 1 on node4"]


async def test_requeue_of_an_ended_job(sched: LocalScheduler, workdir: Path) -> None:
    sub = await sched.submit(request(workdir, "exit 3"))
    assert (await wait_for(sched, sub.job_id, ended)).state is JobState.FAILED
    await sched.requeue_hold(sub.job_id)
    await sched.release(sub.job_id)
    obs = await wait_for(sched, sub.job_id, lambda o: o.state.ended and o.restart_count == 1)
    assert (obs.state, obs.exit_code) == (JobState.FAILED, 3)


async def test_refusals(sched: LocalScheduler, workdir: Path) -> None:
    pending = await sched.submit(request(workdir, "true", nodes=2, excluded_nodes=["node1", "node2", "node3"]))
    assert (pending.state, pending.reason) == (JobState.PENDING, "ReqNodeNotAvail")
    with pytest.raises(SchedulerError, match="pending") as caught:
        await sched.requeue_hold(pending.job_id)
    assert not isinstance(caught.value, JobNotFound | SchedulerUnavailable)
    with pytest.raises(SchedulerError, match="not held"):
        await sched.release(pending.job_id)

    running = await sched.submit(request(workdir, SLEEPER))
    await wait_for(sched, running.job_id, lambda o: o.state is JobState.RUNNING)
    with pytest.raises(SchedulerError, match="pending"):
        await sched.set_excluded_nodes(running.job_id, ["node2"])
    await sched.cancel(running.job_id)
    cancelled = (await sched.observe([running.job_id]))[running.job_id]
    assert cancelled.state is JobState.CANCELLED
    with pytest.raises(SchedulerError, match="ended"):
        await sched.cancel(running.job_id)

    with pytest.raises(SchedulerError, match="has 4"):
        await sched.submit(request(workdir, "true", nodes=5))
    with pytest.raises(SchedulerError, match="directory"):
        await sched.submit(request(workdir / "missing", "true"))
    with pytest.raises(SchedulerError, match="unknown node"):
        await sched.submit(request(workdir, "true", excluded_nodes=["node9"]))


async def test_pending_for_resources_then_first_fit(sched: LocalScheduler, workdir: Path) -> None:
    big = await sched.submit(request(workdir, SLEEPER, nodes=3))
    two = await sched.submit(request(workdir, "true", nodes=2))
    assert (two.state, two.reason) == (JobState.PENDING, "Resources")
    one = await sched.submit(request(workdir, "true", nodes=1))
    assert (await wait_for(sched, one.job_id, ended)).nodes == ["node4"]

    await sched.cancel(big.job_id)
    obs = await wait_for(sched, two.job_id, ended)
    assert (obs.state, obs.nodes) == (JobState.COMPLETED, ["node1", "node2"])


async def test_find_by_token(sched: LocalScheduler, workdir: Path) -> None:
    await sched.submit(request(workdir, "true", token="tok-a"))
    second = await sched.submit(request(workdir, "true", token="tok-a"))
    other = await sched.submit(request(workdir, "true", token="tok-b"))
    found = await sched.find("tok-a")
    assert found is not None and found.job_id == second.job_id
    found_b = await sched.find("tok-b")
    assert found_b is not None and found_b.job_id == other.job_id
    assert await sched.find("nope") is None


async def test_observe_many_in_one_call(sched: LocalScheduler, workdir: Path) -> None:
    ids = [(await sched.submit(request(workdir, "true"))).job_id for _ in range(3)]
    seen = await sched.observe([*ids, "999", "not-a-number"])
    assert sorted(seen) == sorted(ids)
    assert all(seen[i].job_id == i for i in ids)
    assert ids == ["1", "2", "3"]


async def test_unknown_job_is_job_not_found(sched: LocalScheduler) -> None:
    for call in (sched.requeue_hold, sched.release, sched.cancel):
        with pytest.raises(JobNotFound):
            await call("999")
    with pytest.raises(JobNotFound):
        await sched.set_excluded_nodes("abc", [])


async def test_stopped_daemon_is_unavailable(home: Path) -> None:
    sched = LocalScheduler()
    with pytest.raises(SchedulerUnavailable):
        await sched.observe(["1"])
    local_cluster.start(nodes=1)
    assert await sched.observe(["1"]) == {}
    assert local_cluster.stop() is True
    with pytest.raises(SchedulerUnavailable):
        await sched.nodes()
    assert local_cluster.stop() is False


async def test_hostile_job_name_and_args_are_harmless(sched: LocalScheduler, workdir: Path) -> None:
    marker = workdir / "pwned"
    name = f"a\"b'c; $(touch {marker}) `touch {marker}`\nsecond line"
    args = [f"$(touch {marker})", f"; touch {marker}", "x y"]
    script = 'printf "%s" "$SLURM_JOB_NAME" > name.out\nprintf "%s\\n" "$@" > args.out\n'
    sub = await sched.submit(request(workdir, script, name=name, args=args))
    obs = await wait_for(sched, sub.job_id, ended)
    assert obs.state is JobState.COMPLETED
    assert obs.name == name
    assert (workdir / "name.out").read_text() == name
    assert (workdir / "args.out").read_text().splitlines() == args
    assert not marker.exists()


async def test_start_twice_is_safe(sched: LocalScheduler) -> None:
    first = local_cluster.daemon_pid()
    again = local_cluster.start(nodes=4)
    assert (again.started, again.pid, again.note) == (False, first, "")
    other = local_cluster.start(nodes=2)
    assert (other.started, other.pid, other.nodes) == (False, first, 4)
    assert "4 nodes" in other.note
    assert len(await sched.nodes()) == 4


async def test_stop_leaves_no_process_behind(sched: LocalScheduler, workdir: Path) -> None:
    script = 'sleep 60 &\necho $! > "bg.$SLURMD_NODENAME"\necho $$ > "pid.$SLURMD_NODENAME"\nwait\n'
    sub = await sched.submit(request(workdir, script, nodes=2))
    files = [workdir / f"{kind}.node{n}" for kind in ("pid", "bg") for n in (1, 2)]
    await wait_files(*files)
    daemon = local_cluster.daemon_pid()
    assert daemon is not None

    assert local_cluster.stop() is True
    await wait_gone([daemon, *pids(*files)], timeout=1.0)
    status = local_cluster.status()
    assert not status.running
    job = next(j for j in status.jobs if j.job_id == sub.job_id)
    assert (job.state, job.reason) == (JobState.NODE_FAIL, "local cluster stopped")


async def test_restarted_daemon_ends_orphaned_jobs(sched: LocalScheduler, workdir: Path) -> None:
    sub = await sched.submit(request(workdir, SLEEPER, nodes=2))
    files = (workdir / "pid.node1", workdir / "pid.node2")
    await wait_files(*files)
    daemon = local_cluster.daemon_pid()
    assert daemon is not None
    os.kill(daemon, signal.SIGKILL)
    await wait_gone([daemon])
    assert all(local_procs.process_alive(pid) for pid in pids(*files))

    assert local_cluster.start(nodes=4).started
    obs = (await sched.observe([sub.job_id]))[sub.job_id]
    assert (obs.state, obs.reason) == (JobState.NODE_FAIL, "local cluster daemon restarted")
    await wait_gone(pids(*files))
    assert all(n.state == "idle" for n in await sched.nodes())
    assert (await sched.submit(request(workdir, "true"))).job_id == "2"


async def test_bad_request_gets_an_error_reply(sched: LocalScheduler, home: Path) -> None:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(home / "cluster" / "daemon.sock"))
        conn.sendall(b'{"op": "explode"}\n')
        reply = json.loads(conn.makefile("rb").readline())
    assert reply["ok"] is False
    assert reply["kind"] == "invalid"


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="recovery")
    cli_cluster.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["cluster", *argv])
    result: int = args.func(args)
    return result


def test_cli(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("node-down", "node1") == 1
    assert "not running" in capsys.readouterr().err

    assert run_cli("start", "--nodes", "3") == 0
    assert "started: 3 nodes" in capsys.readouterr().out
    assert run_cli("node-down", "node9") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "node9" in err
    assert run_cli("node-down", "node2") == 0
    capsys.readouterr()

    assert run_cli("status", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [n["state"] for n in doc["nodes"]] == ["idle", "down", "idle"]
    assert doc["jobs"] == []
    assert run_cli("status") == 0
    assert "node2  down" in capsys.readouterr().out

    assert run_cli("node-up", "node2") == 0
    assert run_cli("stop") == 0
    capsys.readouterr()
    assert run_cli("status", "--json") == 3
    assert json.loads(capsys.readouterr().out)["running"] is False


async def test_script_that_cannot_start_fails_the_job(sched: LocalScheduler, workdir: Path) -> None:
    sub = await sched.submit(request(workdir, "#!/nonexistent/interpreter\n", nodes=2))
    obs = await wait_for(sched, sub.job_id, ended)
    assert (obs.state, obs.exit_code) == (JobState.FAILED, 127)
    assert obs.tasks[0].node == "node1"
    assert obs.output_path is not None
    assert "cannot start the job on node1" in Path(obs.output_path).read_text()


async def test_bad_submissions_change_nothing(sched: LocalScheduler, workdir: Path) -> None:
    with pytest.raises(SchedulerError, match="absolute"):
        await sched.submit(request(Path("relative"), "true"))
    with pytest.raises(SchedulerError, match="NUL"):
        await sched.submit(request(workdir, "true", env={"A": "x\0y"}))
    with pytest.raises(SchedulerError, match="'='"):
        await sched.submit(request(workdir, "true", env={"A=B": "x"}))
    assert local_cluster.status().jobs == []


async def test_a_running_jobs_process_groups_are_its_copies_per_node(sched: LocalScheduler, workdir: Path) -> None:
    """What the hung-job stack collection reaches the ranks through (activities/hangstacks)."""
    sub = await sched.submit(request(workdir, SLEEPER, nodes=2))
    await wait_files(workdir / "pid.node1", workdir / "pid.node2")
    groups = await sched.process_groups(sub.job_id)
    assert groups == {"node1": pids(workdir / "pid.node1")[0], "node2": pids(workdir / "pid.node2")[0]}
    assert all(os.getpgid(pid) == pid for pid in groups.values()), "each copy leads its own group"
    await sched.cancel(sub.job_id)
    assert await sched.process_groups(sub.job_id) == {}, "an ended job runs nothing"
    with pytest.raises(JobNotFound):
        await sched.process_groups("999")


def test_cli_json_results(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every cluster command that changes something says what it did as JSON, on stdout only."""
    assert run_cli("start", "--nodes", "2", "--json") == 0
    started = json.loads(capsys.readouterr().out)
    assert (started["started"], started["nodes"]) == (True, 2) and started["pid"] > 0
    assert run_cli("node-down", "node2", "--reason", "bad GPU", "--json") == 0
    node = json.loads(capsys.readouterr().out)
    assert (node["name"], node["state"], node["reason"]) == ("node2", "down", "bad GPU")
    assert run_cli("node-up", "node2", "--json") == 0
    assert json.loads(capsys.readouterr().out)["state"] == "idle"
    assert run_cli("stop", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"stopped": True}
    assert run_cli("stop", "--json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"stopped": False} and err == ""


async def test_changes_list_what_changed_since_a_cursor(sched: LocalScheduler, workdir: Path) -> None:
    """The list-and-watch the observer reads: the jobs touched since a cursor, each as it is now;
    nothing for jobs that did not change; a cursor from before a restart asks for a full read."""
    start = await sched.changes(None)
    assert not start.complete and start.jobs == {}
    quiet = await sched.submit(request(workdir, SLEEPER, name="quiet"))
    await wait_files(workdir / "pid.node1")
    first = await sched.changes(start.cursor)
    assert first.complete and first.jobs[quiet.job_id].state is JobState.RUNNING

    # Nothing happened: nothing to read. Then one job ends and only it is listed.
    assert (await sched.changes(first.cursor)).jobs == {}
    short = await sched.submit(request(workdir, "exit 3", name="short"))
    done = await wait_for(sched, short.job_id, ended)
    later = await sched.changes(first.cursor)
    assert set(later.jobs) == {short.job_id} and later.jobs[short.job_id] == done

    # A requeue keeps the job id: its next attempt is a change like any other.
    await sched.requeue_hold(short.job_id)
    held = (await sched.changes(later.cursor)).jobs[short.job_id]
    assert (held.restart_count, held.held) == (1, True)

    # A job that waits for nodes is listed every time: its reason follows the nodes.
    big = await sched.submit(request(workdir, "true", nodes=4))
    now = await sched.changes(None)
    assert (await sched.changes(now.cursor)).jobs[big.job_id].reason == "Resources"

    for bad in ("", "nonsense", f"{now.cursor}0", now.cursor.replace(":", ":-")):
        assert not (await sched.changes(bad)).complete, bad
    local_cluster.stop()
    assert local_cluster.start(nodes=4).started
    assert not (await sched.changes(now.cursor)).complete, "a restarted daemon cannot vouch for the old cursor"


async def test_node_changes_list_the_nodes_that_changed_since_a_cursor(sched: LocalScheduler, workdir: Path) -> None:
    """The nodes' list-and-watch: every node without a cursor, then only the nodes a job took or
    left or an operator set down or up, each as it is now; an unknown cursor reads them all."""
    start = await sched.node_changes(None)
    assert start.full and [n.name for n in start.nodes] == ["node1", "node2", "node3", "node4"]
    quiet = await sched.node_changes(start.cursor)
    assert not quiet.full and quiet.nodes == []

    job = await sched.submit(request(workdir, SLEEPER, nodes=2))
    await wait_files(workdir / "pid.node1", workdir / "pid.node2")
    taken = await sched.node_changes(quiet.cursor)
    assert [(n.name, n.state) for n in taken.nodes] == [("node1", "allocated"), ("node2", "allocated")]

    await asyncio.to_thread(local_cluster.node_down, "node3", "bad GPU")
    await asyncio.to_thread(local_cluster.node_drain, "node4", "check cooling")
    await sched.cancel(job.job_id)
    await wait_for(sched, job.job_id, ended)
    later = await sched.node_changes(taken.cursor)
    states = [(n.name, n.state, n.reason) for n in later.nodes]
    assert states == [
        ("node1", "idle", ""),
        ("node2", "idle", ""),
        ("node3", "down", "bad GPU"),
        ("node4", "drained", "check cooling"),
    ]
    await asyncio.to_thread(local_cluster.node_up, "node3")
    assert [(n.name, n.state) for n in (await sched.node_changes(later.cursor)).nodes] == [("node3", "idle")]

    for bad in ("", "nonsense", f"{later.cursor}0", later.cursor.replace(":", ":-")):
        answer = await sched.node_changes(bad)
        assert answer.full and len(answer.nodes) == 4, bad
    local_cluster.stop()
    assert local_cluster.start(nodes=4).started
    assert (await sched.node_changes(later.cursor)).full, "a restarted daemon cannot vouch for the old cursor"


async def test_diagnoses_read_the_nodes_as_a_list_and_watch(sched: LocalScheduler) -> None:
    """Through the worker's coalescer, the local scheduler's nodes are read in full once, then as
    changes; every read still shows what happened before it was asked for."""
    coalescer = CoalescingObserver(sched, window=0.01)
    assert coalescer.book is not None
    burst = await asyncio.gather(*(coalescer.nodes() for _ in range(20)))
    assert all(answer == burst[0] for answer in burst) and len(burst[0]) == 4
    await asyncio.to_thread(local_cluster.node_down, "node2", "NVRM: Xid 79")
    after = await coalescer.nodes()
    assert [(n.name, n.state) for n in after] == [
        ("node1", "idle"),
        ("node2", "down"),
        ("node3", "idle"),
        ("node4", "idle"),
    ]
    assert coalescer.book.full_reads == 1

    local_cluster.stop()  # a new daemon: its nodes (down no more) replace what the book held
    assert local_cluster.start(nodes=3).started
    assert [n.state for n in await coalescer.nodes()] == ["idle", "down", "idle"]
    assert coalescer.book.full_reads == 2
