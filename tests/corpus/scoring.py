"""The corpus of real logs (`README.md` beside this file): its labels, and how a diagnosis scores.

Shared by `tests/unit/test_corpus.py` (floors) and `benchmarks/diagnosis_quality.py` (the table).

Figures, per part:

- found: failures (symptom crash, hang or straggler) diagnosed as some failure;
- false alarms: healthy logs diagnosed as a failure;
- retryable / category: failures whose diagnosis says the same as the label (a missed failure
  counts as wrong);
- culprit: failures whose label names a culprit and whose diagnosis implicates every node, rank,
  GPU and peer the label names.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import yaml

from recovery.workflows.models import Category, SymptomKind

CORPUS = Path(__file__).resolve().parent
PARTS = ("dev", "heldout")
# The contract's words (`recovery diagnose --json`), plus `none` for a healthy log.
SYMPTOMS = (*get_args(SymptomKind), "none")
CATEGORIES = (*get_args(Category), "none")
CULPRIT_KINDS = ("nodes", "ranks", "gpus", "peers")
HELD_OUT_PERCENT = 30
# Repositories GitHub renamed: the old name's threads redirect to the new one, so both names are
# one project and must land in one part (the old names hash to the other part for some).
RENAMED = {
    "google/jax": "jax-ml/jax",
    "microsoft/deepspeed": "deepspeedai/deepspeed",
    "lightning-ai/lightning": "lightning-ai/pytorch-lightning",
    "pytorchlightning/pytorch-lightning": "lightning-ai/pytorch-lightning",
    "kubeflow/training-operator": "kubeflow/trainer",
    "hiyouga/llama-factory": "hiyouga/llamafactory",
}


def part_of(project: str) -> str:
    """The part a project's excerpts belong to: a fixed hash of its (current) name, so the split
    depends on nothing in the logs, and a project's later excerpts land where its first ones did."""
    name = project.strip().lower()
    name = RENAMED.get(name, name)
    bucket = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 100
    return "heldout" if bucket < HELD_OUT_PERCENT else "dev"


@dataclass(frozen=True)
class Excerpt:
    part: str
    file: str
    source: str
    project: str
    symptom: str
    category: str
    retryable: bool | None
    culprit: Mapping[str, list[Any]]
    reason: str
    note: str = ""

    @property
    def path(self) -> Path:
        return CORPUS / self.part / self.file

    @property
    def failed(self) -> bool:
        return self.symptom != "none"

    @property
    def names_culprit(self) -> bool:
        return any(self.culprit.get(kind) for kind in CULPRIT_KINDS)


class LabelError(ValueError):
    """A label that breaks the corpus's rules."""


def load(part: str) -> list[Excerpt]:
    entries = yaml.safe_load((CORPUS / part / "labels.yaml").read_text(encoding="utf-8")) or []
    return [_excerpt(part, entry) for entry in entries]


def _excerpt(part: str, entry: Mapping[str, Any]) -> Excerpt:
    where = f"{part}/labels.yaml: {entry.get('file')!r}"
    keys = {"file", "source", "project", "symptom", "category", "retryable", "culprit", "reason", "note"}
    if extra := set(entry) - keys:
        raise LabelError(f"{where}: unknown keys {sorted(extra)}")
    culprit = entry.get("culprit") or {}
    item = Excerpt(
        part=part,
        file=str(entry["file"]),
        source=str(entry["source"]),
        project=str(entry["project"]),
        symptom=str(entry["symptom"]),
        category=str(entry["category"]),
        retryable=entry["retryable"],
        culprit={kind: list(culprit.get(kind) or []) for kind in CULPRIT_KINDS},
        reason=str(entry["reason"]),
        note=str(entry.get("note") or ""),
    )
    if item.symptom not in SYMPTOMS or item.category not in CATEGORIES:
        raise LabelError(f"{where}: symptom {item.symptom!r} or category {item.category!r} is not in the contract")
    if (item.symptom == "none") != (item.category == "none") or (item.symptom == "none") != (item.retryable is None):
        raise LabelError(f"{where}: a healthy log has symptom, category none and retryable null, and only it")
    if set(culprit) - set(CULPRIT_KINDS):
        raise LabelError(f"{where}: culprit keys are {', '.join(CULPRIT_KINDS)}")
    return item


def _norm(kind: str, value: Any) -> str:
    text = str(value).strip().lower()
    if kind == "nodes":
        return text if text.replace(".", "").isdigit() else text.split(".", 1)[0]
    return text


def culprit_found(item: Excerpt, implicated: Mapping[str, list[Any]]) -> bool:
    """Every culprit the label names is among what the diagnosis implicates."""
    for kind in CULPRIT_KINDS:
        wanted = {_norm(kind, v) for v in item.culprit.get(kind, [])}
        got = {_norm(kind, v) for v in implicated.get(kind, [])}
        if not wanted <= got:
            return False
    return True


@dataclass
class Scores:
    failures: int = 0
    found: int = 0
    healthy: int = 0
    false_alarms: int = 0
    retryable_right: int = 0
    category_right: int = 0
    with_culprit: int = 0
    culprit_right: int = 0
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)  # (label, diagnosed) categories
    symptoms: Counter[tuple[str, str]] = field(default_factory=Counter)  # (label, diagnosed) symptoms
    misses: list[tuple[Excerpt, Mapping[str, Any], str]] = field(default_factory=list)

    def add(self, item: Excerpt, result: Mapping[str, Any]) -> None:
        self.confusion[(item.category, result["category"])] += 1
        self.symptoms[(item.symptom, result["symptom"])] += 1
        wrong: list[str] = []
        if not item.failed:
            self.healthy += 1
            if result["symptom"] != "none":
                self.false_alarms += 1
                wrong.append("false alarm")
        else:
            self.failures += 1
            self.found += result["symptom"] != "none"
            self.retryable_right += result["retryable"] is item.retryable
            self.category_right += result["category"] == item.category
            if result["symptom"] == "none":
                wrong.append("missed")
            elif result["category"] != item.category:
                wrong.append(f"category {result['category']} (label {item.category})")
            if result["retryable"] is not item.retryable and result["symptom"] != "none":
                wrong.append(f"retryable {result['retryable']}")
            if item.names_culprit:
                self.with_culprit += 1
                if culprit_found(item, result["implicated"]):
                    self.culprit_right += 1
                else:
                    wrong.append(f"culprit {dict(item.culprit)} not in {result['implicated']}")
        if wrong:
            self.misses.append((item, result, "; ".join(wrong)))

    def rates(self) -> dict[str, float]:
        def ratio(a: int, b: int) -> float:
            return a / b if b else 1.0

        return {
            "found": ratio(self.found, self.failures),
            "false_alarms": ratio(self.false_alarms, self.healthy),
            "retryable": ratio(self.retryable_right, self.failures),
            "category": ratio(self.category_right, self.failures),
            "culprit": ratio(self.culprit_right, self.with_culprit),
        }


def diagnose(item: Excerpt) -> dict[str, Any]:
    """`recovery diagnose --json`'s object for the excerpt (without `file`)."""
    from recovery.client.cli_diagnose import diagnose_file

    return diagnose_file(item.path, None, None, {})


def score(items: Iterable[Excerpt]) -> Scores:
    scores = Scores()
    for item in items:
        scores.add(item, diagnose(item))
    return scores
