"""The diagnose activity: gathers the facts of a failed attempt and asks the attribution
provider (`off`, `rules` or `http`, see `activities.attribution`) for a Diagnosis."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import structlog
from temporalio import activity

from recovery.activities import metrics
from recovery.activities.addresses import needs_resolving, resolved
from recovery.activities.attribution import Provider, RulesProvider
from recovery.activities.errors import scheduler_errors
from recovery.activities.gpu.evidence import health_evidence, implicates
from recovery.activities.gpu.readings import GpuHealth
from recovery.activities.gpu.remote import probe_node
from recovery.activities.node_history import NodeHistoryUnavailable
from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.rules import as_cluster_nodes
from recovery.activities.schedulers.base import Scheduler
from recovery.workflows.models import (
    AttributionInput,
    DiagnoseInput,
    DiagnoseResult,
    Diagnosis,
    HangStacks,
    ImplicatedNode,
    JobObservation,
)
from recovery.workflows.node_history.models import SuspectQuery, SuspectRule

log = structlog.get_logger("recovery.activities")


@runtime_checkable
class HasHistory(Protocol):
    async def runs(self, job_id: str) -> list[JobObservation]: ...


@dataclass(frozen=True)
class HealthProbing:
    """Probe the GPUs of implicated nodes with NVML (`recovery.activities.gpu`) before deciding.
    Off by default: on Slurm a probe is an srun step on the node, which takes seconds."""

    enabled: bool = False
    max_nodes: int = 4
    timeout: float = 30.0
    srun_args: tuple[str, ...] = ()


class DiagnoseActivities:
    def __init__(
        self,
        scheduler: Scheduler,
        provider: Provider | None = None,
        health: HealthProbing | None = None,
        nodes: Callable[[], Awaitable[NodeIndex]] | None = None,
        suspects: Callable[[SuspectQuery], Awaitable[list[str]]] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.provider = provider or RulesProvider()
        self.health = health or HealthProbing()
        # Every node's state (a shared read in the worker: `CoalescingObserver.node_index`).
        self.nodes = nodes or self._read_nodes
        # The cluster's node history (`NodeHistoryActivities.suspects`); none: no suspects known.
        self.suspects = suspects

    async def _read_nodes(self) -> NodeIndex:
        return NodeIndex.of(await self.scheduler.nodes())

    @activity.defn
    async def diagnose(self, inp: DiagnoseInput) -> DiagnoseResult:
        # The suspects are asked first and waited for last: under a burst the node history's
        # answer takes about as long as the rest of the diagnosis, which it no longer follows.
        asking = None if inp.suspect_rule is None else asyncio.create_task(self._ask_suspects(inp))
        try:
            return await self._diagnose(inp, asking)
        finally:
            if asking is not None:
                asking.cancel()

    async def _diagnose(self, inp: DiagnoseInput, asking: asyncio.Task[list[str]] | None) -> DiagnoseResult:
        with scheduler_errors():
            nodes = await self.nodes()
            failed = await self._failed_run(inp)
        peers = inp.log_diagnosis.peers if inp.log_diagnosis is not None else []
        if needs_resolving(peers, nodes):
            nodes = nodes.replaced(await resolved(nodes.allocation(failed.nodes)))
        suspects = inp.suspect_nodes
        if asking is not None and self.provider.reads_suspects:
            suspects = await asking
        facts = AttributionInput(
            run_id=inp.run_id,
            attempt=inp.attempt,
            observation=failed,
            symptom=inp.symptom,
            log_diagnosis=inp.log_diagnosis,
            nodes=nodes.nodes if self.provider.every_node else nodes.allocation(failed.nodes),
            suspect_nodes=suspects,
        )
        diagnosis = as_cluster_nodes(await self.provider.attribute(facts), failed.nodes, nodes)
        diagnosis.evidence = diagnosis.evidence or inp.symptom.evidence
        if inp.hang_stacks is not None and inp.hang_stacks.collected and self.provider.name != "off":
            diagnosis = with_hang_stacks(diagnosis, inp.hang_stacks)
        if self.health.enabled and diagnosis.category in ("hardware", "unknown"):
            diagnosis = with_gpu_health(diagnosis, await self._probe(inp, failed, diagnosis))
        metrics.symptom_diagnosed(inp.symptom.kind, diagnosis.category)
        requeued = failed is not inp.observation
        if asking is not None:
            suspects = await asking
        found = usable_nodes(inp, diagnosis, nodes, suspects)
        update = {"failed_run": failed if requeued else None, "suspect_nodes": None if asking is None else suspects}
        return found.model_copy(update=update)

    async def _ask_suspects(self, inp: DiagnoseInput) -> list[str]:
        """The cluster's suspects as the failure was detected; none if the history cannot say in
        time (advisory: a slow or absent history never holds up a recovery)."""
        assert inp.suspect_rule is not None
        if self.suspects is None:
            return []
        query = SuspectQuery(rule=SuspectRule.of(inp.suspect_rule), now=inp.symptom.detected_at)
        try:
            return await self.suspects(query)
        except NodeHistoryUnavailable as e:
            log.warning("diagnosing without suspect nodes", run_id=inp.run_id, error=str(e))
            return []

    async def _probe(self, inp: DiagnoseInput, failed: JobObservation, diagnosis: Diagnosis) -> list[GpuHealth]:
        """Implicated nodes first, then the rest of the allocation, at most `max_nodes`."""
        candidates = list(dict.fromkeys([*diagnosis.implicated_nodes, *failed.nodes]))[: self.health.max_nodes]
        still_held = inp.symptom.kind != "crash"  # a hang holds its nodes: probe inside the job
        probes = [
            probe_node(
                node,
                self.scheduler.name,
                sys.executable,
                job_id=failed.job_id if still_held else None,
                srun_args=self.health.srun_args,
                timeout=self.health.timeout,
            )
            for node in candidates
        ]
        return list(await asyncio.gather(*probes))

    async def _failed_run(self, inp: DiagnoseInput) -> JobObservation:
        """The failed run's own facts: when the scheduler already requeued the job by itself
        (Slurm does on NODE_FAIL), its history says how that run ended."""
        obs = inp.observation
        if obs.restart_count <= inp.attempt.restart_count or not isinstance(self.scheduler, HasHistory):
            return obs
        past = await self.scheduler.runs(obs.job_id)
        return next((r for r in past if r.restart_count == inp.attempt.restart_count), obs)


def usable_nodes(inp: DiagnoseInput, diagnosis: Diagnosis, nodes: NodeIndex, suspects: list[str]) -> DiagnoseResult:
    """The usable nodes `decide` needs: how many, and which of those it may exclude (the run's
    exclusions, the implicated, the suspects). An input without the run's exclusions (scheduled
    before they were sent) gets every usable node's name, as then."""
    if inp.excluded_nodes is None:
        return DiagnoseResult(diagnosis=diagnosis, usable_nodes=[n.name for n in nodes.nodes if not unusable(n)])
    named = nodes.usable([*inp.excluded_nodes, *diagnosis.implicated_nodes, *suspects])
    return DiagnoseResult(diagnosis=diagnosis, usable_nodes=named, usable_count=nodes.usable_count)


