"""A recovery waits for as few workflow tasks as it can (patches `fewer-round-trips`,
`suspects-in-diagnose`, `diagnose-in-task`): on a real dev server and worker, the run's history
shows no activity for the suspects (diagnose asks them), diagnose as a local activity of the task
that found the failure, the advice recorded from that same task, the node-history report scheduled
with the advice, and the verification scheduled with the release."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from recovery.client import runs
from recovery.client.history_failures import local_activity_type
from tests.embedded.conftest import Embedded
from tests.embedded.test_recovery import check_one_clean_recovery, start

SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED


def local_activities(events: list[HistoryEvent]) -> dict[str, int]:
    """Each local activity's type (from its marker) and the workflow task that ran it."""
    found: dict[str, int] = {}
    for event in events:
        if (kind := local_activity_type(event)) is not None:
            found.setdefault(kind, event.marker_recorded_event_attributes.workflow_task_completed_event_id)
    return found


def scheduled_in(events: list[HistoryEvent]) -> dict[str, int]:
    """Each activity's first scheduling: the workflow task whose completion scheduled it."""
    found: dict[str, int] = {}
    for event in events:
        if event.event_type == SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            found.setdefault(attrs.activity_type.name, attrs.workflow_task_completed_event_id)
    return found


@pytest.mark.timeout(120)
async def test_a_recovery_saves_workflow_tasks(embedded: Embedded, client: Client) -> None:
    embedded.start_worker()
    spec = await start(client, embedded.job_script("trips", fault_node="node1"))
    status = await runs.wait_result(client, spec.run_id)
    assert status is not None
    check_one_clean_recovery(status, "node1")

    history = await client.get_workflow_handle(spec.run_id).fetch_history()
    events = list(history.events)
    # The suspects are asked by diagnose itself (patch `suspects-in-diagnose`): no activity of
    # their own, nor a local one holding the task that found the failure. Diagnose is that local
    # activity (patch `diagnose-in-task`), and the advice is recorded from that task.
    local = local_activities(events)
    assert list(local) == ["diagnose"]
    tasks = scheduled_in(events)
    assert "suspect_nodes" not in tasks and "diagnose" not in tasks
    assert tasks["record_advice"] == local["diagnose"]
    assert tasks["report_failure"] == tasks["record_advice"]  # the advice does not wait for the report
    assert tasks["verify_successor"] == tasks["release"]  # nor the verification for a task of its own
