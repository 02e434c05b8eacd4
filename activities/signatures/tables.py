"""Knowledge tables: what the systems' own references say, as data rather than one regex at a time.

Each YAML file in `tables/` beside this module is one family of facts (NVIDIA's Xid catalog,
CUDA's error codes, NCCL's result codes, Linux's kernel messages, signals, exception classes,
schedulers' termination messages, container runtimes' GPU errors) and says where its facts come
from (`source`). Two kinds:

- `signatures`: every entry becomes a catalog signature. The table's `patterns` are templates in
  which `{{field}}` stands for the entry's field, regex-escaped; an entry's pattern is the
  alternation of the templates whose fields it has (plus its own raw `pattern`, if any). Its
  `examples` templates are filled the same way, so every entry carries test lines, and the
  table's `counterexamples` must match no entry. The catalog checks all of it when it loads.
- `lookup`: entries that code consults by name (the exception class a traceback ends in, the
  signal a process died of).

The file format is in `docs/signatures.md`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, cast, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recovery.workflows.models import Category

PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
# The keys of an entry that are the signature's own; every other key is a fact of the reference.
SIGNATURE_KEYS = frozenset(
    {
        "id",
        "description",
        "pattern",
        "symptom",
        "category",
        "retryable",
        "cascade",
        "priority",
        "exclude",
        "warned",
        "replays_tail",
        "alone",
        "examples",
    }
)
_SPECIAL = frozenset("\\.^$|?*+()[]{}")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TableError(ValueError):
    """A table that cannot be used; one line: file: what is wrong."""


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: Literal["signatures", "lookup"]
    source: str = Field(min_length=10)
    key: str
    patterns: tuple[str, ...] = ()
    defaults: dict[str, Any] = Field(default_factory=dict)
    examples: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    entries: tuple[dict[str, Any], ...] = Field(min_length=1)


def escape(text: str) -> str:
    """A literal for the pattern dialect (RE2 and Hyperscan both take these escapes)."""
    out = []
    for c in text:
        if c in _SPECIAL:
            out.append("\\" + c)
        elif c.isascii() and c.isprintable():
            out.append(c)
        else:
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8"))
    return "".join(out)


def fill(template: str, entry: Mapping[str, Any], *, as_pattern: bool) -> str | None:
    """The template with each `{{field}}` replaced; None when the entry lacks a field it names."""
    names = PLACEHOLDER.findall(template)
    if any(entry.get(name) is None for name in names):
        return None

    def value(m: re.Match[str]) -> str:
        text = str(entry[m.group(1)])
        return escape(text) if as_pattern else text

    return PLACEHOLDER.sub(value, template)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "x"


def signature_entries(table: Table, where: str) -> Iterator[dict[str, Any]]:
    """Each entry as a complete catalog entry (a mapping `Signature` validates)."""
    for index, entry in enumerate(table.entries):
        if table.key not in entry:
            raise TableError(f"{where}: entry {index + 1} has no {table.key!r}")
        alternatives = [p for t in table.patterns if (p := fill(t, entry, as_pattern=True)) is not None]
        if "pattern" in entry:
            alternatives.append(str(entry["pattern"]))
        if not alternatives:
            raise TableError(f"{where}: entry {entry[table.key]!r}: no pattern template fits its fields")
        examples = [e for t in table.examples if (e := fill(t, entry, as_pattern=False)) is not None]
        data = {**table.defaults, **{k: v for k, v in entry.items() if k in SIGNATURE_KEYS}}
        data["id"] = entry.get("id") or f"{table.family}-{slug(str(entry[table.key]))}"
        data["pattern"] = alternatives[0] if len(alternatives) == 1 else "|".join(f"(?:{a})" for a in alternatives)
        data["examples"] = [*examples, *entry.get("examples", ())]
        # The table's healthy lines must match no entry; an entry's own (a line of a near
        # neighbour it must leave alone) are checked against it too.
        data["counterexamples"] = [*table.counterexamples, *entry.get("counterexamples", ())]
        yield data


@dataclass(frozen=True)
class Fact:
    """One entry of a lookup table: what a name means for a failed run."""

    name: str
    description: str
    category: Category
    retryable: bool
    cascade: bool = False
    fields: Mapping[str, Any] | None = None


class Lookup:
    """A lookup table by name (and by each of an entry's `names`, and its `number` if any)."""

    def __init__(self, table: Table, where: str) -> None:
        self.table = table
        self._by_name: dict[str, Fact] = {}
        for index, entry in enumerate(table.entries):
            if entry.get("category") not in get_args(Category):
                raise TableError(f"{where}: entry {index + 1}: category must be one of {', '.join(get_args(Category))}")
            variant = entry.get("on_path")
            if variant is not None and (
                not isinstance(variant, dict)
                or variant.get("category") not in get_args(Category)
                or not isinstance(variant.get("retryable"), bool)
                or not variant.get("description")
            ):
                raise TableError(f"{where}: entry {index + 1}: on_path needs a description, a category and retryable")
            try:
                fact = Fact(
                    name=str(entry[table.key]),
                    description=str(entry["description"]),
                    category=cast(Category, entry["category"]),
                    retryable=bool(entry["retryable"]),
                    cascade=bool(entry.get("cascade", False)),
                    fields=entry,
                )
            except KeyError as e:
                raise TableError(f"{where}: entry {index + 1} has no {e.args[0]!r}") from None
            for name in [fact.name, *entry.get("names", ()), *([str(entry["number"])] if "number" in entry else [])]:
                self._by_name.setdefault(str(name), fact)

    def get(self, name: str) -> Fact | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self.table.entries)


def read_table(text: str, where: str) -> Table:
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}" if mark else ""
        raise TableError(f"{where}{at}: not valid YAML: {getattr(e, 'problem', None) or e}") from None
    try:
        return Table.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise TableError(f"{where}: {key}: {first['msg']}") from None


@cache
def builtin_tables() -> tuple[tuple[str, Table], ...]:
    """(file name, table) for every built-in table, in file name order."""
    folder = resources.files("recovery.activities.signatures").joinpath("tables")
    found = sorted((f.name, f) for f in folder.iterdir() if f.name.endswith(".yaml"))
    return tuple((name, read_table(f.read_text(encoding="utf-8"), f"tables/{name}")) for name, f in found)


@cache
def lookup(family: str) -> Lookup:
    """A built-in lookup table by family (`exceptions`, `signals`)."""
    for name, table in builtin_tables():
        if table.family == family and table.kind == "lookup":
            return Lookup(table, f"tables/{name}")
    raise TableError(f"no lookup table {family!r}")
