"""Attribution providers: off, rules, and http against a real service on loopback that answers,
times out, and returns garbage. The run recovers in every case."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from recovery.client.config import AttributionConfig, WorkerConfig
from recovery.worker.run_worker import build_worker
from recovery.workflows.models import RunInput, RunStatus
from tests.fakes import ScriptedScheduler
from tests.workflow.conftest import make_spec

GOOD = {
    "category": "network",
    "retryable": True,
    "implicated": [{"node": "node3", "reason": "its IB port flapped (fabric manager)"}],
    "explanation": "IB link down on node3",
    "confidence": 0.9,
}


class Service:
    """A tiny attribution service whose behaviour each test chooses."""

    def __init__(self) -> None:
        self.mode = "good"
        self.requests: list[dict[str, object]] = []

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers["content-length"]))
        self.requests.append(json.loads(body))
        if self.mode == "slow":
            time.sleep(2)
        payload = json.dumps(GOOD).encode() if self.mode == "good" else b"<html>oops</html>"
        handler.send_response(200)
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


@pytest.fixture
def service() -> Iterator[tuple[Service, str]]:
    svc = Service()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            svc.answer(self)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield svc, f"http://127.0.0.1:{server.server_port}/attribute"
    server.shutdown()


async def run_with(client: Client, config: WorkerConfig) -> RunStatus:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    spec = make_spec()
    scheduler = ScriptedScheduler(["fail:node2", "complete"])
    async with build_worker(client, scheduler, config, task_queue=queue):
        result: RunStatus = await client.execute_workflow(
            "TrainingRun", RunInput(spec=spec), id=spec.run_id, task_queue=queue, result_type=RunStatus
        )
    return result


def http(url: str) -> WorkerConfig:
    return WorkerConfig(attribution=AttributionConfig(provider="http", url=url, timeout="1s"))  # type: ignore[arg-type]


async def test_http_answer_is_used(skipping_env: WorkflowEnvironment, service: tuple[Service, str]) -> None:
    svc, url = service
    status = await run_with(skipping_env.client, http(url))
    assert status.run.state == "completed"
    (diagnosis,) = status.diagnoses
    assert diagnosis.category == "network" and diagnosis.confidence == 0.9
    assert diagnosis.implicated_nodes == ["node3"] and diagnosis.provider.startswith("http")
    assert status.advice[0].excluded_nodes == ["node3"]
    (request,) = svc.requests
    assert request["observation"]["state"] == "FAILED" and request["symptom"]["kind"] == "crash"  # type: ignore[index]
    # The service is told every node, not only the failed run's (the built-in rules read those only).
    every = {n.name for n in await ScriptedScheduler([]).nodes()}
    assert {n["name"] for n in request["nodes"]} == every and len(every) > 1  # type: ignore[attr-defined, index]


@pytest.mark.parametrize(("mode", "why"), [("slow", "timed out"), ("garbage", "the answer is not a diagnosis")])
async def test_http_failure_falls_back_to_rules(
    skipping_env: WorkflowEnvironment, service: tuple[Service, str], mode: str, why: str
) -> None:
    svc, url = service
    svc.mode = mode
    status = await run_with(skipping_env.client, http(url))
    assert status.run.state == "completed"
    (diagnosis,) = status.diagnoses
    assert diagnosis.provider == f"rules (http failed: {why})"
    assert diagnosis.implicated_nodes == ["node2"]


async def test_http_service_down_falls_back(skipping_env: WorkflowEnvironment) -> None:
    status = await run_with(skipping_env.client, http("http://127.0.0.1:9/attribute"))
    assert status.run.state == "completed"
    assert status.diagnoses[0].provider.startswith("rules (http failed")


async def test_off_restarts_by_policy_and_excludes_nothing(skipping_env: WorkflowEnvironment) -> None:
    status = await run_with(skipping_env.client, WorkerConfig(attribution=AttributionConfig(provider="off")))
    assert status.run.state == "completed"
    assert status.diagnoses[0].provider == "off" and status.diagnoses[0].implicated == []
    assert status.advice[0].operation == "restart" and status.advice[0].excluded_nodes == []


def test_http_without_url_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="needs a url"):
        AttributionConfig(provider="http")
