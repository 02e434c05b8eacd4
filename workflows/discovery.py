"""SlurmDiscovery: one long-lived workflow per cluster that adopts opted-in jobs as runs."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from recovery.activities.discovery import DiscoveryActivities
    from recovery.workflows.models import AdoptJobsInput, DiscoveryInput
    from recovery.workflows.retries import DISCOVERY


@workflow.defn(name="SlurmDiscovery")
class SlurmDiscovery:
    @workflow.run
    async def run(self, inp: DiscoveryInput) -> None:
        for _ in range(inp.rounds_before_continue):
            await workflow.execute_activity_method(
                DiscoveryActivities.adopt_opted_in_jobs,
                AdoptJobsInput(task_queue=inp.task_queue, interval_seconds=inp.interval_seconds),
                start_to_close_timeout=timedelta(minutes=5),
                retry_policy=DISCOVERY,
            )
            await workflow.sleep(inp.interval_seconds)
        workflow.continue_as_new(inp)  # keeps the history of a forever-loop bounded
