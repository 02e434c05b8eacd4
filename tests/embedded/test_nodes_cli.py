"""`recovery nodes` on the real dev server: failures reported through the activity make a node
suspect, `recovery nodes --json` shows it, `recovery nodes clear` forgets it."""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from activities.node_history import NodeHistoryActivities
from activities.schedulers.local import LocalScheduler
from tests.embedded.conftest import Embedded, wait_for
from workflows.models import NodeFailure, NodeFailureReport, SuspectQuery


def nodes_json(embedded: Embedded, cluster: str) -> list[dict[str, Any]]:
    done = embedded.recovery("nodes", "--json", "--cluster", cluster)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def row(embedded: Embedded, cluster: str, node: str) -> dict[str, Any] | None:
    return next((r for r in nodes_json(embedded, cluster) if r["node"] == node), None)


async def test_reported_node_is_suspect_until_cleared(embedded: Embedded, client: Client) -> None:
    cluster = f"test-{uuid.uuid4().hex[:6]}"
    embedded.start_worker()
    try:
        activity_env = ActivityEnvironment(client)
        queue = embedded.env["RECOVERY_TASK_QUEUE"]
        activity_env.info = dataclasses.replace(ActivityEnvironment.default_info(), task_queue=queue)
        acts = NodeHistoryActivities(client, LocalScheduler())
        now = datetime.now(UTC)
        for run in ("run-a", "run-b"):
            failure = NodeFailure(
                node="node3", run_id=run, attempt_index=0, category="hardware", at=now, reason="Xid 79 on node3"
            )
            await activity_env.run(acts.report_failure, NodeFailureReport(cluster=cluster, failures=[failure]))

        assert wait_for(lambda: (r := row(embedded, cluster, "node3")) is not None and r["suspect"])
        shown = row(embedded, cluster, "node3")
        assert shown is not None
        assert shown["failures"] == 2 and sorted(shown["runs"]) == ["run-a", "run-b"]
        assert shown["last_failure_at"] and len(shown["history"]) == 2
        assert shown["history"][0]["reason"] == "Xid 79 on node3"
        ask = SuspectQuery(now=now + timedelta(seconds=1), cluster=cluster)
        assert await activity_env.run(acts.suspect_nodes, ask) == ["node3"]

        table = embedded.recovery("nodes", "--cluster", cluster)
        assert table.returncode == 0 and "node3" in table.stdout and "yes" in table.stdout

        cleared = embedded.recovery("nodes", "clear", "node3", "--cluster", cluster)
        assert cleared.returncode == 0, cleared.stderr
        assert "node3 cleared" in cleared.stdout
        assert wait_for(lambda: row(embedded, cluster, "node3") is None)
        assert await activity_env.run(acts.suspect_nodes, ask) == []
    finally:
        embedded.stop_workers()


def test_no_history_is_an_empty_list_and_clear_fails_in_one_line(embedded: Embedded) -> None:
    cluster = f"empty-{uuid.uuid4().hex[:6]}"
    assert nodes_json(embedded, cluster) == []
    done = embedded.recovery("nodes", "clear", "node1", "--cluster", cluster)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recovery: ") and "node1" in lines[0]
