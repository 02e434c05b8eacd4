"""deploy/: the systemd units, the compose file, the example config and env file.

`systemd-analyze` (Debian's `systemd`) and `docker-compose` (Debian's `docker-compose`) come from
`make test-deps`; without them these tests skip, and fail in CI. No Docker engine runs here, so
the compose file is validated with `docker-compose config`, never started. The units are verified,
not started (no systemd runs as PID 1 here); the dev server unit's command line is run as is.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from recovery import settings
from recovery.client.config import WorkerConfig, load_config
from recovery.worker.cli import build_parser
from recovery.worker.run_worker import log_reading
from recovery.workflows import search_attributes
from tests.conftest import BIN, binary, need

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
UNITS = DEPLOY / "systemd"
COMPOSE = DEPLOY / "compose"
INSTALLED_BIN = "/opt/recovery/venv/bin/"  # where the units expect the venv


# --- systemd units --------------------------------------------------------------------------


def read_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> values (a key may repeat), with `\\` continuations joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def one(unit: dict[str, dict[str, list[str]]], section: str, key: str) -> str:
    values = unit[section][key]
    assert len(values) == 1, f"{key} appears {len(values)} times"
    return values[0]


def exec_start(name: str) -> list[str]:
    return shlex.split(one(read_unit(UNITS / name), "Service", "ExecStart"))


@pytest.fixture(scope="module")
def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    need(found is not None, "systemd-analyze (Debian's `systemd`; make test-deps)")
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("unit", "program"), [("recovery-worker.service", "recovery"), ("recovery-dev-server.service", "temporal")]
)
def test_unit_verifies(unit: str, program: str, systemd_analyze: str, tmp_path: Path) -> None:
    # verify insists that ExecStart's binary exists: point the copy at this venv's, leave the
    # shipped unit alone. It does not look up User= (no `recovery` user is needed here).
    shipped = (UNITS / unit).read_text()
    assert INSTALLED_BIN + program in shipped
    copy = tmp_path / unit
    copy.write_text(shipped.replace(INSTALLED_BIN + program, binary(program)))
    done = subprocess.run(
        [systemd_analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    # verify exits 0 on unknown keys and bad values too, and only says so: any output is a failure.
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), done.stdout + done.stderr


def test_worker_unit_runs_the_worker_gracefully_and_hardened() -> None:
    unit = read_unit(UNITS / "recovery-worker.service")
    service = {key: values[-1] for key, values in unit["Service"].items()}
    argv = exec_start("recovery-worker.service")
    assert argv[0] == INSTALLED_BIN + "recovery"
    args = build_parser().parse_args(argv[1:])  # only flags the CLI has
    assert args.command == "worker" and args.config == "/etc/recovery/worker.yaml"
    assert service["EnvironmentFile"].lstrip("-") == "/etc/recovery/recovery.env"
    assert service["User"] == "recovery" and service["Group"] == "recovery"
    assert service["Restart"] == "on-failure"
    assert service["KillSignal"] == "SIGTERM" and int(service["TimeoutStopSec"]) >= 30
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"
    assert service["PrivateTmp"] == "yes"
    # Attempt logs often live in home directories: readable, never hidden.
    assert service.get("ProtectHome", "no") in ("no", "read-only")
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_dev_server_unit_registers_exactly_the_search_attributes() -> None:
    argv = exec_start("recovery-dev-server.service")
    assert argv[:4] == [INSTALLED_BIN + "temporal", "server", "start-dev", "--db-filename"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--db-filename"] == "/var/lib/recovery/temporal.db"
    assert (flags["--ip"], flags["--port"], flags["--ui-port"]) == ("127.0.0.1", "7233", "8233")
    pairs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--search-attribute"]
    registered = dict(pair.split("=", 1) for pair in pairs)
    assert len(pairs) == len(registered) and registered == search_attributes.ALL


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def temporal_cli(*args: str, address: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    cmd = [binary("temporal"), *args, "--address", address]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def listed_attributes(address: str, namespace: str) -> dict[str, str]:
    done = temporal_cli("operator", "search-attribute", "list", "--namespace", namespace, address=address)
    assert done.returncode == 0, done.stderr
    rows = (line.split() for line in done.stdout.splitlines())
    return {row[0]: row[1] for row in rows if len(row) == 2 and row[0].startswith("Recovery")}


@pytest.fixture(scope="module")
def unit_dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dev server unit's own command line, on a private database and free ports."""
    argv = exec_start("recovery-dev-server.service")
    home = tmp_path_factory.mktemp("devserver")
    argv[0] = binary("temporal")
    port = str(free_port())
    replace = {
        "--db-filename": str(home / "temporal.db"),
        "--port": port,
        "--ui-port": str(free_port()),
    }
    assert set(replace) <= set(argv)
    argv = [replace.get(argv[i - 1], arg) if i else arg for i, arg in enumerate(argv)]
    address = f"127.0.0.1:{port}"
    log = home / "dev-server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 60
        while temporal_cli("operator", "cluster", "health", address=address, timeout=10).returncode != 0:
            if proc.poll() is not None:
                pytest.fail(f"the dev server unit's command exited: {log.read_text()[-2000:]}")
            assert time.monotonic() < deadline, "the dev server did not become healthy in 60 s"
            time.sleep(0.3)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.temporal
@pytest.mark.slow
def test_dev_server_unit_command_serves_the_search_attributes(unit_dev_server: str) -> None:
    assert listed_attributes(unit_dev_server, "default") == search_attributes.ALL


# --- compose --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docker_compose() -> str:
    found = shutil.which("docker-compose")
    need(found is not None, "docker-compose (Debian's `docker-compose`; make test-deps)")
    assert found is not None
    return found


