from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recovery.workflows.decide import DecisionInput, decide
from recovery.workflows.models import Diagnosis, Evidence, ImplicatedNode
from recovery.workflows.policy import Backoff, Policy

NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


def diagnosis(*nodes: str, retryable: bool = True, category: str = "hardware") -> Diagnosis:
    return Diagnosis.model_validate(
        {
            "attempt_index": 0,
            "category": category,
            "retryable": retryable,
            "implicated": [ImplicatedNode(node=n, reason="test") for n in nodes],
            "explanation": f"node {' '.join(nodes)} failed",
            "provider": "test",
            "evidence": [Evidence(source="slurm-7.out", text="Xid 79", line=42)],
        }
    )


def ctx(**kw: object) -> DecisionInput:
    base: dict[str, object] = {
        "generation": 1, "attempt_index": 0, "job_id": "7", "restarts_done": 0,
        "nodes_needed": 2, "usable_nodes": ["node1", "node2", "node3", "node4"],
    }  # fmt: skip
    return DecisionInput.model_validate({**base, **kw})


def test_restart_excludes_implicated_node_and_cites_evidence() -> None:
    advice = decide(ctx(), diagnosis("node2"), Policy(), NOW)
    assert advice.operation == "restart"
    assert advice.excluded_nodes == ["node2"]
    assert advice.not_before == NOW
    assert advice.status == "pending" and not advice.acted
    assert "node2" in advice.explanation and "slurm-7.out:42" in advice.explanation
    assert "restart 1 of 5" in advice.explanation


def test_exclusions_accumulate_without_duplicates() -> None:
    advice = decide(ctx(excluded_nodes=["node1"], restarts_done=1), diagnosis("node1", "node3"), Policy(), NOW)
    assert advice.excluded_nodes == ["node1", "node3"]


def test_no_exclusion_when_policy_says_so() -> None:
    advice = decide(ctx(), diagnosis("node2"), Policy(exclude_implicated_nodes=False), NOW)
    assert advice.excluded_nodes == [] and "on any nodes" in advice.explanation


def test_cap_drops_oldest_exclusions() -> None:
    advice = decide(
        ctx(excluded_nodes=["a", "b"], usable_nodes=None), diagnosis("c"), Policy(max_excluded_nodes=2), NOW
    )
    assert advice.excluded_nodes == ["b", "c"]
    assert "no longer excluding a" in advice.explanation


def test_not_retryable_gives_up() -> None:
    advice = decide(ctx(), diagnosis(retryable=False, category="application"), Policy(), NOW)
    assert advice.operation == "give_up" and advice.reason == "not_retryable"


def test_restarts_exhausted_gives_up_and_says_why() -> None:
    advice = decide(ctx(restarts_done=2), diagnosis("node1"), Policy(max_restarts=2), NOW)
    assert advice.operation == "give_up" and advice.reason == "restarts_exhausted"
    assert "all 2 restarts" in advice.explanation


@pytest.mark.parametrize(
    ("restarts_done", "delay"),
    [
        (0, timedelta(0)),
        (1, timedelta(seconds=30)),
        (2, timedelta(seconds=60)),
        (3, timedelta(seconds=120)),
        (9, timedelta(minutes=10)),
    ],
)
def test_backoff_schedule(restarts_done: int, delay: timedelta) -> None:
    advice = decide(ctx(restarts_done=restarts_done, usable_nodes=None), diagnosis(), Policy(max_restarts=20), NOW)
    assert advice.not_before == NOW + delay


def test_backoff_first_restart_can_wait() -> None:
    policy = Policy(backoff=Backoff(first=timedelta(seconds=5)))
    assert decide(ctx(), diagnosis(), policy, NOW).not_before == NOW + timedelta(seconds=5)


@pytest.mark.parametrize(
    ("mode", "operation", "excluded"),
    [
        ("wait", "restart", ["node3", "node4", "node1"]),
        ("drop_oldest_exclusion", "restart", ["node4", "node1"]),
        ("give_up", "give_up", ["node3", "node4"]),
    ],
)
def test_unsatisfiable_exclusions(mode: str, operation: str, excluded: list[str]) -> None:
    policy = Policy.model_validate({"on_unsatisfiable": mode})
    advice = decide(ctx(excluded_nodes=["node3", "node4"], restarts_done=2), diagnosis("node1"), policy, NOW)
    assert advice.operation == operation
    assert advice.excluded_nodes == excluded


def test_decide_is_deterministic() -> None:
    a = decide(ctx(), diagnosis("node2"), Policy(), NOW)
    b = decide(ctx(), diagnosis("node2"), Policy(), NOW)
    assert a == b


