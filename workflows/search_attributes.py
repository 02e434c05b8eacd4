"""The custom search attributes of the public contract, in one place for workflow, CLI and server."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

STATE = SearchAttributeKey.for_keyword("RecoveryState")
SCHEDULER = SearchAttributeKey.for_keyword("RecoveryScheduler")
JOB_IDS = SearchAttributeKey.for_keyword_list("RecoveryJobIds")
ATTEMPTS = SearchAttributeKey.for_int("RecoveryAttempts")
LAST_SYMPTOM = SearchAttributeKey.for_keyword("RecoveryLastSymptom")
EXCLUDED_NODES = SearchAttributeKey.for_keyword_list("RecoveryExcludedNodes")

# Name -> the type name `temporal server start-dev --search-attribute` and the operator API use.
ALL: dict[str, str] = {
    "RecoveryState": "Keyword",
    "RecoveryScheduler": "Keyword",
    "RecoveryJobIds": "KeywordList",
    "RecoveryAttempts": "Int",
    "RecoveryLastSymptom": "Keyword",
    "RecoveryExcludedNodes": "KeywordList",
}
