"""The cluster's node history: which nodes keep failing, across runs.

- `workflow`  NodeHistory, the long-lived entity workflow (one per cluster)
- `ledger`    its bookkeeping, pure functions over its state
- `models`    what it keeps, receives and answers

A run's side of it (asking for suspects, reporting a failure, draining) is workflow code that
calls activities, and lives above them in `recovery.workflows.run_node_history`.
"""

from __future__ import annotations

from recovery.workflows.node_history.workflow import WORKFLOW, NodeHistory, history_id

__all__ = ["WORKFLOW", "NodeHistory", "history_id"]
