"""docs/policies.md's table lists every policy key with the model's default, both ways: a key
added to the model without a row fails here, and so does a row for a key that is gone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from recovery.workflows.policy import Policy

DOC = Path(__file__).resolve().parents[2] / "docs" / "policies.md"
ROW = re.compile(r"^\| `(?P<key>[a-z_.]+)` \| `(?P<default>[^`]*)` \|", re.MULTILINE)


def documented() -> dict[str, str]:
    rows = [(m["key"], m["default"]) for m in ROW.finditer(DOC.read_text())]
    keys = [key for key, _ in rows]
    assert len(keys) == len(set(keys)), "a key has two rows"
    return dict(rows)


def model_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys = set()
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys |= model_keys(kind, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


def nested(flat: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        *sections, leaf = key.split(".")
        node = tree
        for section in sections:
            node = node.setdefault(section, {})
        node[leaf] = value
    return tree


def test_every_key_has_a_row_and_every_row_a_key() -> None:
    rows, keys = set(documented()), model_keys(Policy)
    assert keys - rows == set(), "keys of the policy model with no row in docs/policies.md"
    assert rows - keys == set(), "rows in docs/policies.md for keys the policy model does not have"


def test_every_documented_default_is_the_model_s() -> None:
    """The defaults, read as a policy file would be, make exactly the built-in defaults."""
    values = {key: yaml.safe_load(default) for key, default in documented().items()}
    assert Policy.model_validate(nested(values)) == Policy()
    for key, value in values.items():  # one by one, so a wrong row is named
        one = Policy.model_validate(nested({key: value}))
        assert one == Policy(), f"docs/policies.md gives {key} the default {value!r}"


def test_the_table_would_catch_a_new_key() -> None:
    """The check above is not vacuous: a model with one more key has a key without a row."""

    class Later(Policy):
        restart_somewhere: bool = False

    assert model_keys(Later) - set(documented()) == {"restart_somewhere"}
