"""The signature catalog: what known failures look like in a log, as data.

The built-in catalog is `catalog.yaml` beside this module. Users add entries, or change
built-in ones by id, with YAML files of the same shape (see `docs/signatures.md`); an entry
whose id exists replaces only the keys it gives, and `disabled: true` removes one.

Every entry carries its own test lines: `examples` must match and `counterexamples` must not.
They are checked whenever a catalog is loaded, so a broken pattern never reaches a scanner.
Problems are reported as one line naming the file, the line and the key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from recovery.activities.signatures import dialect
from recovery.activities.signatures.tables import TableError, builtin_tables, lookup, signature_entries
from recovery.workflows.models import Category

SignatureSymptom = Literal["crash", "hang"]
SignatureCategory = Category

BUILTIN_SOURCE = "<built-in catalog>"
# libyaml's parser when PyYAML has it (its wheels do): the catalog is read by every process.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogError(ValueError):
    """A catalog file that cannot be used; the message is one line: file:line: what is wrong."""


class Signature(BaseModel):
    """One known failure: how to recognise its line in a log, and what it means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$", max_length=64)
    description: str = Field(min_length=1)
    pattern: str
    symptom: SignatureSymptom
    category: SignatureCategory
    retryable: bool
    # A cascade is a follow-on error that other failures cause (ranks timing out while waiting
    # for a dead one); any root cause in the same log explains it and wins over it.
    cascade: bool = False
    # Breaks ties between signatures matching the same line: the more specific one says more.
    priority: int = 0
    # Whether the nodes it implicates should be kept out of the restart: a fault of the node (a
    # GPU to reset, a link to replace) says yes; a fault the program caused on a healthy GPU
    # (Xid 13, 31, 43) says no, though the log still names where it happened.
    exclude: bool = True
    # Whether its line is a failure even where its logger marks it a warning (`W ...cc:501]`):
    # a library that logs its final failure at warning level (TSL's BFC allocator as it gives up
    # on an allocation). Other warning lines are never fatal alone.
    warned: bool = False
    # Whether its line is a runner's verdict on a job that has already ended, printed before the
    # job's last output that it quotes (Ray Jobs' "Job entrypoint command failed with exit code
    # N, last available logs ...:" and the log's tail after it): the progress after it is that
    # replayed output, so it cannot show the run got past the line.
    replays_tail: bool = False
    # Whether its line is a failure by itself. False for a line that only explains a failure the
    # log shows elsewhere: a trainer that skips a batch because its loss is NaN goes on, and the
    # line is the cause only when the run also failed (every batch skipped, then no optimizer
    # step to take).
    alone: bool = True
    examples: tuple[str, ...] = Field(min_length=1)
    counterexamples: tuple[str, ...] = ()

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str) -> str:
        dialect.check_pattern(pattern)
        return pattern

    @model_validator(mode="after")
    def _examples_agree(self) -> Signature:
        problem = example_problem(self.pattern, self.examples, self.counterexamples)
        if problem is not None:
            raise ValueError(problem[2])
        return self

    @property
    def groups(self) -> list[str]:
        return dialect.group_names(dialect.compile_line_pattern(self.pattern))

    def summary(self) -> dict[str, Any]:
        """The entry as `recovery signatures --json` lists it."""
        return {
            "id": self.id,
            "pattern": self.pattern,
            "symptom": self.symptom,
            "category": self.category,
            "retryable": self.retryable,
            "cascade": self.cascade,
            "exclude": self.exclude,
            "description": self.description,
        }


def example_problem(
    pattern: str, examples: tuple[str, ...], counterexamples: tuple[str, ...]
) -> tuple[str, int, str] | None:
    """The first test line that disagrees with the pattern: (key, index, message), or None."""
    compiled = dialect.checking_pattern(pattern)
    for index, line in enumerate(examples):
        if not dialect.matches(compiled, line):
            return "examples", index, f"example does not match the pattern: {line!r}"
    for index, line in enumerate(counterexamples):
        if dialect.matches(compiled, line):
            return "counterexamples", index, f"counterexample matches the pattern: {line!r}"
    return None


class Catalog:
    """An ordered, validated set of signatures with unique ids."""

    def __init__(self, signatures: list[Signature]) -> None:
        self._by_id = {s.id: s for s in signatures}
        if len(self._by_id) != len(signatures):
            raise CatalogError("signature ids must be unique")

    def __iter__(self) -> Iterator[Signature]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __getitem__(self, signature_id: str) -> Signature:
        return self._by_id[signature_id]

    def __contains__(self, signature_id: object) -> bool:
        return signature_id in self._by_id

    @property
    def signatures(self) -> list[Signature]:
        return list(self._by_id.values())


@cache
def builtin_catalog() -> Catalog:
    """`catalog.yaml` and the signatures of the knowledge tables (`tables.py`), all checked."""
    text = resources.files("recovery.activities.signatures").joinpath("catalog.yaml").read_text(encoding="utf-8")
    catalog = with_tables(parse_catalog(text, BUILTIN_SOURCE, base=None))
    dialect.release_checked()
    return catalog


