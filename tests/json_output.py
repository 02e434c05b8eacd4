"""Every `recovery` command that takes `--json`, and the check that its stdout is JSON only.

The list comes from the real argument parser, so a command that gains `--json` later fails the
scheduler tests (tests/embedded/test_json_output.py, tests/integration/test_json_output.py)
until they run it too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from recovery.worker.cli import build_parser
from tests.embedded.conftest import free_port


def json_commands() -> set[tuple[str, ...]]:
    """Command paths (("submit",), ("cluster", "status"), ...) whose parser has --json."""
    found: set[tuple[str, ...]] = set()

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if "--json" in action.option_strings:
                found.add(path)
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


def json_documents(command: tuple[str, ...], stdout: str) -> list[Any]:
    """The JSON documents on stdout: one document, or one per line (`diagnose`). Anything
    else on stdout (a log line, a banner) fails, naming the command and the line."""
    assert stdout.strip(), f"recovery {' '.join(command)} --json printed nothing on stdout"
    try:
        return [json.loads(stdout)]
    except json.JSONDecodeError:
        pass
    documents: list[Any] = []
    for line in stdout.splitlines():
        try:
            documents.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"recovery {' '.join(command)} --json: not JSON on stdout: {line!r}") from None
    return documents


Answer = Any  # one JSON document, or the list of them when a command prints one a line
Recovery = Callable[..., subprocess.CompletedProcess[str]]


@dataclasses.dataclass(frozen=True)
class Case:
    """One run of a command with --json: the command, its arguments (without --json), what its
    answer must show, the exit statuses it may end with, and environment overrides (a home of the
    test's own)."""

    command: tuple[str, ...]
    args: tuple[str, ...]
    shows: Callable[[Answer], bool]
    codes: tuple[int, ...] = (0,)
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    timeout: float = 60


def run_cases(recovery: Recovery, cases: Sequence[Case], ran_before: Iterable[tuple[str, ...]] = ()) -> None:
    """Run each case in order and check its stdout is JSON only and shows what it must. The
    cases, with the commands the test ran itself, must cover every --json command: one that gains
    --json without a case here fails."""
    assert {case.command for case in cases} | set(ran_before) == json_commands()
    for case in cases:
        argv = (*case.command, *case.args)
        done = recovery(*argv, "--json", timeout=case.timeout, **case.env)
        said = f"recovery {' '.join(argv)} --json"
        assert done.returncode in case.codes, f"{said}: exit {done.returncode}: {done.stderr}"
        documents = json_documents(case.command, done.stdout)
        answer = documents[0] if len(documents) == 1 else documents
        assert case.shows(answer), f"{said}: unexpected answer {answer!r}"


@contextmanager
def private_home(recovery: Recovery) -> Iterator[dict[str, str]]:
    """A RECOVERY_HOME and dev server address of the test's own, where `dev-server start|stop`
    and `cluster start|stop` can run without stopping what the session's other tests use.
    Whatever a failed test left running there is stopped on the way out."""
    home = tempfile.mkdtemp(prefix="rh-j-", dir="/tmp")  # short: the cluster's unix socket lives here
    env = {
        "RECOVERY_HOME": home,
        "RECOVERY_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "RECOVERY_TEMPORAL_UI_PORT": str(free_port()),
    }
    try:
        yield env
    finally:
        recovery("cluster", "stop", **env)
        recovery("dev-server", "stop", **env)
        shutil.rmtree(home, ignore_errors=True)


def private_home_cases(env: Mapping[str, str], on_cluster: Sequence[Case] = ()) -> list[Case]:
    """`dev-server start` and `stop`, `cluster start` and `stop`, each really starting or
    stopping something, in the home `private_home` made; `on_cluster` runs while its cluster does."""
    address = env["RECOVERY_TEMPORAL_ADDRESS"]
    started = Case(("dev-server", "start"), (), lambda a: a["started"] is True and a["address"] == address, env=env)
    return [
        dataclasses.replace(started, timeout=120),  # a new dev server and its database
        Case(("dev-server", "stop"), (), lambda a: a == {"stopped": True}, env=env),
        Case(("cluster", "start"), ("--nodes", "2"), lambda a: a["started"] is True and a["nodes"] == 2, env=env),
        *on_cluster,
        Case(("cluster", "stop"), (), lambda a: a == {"stopped": True}, env=env),
    ]


def node_cases(free: Sequence[str], env: Mapping[str, str] | None = None) -> list[Case]:
    """`cluster node-down` on one free node and `node-drain` on another, then `node-up` on both:
    the cluster ends as it began."""
    down, drained = free[:2]
    extra = dict(env or {})

    def node(command: str, name: str, state: str) -> Case:
        return Case(("cluster", command), (name,), lambda n: bool(n["name"] == name and n["state"] == state), env=extra)

    return [
        node("node-down", down, "down"),
        node("node-drain", drained, "drained"),
        node("node-up", down, "idle"),
        node("node-up", drained, "idle"),
    ]


def run_cases_on(run: str, log: Path, dev_server: str) -> list[Case]:
    """The cases both schedulers run alike: on the test's own run (open, with one failure on
    record), on a log file, and on the running dev server at `dev_server` (`start`: nothing to
    start). `cancel_case` ends the run afterwards."""
    return [
        Case(("list",), (), lambda rows: run in [r["id"] for r in rows]),
        Case(("pause",), (run,), lambda a: a["action"] == "pause" and a["signalled"] is True),
        Case(("resume",), (run,), lambda a: a["action"] == "resume" and a["run"] == run),
        Case(("diagnose",), (str(log),), lambda d: d["symptom"] == "crash"),
        Case(("signatures",), (), lambda rows: "cuda-illegal-address" in [r["id"] for r in rows]),
        Case(("policy", "show"), ("default",), lambda p: p["name"] == "default"),
        Case(("whatif",), ("--policy", "default", "--run", run), lambda w: w["failures"] >= 1),
        Case(("upgrade-check",), (), lambda u: u["checked"] >= 1 and u["failed"] == [], timeout=180),
        Case(("dev-server", "status"), (), lambda s: s["serving"] is True and s["address"] == dev_server),
        Case(("dev-server", "start"), (), lambda a: a["started"] is False and a["address"] == dev_server),
    ]


def cancel_case(run: str) -> Case:
    """Stop recovering the test's run and kill its job: the last case."""
    return Case(("cancel",), ("--kill-job", run), lambda a: a["action"] == "cancel" and a["kill_job"] is True)


HELD_PIPELINE = """\
name: held for an operator
stages:
  - name: bad
    script: bad.sbatch
  - name: held
    script: held.sbatch
    needs: [bad]
    on_dependency_failure: hold
"""
# A user's bug: not retried, so the stage gives up at once and the one that needs it is held.
BAD_STAGE = "#!/bin/bash\n#SBATCH --nodes=1\necho \"ModuleNotFoundError: No module named 'flash_attn'\" >&2\nexit 1\n"


def held_pipeline(recovery: Recovery, workdir: Path, *submit_options: str, timeout: float = 120) -> str:
    """A pipeline with a stage held for an operator, so that `release` has one to let go: its
    id, once that stage is held."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "bad.sbatch").write_text(BAD_STAGE)
    (workdir / "held.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\ntrue\n")
    (workdir / "pipeline.yaml").write_text(HELD_PIPELINE)
    done = recovery("submit", *submit_options, "--json", str(workdir / "pipeline.yaml"))
    assert done.returncode == 0, done.stderr
    pipeline: str = json.loads(done.stdout)["pipeline"]

    def held() -> bool:
        shown = recovery("status", pipeline, "--json")
        return shown.returncode == 0 and json.loads(shown.stdout)["stages"][1]["state"] == "held"

    deadline = time.monotonic() + timeout
    while not held():
        assert time.monotonic() < deadline, recovery("status", pipeline).stdout
        time.sleep(0.5)
    return pipeline


def release_case(pipeline: str) -> Case:
    """Let the held stage of `held_pipeline` run."""
    return Case(("release",), (pipeline,), lambda a: a["pipeline"] == pipeline and a["stages"] == ["held"])
