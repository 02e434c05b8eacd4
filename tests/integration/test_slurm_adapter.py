"""The Slurm backends against the real four-node dev cluster (deploy/slurm-dev-cluster, Slurm
25.11 or 22.05), each test once per backend: `commands` (SlurmScheduler), `pyslurm`
(PyslurmScheduler; 25.11 only: pyslurm builds for that release alone) and `rest`
(RestSlurmScheduler, where the cluster runs slurmrestd).

What recovery relies on, the same on every backend: a 2-node job observed with its nodes;
requeue-hold, exclusions and release move it off a node with the restart count raised; a task
failing on one node is named; cancel; unknown jobs; slurmctld away and back; hostile names.
The commands backend also: one squeue per poll.

On the dev cluster, slurmrestd's requests over its socket act as the `slurm` user, whose jobs
cannot start there (the spool is under /root): the REST backend's jobs in the shared tests are
submitted through its commands, and `test_rest_backend_submits_over_rest` checks its own
submission.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.base import JobNotFound, JobNotRequeueable, SchedulerUnavailable
from recovery.activities.schedulers.slurm import SlurmScheduler
from recovery.activities.schedulers.slurm_commands import Completed, run_process
from recovery.activities.schedulers.slurm_factory import Backend, SlurmBackend, make_slurm_scheduler
from recovery.activities.schedulers.slurm_pyslurm import PyslurmScheduler
from recovery.activities.schedulers.slurmrestd import RestSlurmScheduler
from recovery.workflows.models import JobObservation, JobState, NodeInfo, SubmitRequest
from tests.conftest import need

if TYPE_CHECKING:
    from tests.integration.conftest import SlurmDevCluster

pytestmark = pytest.mark.slow
BACKENDS: list[Backend] = ["commands", "pyslurm", "rest"]
T = TypeVar("T")
SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "slurm-dev-cluster"


class Counting:
    """The real runner, counting every command the adapter starts."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def __call__(
        self, argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float
    ) -> Completed:
        self.calls.append(list(argv))
        return await run_process(argv, input=input, env=env, timeout=timeout)

    def programs(self) -> list[str]:
        return [c[0] for c in self.calls]


async def until(what: str, check: Callable[[], Awaitable[T | None]], timeout: float, every: float = 0.3) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(every)


@pytest.fixture
def counting() -> Counting:
    return Counting()


@pytest.fixture
def commands(slurm_cluster: SlurmDevCluster, counting: Counting) -> SlurmScheduler:
    return SlurmScheduler(runner=counting)


def cluster_release() -> str:
    """The release of the Slurm commands first on PATH (the dev cluster's `env` puts its own first)."""
    out = subprocess.run(["scontrol", "--version"], capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.split()[-1]


def make(backend: Backend, slurm_cluster: SlurmDevCluster, timeout: float = 30.0) -> SlurmBackend:
    """The backend under test, as the worker's factory makes it (skipped where it cannot run)."""
    if backend == "pyslurm":
        release = cluster_release()
        if not release.startswith("25.11"):
            pytest.skip(f"pyslurm builds for Slurm 25.11 only; the dev cluster runs {release}")
        need(importlib.util.find_spec("pyslurm") is not None, "pyslurm (pip install '.[slurm]' against Slurm 25.11)")
    if backend == "rest":
        need(bool(slurm_cluster.restd_socket), "the dev cluster's slurmrestd")
    return make_slurm_scheduler(backend, restd_socket=slurm_cluster.restd_socket, timeout=timeout)


async def close(scheduler: SlurmBackend) -> None:
    if isinstance(scheduler, RestSlurmScheduler):
        await scheduler.aclose()
    elif isinstance(scheduler, PyslurmScheduler):
        scheduler.close()


@pytest.fixture(params=BACKENDS)
async def slurm(request: pytest.FixtureRequest, slurm_cluster: SlurmDevCluster) -> AsyncIterator[SlurmBackend]:
    scheduler = make(request.param, slurm_cluster)
    yield scheduler
    await close(scheduler)


@pytest.fixture
def jobs(slurm_cluster: SlurmDevCluster) -> Iterator[list[str]]:
    """Job ids a test submitted; whatever still runs at the end is cancelled."""
    ids: list[str] = []
    yield ids
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, timeout=30, check=False)