def compose_env() -> dict[str, str]:
    """The environment without the variables the file reads, so its own defaults are checked."""
    ours = ("POSTGRES_", "TEMPORAL_", "RECOVERY_", "COMPOSE_", "DOCKER_")
    return {k: v for k, v in os.environ.items() if not k.startswith(ours)}


def compose(docker_compose: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [docker_compose, "-f", str(COMPOSE / "docker-compose.yml"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=compose_env(), cwd=COMPOSE, check=False)


def test_compose_file_is_valid(docker_compose: str) -> None:
    done = compose(docker_compose, "config", "-q")
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_compose_file_has_temporal_postgres_ui_setup_and_worker(docker_compose: str) -> None:
    done = compose(docker_compose, "config")
    assert done.returncode == 0, done.stderr
    resolved: dict[str, Any] = yaml.safe_load(done.stdout)
    services = resolved["services"]
    assert set(services) == {
        "postgresql",
        "temporal-schema",
        "temporal",
        "temporal-setup",
        "temporal-ui",
        "recovery-worker",
    }
    assert services["temporal"]["image"].startswith("temporalio/server:")
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    for one_shot in ("temporal-schema", "temporal-setup"):
        assert services[one_shot]["image"].startswith("temporalio/admin-tools:")
    assert services["temporal"]["depends_on"]["temporal-schema"]["condition"] == "service_completed_successfully"
    worker = services["recovery-worker"]
    assert worker["depends_on"]["temporal-setup"]["condition"] == "service_completed_successfully"
    assert worker["environment"]["RECOVERY_TEMPORAL_ADDRESS"] == "temporal:7233"
    assert (Path(worker["build"]["context"]) / worker["build"]["dockerfile"]).is_file()
    args = build_parser().parse_args(worker["command"])
    assert args.command == "worker" and args.config == "/etc/recovery/worker.yaml"
    # Every file of this repository the services mount exists (config does not check).
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0] if isinstance(volume, str) else volume.get("source", "")
            if source.startswith(str(REPO)):
                assert Path(source).exists(), source


def test_dockerfile_copies_what_the_package_needs() -> None:
    sources = [
        part
        for line in (COMPOSE / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
        for part in line.split()[1:-1]
    ]
    assert {"pyproject.toml", "workflows", "activities", "worker"} <= set(sources)
    for source in sources:
        assert (REPO / source).exists(), source


def setup_script_attributes() -> dict[str, str]:
    text = (COMPOSE / "setup-temporal.sh").read_text()
    block = re.search(r'^ATTRIBUTES="\n(.*?)^"', text, re.MULTILINE | re.DOTALL)
    assert block is not None, "ATTRIBUTES block not found in setup-temporal.sh"
    return dict(line.split("=", 1) for line in block.group(1).split())


def test_compose_setup_registers_exactly_the_search_attributes() -> None:
    assert setup_script_attributes() == search_attributes.ALL


@pytest.mark.temporal
@pytest.mark.slow
def test_compose_setup_script_prepares_a_namespace_and_can_run_again(unit_dev_server: str) -> None:
    sh = shutil.which("sh")
    assert sh is not None
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # the venv's `temporal`
        "TEMPORAL_ADDRESS": unit_dev_server,
        "RECOVERY_NAMESPACE": "recovery-setup-test",
        "RECOVERY_RETENTION": "3d",
    }
    for _ in range(2):  # the second run finds everything in place
        done = subprocess.run(
            [sh, str(COMPOSE / "setup-temporal.sh")], capture_output=True, text=True, timeout=180, env=env, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert "search attribute RecoveryState exists" in done.stdout
    assert listed_attributes(unit_dev_server, "recovery-setup-test") == search_attributes.ALL
    described = temporal_cli(
        "operator", "namespace", "describe", "--namespace", "recovery-setup-test", address=unit_dev_server
    )
    assert re.search(r"RetentionTtl\s+72h0m0s", described.stdout), described.stdout


# --- example config and environment ---------------------------------------------------------


def test_example_worker_config_loads_and_shows_every_key() -> None:
    path = DEPLOY / "worker.yaml"
    config = load_config(str(path))
    log_reading(config)  # signature files and progress patterns are checked at start-up too
    assert config.scheduler == "slurm" and config.effective_mode == "observe"
    missing_keys(WorkerConfig, yaml.safe_load(path.read_text()))


def missing_keys(model: type[BaseModel], shown: dict[str, Any], where: str = "") -> None:
    """Every key of the config, nested sections included, is written out in the example."""
    assert set(shown) == set(model.model_fields), where or "top level"
    for name, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            missing_keys(info.annotation, shown[name], f"{where}{name}.")


def test_example_env_file() -> None:
    known = {
        "RECOVERY_TEMPORAL_ADDRESS",
        "RECOVERY_TEMPORAL_UI_PORT",
        "RECOVERY_NAMESPACE",
        "RECOVERY_TASK_QUEUE",
        "RECOVERY_HOME",
        "RECOVERY_CONFIG",
        "SLURM_CONF",
    }
    values = {}
    for line in (DEPLOY / "recovery.env").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep and re.fullmatch(r"[A-Z_]+", key) and key in known, line
            values[key] = value
    # The example matches the built-in defaults, which the dev server unit listens on.
    assert values["RECOVERY_TEMPORAL_ADDRESS"] == "127.0.0.1:7233"
    for key, default in (("RECOVERY_NAMESPACE", settings.namespace), ("RECOVERY_TASK_QUEUE", settings.task_queue)):
        saved = os.environ.pop(key, None)
        try:
            assert values[key] == default()
        finally:
            if saved is not None:
                os.environ[key] = saved
