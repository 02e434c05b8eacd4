"""Notifications on restart and give-up: a real webhook server on loopback and a real command."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from recovery.workflows.policy import Notify, Policy
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec
from tests.workflow.test_training_run import running


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, object]]]]:
    received: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            received.append(json.loads(body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", received
    server.shutdown()


async def test_webhook_and_command_hear_of_restart_and_give_up(
    skipping_env: WorkflowEnvironment, webhook: tuple[str, list[dict[str, object]]], tmp_path: Path
) -> None:
    url, received = webhook
    out = tmp_path / "notified.jsonl"
    append = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read() + '\\n')"
    notify = Notify(webhook=url, command=[sys.executable, "-c", append])
    scheduler = ScriptedScheduler(["fail:node1", "fail:node2"])
    async with running(skipping_env, scheduler, make_spec(Policy(max_restarts=1, notify=notify))) as handle:
        status = await handle.result()
    assert status.run.state == "gave_up"
    for _ in range(50):  # the restart's notice is not awaited by the workflow
        if len(received) == 2:
            break
        import asyncio

        await asyncio.sleep(0.1)
    assert sorted(r["advice"]["operation"] for r in received) == ["give_up", "restart"]  # type: ignore[index]
    assert all(r["run_id"] == status.run.id for r in received)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["advice"]["operation"] for line in lines) == ["give_up", "restart"]


async def test_a_dead_receiver_does_not_change_the_outcome(skipping_env: WorkflowEnvironment) -> None:
    notify = Notify(webhook="http://127.0.0.1:9/nothing-listens", command=["/nonexistent/notifier"])
    scheduler = ScriptedScheduler(["fail:node1", "complete"])
    async with running(skipping_env, scheduler, make_spec(Policy(notify=notify))) as handle:
        status = await handle.result()
    assert status.run.state == "completed"
