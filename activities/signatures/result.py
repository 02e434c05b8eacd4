"""What a log diagnosis says: the `recovery diagnose --json` shape, and who it implicates."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from recovery.activities.signatures.prefixes import LineContext, node_name
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.text import clip
from recovery.workflows.models import Category

EVIDENCE_TEXT = 500


class Implicated(BaseModel):
    model_config = ConfigDict(extra="forbid")

    nodes: list[str] = Field(default_factory=list)
    ranks: list[int] = Field(default_factory=list)
    gpus: list[str] = Field(default_factory=list)
    peers: list[str] = Field(default_factory=list)


class EvidenceLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    line: int
    signature: str
    text: str


class LogDiagnosis(BaseModel):
    """A log's diagnosis, as one `recovery diagnose --json` object (without `file`)."""

    model_config = ConfigDict(extra="forbid")

    symptom: Literal["crash", "hang", "straggler", "none"]
    category: Category | Literal["none"]
    retryable: bool | None
    implicated: Implicated = Field(default_factory=Implicated)
    # Whether the nodes it implicates should be kept out of a restart: false when the failure
    # is the program's (a bug, its memory) or the scheduler's, or a GPU fault the program caused.
    exclude: bool = True
    evidence: list[EvidenceLine] = Field(default_factory=list)
    explanation: str = ""


HEALTHY = LogDiagnosis(
    symptom="none", category="none", retryable=None, exclude=False, explanation="no failure found in the log"
)


class Implicating:
    """What a diagnosis implicates, collected in order from a pattern's groups, line prefixes,
    torchelastic's root cause and the task layout."""

    def __init__(self) -> None:
        self.nodes: list[str] = []
        self.ranks: list[int] = []
        self.gpus: list[str] = []
        self.peers: list[str] = []
        # Ranks within their node (torchelastic's local_rank, torchrun's `[default3]:`): global
        # ranks only where the log says how they map (`map_local_ranks`).
        self.local_ranks: list[int] = []
        self.exit_code: str | None = None
        self.signal: str | None = None

    def add_groups(self, groups: Mapping[str, str]) -> None:
        if host := groups.get("host"):
            add_once(self.nodes, node_name(host))
        if (rank := groups.get("rank")) and rank.isdigit():
            add_once(self.ranks, int(rank))
        if (local := groups.get("local_rank")) and local.isdigit():
            add_once(self.local_ranks, int(local))
        for listed in rank_list(groups.get("ranks", "")):
            add_once(self.ranks, listed)
        if pci := groups.get("pci"):
            add_once(self.gpus, pci.lower())
        if gpu := groups.get("gpu"):
            add_once(self.gpus, f"gpu{gpu}" if gpu.isdigit() else gpu)
        if peer := groups.get("peer"):
            add_once(self.peers, peer)
        self.exit_code = self.exit_code or groups.get("exit_code")
        if groups.get("signal"):
            self.signal = self.signal or f"{groups['signal']} ({groups.get('signame', 'signal')})"

    def add_root_cause(self, fields: Mapping[str, str]) -> None:
        """torchelastic's root cause fills in where the winning line itself is silent."""
        rank = fields.get("rank", "")
        same_rank = rank.isdigit() and int(rank) in self.ranks
        if not self.ranks and not self.nodes:
            self.add_groups(fields)
        elif same_rank:
            self.add_groups({k: v for k, v in fields.items() if k != "rank"} if self.nodes else fields)

    def add_peers(self, others: Iterable[Mapping[str, str]]) -> None:
        """Peers that other lines name, for a network error that names none itself."""
        for groups in others:
            if peer := groups.get("peer"):
                add_once(self.peers, peer)

    def add_context(self, context: LineContext) -> None:
        if context.rank is not None:
            add_once(self.ranks, context.rank)
        if context.host is not None:
            add_once(self.nodes, context.host)
        if context.gpu is not None:
            add_once(self.gpus, context.gpu)
        if context.local_rank is not None and context.rank is None:
            add_once(self.local_ranks, context.local_rank)

    def map_local_ranks(self, global_of: Callable[[int], int | None] | None) -> None:
        """Local ranks become global ranks where the log gave the mapping, and no global rank
        was named already; otherwise they stay local (the explanation says so)."""
        if self.ranks or global_of is None:
            return
        for local in self.local_ranks:
            if (rank := global_of(local)) is not None:
                add_once(self.ranks, rank)
        if self.ranks:
            self.local_ranks = []

    def map_ranks(self, layout: Mapping[int, str]) -> None:
        for rank in self.ranks:
            if rank in layout:
                add_once(self.nodes, layout[rank])

    def map_gpus(self, index: Mapping[str, str]) -> None:
        """Each GPU by both names where the log gives both: its PCI bus id and its index."""
        by_index = {v: k for k, v in index.items()}
        for gpu in list(self.gpus):
            if (other := index.get(gpu) or by_index.get(gpu)) is not None:
                add_once(self.gpus, other)

    def implicated(self) -> Implicated:
        return Implicated(nodes=self.nodes, ranks=self.ranks, gpus=self.gpus, peers=self.peers)

    def where(self) -> str:
        parts = [f"rank {', '.join(map(str, self.ranks))}" if self.ranks else ""]
        parts.append(f"local rank {', '.join(map(str, self.local_ranks))}" if self.local_ranks else "")
        parts.append(f"node {', '.join(self.nodes)}" if self.nodes else "")
        parts.append(f"GPU {', '.join(self.gpus)}" if self.gpus else "")
        parts.append(f"peer {', '.join(self.peers)}" if self.peers else "")
        return ", ".join(p for p in parts if p)


T = TypeVar("T")
MAX_LISTED_RANKS = 64  # `tasks 0-4095` names the whole job, not a culprit worth listing


def rank_list(text: str) -> list[int]:
    """Ranks from a list as Slurm prints it (`8-15`, `1,3,5-7`) or as PyTorch joins them (`3, 5`)."""
    ranks: list[int] = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        ranks.extend(range(int(first), int(last or first) + 1)[: MAX_LISTED_RANKS - len(ranks)])
        if len(ranks) >= MAX_LISTED_RANKS:
            break
    return ranks


def add_once(items: list[T], value: T) -> None:
    if value not in items:
        items.append(value)


# Evidence names its line's signature; lines the structure found get the name they stand for.
_STRUCTURE_NAMES = {"elastic": "torchelastic-root-cause", "struct": "uncaught-exception"}


def evidence_line(match: LineMatch) -> EvidenceLine:
    text = "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in match.text[: EVIDENCE_TEXT + 1])
    kind, _, _ = match.pattern.partition(":")
    signature = _STRUCTURE_NAMES.get(kind, match.pattern) if ":" in match.pattern else match.pattern
    return EvidenceLine(line=match.line, signature=signature, text=clip(text.strip(), EVIDENCE_TEXT))
