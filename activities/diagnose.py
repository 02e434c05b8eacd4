"""The diagnose activity: gathers the facts of a failed attempt and asks the attribution
provider (`off`, `rules` or `http`, see `activities.attribution`) for a Diagnosis."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from temporalio import activity

from activities.attribution import Provider, RulesProvider
from activities.errors import scheduler_errors
from activities.rules import unusable
from activities.schedulers.base import Scheduler
from workflows.models import AttributionInput, DiagnoseInput, DiagnoseResult, JobObservation


@runtime_checkable
class HasHistory(Protocol):
    async def runs(self, job_id: str) -> list[JobObservation]: ...


class DiagnoseActivities:
    def __init__(self, scheduler: Scheduler, provider: Provider | None = None) -> None:
        self.scheduler = scheduler
        self.provider = provider or RulesProvider()

    @activity.defn
    async def diagnose(self, inp: DiagnoseInput) -> DiagnoseResult:
        with scheduler_errors():
            nodes = await self.scheduler.nodes()
            failed = await self._failed_run(inp)
        facts = AttributionInput(
            run_id=inp.run_id,
            attempt=inp.attempt,
            observation=failed,
            symptom=inp.symptom,
            log_diagnosis=inp.log_diagnosis,
            nodes=nodes,
            suspect_nodes=inp.suspect_nodes,
        )
        diagnosis = await self.provider.attribute(facts)
        diagnosis.evidence = diagnosis.evidence or inp.symptom.evidence
        usable = [n.name for n in nodes if not unusable(n)]
        return DiagnoseResult(diagnosis=diagnosis, usable_nodes=usable)

    async def _failed_run(self, inp: DiagnoseInput) -> JobObservation:
        """The failed run's own facts: when the scheduler already requeued the job by itself
        (Slurm does on NODE_FAIL), its history says how that run ended."""
        obs = inp.observation
        if obs.restart_count <= inp.attempt.restart_count or not isinstance(self.scheduler, HasHistory):
            return obs
        past = await self.scheduler.runs(obs.job_id)
        return next((r for r in past if r.restart_count == inp.attempt.restart_count), obs)
