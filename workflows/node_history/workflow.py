"""NodeHistory: one long-lived entity workflow per cluster that remembers which nodes keep failing.

Runs report the nodes their failures implicated and ask which nodes are suspect with the update
`report_failure` (sent with update-with-start, so the first report creates the entity): it
records the failures and answers with the suspects, in one round trip that the server queues
rather than refuses. (The signal `record_failure` and the query `suspects` did the same before;
they are kept for workers of earlier versions and for tools. A query meeting a busy workflow
fails with "Workflow is busy", which a burst of a hundred failures made the rule.) A node
implicated in failures of enough different runs within a window is suspect, and every run's
restart advice can exclude it. The workflow never ends by itself: it continues as new, carrying
its state, before its history (or its count of updates) grows large.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from recovery.workflows.history import history_full
    from recovery.workflows.node_history import ledger
    from recovery.workflows.node_history.models import (
        NodeFailure,
        NodeHistoryInput,
        NodeHistoryState,
        NodeHistoryUpdate,
        NodeQuery,
        NodeReport,
    )

WORKFLOW = "NodeHistory"
# Temporal refuses updates past 2,000 per workflow run (history.maxTotalUpdates): continue well
# before. Not a NodeHistoryLimits field: workers of earlier versions must still read the input.
MAX_UPDATES = 500


def history_id(cluster: str) -> str:
    """The entity's workflow id: one per cluster."""
    return f"recovery-nodes-{cluster}"


@workflow.defn(name=WORKFLOW)
class NodeHistory:
    @workflow.init
    def __init__(self, inp: NodeHistoryInput) -> None:
        self.cluster = inp.cluster
        self.limits = inp.limits
        self.state = inp.state or NodeHistoryState()
        self.updates = 0

    @workflow.signal
    def record_failure(self, failure: NodeFailure) -> None:
        if ledger.record(self.state, failure, workflow.now(), self.limits):
            workflow.logger.info("node failure recorded: %s in run %s", failure.node, failure.run_id)

    @workflow.update
    def report_failure(self, update: NodeHistoryUpdate) -> list[list[str]]:
        """Record `update.failures` (each once), then answer each rule's suspects at `update.now`."""
        self.updates += 1
        for failure in update.failures:
            self.record_failure(failure)
        return [ledger.suspects(self.state, rule, update.now) for rule in update.rules]

    @workflow.signal
    def clear(self, node: str) -> None:
        dropped = ledger.forget(self.state, node, workflow.now())
        workflow.logger.info("node %s cleared (%d failures forgotten)", node, dropped)

    @workflow.query
    def nodes(self, query: NodeQuery) -> NodeReport:
        return NodeReport(
            cluster=self.cluster,
            rule=query.rule,
            now=query.now,
            nodes=ledger.summarize(self.state, query),
        )

    @workflow.query
    def suspects(self, query: NodeQuery) -> list[str]:
        return ledger.suspects(self.state, query.rule, query.now)

    @workflow.run
    async def run(self, inp: NodeHistoryInput) -> None:
        await workflow.wait_condition(
            lambda: history_full(self.limits.history_events_limit) or self.updates >= MAX_UPDATES
        )
        # Signals are synchronous here, but a handler added later may not be: never drop one.
        await workflow.wait_condition(workflow.all_handlers_finished)
        ledger.prune(self.state, workflow.now(), self.limits)
        self.state.continued += 1
        workflow.continue_as_new(NodeHistoryInput(cluster=self.cluster, limits=self.limits, state=self.state))
