"""Reading policy files: YAML in, a validated `Policy` out, or one line that says what is wrong.

Kept apart from `workflows.policy` because it touches files; workflow code only sees the model.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from recovery.workflows.policy import Policy
from recovery.workflows.yaml_models import YamlModelError, model_problems, parse_model, read_text

BUILTIN = ("default",)


class PolicyError(YamlModelError):
    """A policy that cannot be used; the message is one line naming file, line and key."""


def load_policy(name_or_path: str) -> Policy:
    """Load a built-in policy by name, or a YAML file by path."""
    if name_or_path in BUILTIN:
        text = resources.files("recovery.workflows.policies").joinpath(f"{name_or_path}.yaml").read_text()
        return parse_policy(text, f"<built-in policy {name_or_path}>")
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or "/" in name_or_path or path.exists():
        return parse_policy(read_text(name_or_path, "policy", PolicyError), name_or_path)
    raise PolicyError(f"unknown policy {name_or_path!r}: not a built-in ({', '.join(BUILTIN)}) nor a file")


def parse_policy(text: str, source: str) -> Policy:
    return parse_model(text, source, Policy, "policy", PolicyError)


def policy_problems(name_or_path: str) -> list[str]:
    """Every problem of a policy file, one line each; empty when it is valid (`policy check`)."""
    if name_or_path in BUILTIN:
        return []
    try:
        text = read_text(name_or_path, "policy", PolicyError)
    except PolicyError as e:
        return [str(e)]
    return model_problems(text, name_or_path, Policy, "policy")