def request(tmp_path: Path, script: str, *, name: str = "adapter", nodes: int = 1, token: str = "") -> SubmitRequest:
    return SubmitRequest(
        script="#!/bin/bash\n" + script,
        name=name,
        nodes=nodes,
        workdir=str(tmp_path),
        token=token or f"recovery:test-{time.monotonic_ns()}:0",
    )


async def submit(slurm: SlurmBackend, jobs: list[str], req: SubmitRequest) -> JobObservation:
    # REST's own jobs run as `slurm` on the dev cluster and cannot start (module doc)
    obs = await (slurm.commands if isinstance(slurm, RestSlurmScheduler) else slurm).submit(req)
    jobs.append(obs.job_id)
    return obs


async def observe(slurm: SlurmBackend, job_id: str) -> JobObservation:
    found = await slurm.observe([job_id])
    assert job_id in found, f"job {job_id} unknown to Slurm"
    return found[job_id]


def state_is(
    slurm: SlurmBackend, job_id: str, want: Callable[[JobObservation], bool]
) -> Callable[[], Awaitable[JobObservation | None]]:
    async def check() -> JobObservation | None:
        obs = await observe(slurm, job_id)
        return obs if want(obs) else None

    return check


async def test_requeue_hold_exclude_release_moves_a_two_node_job(
    slurm: SlurmBackend, jobs: list[str], tmp_path: Path
) -> None:
    script = 'echo "attempt ${SLURM_RESTART_COUNT:-0} on $SLURMD_NODENAME"\nsleep 300\n'
    first = await submit(slurm, jobs, request(tmp_path, script, nodes=2))
    job = first.job_id
    assert first.token and first.comment.startswith("recovery:token=")

    running = await until("2 nodes running", state_is(slurm, job, lambda o: o.state is JobState.RUNNING), 30)
    assert len(running.nodes) == 2 and running.restart_count == 0 and running.started_at
    assert running.output_path == str(tmp_path / f"slurm-{job}.out")

    await slurm.requeue_hold(job)
    held = await until(
        "held after requeue",
        state_is(slurm, job, lambda o: o.state is JobState.PENDING and o.held and o.restart_count == 1),
        30,
    )
    assert held.started_at is None and held.nodes == []

    bad = running.nodes[0]
    await slurm.set_excluded_nodes(job, [bad])
    assert (await observe(slurm, job)).excluded_nodes == [bad]

    await slurm.release(job)
    t0 = time.monotonic()
    again = await until(
        "running again off the excluded node",
        state_is(slurm, job, lambda o: o.state is JobState.RUNNING and o.restart_count == 1),
        45,  # about 11 s with cred_expire=10 and the 2 s scheduler interval
    )
    print(f"\nrelease -> running: {time.monotonic() - t0:.1f}s")
    assert bad not in again.nodes and len(again.nodes) == 2
    assert again.excluded_nodes == [bad] and not again.held

    await slurm.cancel(job)
    done = await until("cancelled", state_is(slurm, job, lambda o: o.state.ended), 30)
    assert done.state is JobState.CANCELLED
    assert done.excluded_nodes == [bad] and done.restart_count == 1

    if isinstance(slurm, PyslurmScheduler):  # libslurm ran in the child processes, never here
        assert "pyslurm" not in sys.modules
    if isinstance(slurm, SlurmScheduler):
        detail = await slurm.detail(job)
        assert detail is not None and detail.excluded_nodes == [bad] and detail.restart_count == 1


async def test_task_failing_on_the_second_node(slurm: SlurmBackend, jobs: list[str], tmp_path: Path) -> None:
    # One step per node: accounting then has one exit code per node.
    per_node = (
        "srun -N1 -n1 --relative=0 bash -c 'sleep 1' &\n"
        "a=$!\n"
        "srun -N1 -n1 --relative=1 bash -c 'echo \"fatal: uncorrectable ECC error on $SLURMD_NODENAME\" >&2; exit 7' &\n"
        "b=$!\n"
        "wait $a; ra=$?; wait $b; rb=$?\n"
        "exit $(( ra > rb ? ra : rb ))\n"
    )
    # One step over both nodes: 22.05 keeps one exit code for the step; srun's line names the node.
    one_step = "srun bash -c 'if [ \"$SLURM_NODEID\" = 1 ]; then exit 7; fi; sleep 1'\n"
    a = await submit(slurm, jobs, request(tmp_path, per_node, name="per-node", nodes=2))
    b = await submit(slurm, jobs, request(tmp_path, one_step, name="one-step", nodes=2))

    def failed_with_steps(o: JobObservation) -> bool:
        return o.state is JobState.FAILED and bool(o.tasks)

    # accounting gets the steps a moment after slurmctld reports the end
    per = await until("per-node job failed, steps recorded", state_is(slurm, a.job_id, failed_with_steps), 60)
    assert (per.exit_code, per.signal) == (7, None)
    failing = [t for t in per.tasks if t.exit_code]
    assert [t.node for t in failing] == [per.nodes[1]]
    assert {t.node for t in per.tasks} == set(per.nodes)

    one = await until("one-step job failed", state_is(slurm, b.job_id, lambda o: o.state.ended), 60)
    assert (one.state, one.exit_code, one.tasks) == (JobState.FAILED, 7, [])
    assert one.output_path is not None
    lines = sp.parse_srun_failures(Path(one.output_path).read_text())
    assert [(f.node, f.exit_code) for f in lines] == [(one.nodes[1], 7)]


