"""The custom search attributes of the public contract, in one place for workflow, CLI and server.

Each name is written once, in its key; `ALL` (what `dev-server start` registers and `submit`
checks for) is derived from the keys.
"""

from __future__ import annotations

from typing import Any

from temporalio.common import (
    SearchAttributeIndexedValueType,
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
)

STATE = SearchAttributeKey.for_keyword("RecoveryState")
SCHEDULER = SearchAttributeKey.for_keyword("RecoveryScheduler")
JOB_IDS = SearchAttributeKey.for_keyword_list("RecoveryJobIds")
ATTEMPTS = SearchAttributeKey.for_int("RecoveryAttempts")
LAST_SYMPTOM = SearchAttributeKey.for_keyword("RecoveryLastSymptom")
EXCLUDED_NODES = SearchAttributeKey.for_keyword_list("RecoveryExcludedNodes")
# Who submitted the run (the job's user for an adopted Slurm job): set once at start, never
# upserted by the workflow, so that histories recorded before it existed replay unchanged.
OWNER = SearchAttributeKey.for_keyword("RecoveryOwner")
# The pipeline a workflow belongs to: set at start on the pipeline (its own id) and on each of its
# stages' runs, so `RecoveryPipeline="ID"` finds the whole pipeline in the UI (ParentWorkflowId
# finds only the stages). Set at start only, like the owner.
PIPELINE_ID = SearchAttributeKey.for_keyword("RecoveryPipeline")

# The type names `temporal server start-dev --search-attribute` and the operator API use.
_TYPE_NAMES = {
    SearchAttributeIndexedValueType.KEYWORD: "Keyword",
    SearchAttributeIndexedValueType.KEYWORD_LIST: "KeywordList",
    SearchAttributeIndexedValueType.INT: "Int",
}

# Name -> type name, for every key above.
ALL: dict[str, str] = {
    key.name: _TYPE_NAMES[key.indexed_value_type]
    for key in (STATE, SCHEDULER, JOB_IDS, ATTEMPTS, LAST_SYMPTOM, EXCLUDED_NODES, OWNER, PIPELINE_ID)
}


def at_start(scheduler: str, owner: str, pipeline: str | None = None) -> TypedSearchAttributes:
    """What a run (or pipeline) starts with, before its workflow upserts anything: pending, not
    yet attempted (the literal is `RunState.PENDING`, which this vocabulary module does not import);
    a pipeline and its stages also name the pipeline."""
    pairs: list[SearchAttributePair[Any]] = [
        SearchAttributePair(STATE, "pending"),
        SearchAttributePair(SCHEDULER, scheduler),
        SearchAttributePair(ATTEMPTS, 0),
        SearchAttributePair(OWNER, owner),
    ]
    if pipeline is not None:
        pairs.append(SearchAttributePair(PIPELINE_ID, pipeline))
    return TypedSearchAttributes(pairs)
