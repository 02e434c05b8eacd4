"""When a long-lived workflow should continue as new. Workflow code only (reads workflow.info())."""

from __future__ import annotations

from temporalio import workflow


def history_full(events_limit: int) -> bool:
    """The history passed `events_limit` events, or Temporal suggests starting afresh (it nears
    its own size limits): carry the state over with continue-as-new before it grows further."""
    info = workflow.info()
    return info.get_current_history_length() > events_limit or info.is_continue_as_new_suggested()