async def test_cancel_and_unknown_jobs(slurm: SlurmBackend, jobs: list[str], tmp_path: Path) -> None:
    obs = await submit(slurm, jobs, request(tmp_path, "sleep 300\n"))
    await until("running", state_is(slurm, obs.job_id, lambda o: o.state is JobState.RUNNING), 30)
    await slurm.cancel(obs.job_id)
    ended = await until("cancelled", state_is(slurm, obs.job_id, lambda o: o.state.ended), 30)
    assert ended.state is JobState.CANCELLED

    bogus = "99999999"
    assert await slurm.observe([bogus]) == {}
    assert set(await slurm.observe([bogus, obs.job_id])) == {obs.job_id}
    for call in (slurm.requeue_hold, slurm.release, slurm.cancel):
        with pytest.raises(JobNotFound):
            await call(bogus)
    with pytest.raises(JobNotFound):
        await slurm.set_excluded_nodes(bogus, ["node1"])
    assert await slurm.find("recovery:no-such-run:0") is None


async def test_a_no_requeue_job_is_not_requeueable(slurm: SlurmBackend, jobs: list[str], tmp_path: Path) -> None:
    out = subprocess.run(
        ["sbatch", "--parsable", "--no-requeue", f"--chdir={tmp_path}", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    job = out.stdout.strip().split(";")[0]
    jobs.append(job)
    await until("running", state_is(slurm, job, lambda o: o.state is JobState.RUNNING), 30)
    with pytest.raises(JobNotRequeueable):
        await slurm.requeue_hold(job)
    assert (await observe(slurm, job)).restart_count == 0


async def test_hostile_name_and_token_pass_through(slurm: SlurmBackend, jobs: list[str], tmp_path: Path) -> None:
    pwned = Path("/tmp/pwned")
    pwned.unlink(missing_ok=True)
    name = "a'b;$(touch /tmp/pwned)\"c"
    token = "recovery:x';$(touch /tmp/pwned)`touch /tmp/pwned`:0"
    req = request(tmp_path, 'echo "name=$SLURM_JOB_NAME"\n', name=name, token=token)
    obs = await submit(slurm, jobs, req)
    done = await until("hostile job done", state_is(slurm, obs.job_id, lambda o: o.state.ended), 30)
    assert (done.name, done.token, done.state) == (name, token, JobState.COMPLETED)
    found = await slurm.find(token)
    assert found is not None and found.job_id == obs.job_id
    assert done.output_path and f"name={name}" in Path(done.output_path).read_text()
    assert not pwned.exists()


async def test_observing_many_jobs_is_one_squeue(
    commands: SlurmScheduler, counting: Counting, jobs: list[str], tmp_path: Path
) -> None:
    slurm = commands
    running = [await submit(slurm, jobs, request(tmp_path, "sleep 300\n")) for _ in range(8)]
    ids = [o.job_id for o in running]

    async def all_running() -> bool:
        return all(o.state is JobState.RUNNING for o in (await slurm.observe(ids)).values())

    await until("8 jobs running", all_running, 60)
    counting.calls.clear()
    t0 = time.monotonic()
    found = await slurm.observe(ids)
    steady = time.monotonic() - t0
    assert len(found) == 8 and counting.programs() == ["squeue"]

    queued = [await submit(slurm, jobs, request(tmp_path, "sleep 300\n")) for _ in range(24)]
    ids += [o.job_id for o in queued]
    counting.calls.clear()
    t0 = time.monotonic()
    found = await slurm.observe(ids)
    mixed = time.monotonic() - t0
    assert len(found) == 32
    # the table, plus the exclusion lists of the pending jobs, in one more squeue
    assert counting.programs() == ["squeue", "squeue"]
    print(f"\nobserve: 8 running jobs {steady * 1000:.0f} ms, 8 running + 24 pending {mixed * 1000:.0f} ms")


async def test_an_adopted_job_reads_the_same_on_every_backend(
    slurm: SlurmBackend, commands: SlurmScheduler, jobs: list[str], tmp_path: Path
) -> None:
    """What discovery reads of a job opted in with plain sbatch: its submission, the cluster's
    name, and the job among the opted-in ones, as the commands backend reads them."""
    script = tmp_path / "adopt.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --comment=recovery:policy=default\n#SBATCH -N 2\nsleep 300\n")
    out = subprocess.run(
        ["sbatch", "--parsable", f"--chdir={tmp_path}", str(script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    job = out.stdout.strip().split(";")[0]
    jobs.append(job)
    running = await until("running", state_is(commands, job, lambda o: o.state is JobState.RUNNING), 30)
    theirs, ours = await slurm.submission(job), await commands.submission(job)
    assert theirs == ours
    assert (theirs.nodes, theirs.comment, theirs.workdir) == (2, "recovery:policy=default", str(tmp_path))
    assert theirs.script == script.read_text()
    assert await slurm.cluster_name() == await commands.cluster_name()
    adopted = {o.job_id: o for o in await slurm.opted_in_jobs()}
    assert job in adopted and adopted[job] == running


@pytest.mark.parametrize("backend", BACKENDS)
async def test_slurmctld_away_and_back(
    slurm_cluster: SlurmDevCluster, backend: Backend, jobs: list[str], tmp_path: Path
) -> None:
    slurm, quick = make(backend, slurm_cluster), make(backend, slurm_cluster, timeout=3)
    obs = await submit(slurm, jobs, request(tmp_path, "sleep 300\n"))
    subprocess.run([str(SCRIPT), "stop-ctld"], check=True, capture_output=True, timeout=60)
    try:
        # Slurm's own words when it gives up (about 9 s), and our timeout before that
        results = await asyncio.gather(
            slurm.nodes(), slurm.requeue_hold(obs.job_id), quick.observe([obs.job_id]), return_exceptions=True
        )
        for result in results:
            assert isinstance(result, SchedulerUnavailable), result
        if backend != "rest":  # libslurm's words, through the commands or pyslurm
            assert "Unable to contact slurm controller" in str(results[0])
    finally:
        subprocess.run([str(SCRIPT), "start-ctld"], check=True, capture_output=True, timeout=120)
    back = await until("slurmctld back", state_is(slurm, obs.job_id, lambda o: o.state is JobState.RUNNING), 60)
    assert back.restart_count == 0  # the failed requeue-hold did nothing
    await close(slurm)
    await close(quick)


async def test_worker_environment_does_not_reshape_output(
    slurm_cluster: SlurmDevCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQUEUE_FORMAT", "%i")
    monkeypatch.setenv("SLURM_TIME_FORMAT", "relative")
    monkeypatch.setenv("SINFO_PARTITION", "other")
    scheduler = SlurmScheduler()
    nodes = await scheduler.nodes()
    assert sorted(n.name for n in nodes) == list(slurm_cluster.nodes)
    assert os.environ["SQUEUE_FORMAT"] == "%i"


# --- the slurmrestd backend --------------------------------------------------------------------


@pytest.fixture
async def rest(slurm_cluster: SlurmDevCluster) -> AsyncIterator[RestSlurmScheduler]:
    scheduler = make("rest", slurm_cluster)
    assert isinstance(scheduler, RestSlurmScheduler)
    yield scheduler
    await scheduler.aclose()


async def test_rest_backend_submits_over_rest(
    rest: RestSlurmScheduler, commands: SlurmScheduler, jobs: list[str], tmp_path: Path
) -> None:
    slurm = commands
    assert [n.name for n in await rest.nodes()] == [n.name for n in await slurm.nodes()]

    # A directive-free script goes over REST. On the dev cluster slurmrestd's requests act as
    # the `slurm` user, who cannot read the spool under /root, so the job itself fails to start:
    # what matters here is that it was submitted, marked and found.
    tmp_path.chmod(0o777)
    token = f"recovery:rest-{time.monotonic_ns()}:0"
    submitted = await rest.submit(request(tmp_path, "true\n", name="rest'job", token=token))
    jobs.append(submitted.job_id)
    assert (submitted.name, submitted.token, submitted.user) == ("rest'job", token, "slurm")
    found = await rest.find(token)
    assert found is not None and found.job_id == submitted.job_id

    # the newest API the server offers: 25.11 has dropped 22.05's v0.0.38
    api = await rest.api_version()
    assert api == ("v0.0.44" if cluster_release().startswith("25.11") else "v0.0.38")
    if api != "v0.0.38":  # exclusions and arguments go over REST too
        spaced = request(tmp_path, 'echo "args: $#"\n', name="rest-args").model_copy(
            update={"args": ["a b", "c"], "excluded_nodes": ["node2"]}
        )
        other = await rest.submit(spaced)
        jobs.append(other.job_id)
        assert (other.user, other.excluded_nodes, other.token) == ("slurm", ["node2"], spaced.token)

    # release, cancel and (from v0.0.39 on) exclusions over REST; requeue-hold through the commands
    out = subprocess.run(
        ["sbatch", "--parsable", "--hold", f"--chdir={tmp_path}", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    job = out.stdout.strip().split(";")[0]
    jobs.append(job)
    assert (await rest.observe([job]))[job].held
    await rest.set_excluded_nodes(job, ["node1"])
    await rest.release(job)
    running = await until("released over REST", state_is(rest, job, lambda o: o.state is JobState.RUNNING), 30)
    assert "node1" not in running.nodes and running.excluded_nodes == ["node1"]
    await rest.requeue_hold(job)
    await until("requeued", state_is(rest, job, lambda o: o.held and o.restart_count == 1), 30)
    await rest.cancel(job)
    assert (await until("cancelled", state_is(rest, job, lambda o: o.state.ended), 30)).state is JobState.CANCELLED

    with pytest.raises(JobNotFound):
        await rest.cancel("99999999")
    assert await rest.observe(["99999999"]) == {}


async def test_drain_sets_state_and_a_one_line_reason(slurm: SlurmBackend) -> None:
    """A suspect node drained with a hostile reason: one printable line, nothing executed."""
    marker = Path(f"/tmp/recovery-drain-{os.getpid()}")
    reason = f"recovery: failed in 2 runs;\n$(touch {marker}) `id` 'quoted' \"x\""
    try:
        await slurm.drain("node4", reason)
        node4 = await until("node4 drained", lambda: _drained(slurm, "node4"), timeout=20)
    finally:
        subprocess.run(["scontrol", "update", "NodeName=node4", "State=RESUME"], check=False)
    assert node4.reason.startswith("recovery: failed in 2 runs; $(touch")
    assert "\n" not in node4.reason and not marker.exists()


async def _drained(slurm: SlurmBackend, name: str) -> NodeInfo | None:
    node = {n.name: n for n in await slurm.nodes()}[name]
    return node if "drain" in node.state.lower() else None


async def test_a_cluster_without_accounting_is_observed_without_history(
    slurm_cluster: SlurmDevCluster, tmp_path: Path
) -> None:
    """The same controller seen through a slurm.conf without slurmdbd: real sacct refuses, the
    adapter carries on with what slurmctld still lists."""
    conf_dir = tmp_path / "etc"
    conf_dir.mkdir()
    for other in Path(slurm_cluster.conf).parent.glob("*.conf"):
        (conf_dir / other.name).write_text(other.read_text())
    kept = [
        line
        for line in Path(slurm_cluster.conf).read_text().splitlines()
        if not line.startswith(("AccountingStorage", "JobAcctGather"))
    ]
    (conf_dir / "slurm.conf").write_text("\n".join([*kept, "AccountingStorageType=accounting_storage/none", ""]))
    no_accounting = SlurmScheduler(str(conf_dir / "slurm.conf"))

    refused = subprocess.run(
        ["sacct", "-n", "-j", "1"], capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "SLURM_CONF": str(conf_dir / "slurm.conf")},
    )  # fmt: skip
    assert refused.returncode != 0 and "accounting storage is disabled" in refused.stderr + refused.stdout
    assert await no_accounting.observe(["99999999"]) == {}
    assert await no_accounting.runs("99999999") == []
    assert await no_accounting.find("recovery:no-such-run:0") is None
    assert {n.name for n in await no_accounting.nodes()} >= set(slurm_cluster.nodes)
