"""YAML files into validated pydantic models, with errors that name file, line and key.

Shared by policy files and the worker's config file: one line says what is wrong, so a
malformed file changes nothing and the person can fix it at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

M = TypeVar("M", bound=BaseModel)
KeyLines = dict[tuple[str, ...], int]  # a key's path (list items by index) -> its line


class _Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. YAML 1.1 would read the contract's `notify: {on: ...}`
    key, and `yes`, `no`, `off`, as booleans."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class YamlModelError(ValueError):
    """A file that cannot be used; the message is one line naming file, line and key."""


def read_text(path: str, what: str, error: type[YamlModelError] = YamlModelError) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"{path}: cannot read {what} file: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: cannot read {what} file: not UTF-8 text") from None


def parse_model(text: str, source: str, model: type[M], what: str, error: type[YamlModelError] = YamlModelError) -> M:
    return parse_model_lines(text, source, model, what, error)[0]


def parse_model_lines(
    text: str, source: str, model: type[M], what: str, error: type[YamlModelError] = YamlModelError
) -> tuple[M, KeyLines]:
    """The model, and the line of each key (list items by their index), for checks after
    validation to name the place too (`place`)."""
    data, lines = _load(text, source, what, error)
    try:
        return model.model_validate(data), lines
    except ValidationError as e:
        raise error(_describe(e.errors()[0], source, lines)) from None


def place(source: str, lines: KeyLines, *path: str) -> str:
    """`FILE:LINE` of the deepest part of `path` the file has a line for (else just `FILE`)."""
    line = next((lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in lines), None)
    return f"{source}:{line}" if line else source


def model_problems(text: str, source: str, model: type[BaseModel], what: str) -> list[str]:
    """Every problem of the file, one line each (empty: it is valid), for a checker to list
    them all at once where loading stops at the first."""
    try:
        data, lines = _load(text, source, what, YamlModelError)
    except YamlModelError as e:
        return [str(e)]
    try:
        model.model_validate(data)
    except ValidationError as e:
        return [_describe(problem, source, lines) for problem in e.errors()]
    return []


def _load(text: str, source: str, what: str, error: type[YamlModelError]) -> tuple[object, KeyLines]:
    """The YAML's data, and the line of each key; `error` when it is no mapping of keys."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{where}: not valid YAML: {problem}") from None
    if root is None:
        raise error(f"{source}: the {what} is empty")
    if not isinstance(root, yaml.MappingNode):
        raise error(f"{source}:{root.start_mark.line + 1}: a {what} must be a mapping of keys")
    lines: KeyLines = {}
    _key_lines(root, (), lines)
    return yaml.load(text, Loader=_Loader), lines


def _key_lines(node: yaml.Node, path: tuple[str, ...], lines: KeyLines) -> None:
    """Remember the line of every mapping key and list item, so errors can point at it."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*path, str(key_node.value))
            lines[key] = key_node.start_mark.line + 1
            _key_lines(value_node, key, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, str(i))] = item.start_mark.line + 1
            _key_lines(item, (*path, str(i)), lines)


def _describe(problem: ErrorDetails, source: str, lines: KeyLines) -> str:
    path = tuple(str(p) for p in problem["loc"])
    where = place(source, lines, *path)
    key = ".".join(path) or "(top level)"
    if problem["type"] == "extra_forbidden":
        return f"{where}: unknown key {key!r}"
    if problem["type"] == "missing":
        return f"{where}: missing key {key!r}"
    return f"{where}: key {key!r}: {problem['msg']}"
