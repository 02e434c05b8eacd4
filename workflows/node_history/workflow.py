"""NodeHistory: one long-lived entity workflow per cluster that remembers which nodes keep failing.

Runs report the nodes their failures implicated (signal `record_failure`, sent with
signal-with-start so the first report creates the entity); a node implicated in failures of
enough different runs within a window is suspect (query `suspects`), and every run's restart
advice can exclude it. The workflow never ends by itself: it continues as new, carrying its
state, before its history grows large.
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
        NodeQuery,
        NodeReport,
    )

WORKFLOW = "NodeHistory"


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

    @workflow.signal
    def record_failure(self, failure: NodeFailure) -> None:
        if ledger.record(self.state, failure, workflow.now(), self.limits):
            workflow.logger.info("node failure recorded: %s in run %s", failure.node, failure.run_id)

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
        await workflow.wait_condition(lambda: history_full(self.limits.history_events_limit))
        # Signals are synchronous here, but a handler added later may not be: never drop one.
        await workflow.wait_condition(workflow.all_handlers_finished)
        ledger.prune(self.state, workflow.now(), self.limits)
        self.state.continued += 1
        workflow.continue_as_new(NodeHistoryInput(cluster=self.cluster, limits=self.limits, state=self.state))
