from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.api.enums.v1 import EventType, IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RetryConfig
from temporalio.testing import WorkflowEnvironment

from recovery.workflows import search_attributes
from recovery.workflows.models import RunSpec, Tuning
from recovery.workflows.policy import Policy

KINDS = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "KeywordList": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
}


async def register_search_attributes(client: Client) -> None:
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={name: KINDS[kind] for name, kind in search_attributes.ALL.items()},
        )
    )


# One test server per module: a query the test server leaves unanswered stops its time skipping
# for good, and a fresh server keeps that from spreading to other modules' tests.
@pytest.fixture(scope="module")
async def skipping_env(test_server_bin: str) -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=test_server_bin,
        data_converter=pydantic_data_converter,
        # The SDK's default is 5 s: on a busy 2-core host the Java test server took longer once
        # (five tests of a module failed at setup in a run beside two other suites).
        test_server_startup_timeout=timedelta(seconds=60),
        # The SDK retries a dropped call for 10 s: once on CI a loaded host broke a connection to
        # the test server ("h2 protocol error") for longer. A minute of retries rides that out.
        retry_config=RetryConfig(max_elapsed_time_millis=60_000, max_retries=30),
    )
    await register_search_attributes(env.client)
    async with env:
        yield env


def make_spec(policy: Policy | None = None, nodes: int = 2, **tuning: float) -> RunSpec:
    run_id = f"test-{uuid.uuid4().hex[:8]}"
    return RunSpec(
        run_id=run_id,
        name="test",
        scheduler="local",  # the scripted scheduler stands in for the local one (WorkerConfig())
        script_path="/dev/null",
        script="#!/bin/bash\ntrue\n",
        nodes=nodes,
        workdir="/tmp",
        owner="tester",
        policy=policy or Policy(),
        submitted_at=datetime.now(UTC),
        tuning=Tuning(poll_seconds=0.02, action_timeout_seconds=5, verify_timeout_seconds=5, **tuning),
    )


async def at_rest(client: Client, workflow_id: str, timeout: float = 10) -> None:
    """Wait until the latest run's last workflow task has completed (nothing left to process).

    The real server answers a query only after the signals sent before it are processed; the
    time-skipping test server may answer from older state, so tests that query right after a
    signal wait for this first (a fidelity gap of the test server, not a product wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        description = await client.get_workflow_handle(workflow_id).describe()
        latest = client.get_workflow_handle(workflow_id, run_id=description.run_id)
        events = (await latest.fetch_history()).events
        done = events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        if description.status == WorkflowExecutionStatus.RUNNING and done:
            return
        await asyncio.sleep(0.05)
