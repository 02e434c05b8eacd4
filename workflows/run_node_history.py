"""A run's side of the cluster's node history (`recovery.workflows.node_history`): which nodes are suspect
now, which nodes this failure implicated, and draining suspects. Advisory throughout: a node
history that is slow or away never delays or blocks a recovery.

Called from TrainingRun's workflow code, so only workflow-safe calls (activities) here.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

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


async def suspects(rule: SuspectRule, now: datetime, timeout: timedelta) -> list[str]:
    """Nodes that failed other runs too; none if the history cannot say in time."""
    try:
        found: list[str] = await workflow.execute_activity_method(
            NodeHistoryActivities.suspect_nodes,
            SuspectQuery(rule=rule, now=now),
            start_to_close_timeout=timeout,
            retry_policy=ONCE,  # a slow history must not delay the advice
        )
    except ActivityError as e:
        workflow.logger.warning("deciding without suspect nodes: node history unavailable (%s)", e.cause or e)
        return []
    return found


async def report_failure(
    run_id: str, attempt_index: int, diagnosis: Diagnosis, now: datetime, timeout: timedelta
) -> None:
    """Tell the history which nodes this failure implicated."""
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
        return
    with contextlib.suppress(ActivityError):
        await workflow.execute_activity_method(
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
