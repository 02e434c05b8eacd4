"""`decide`: the pure policy function that turns a diagnosis into Advice.

No I/O, no clock, no randomness: the workflow passes `now` in, so the same inputs give the same
advice on every replay, and tests can call it directly.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from recovery.workflows.models import Advice, Attempt, Diagnosis, JobState, Model
from recovery.workflows.policy import Policy


class DecisionInput(Model):
    """What the run knows when an attempt has failed."""

    generation: int
    attempt_index: int
    job_id: str
    restarts_done: int
    excluded_nodes: list[str] = Field(default_factory=list)  # oldest first
    nodes_needed: int
    usable_nodes: list[str] | None = None  # nodes up on the cluster; None when unknown
    # How many nodes are up, when `usable_nodes` names only those this decision may exclude.
    usable_count: int | None = None
    symptom_kind: str = "crash"
    spent: dict[str, int] = Field(default_factory=dict)  # restarts so far per budget key
    no_progress_streak: int = 0  # failed attempts in a row, this one included, with no new step
    suspect_nodes: list[str] = Field(default_factory=list)  # nodes failing across runs (node history)


def no_progress_streak(attempts: list[Attempt]) -> int:
    """Attempts in a row, ending with the last, that got no further than the best before.
    Attempts the scheduler ended (time limit, preemption) say nothing about a crash loop."""
    streak, best = 0, None
    for attempt in attempts:
        if attempt.state in (JobState.TIMEOUT, JobState.PREEMPTED):
            continue
        if attempt.last_step is not None and (best is None or attempt.last_step > best):
            streak, best = 0, attempt.last_step
        else:
            streak += 1
    return streak


def budget_key(symptom_kind: str, diagnosis: Diagnosis) -> str:
    """Hangs spend the hang budget whatever their category; everything else its category."""
    return "hang" if symptom_kind == "hang" else diagnosis.category


def decide(ctx: DecisionInput, diagnosis: Diagnosis, policy: Policy, now: datetime) -> Advice:
    what = _what_happened(ctx, diagnosis)
    refusal = _refusal(ctx, diagnosis, policy)
    if refusal is not None:
        return _give_up(ctx, now, what, *refusal)
    excluded, dropped = _exclusions(ctx, diagnosis, policy)
    if not _satisfiable(ctx, excluded):
        if policy.on_unsatisfiable == "give_up":
            why = f"excluding {', '.join(excluded)} leaves too few nodes for {ctx.nodes_needed}"
            return _give_up(ctx, now, what, why, "unsatisfiable")
        if policy.on_unsatisfiable == "drop_oldest_exclusion":
            excluded, more = _drop_until_satisfiable(ctx, excluded)
            dropped += more
    return _restart(ctx, policy, now, what, excluded, dropped)


def _refusal(ctx: DecisionInput, diagnosis: Diagnosis, policy: Policy) -> tuple[str, str] | None:
    """Why not to restart, as (explanation, reason), or None. Scheduler endings (time limit,
    preemption) resume without spending the restart or category budgets."""
    key = budget_key(ctx.symptom_kind, diagnosis)
    if not diagnosis.retryable:
        return f"a {diagnosis.category} failure is not retryable", "not_retryable"
    if key == "scheduler":
        return None
    streak, limit = ctx.no_progress_streak, policy.crash_loop.max_attempts_without_progress
    if streak >= limit:
        return f"crash loop: {streak} attempts in a row made no progress past the one before", "crash_loop"
    if ctx.restarts_done >= policy.max_restarts:
        return f"all {policy.max_restarts} restarts allowed by policy {policy.name!r} are used", "restarts_exhausted"
    allowed = policy.budgets.allowed(key)
    if allowed is not None and ctx.spent.get(key, 0) >= allowed:
        return f"the {key} budget of {allowed} restarts is spent", "budget_spent"
    return None


def _exclusions(ctx: DecisionInput, diagnosis: Diagnosis, policy: Policy) -> tuple[list[str], list[str]]:
    """Earlier exclusions plus the newly implicated nodes, capped by dropping the oldest; then
    the cluster's suspect nodes, as far as room and the cluster allow. Suspects are advisory:
    nodes that failed other runs must never be what keeps this run from restarting."""
    excluded = list(ctx.excluded_nodes)
    if not policy.exclude_implicated_nodes:
        return excluded, []
    excluded += [n for n in diagnosis.implicated_nodes if n not in excluded]
    cut = max(0, len(excluded) - policy.max_excluded_nodes)
    excluded, dropped = excluded[cut:], excluded[:cut]
    for node in ctx.suspect_nodes:
        room = len(excluded) < policy.max_excluded_nodes
        if node not in excluded and room and _satisfiable(ctx, [*excluded, node]):
            excluded.append(node)
    return excluded, dropped


def _satisfiable(ctx: DecisionInput, excluded: list[str]) -> bool:
    if ctx.usable_nodes is None:
        return True
    usable = len(ctx.usable_nodes) if ctx.usable_count is None else ctx.usable_count
    return usable - len([n for n in ctx.usable_nodes if n in excluded]) >= ctx.nodes_needed


def _drop_until_satisfiable(ctx: DecisionInput, excluded: list[str]) -> tuple[list[str], list[str]]:
    dropped: list[str] = []
    while excluded and not _satisfiable(ctx, excluded):
        dropped.append(excluded.pop(0))
    return excluded, dropped


def _restart(
    ctx: DecisionInput,
    policy: Policy,
    now: datetime,
    what: str,
    excluded: list[str],
    dropped: list[str],
) -> Advice:
    number = ctx.restarts_done + 1
    delay = policy.backoff.delay(number)
    plan = f"restart {number} of {policy.max_restarts}"
    plan += f" excluding {', '.join(excluded)}" if excluded else " on any nodes"
    if dropped:
        plan += f" (no longer excluding {', '.join(dropped)})"
    if delay.total_seconds() > 0:
        plan += f" after {int(delay.total_seconds())}s backoff"
    return Advice(
        generation=ctx.generation,
        attempt_index=ctx.attempt_index,
        operation="restart",
        excluded_nodes=excluded,
        not_before=now + delay,
        reason="retryable_failure",
        explanation=f"{what}; {plan}",
        created_at=now,
    )


def _give_up(ctx: DecisionInput, now: datetime, what: str, why: str, reason: str) -> Advice:
    return Advice(
        generation=ctx.generation,
        attempt_index=ctx.attempt_index,
        operation="give_up",
        excluded_nodes=list(ctx.excluded_nodes),
        reason=reason,
        explanation=f"{what}; giving up: {why}",
        created_at=now,
    )


def _what_happened(ctx: DecisionInput, diagnosis: Diagnosis) -> str:
    text = f"attempt {ctx.attempt_index} (job {ctx.job_id}): {diagnosis.explanation}"
    evidence = next((e for e in diagnosis.evidence if e.line is not None), None)
    if evidence is not None:
        text += f" [{evidence.source}:{evidence.line}]"
    return text
