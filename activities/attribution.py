"""Attribution providers: who decides what a failure was and which nodes it implicates.

- `off`: no diagnosis. Restarts still follow the policy, with no evidence-based exclusions.
- `rules`: the built-in rules (`activities.rules`), the default.
- `http`: POSTs the same facts as JSON to an external service. On an error, a timeout or an
  answer that is not a diagnosis, it falls back to `rules` and says so in the diagnosis.
"""

from __future__ import annotations

from typing import Literal, Protocol

import httpx
import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recovery.activities.rules import combine, from_scheduler_facts, still_running, with_node_facts, with_peer_nodes
from recovery.workflows.models import AttributionInput, Category, Diagnosis, ImplicatedNode

log = structlog.get_logger("recovery.attribution")


class Provider(Protocol):
    name: str
    # Whether it reads every node's state (`AttributionInput.nodes`); else it gets the failed
    # run's own nodes only, which is all the built-in rules read (at 10,000 nodes, a pass over
    # every node for each diagnosis of a burst; see `node_index`).
    every_node: bool
    # Whether it reads the cluster's suspect nodes (`AttributionInput.suspect_nodes`); else the
    # diagnosis asks for them beside the attribution, not before it.
    reads_suspects: bool

    async def attribute(self, facts: AttributionInput) -> Diagnosis: ...


class OffProvider:
    name = "off"
    every_node = False
    reads_suspects = False

    async def attribute(self, facts: AttributionInput) -> Diagnosis:
        return Diagnosis(
            attempt_index=facts.attempt.index,
            category="unknown",
            retryable=True,
            explanation=f"attempt {facts.attempt.index} ended with a {facts.symptom.kind}; attribution is off",
            provider=self.name,
            evidence=facts.symptom.evidence,
        )


class RulesProvider:
    name = "rules"
    every_node = False
    reads_suspects = False

    async def attribute(self, facts: AttributionInput) -> Diagnosis:
        index, symptom = facts.attempt.index, facts.symptom
        if symptom.kind == "crash":
            diagnosis = from_scheduler_facts(facts.observation, index)
        else:
            diagnosis = still_running(symptom.kind, symptom.evidence[0].text, index)
        if facts.log_diagnosis is not None:
            diagnosis = combine(facts.log_diagnosis, diagnosis)
        diagnosis = with_peer_nodes(diagnosis, facts.observation, facts.nodes)
        return with_node_facts(diagnosis, facts.observation, facts.nodes)


class _Answer(BaseModel):
    """What an attribution service answers (extra keys are ignored, so services can add)."""

    model_config = ConfigDict(extra="ignore")

    category: Category
    retryable: bool
    implicated: list[ImplicatedNode] = Field(default_factory=list)
    explanation: str
    confidence: float | None = Field(default=None, ge=0, le=1)


class HttpProvider:
    name = "http"
    every_node = True  # the service is told the whole cluster, as documented
    reads_suspects = True

    def __init__(self, url: str, timeout: float = 5.0, fallback: Provider | None = None) -> None:
        self.url = url
        self.timeout = timeout
        self.fallback = fallback or RulesProvider()

    async def attribute(self, facts: AttributionInput) -> Diagnosis:
        try:
            answer = await self._ask(facts)
        except (httpx.HTTPError, ValidationError, ValueError) as e:
            why = _short(e)
            log.warning("attribution service failed; using rules", url=self.url, error=why)
            diagnosis = await self.fallback.attribute(facts)
            return diagnosis.model_copy(update={"provider": f"{self.fallback.name} (http failed: {why})"})
        return Diagnosis(
            attempt_index=facts.attempt.index,
            category=answer.category,
            retryable=answer.retryable,
            implicated=answer.implicated,
            explanation=answer.explanation,
            provider=f"{self.name} {self.url}",
            confidence=answer.confidence,
            evidence=facts.symptom.evidence,
        )

    async def _ask(self, facts: AttributionInput) -> _Answer:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            response = await client.post(
                self.url, content=facts.model_dump_json(), headers={"content-type": "application/json"}
            )
        response.raise_for_status()
        return _Answer.model_validate_json(response.content)


def _short(error: Exception) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "timed out"
    if isinstance(error, ValidationError):
        return "the answer is not a diagnosis"
    return str(error).splitlines()[0][:200] or type(error).__name__


def make_provider(kind: Literal["off", "rules", "http"], url: str | None = None, timeout: float = 5.0) -> Provider:
    if kind == "off":
        return OffProvider()
    if kind == "http":
        if not url:
            raise ValueError("attribution provider http needs a url")
        return HttpProvider(url, timeout)
    return RulesProvider()