def with_tables(catalog: Catalog) -> Catalog:
    """The catalog and every table's signatures; an id defined twice is an error. Lookup tables
    are checked here too, so a broken table never waits for the first log that needs it."""
    signatures = list(catalog)
    defined = dict.fromkeys((s.id for s in signatures), BUILTIN_SOURCE)
    try:
        for name, table in builtin_tables():
            where = f"tables/{name}"
            if table.kind == "lookup":
                lookup(table.family)
                continue
            for data in signature_entries(table, where):
                sid = data["id"]
                if sid in defined:
                    raise CatalogError(f"{where}: signature {sid!r} is defined in {defined[sid]} too")
                defined[sid] = where
                signatures.append(_table_signature(data, where))
    except TableError as e:
        raise CatalogError(str(e)) from None
    return Catalog(signatures)


def _table_signature(data: Mapping[str, Any], where: str) -> Signature:
    try:
        return Signature.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else ""
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise CatalogError(f"{where}: signature {data['id']!r}: {f'key {key!r}: ' if key else ''}{msg}") from None


def load_catalog(*overrides: str | Path) -> Catalog:
    """The built-in catalog with each override file applied in order."""
    catalog = builtin_catalog()
    for path in overrides:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise CatalogError(f"{path}: cannot read signature file: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise CatalogError(f"{path}: cannot read signature file: not UTF-8 text") from None
        catalog = parse_catalog(text, str(path), base=catalog)
    return catalog


def parse_catalog(text: str, source: str, base: Catalog | None) -> Catalog:
    """Parse catalog YAML; with `base`, entries add to or change (by id) the base catalog."""
    entries, lines = _read_entries(text, source)
    merged: dict[str, Signature] = {s.id: s for s in base} if base is not None else {}
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"{source}:{lines.get((index,)) or '?'}"
        sid = entry.get("id")
        if not isinstance(sid, str):
            raise CatalogError(f"{where}: entry {index + 1} has no string 'id'")
        if sid in seen:
            raise CatalogError(f"{where}: signature {sid!r} appears twice in this file")
        seen.add(sid)
        if "disabled" in entry:
            if entry["disabled"] is not True or len(entry) != 2:
                raise CatalogError(f"{where}: signature {sid!r}: 'disabled: true' goes with 'id' alone")
            if merged.pop(sid, None) is None:
                raise CatalogError(f"{where}: cannot disable unknown signature {sid!r}")
            continue
        merged[sid] = _build(sid, entry, merged.get(sid), source, index, lines)
    return Catalog(list(merged.values()))


def _build(
    sid: str,
    entry: Mapping[str, Any],
    previous: Signature | None,
    source: str,
    index: int,
    lines: Mapping[tuple[Any, ...], int],
) -> Signature:
    data: dict[str, Any] = previous.model_dump() if previous is not None else {}
    data.update(entry)
    _check_examples(sid, data, source, index, lines)
    try:
        return Signature.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else ""
        line = lines.get((index, key)) or lines.get((index,)) or "?"
        what = f"key {key!r}: " if key else ""
        msg = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            msg, what = f"unknown key {key!r}", ""
        elif first["type"] == "missing":
            msg, what = f"missing key {key!r} (a new signature needs every key)", ""
        raise CatalogError(f"{source}:{line}: signature {sid!r}: {what}{msg}") from None


def _check_examples(
    sid: str, data: Mapping[str, Any], source: str, index: int, lines: Mapping[tuple[Any, ...], int]
) -> None:
    """Point a disagreeing test line at its own line in the file (the model can only say which)."""
    pattern, examples, counter = data.get("pattern"), data.get("examples"), data.get("counterexamples", ())
    if not isinstance(pattern, str) or not isinstance(examples, list | tuple):
        return
    if not isinstance(counter, list | tuple) or not all(isinstance(x, str) for x in (*examples, *counter)):
        return
    try:
        dialect.check_pattern(pattern)
    except ValueError:
        return  # reported with the pattern's own line by the model
    problem = example_problem(pattern, tuple(examples), tuple(counter))
    if problem is not None:
        key, j, message = problem
        line = lines.get((index, key, j)) or lines.get((index,)) or "?"
        raise CatalogError(f"{source}:{line}: signature {sid!r}: {message}")


def _read_entries(text: str, source: str) -> tuple[list[dict[str, Any]], dict[tuple[Any, ...], int]]:
    try:
        root = yaml.compose(text, Loader=_LOADER)
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise CatalogError(f"{where}: not valid YAML: {problem}") from None
    if not isinstance(data, dict) or set(data) - {"version", "signatures"}:
        raise CatalogError(f"{source}:1: expected a mapping with 'signatures:' (a list of entries)")
    entries = data.get("signatures") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise CatalogError(f"{source}:1: 'signatures' must be a list of mappings")
    return entries, _entry_lines(root)


def _entry_lines(root: yaml.Node | None) -> dict[tuple[Any, ...], int]:
    """Line numbers of each entry and of each key in it, so errors can point at them."""
    lines: dict[tuple[Any, ...], int] = {}
    if not isinstance(root, yaml.MappingNode):
        return lines
    for key_node, value_node in root.value:
        if key_node.value != "signatures" or not isinstance(value_node, yaml.SequenceNode):
            continue
        for index, item in enumerate(value_node.value):
            lines[(index,)] = item.start_mark.line + 1
            if isinstance(item, yaml.MappingNode):
                for k, v in item.value:
                    lines[(index, str(k.value))] = k.start_mark.line + 1
                    if isinstance(v, yaml.SequenceNode):
                        # Point a failing example at its own line.
                        for j, example in enumerate(v.value):
                            lines[(index, str(k.value), j)] = example.start_mark.line + 1
    return lines
