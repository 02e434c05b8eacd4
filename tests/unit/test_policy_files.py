from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from recovery.workflows.policy import Policy, parse_duration
from recovery.workflows.policy_files import PolicyError, load_policy, parse_policy


def test_builtin_default_matches_the_contract() -> None:
    policy = load_policy("default")
    assert policy == Policy()
    assert policy.max_restarts == 5 and policy.max_excluded_nodes == 4
    assert policy.backoff.initial == timedelta(seconds=30) and policy.backoff.max == timedelta(minutes=10)
    assert policy.restart_via == "requeue"


@pytest.mark.parametrize("via", ["requeue", "resubmit", "auto"])
def test_restart_via(via: str) -> None:
    assert parse_policy(f"restart_via: {via}\n", "p.yaml").restart_via == via


def test_file_round_trips_through_json(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: nightly\nmax_restarts: 3\nbackoff: {first: 10s, initial: 1m, factor: 3, max: 2h}\n")
    policy = load_policy(str(path))
    assert policy.name == "nightly" and policy.backoff.max == timedelta(hours=2)
    assert Policy.model_validate_json(policy.model_dump_json()) == policy


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max_restarts: 1\nbackof: {}\n", "p.yaml:2: unknown key 'backof'"),
        ("backoff:\n  first: 1s\n  later: 2s\n", "p.yaml:3: unknown key 'backoff.later'"),
        ("max_restarts: -1\n", "p.yaml:1: key 'max_restarts'"),
        ("max_restarts: yes\n", "p.yaml:1: key 'max_restarts'"),
        ("on_unsatisfiable: pray\n", "p.yaml:1: key 'on_unsatisfiable'"),
        ("max_restarts: 2\nrestart_via: teleport\n", "p.yaml:2: key 'restart_via'"),
        ("backoff: {max: 5 minutes}\n", "p.yaml:1: key 'backoff.max'"),
        ("- a\n- b\n", "a policy must be a mapping"),
        ("", "the policy is empty"),
        ("a: b: c\n", "not valid YAML"),
    ],
)
def test_errors_name_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_policy(text, "p.yaml")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_unknown_name_and_missing_file() -> None:
    with pytest.raises(PolicyError, match="unknown policy 'nope'"):
        load_policy("nope")
    with pytest.raises(PolicyError, match="No such file"):
        load_policy("/does/not/exist.yaml")


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("10m", 600), ("2h", 7200), ("7d", 604800), ("1.5s", 1.5), (45, 45)]
)
def test_durations(text: str | int, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "ten", "-5s", "5 weeks", True])
def test_bad_durations(text: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)
