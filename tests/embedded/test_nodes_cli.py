"""`recovery nodes` on the real dev server: failures reported through the activity make a node
suspect, `recovery nodes --json` shows it, `recovery nodes clear` forgets it."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from recovery.activities.node_history import NodeHistoryActivities
from recovery.activities.schedulers.local import LocalScheduler
from recovery.workflows.node_history import NodeHistory, history_id
from recovery.workflows.node_history.models import (
    NodeFailure,
    NodeFailureReport,
    NodeHistoryInput,
    NodeHistoryLimits,
    SuspectQuery,
)
from tests.embedded.conftest import Embedded, wait_for


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

        cleared = embedded.recovery("nodes", "clear", "node3", "--cluster", cluster, "--json")
        assert cleared.returncode == 0, cleared.stderr
        assert json.loads(cleared.stdout) == {"cluster": cluster, "node": "node3", "forgotten": 2}
        assert wait_for(lambda: row(embedded, cluster, "node3") is None)
        assert await activity_env.run(acts.suspect_nodes, ask) == []
    finally:
        embedded.stop_workers()


async def test_a_burst_of_reports_across_continue_as_new_loses_none(embedded: Embedded, client: Client) -> None:
    """Signals that arrive while the entity continues as new are carried into the next run."""
    cluster = f"burst-{uuid.uuid4().hex[:6]}"
    queue = embedded.env["RECOVERY_TASK_QUEUE"]
    now = datetime.now(UTC)
    start = NodeHistoryInput(cluster=cluster, limits=NodeHistoryLimits(history_events_limit=10))

    async def report(i: int) -> None:
        failure = NodeFailure(node=f"node{i % 4}", run_id=f"run-{i}", attempt_index=0, category="network", at=now)
        await client.start_workflow(
            NodeHistory.run,
            start,
            id=history_id(cluster),
            task_queue=queue,
            start_signal="record_failure",
            start_signal_args=[failure],
        )

    await report(0)
    first_run = (await client.get_workflow_handle(history_id(cluster)).describe()).run_id
    embedded.start_worker()
    try:
        await asyncio.gather(*(report(i) for i in range(1, 40)))
        assert wait_for(lambda: sum(r["failures"] for r in nodes_json(embedded, cluster)) == 40, timeout=60)
        first = await client.get_workflow_handle(history_id(cluster), run_id=first_run).describe()
        assert first.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
        assert all(r["suspect"] and r["failures"] == 10 for r in nodes_json(embedded, cluster))
    finally:
        embedded.stop_workers()


async def test_asking_history_no_worker_serves_fails_fast(embedded: Embedded, client: Client) -> None:
    """A run must not wait on node history nobody answers for: the activity gives up at once,
    without retries (the run then goes on without suspects)."""
    cluster, queue = f"nobody-{uuid.uuid4().hex[:6]}", f"nobody-{uuid.uuid4().hex[:6]}"
    now = datetime.now(UTC)
    failure = NodeFailure(node="node1", run_id="run-a", attempt_index=0, category="hardware", at=now)
    await client.start_workflow(
        NodeHistory.run,
        NodeHistoryInput(cluster=cluster),
        id=history_id(cluster),
        task_queue=queue,
        start_signal="record_failure",
        start_signal_args=[failure],
    )
    activity_env = ActivityEnvironment(client)
    activity_env.info = dataclasses.replace(
        ActivityEnvironment.default_info(), task_queue=queue, start_to_close_timeout=timedelta(seconds=2)
    )
    acts = NodeHistoryActivities(client, LocalScheduler())
    try:
        with pytest.raises(ApplicationError) as raised:
            # The bound is a hang guard: waiting out the update's own 60 s would trip it.
            asking = activity_env.run(acts.suspect_nodes, SuspectQuery(now=now, cluster=cluster))
            await asyncio.wait_for(asking, timeout=30)
    finally:
        await client.get_workflow_handle(history_id(cluster)).terminate("test over")
    assert raised.value.type == "NodeHistoryUnavailable" and raised.value.non_retryable


def test_no_history_is_an_empty_list_and_clear_fails_in_one_line(embedded: Embedded) -> None:
    cluster = f"empty-{uuid.uuid4().hex[:6]}"
    assert nodes_json(embedded, cluster) == []
    done = embedded.recovery("nodes", "clear", "node1", "--cluster", cluster)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recovery: ") and "node1" in lines[0]
