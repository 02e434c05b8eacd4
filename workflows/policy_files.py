"""Reading policy files: YAML in, a validated `Policy` out, or one line that says what is wrong.

Kept apart from `workflows.policy` because it touches files; workflow code only sees the model.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from workflows.policy import Policy

BUILTIN = ("default",)


class PolicyError(ValueError):
    """A policy that cannot be used; the message is one line naming file, line and key."""


def load_policy(name_or_path: str) -> Policy:
    """Load a built-in policy by name, or a YAML file by path."""
    if name_or_path in BUILTIN:
        text = resources.files("workflows.policies").joinpath(f"{name_or_path}.yaml").read_text()
        return parse_policy(text, f"<built-in policy {name_or_path}>")
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or "/" in name_or_path or path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise PolicyError(f"{name_or_path}: cannot read policy file: {_reason(e)}") from None
        return parse_policy(text, name_or_path)
    raise PolicyError(f"unknown policy {name_or_path!r}: not a built-in ({', '.join(BUILTIN)}) nor a file")


def parse_policy(text: str, source: str) -> Policy:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise PolicyError(f"{where}: not valid YAML: {problem}") from None
    if root is None:
        raise PolicyError(f"{source}: the policy is empty")
    if not isinstance(root, yaml.MappingNode):
        raise PolicyError(f"{source}:{root.start_mark.line + 1}: a policy must be a mapping of keys")
    lines: dict[tuple[str, ...], int] = {}
    _key_lines(root, (), lines)
    data = yaml.safe_load(text)
    try:
        return Policy.model_validate(data)
    except ValidationError as e:
        raise PolicyError(_describe(e, source, lines)) from None


def _key_lines(node: yaml.Node, path: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> None:
    """Remember the line of every mapping key, so errors can point at it."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*path, str(key_node.value))
            lines[key] = key_node.start_mark.line + 1
            _key_lines(value_node, key, lines)


def _describe(error: ValidationError, source: str, lines: dict[tuple[str, ...], int]) -> str:
    first = error.errors()[0]
    path = tuple(str(p) for p in first["loc"])
    line = next((lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in lines), None)
    where = f"{source}:{line}" if line else source
    key = ".".join(path) or "(top level)"
    if first["type"] == "extra_forbidden":
        return f"{where}: unknown key {key!r}"
    if first["type"] == "missing":
        return f"{where}: missing key {key!r}"
    return f"{where}: key {key!r}: {first['msg']}"


def _reason(error: Exception) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return "not UTF-8 text"
