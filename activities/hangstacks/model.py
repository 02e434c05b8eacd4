"""What the node helper reports about one node: its ranks' stacks and flight recorder state.

This is the helper's JSON line (one `NodeStacks`), read back by the worker. It never crosses into
workflow history as such: the judgement turns it into a few lines of evidence first.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Frame(_Model):
    """One frame as py-spy names it. `native`: a C/C++ frame (from `--native`), not Python's."""

    name: str
    file: str = ""
    line: int | None = None
    native: bool = False

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{self.name} ({where})" if where else self.name


class ThreadStack(_Model):
    """One thread, innermost frame first (py-spy's order)."""

    name: str = ""
    os_thread_id: int | None = None
    frames: list[Frame] = Field(default_factory=list)


class FlightState(_Model):
    """PyTorch's flight recorder, for one process group of one rank: the last collective this
    rank enqueued (its sequence number), and what that collective was, when the dump says."""

    group: str
    last_seq: int
    last_completed: int | None = None
    op: str = ""


class RankProcess(_Model):
    """A rank's main process on the node. `samples`: one py-spy dump per sample, each a list of
    threads; empty when py-spy failed (`error` says why). `rank` None: the process carries no
    rank in its environment (a launcher), and is never judged."""

    pid: int
    rank: int | None = None
    world_size: int | None = None
    command: str = ""
    samples: list[list[ThreadStack]] = Field(default_factory=list)
    error: str = ""
    flight: list[FlightState] = Field(default_factory=list)
    flight_note: str = ""  # why there is no flight recorder state, when the job enabled it


class NodeStacks(_Model):
    """One node's answer. `ok` False: nothing could be read there, and `reason` says why."""

    node: str
    ok: bool = True
    reason: str = ""
    processes: list[RankProcess] = Field(default_factory=list)
    others: int = 0  # more Python processes of the job (data loader workers, ...), not dumped
