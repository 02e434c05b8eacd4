"""Metrics and logs of a real worker: a run fails once and recovers, then the worker's Prometheus
endpoint shows our `recovery_*` series beside the SDK's, and its JSON log lines carry the run's
context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from recovery.client import runs
from tests.embedded.conftest import Embedded, free_port, wait_for
from tests.embedded.test_recovery import check_one_clean_recovery, start
from tests.prometheus import scrape, value


def log_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for raw in path.read_text(errors="replace").splitlines():
        if raw.startswith("{"):
            lines.append(json.loads(raw))
    return lines


@pytest.mark.timeout(180)
async def test_metrics_and_log_context_after_a_recovery(embedded: Embedded, client: Client, tmp_path: Path) -> None:
    embedded.stop_workers()  # a worker left by a failed test would share the counts
    port = free_port()
    config = tmp_path / "worker.yaml"
    config.write_text("metrics_interval: 1s\n")
    worker = embedded.start_worker("--metrics", f"127.0.0.1:{port}", "--config", str(config))
    log_file = embedded.home / f"worker-{len(embedded.workers) - 1}.log"
    spec = await start(client, embedded.job_script("metrics", fault_node="node2"))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_one_clean_recovery(status, "node2")
    category = status.diagnoses[0].category

    def completed_counted() -> bool:
        return value(scrape(port), "recovery_runs", state="completed") >= 1

    assert wait_for(completed_counted, timeout=20), "the runs gauge should count the completed run"
    got = scrape(port)
    assert any(name.startswith("temporal_") for name, _, _ in got), "the SDK's metrics are served too"
    assert {ls["state"] for n, ls, _ in got if n == "recovery_runs"} == {
        "pending",
        "running",
        "recovering",
        "paused",
        "completed",
        "gave_up",
        "cancelled",
    }
    assert value(got, "recovery_attempts_total", scheduler="local", how="submit") == 1
    assert value(got, "recovery_attempts_total", scheduler="local", how="requeue") == 1
    assert value(got, "recovery_symptoms_total", kind="crash", category=category) == 1
    assert value(got, "recovery_advice_total", operation="restart", mode="act") == 1
    resolved = {"operation": "restart", "status": "converged", "acted": "true"}
    assert value(got, "recovery_advice_resolved_total", **resolved) == 1
    for kind in ("requeue_hold", "set_excluded_nodes", "release"):
        assert value(got, "recovery_actions_total", kind=kind, changed="true") == 1, kind
    for latency in ("recovery_failure_to_advice_seconds", "recovery_failure_to_successor_seconds"):
        assert value(got, f"{latency}_count") == 1, latency
        assert value(got, f"{latency}_sum") > 0, latency
        assert value(got, f"{latency}_bucket", le="+Inf") == 1, latency
    assert value(got, "recovery_failure_to_advice_seconds_count", operation="restart") == 1
    assert value(got, "recovery_scheduler_errors_total") == 0

    embedded.stop_workers()
    assert worker.returncode == 0
    lines = log_lines(log_file)
    assert lines, "the worker logs JSON lines when not on a terminal"
    assert any(str(line.get("logger", "")).startswith("temporalio") for line in lines), "the SDK's lines too"
    mine = [line for line in lines if line.get("run_id") == spec.run_id]
    submitted = next(line for line in mine if line["event"] == "submitted")
    assert submitted["activity"] == "submit_attempt" and submitted["attempt"] == 0
    assert submitted["job_id"] == status.attempts[0].job_id
    advice = next(line for line in mine if line["event"] == "advice")
    assert advice["activity"] == "record_advice" and advice["attempt"] == 0
    assert advice["job_id"] == status.attempts[0].job_id
    actions = [line for line in mine if line["event"] == "action"]
    assert {a["activity"] for a in actions} == {"requeue_hold", "set_excluded_nodes", "release"}
    assert all(a["attempt"] == 0 and a["job_id"] == status.attempts[0].job_id for a in actions)
    for line in lines:
        if "activity" in line:
            assert {"run_id", "attempt", "job_id"} <= line.keys(), line
