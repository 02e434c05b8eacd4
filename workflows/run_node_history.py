"""A run's side of the cluster's node history (`recovery.workflows.node_history`): which nodes are suspect
now, which nodes this failure implicated, and draining suspects. Advisory throughout: a node
history that is slow or away never delays or blocks a recovery.

Called from TrainingRun's workflow code, so only workflow-safe calls (activities) here.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

with workflow.unsafe.imports_passed_through():
    from recovery.activities.node_history import NodeHistoryActivities
    from recovery.workflows.models import Diagnosis
    from recovery.workflows.node_history.models import (
        DrainInput,
        DrainResult,
        NodeFailure,
        NodeFailureReport,
        SuspectQuery,
        SuspectRule,
    )
    from recovery.workflows.retries import BOUNDED, ONCE


async def suspects(rule: SuspectRule, now: datetime, timeout: timedelta, *, local: bool = False) -> list[str]:
    """Nodes that failed other runs too; none if the history cannot say in time. `local`: asked
    as a local activity, inside the workflow task that found the failure, which saves a round
    trip through the server (seconds each under load) on the way to advice."""
    query = SuspectQuery(rule=rule, now=now)
    try:
        if local:
            found: list[str] = await workflow.execute_local_activity_method(
                NodeHistoryActivities.suspect_nodes, query, start_to_close_timeout=timeout, retry_policy=ONCE
            )
        else:
            found = await workflow.execute_activity_method(
                NodeHistoryActivities.suspect_nodes,
                query,
                start_to_close_timeout=timeout,
                retry_policy=ONCE,  # a slow history must not delay the advice
            )
    except FailureError as e:
        # An activity's failure comes wrapped in an ActivityError; a local activity's is the error
        # itself (the activity's ApplicationError, a TimeoutError).
        why = e.cause if isinstance(e, ActivityError) and e.cause else e
        workflow.logger.warning("deciding without suspect nodes: node history unavailable (%s)", why)
        return []
    return found


async def report_failure(
    run_id: str, attempt_index: int, diagnosis: Diagnosis, now: datetime, timeout: timedelta
) -> None:
    """Tell the history which nodes this failure implicated."""
    await reported(start_report(run_id, attempt_index, diagnosis, now, timeout))


async def reported(report: workflow.ActivityHandle[str] | None) -> None:
    """Wait for a report started by `start_report`; a history that failed to take it is advisory."""
    if report is None:
        return
    with contextlib.suppress(ActivityError):
        await report


def start_report(
    run_id: str, attempt_index: int, diagnosis: Diagnosis, now: datetime, timeout: timedelta
) -> workflow.ActivityHandle[str] | None:
    """Start telling the history which nodes this failure implicated (None: it implicated none).
    Started, not awaited: the advice does not wait for it (nothing it returns is used)."""
    failures = [
        NodeFailure(
            node=i.node,
            run_id=run_id,
            attempt_index=attempt_index,
            category=diagnosis.category,
            at=now,
            reason=i.reason,
        )
        for i in diagnosis.implicated
    ]
    if not failures:
        return None
    return workflow.start_activity_method(
        NodeHistoryActivities.report_failure,
        NodeFailureReport(failures=failures),
        start_to_close_timeout=timeout,
        retry_policy=BOUNDED,
    )


async def drain(run_id: str, nodes: list[str], rule: SuspectRule, now: datetime, timeout: timedelta) -> DrainResult:
    """Drain these nodes (the activity checks the worker's consent and each node's state)."""
    inp = DrainInput(run_id=run_id, nodes=nodes, rule=rule, now=now)
    try:
        done: DrainResult = await workflow.execute_activity_method(
            NodeHistoryActivities.drain_nodes, inp, start_to_close_timeout=timeout, retry_policy=BOUNDED
        )
    except ActivityError as e:
        return DrainResult(refused=f"failed: {e.cause or e}")
    return done