def with_gpu_health(diagnosis: Diagnosis, readings: list[GpuHealth]) -> Diagnosis:
    """NVML's readings as evidence; a node whose GPUs read bad is implicated, as hardware."""
    evidence = [e for h in readings for e in health_evidence(h)]
    known = set(diagnosis.implicated_nodes)
    bad = [(h.node, why) for h in readings if h.node and (why := implicates(h))]
    extra = [ImplicatedNode(node=node, reason=f"NVML: {why}") for node, why in bad if node not in known]
    if not evidence and not extra:
        return diagnosis
    category = "hardware" if bad else diagnosis.category
    update = {"evidence": [*diagnosis.evidence, *evidence], "implicated": [*diagnosis.implicated, *extra]}
    return diagnosis.model_copy(update={**update, "category": category})


def with_hang_stacks(diagnosis: Diagnosis, stacks: HangStacks) -> Diagnosis:
    """The hung ranks' stacks as evidence; the culprits they single out are implicated (their
    reason quotes the stacks), and the explanation says what the stacks showed either way."""
    known = set(diagnosis.implicated_nodes)
    extra = [c for c in stacks.culprits if c.node not in known]
    evidence = [*diagnosis.evidence, *(e for e in stacks.evidence if e not in diagnosis.evidence)]
    update = {
        "implicated": [*diagnosis.implicated, *extra],
        "evidence": evidence,
        "explanation": f"{diagnosis.explanation}; {stacks.summary}",
    }
    return diagnosis.model_copy(update=update)
