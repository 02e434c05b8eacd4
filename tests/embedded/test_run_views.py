"""Finding and following runs on the real dev server and local scheduler: `list`'s filters,
`logs -f` across a restart, `status --watch`, the signals' `--json`, and the connection flags."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from recovery.client import runs
from recovery.client.format import when
from recovery.client.submit import build_spec
from recovery.worker.devserver import DevServer, temporal_binary
from recovery.workflows import search_attributes
from recovery.workflows.models import RunSpec, RunStatus
from tests.embedded.conftest import Embedded, free_port, wait_for
from tests.embedded.test_cli import one_line_error
from tests.embedded.test_recovery import FAST


def listed(embedded: Embedded, *options: str) -> list[dict[str, object]]:
    done = embedded.recovery("list", "--json", *options)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def ids(rows: list[dict[str, object]]) -> list[object]:
    return [row["id"] for row in rows]


async def start_as(client: Client, script: Path, owner: str) -> RunSpec:
    spec = build_spec(str(script), [], "local", "default", None, None, script.parent)
    spec.owner = owner
    spec.tuning = FAST
    await runs.start_run(client, spec)
    return spec


def popen(embedded: Embedded, *args: str, hears_ctrl_c: bool = False) -> subprocess.Popen[str]:
    """The CLI, running while the test goes on (a follower, a watcher). `hears_ctrl_c`: SIGINT as
    from a terminal, whatever the test run inherited (one started in the background by a
    non-interactive shell ignores SIGINT, and its children would too: POSIX)."""
    return subprocess.Popen(
        [sys.executable, "-m", "recovery.worker", *args],
        env=embedded.env,
        cwd=embedded.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint if hears_ctrl_c else None,  # one signal call in the child: fork-safe
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def submit(embedded: Embedded, script: Path, *options: str) -> str:
    done = embedded.recovery("submit", "--json", *options, str(script), cwd=script.parent)
    assert done.returncode == 0, done.stderr
    run_id: str = json.loads(done.stdout)["run"]
    return run_id


def gated_script(embedded: Embedded, name: str, **fault: object) -> tuple[Path, Path]:
    """A job that starts training only once its gate file exists: the test's followers are
    reading before anything happens, however slowly the machine starts them."""
    script = embedded.job_script(name, **fault)  # type: ignore[arg-type]
    gate = script.parent / "go"
    text = script.read_text().replace("exec ", f'while [ ! -e "{gate}" ]; do sleep 0.1; done\nexec ', 1)
    script.write_text(text)
    return script, gate


@pytest.fixture
def worker(embedded: Embedded) -> Iterator[None]:
    embedded.start_worker()
    yield
    embedded.stop_workers()


def state_of(embedded: Embedded, run_id: str) -> object:
    done = embedded.recovery("status", run_id, "--json")
    return json.loads(done.stdout)["run"]["state"] if done.returncode == 0 else None


# --- list ------------------------------------------------------------------------------------


@pytest.mark.timeout(180)
async def test_list_filters_by_state_owner_job_start_and_limit(
    embedded: Embedded, client: Client, worker: None
) -> None:
    owner = f"owner-{uuid.uuid4().hex[:6]}"
    quick = await start_as(client, embedded.job_script("quick", steps=3), owner)
    slow = await start_as(client, embedded.job_script("slow", steps=2000), owner)
    other = await start_as(client, embedded.job_script("other", steps=3), f"not-{owner}")
    assert (await runs.wait_result(client, quick.run_id)) is not None
    assert (await runs.wait_result(client, other.run_id)) is not None
    assert wait_for(lambda: state_of(embedded, slow.run_id) == "running", timeout=60)
    slow_job = (await runs.get_status(client, slow.run_id)).attempts[0].job_id

    assert set(ids(listed(embedded, "--owner", owner))) == {quick.run_id, slow.run_id}
    assert ids(listed(embedded, "--owner", owner, "--state", "completed")) == [quick.run_id]
    assert ids(listed(embedded, "--owner", owner, "--state", "running")) == [slow.run_id]
    assert set(ids(listed(embedded, "--owner", owner, "--state", "running,completed"))) == {
        quick.run_id,
        slow.run_id,
    }
    assert ids(listed(embedded, "--owner", owner, "--state", "gave_up")) == []
    assert ids(listed(embedded, "--job", slow_job)) == [slow.run_id]
    assert ids(listed(embedded, "--owner", owner, "--limit", "1")) == [slow.run_id]  # open runs first
    assert set(ids(listed(embedded, "--owner", owner, "--since", "1h"))) == {quick.run_id, slow.run_id}
    time.sleep(2.5)
    assert ids(listed(embedded, "--owner", owner, "--since", "2s")) == []
    assert other.run_id in ids(listed(embedded, "--state", "completed"))

    table = embedded.recovery("list", "--owner", owner)
    assert table.returncode == 0, table.stderr
    head, *rows = table.stdout.splitlines()
    assert head.split()[:4] == ["RUN", "NAME", "STATE", "STARTED"]
    assert len(rows) == 2 and all(row.rstrip().endswith(owner) for row in rows)
    started = when(slow.submitted_at)  # in the zone both this test and the CLI read from TZ
    assert any(started in row for row in rows if row.startswith(slow.run_id))

    cancel = embedded.recovery("cancel", slow.run_id, "--kill-job")
    assert cancel.returncode == 0, cancel.stderr


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--state", "runing"], "unknown state 'runing'"),
        (["--since", "yesterday"], "--since: expected a duration"),
        (["--limit", "0"], "--limit '0': expected at least 1"),
        (["--owner", 'x" OR "1"="1'], "quotes"),
    ],
)
def test_bad_list_filters_are_one_line(embedded: Embedded, options: list[str], words: str) -> None:
    assert words in one_line_error(embedded.recovery("list", *options))


@pytest.mark.parametrize("command", [["logs"], ["logs", "-f"], ["status", "--watch"]])
def test_following_an_unknown_run_is_one_line(embedded: Embedded, command: list[str]) -> None:
    line = one_line_error(embedded.recovery(*command, "no-such-run-42"))
    assert "no run 'no-such-run-42'" in line


# --- logs ------------------------------------------------------------------------------------


@pytest.mark.timeout(180)
async def test_logs_follow_the_run_across_its_restart(embedded: Embedded, client: Client, worker: None) -> None:
    embedded.forget_node_history()  # its restart excludes a node: earlier suspects would starve it
    script, gate = gated_script(embedded, "logs", fault_rank=1, steps=12, fault_step=7)
    run_id = submit(embedded, script)
    follower = popen(embedded, "logs", "-f", run_id)
    assert follower.stderr is not None
    assert follower.stderr.readline().startswith("==> attempt #0: job")  # reading the first attempt
    gate.touch()
    out, err = follower.communicate(timeout=150)
    assert follower.returncode == 0, err
    status = await runs.wait_result(client, run_id)
    assert status is not None and [a.index for a in status.attempts] == [0, 1]
    output = Path(status.attempts[0].output_path or "")
    assert status.attempts[1].output_path == str(output)  # requeued: the same file, appended

    # Everything the job wrote, through the failure and into the successor, in order:
    assert out == output.read_text()
    assert "GPU has fallen off the bus" in out and "resumed from checkpoint" in out
    assert out.count("training done at step 12") == 2
    assert "==> attempt #1: job" in err
    assert f"run {run_id} ended: completed" in err

    first, second = (embedded.recovery("logs", run_id, "--attempt", n) for n in ("0", "1"))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout + second.stdout == out
    assert "fallen off the bus" in first.stdout and "resumed" not in first.stdout
    assert "resumed from checkpoint" in second.stdout and "fallen off" not in second.stdout
    assert embedded.recovery("logs", run_id).stdout == second.stdout  # the latest by default
    assert "has no attempt #7 (it has #0 to #1)" in one_line_error(embedded.recovery("logs", run_id, "--attempt", "7"))


@pytest.mark.timeout(240)
async def test_logs_follow_outlasts_a_worker_killed_mid_run(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    script, gate = gated_script(embedded, "logs-kill", fault_rank=1, steps=12, fault_step=7)
    run_id = submit(embedded, script)
    follower = popen(embedded, "logs", "-f", run_id)
    assert follower.stderr is not None
    assert follower.stderr.readline().startswith("==> attempt #0: job")
    for worker in embedded.workers:
        worker.kill()  # SIGKILL: the run waits in Temporal; the follower keeps reading the file
    embedded.stop_workers()
    gate.touch()
    notes = iter(follower.stderr.readline, "")
    assert any(line.startswith(f"run {run_id} does not answer now") for line in notes)
    embedded.start_worker()
    try:
        out, err = follower.communicate(timeout=180)
        assert follower.returncode == 0, err
        status = await runs.wait_result(client, run_id)
        assert status is not None and len(status.attempts) == 2
        assert out == Path(status.attempts[0].output_path or "").read_text()
        assert "==> attempt #1: job" in err
    finally:
        embedded.stop_workers()


@pytest.mark.timeout(180)
def test_logs_follow_exits_1_when_the_run_does_not_complete(embedded: Embedded, worker: None) -> None:
    run_id = submit(embedded, embedded.job_script("logs-cancel", steps=2000))
    follower = popen(embedded, "logs", "--follow", run_id)
    assert wait_for(lambda: state_of(embedded, run_id) == "running", timeout=60)
    assert embedded.recovery("cancel", run_id, "--kill-job").returncode == 0
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 1
    assert "recovery-progress step=1 " in out
    assert f"run {run_id} ended: cancelled" in err


# --- status --watch --------------------------------------------------------------------------


@pytest.mark.timeout(180)
async def test_status_watch_redraws_until_the_run_ends(embedded: Embedded, client: Client, worker: None) -> None:
    script, gate = gated_script(embedded, "watch", fault_rank=1, steps=12, fault_step=4)
    run_id = submit(embedded, script)
    as_json = popen(embedded, "status", run_id, "--watch", "--json")
    as_text = popen(embedded, "status", run_id, "--watch")
    assert as_json.stdout is not None and as_text.stdout is not None
    first = as_json.stdout.readline()
    text = as_text.stdout.readline()  # both watchers have drawn the first attempt
    gate.touch()
    out, err = as_json.communicate(timeout=150)
    out = first + out
    assert as_json.returncode == 0, err
    views = [RunStatus.model_validate_json(line) for line in out.splitlines()]
    assert len(views) >= 3 and len(set(out.splitlines())) == len(views)  # one line per change
    assert (views[0].run.state.value, len(views[0].attempts)) == ("running", 1)
    assert (views[-1].run.state.value, len(views[-1].attempts)) == ("completed", 2)
    assert [len(v.attempts) for v in views] == sorted(len(v.attempts) for v in views)
    assert any(v.symptoms and not v.run.state.finished for v in views)  # seen while recovering
    assert views[-1] == await runs.get_status(client, run_id)

    rest, err = as_text.communicate(timeout=60)
    text += rest
    assert as_text.returncode == 0, err
    assert "\x1b[" not in text  # not a terminal: appended, not redrawn
    drawn = text.split("\n\nrun ")
    assert len(drawn) >= 3
    assert drawn[-1].split("\n", 1)[0].endswith("state completed")


@pytest.mark.timeout(120)
def test_ctrl_c_ends_a_watch_cleanly(embedded: Embedded, worker: None) -> None:
    run_id = submit(embedded, embedded.job_script("watch-int", steps=2000))
    watcher = popen(embedded, "status", run_id, "--watch", "--json", hears_ctrl_c=True)
    try:
        assert watcher.stdout is not None
        first = RunStatus.model_validate_json(watcher.stdout.readline())
        assert first.run.id == run_id
        watcher.send_signal(signal.SIGINT)
        try:
            _, err = watcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.kill()
            _, err = watcher.communicate()
            raise AssertionError(f"the watch outlived Ctrl-C by 30 s; its stderr: {err!r}") from None
        assert watcher.returncode == 0, err
    finally:
        # Whatever happened above, the run's 2,000-step job must not hold its nodes into the
        # next tests (once, a watch that missed its Ctrl-C left it running, and three later
        # tests found their fault node taken).
        cancelled = embedded.recovery("cancel", run_id, "--kill-job")
    assert cancelled.returncode == 0, cancelled.stderr


# --- signals with --json ---------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_pause_resume_cancel_print_their_result_as_json(embedded: Embedded, worker: None) -> None:
    run_id = submit(embedded, embedded.job_script("signals", steps=2000))
    expected = {"run": run_id, "workflow_id": run_id, "signalled": True}
    for action, state in (("pause", "paused"), ("resume", "running")):
        done = embedded.recovery(action, run_id, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {**expected, "action": action}
        assert wait_for(lambda state=state: run_id in ids(listed(embedded, "--state", state)), timeout=30)

    done = embedded.recovery("cancel", run_id, "--kill-job", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {**expected, "action": "cancel", "kill_job": True}
    assert wait_for(lambda: run_id in ids(listed(embedded, "--state", "cancelled")), timeout=30)

    again = embedded.recovery("pause", run_id, "--json")
    assert "has already ended" in one_line_error(again)  # nothing on stdout, not even JSON


# --- connection flags ------------------------------------------------------------------------


def test_address_flag_beats_the_environment(embedded: Embedded) -> None:
    right = embedded.server.address
    line = one_line_error(embedded.recovery("list", "--json", "--address", "127.0.0.1:1"))
    assert "cannot reach Temporal at 127.0.0.1:1" in line
    for argv in (["--address", right, "list", "--json"], ["list", "--json", "--address", right]):
        done = embedded.recovery(*argv, RECOVERY_TEMPORAL_ADDRESS="127.0.0.1:1")
        assert done.returncode == 0, done.stderr
        json.loads(done.stdout)


def test_namespace_flag_beats_the_environment(embedded: Embedded) -> None:
    line = one_line_error(embedded.recovery("list", "--namespace", "no-such-namespace"))
    assert "namespace 'no-such-namespace' does not exist" in line
    done = embedded.recovery("--namespace", "default", "list", "--json", RECOVERY_NAMESPACE="no-such-namespace")
    assert done.returncode == 0, done.stderr


@pytest.mark.timeout(180)
async def test_task_queue_flag_reaches_the_worker_of_that_queue(embedded: Embedded, client: Client) -> None:
    queue = f"other-{uuid.uuid4().hex[:6]}"
    embedded.start_worker("--task-queue", queue)  # the environment names another queue
    try:
        run_id = submit(embedded, embedded.job_script("queue", steps=3), "--task-queue", queue)
        status = await runs.wait_result(client, run_id)
        assert status is not None and status.run.state == "completed"
        described = await client.get_workflow_handle(run_id).describe()
        assert described.task_queue == queue
    finally:
        embedded.stop_workers()


# --- upgrading the embedded server -----------------------------------------------------------


@pytest.mark.timeout(180)
def test_dev_server_start_registers_an_attribute_its_database_lacks(temporal_bin: str, tmp_path: Path) -> None:
    """start-dev's --search-attribute registers only in a new database: one made before
    RecoveryOwner existed must get it from `dev-server start` all the same."""
    server = DevServer(tmp_path, f"127.0.0.1:{free_port()}", free_port())
    command = server.command()
    owner = command.index("RecoveryOwner=Keyword")
    older = command[: owner - 1] + command[owner + 1 :]  # without `--search-attribute RecoveryOwner=...`
    server.dir.mkdir(parents=True)
    old = subprocess.Popen(older, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert wait_for(lambda: "RecoveryState" in registered(server), timeout=60)
        assert "RecoveryOwner" not in registered(server)
    finally:
        old.terminate()
        old.wait(timeout=30)
    assert server.start(timeout=60)
    try:
        assert registered(server) == search_attributes.ALL
    finally:
        server.stop()


def registered(server: DevServer) -> dict[str, str]:
    done = subprocess.run(
        [temporal_binary(), "operator", "search-attribute", "list", "--address", server.address],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    rows = (line.split() for line in done.stdout.splitlines())
    return {row[0]: row[1] for row in rows if len(row) == 2 and row[0].startswith("Recovery")}
