"""Equal policies are one object in a worker's memory (workflows/policy.py `shared`): each of
10,000 watches and cached runs held its own copy of its run's policy, about 7 KiB each."""

from __future__ import annotations

from datetime import timedelta

from recovery.workflows import policy as policies
from recovery.workflows.models import Attempt, WatchInput
from recovery.workflows.policy import Hang, Policy, shared


def watch_json(policy: Policy) -> str:
    attempt = Attempt(index=0, job_id="1", nodes=["n1"])
    return WatchInput(run_id="r", attempt=attempt, poll_seconds=0.25, policy=policy).model_dump_json()


def test_watches_of_equal_policies_hold_one_object_and_others_their_own() -> None:
    strict = Policy(name="strict", hang=Hang(min_timeout=timedelta(minutes=2)))
    a, b = (WatchInput.model_validate_json(watch_json(Policy())) for _ in range(2))
    c = WatchInput.model_validate_json(watch_json(strict))
    assert a.policy is b.policy
    assert c.policy is not a.policy and c.policy == strict
    assert a.policy == Policy(), "the shared object is equal to what was sent"


def test_the_shared_set_stays_small_however_many_policies_come() -> None:
    many = [Policy(name=f"p{i}") for i in range(policies._SHARED_MAX + 10)]
    for p in many:
        assert shared(p) == p
    assert len(policies._SHARED) <= policies._SHARED_MAX
    again = Policy(name=many[-1].name)
    assert shared(again) is many[-1], "a recent policy is still the one object"