def test_application_errors_are_never_retried() -> None:
    d = diagnosis(category="application")
    advice = decide(ctx(), d, Policy(), NOW)
    assert advice.operation == "give_up" and advice.reason == "budget_spent"
    assert "application budget of 0" in advice.explanation


def test_category_budget_is_spent_per_category() -> None:
    spent = {"hardware": 3}
    assert decide(ctx(spent=spent), diagnosis("n1"), Policy(), NOW).reason == "budget_spent"
    assert decide(ctx(spent=spent), diagnosis(category="network"), Policy(), NOW).operation == "restart"


def test_hangs_spend_the_hang_budget() -> None:
    advice = decide(ctx(symptom_kind="hang", spent={"hang": 2}), diagnosis(category="unknown"), Policy(), NOW)
    assert advice.reason == "budget_spent" and "hang budget" in advice.explanation


def test_scheduler_endings_resume_even_past_max_restarts() -> None:
    advice = decide(ctx(restarts_done=5), diagnosis(category="scheduler"), Policy(), NOW)
    assert advice.operation == "restart"


def test_crash_loop_guard() -> None:
    advice = decide(ctx(no_progress_streak=3), diagnosis("n1"), Policy(), NOW)
    assert advice.reason == "crash_loop"
    assert decide(ctx(no_progress_streak=2), diagnosis("n1"), Policy(), NOW).operation == "restart"


def test_no_progress_streak() -> None:
    from recovery.workflows.decide import no_progress_streak
    from recovery.workflows.models import Attempt

    def run(*steps: int | None) -> int:
        return no_progress_streak([Attempt(index=i, job_id="1", last_step=s) for i, s in enumerate(steps)])

    assert run(None) == 1
    assert run(10, 20) == 0
    assert run(10, 10, 8) == 2
    assert run(10, None, None, 30) == 0
    assert run(None, None, None) == 3


def test_backoff_never_overflows_after_many_restarts() -> None:
    backoff = Policy().backoff
    assert backoff.delay(5000) == timedelta(minutes=10)
    assert Backoff(initial=timedelta(0)).delay(50) == timedelta(0)
    assert Backoff(initial=timedelta(seconds=30), factor=1.0).delay(10_000) == timedelta(seconds=30)


def test_suspect_nodes_are_excluded_when_the_cluster_has_room() -> None:
    advice = decide(ctx(suspect_nodes=["node4"]), diagnosis("node2"), Policy(), NOW)
    assert advice.operation == "restart" and advice.excluded_nodes == ["node2", "node4"]


def test_suspects_never_make_a_restart_unsatisfiable() -> None:
    """Four nodes, two needed, node2 failed: of the suspects node3 and node4 only one fits, even
    with a policy that gives up when the exclusions leave too few nodes."""
    policy = Policy(on_unsatisfiable="give_up")
    advice = decide(ctx(suspect_nodes=["node3", "node4"]), diagnosis("node2"), policy, NOW)
    assert advice.operation == "restart"
    assert advice.excluded_nodes == ["node2", "node3"]


def test_suspects_do_not_push_out_a_runs_own_exclusions() -> None:
    policy = Policy(max_excluded_nodes=2)
    context = ctx(excluded_nodes=["node1"], suspect_nodes=["node4"], usable_nodes=[f"node{i}" for i in range(1, 9)])
    advice = decide(context, diagnosis("node2"), policy, NOW)
    assert advice.excluded_nodes == ["node1", "node2"]


@pytest.mark.parametrize("mode", ["wait", "drop_oldest_exclusion", "give_up"])
@pytest.mark.parametrize(
    ("excluded", "implicated", "suspects"),
    [
        ([], ["node2"], []),
        (["node3", "node4"], ["node1"], []),
        ([], ["node2"], ["node3", "node4"]),
        (["node1"], [], ["node4"]),
    ],
)
def test_a_usable_count_decides_as_every_usable_name_does(
    mode: str, excluded: list[str], implicated: list[str], suspects: list[str]
) -> None:
    """A 10,000-node cluster's diagnosis sends the usable count and the names decide may exclude
    (the run's exclusions, the implicated, the suspects), not every name: same advice."""
    policy = Policy.model_validate({"on_unsatisfiable": mode})
    usable = ["node1", "node2", "node3", "node4", "node6"]  # node5 is down
    may_exclude = {*excluded, *implicated, *suspects}
    every = ctx(excluded_nodes=excluded, suspect_nodes=suspects, nodes_needed=3, usable_nodes=usable)
    counted = every.model_copy(update={"usable_nodes": [n for n in usable if n in may_exclude], "usable_count": 5})
    assert decide(counted, diagnosis(*implicated), policy, NOW) == decide(every, diagnosis(*implicated), policy, NOW)
