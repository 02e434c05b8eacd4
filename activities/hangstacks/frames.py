"""Where a rank is, from its py-spy samples: waiting in a collective, outside any, or moving.

A rank whose main thread waits in a collective (a torch.distributed call such as all_reduce or
barrier, or, in native frames, c10d/gloo/NCCL code: DDP's all-reduce waits in C++ under
`loss.backward()`) in every sample is **waiting**; one that is in none of them is **outside**;
one that was in a collective in one sample and not in another is **moving**: it is not stuck.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from recovery.activities.hangstacks.model import Frame, RankProcess, ThreadStack

MAX_SHOWN_FRAMES = 6

_COLLECTIVE_FILES = ("torch/distributed/", "deepspeed/comm/")
# torchrun's own process management waits for its workers, not for other ranks.
_NOT_COLLECTIVE_FILES = ("torch/distributed/elastic/multiprocessing/",)
_COLLECTIVES = frozenset(
    {
        "all_reduce",
        "all_reduce_coalesced",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "all_gather_coalesced",
        "_all_gather_base",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
        "broadcast",
        "broadcast_object_list",
        "barrier",
        "monitored_barrier",
        "_store_based_barrier",
        "all_to_all",
        "all_to_all_single",
        "reduce",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "send",
        "recv",
        "send_object_list",
        "recv_object_list",
        "batch_isend_irecv",
        "wait",
        "wait_tensor",
    }
)
_NATIVE_COMM = re.compile(r"^(c10d::|gloo::|nccl|torch::distributed::)|ProcessGroup(NCCL|Gloo)", re.IGNORECASE)

State = Literal["waiting", "outside", "moving", "unread"]


@dataclass(frozen=True)
class RankView:
    """One rank as judged: where it is, and the stack that shows it."""

    rank: int
    node: str
    state: State
    where: Frame | None  # the collective frame it waits in, or its innermost Python frame
    shown: str  # the stack, trimmed, innermost first
    steady: bool  # the same stack in every sample
    reason: str = ""  # unread: why


def collective_frame(thread: ThreadStack) -> Frame | None:
    """The frame that shows the thread waiting in a collective; None if none does. The
    torch.distributed call names the collective better than the C++ under it, so it comes first."""
    python = next((f for f in thread.frames if _python_collective(f)), None)
    return python or next((f for f in thread.frames if f.native and _NATIVE_COMM.search(f.name)), None)


def _python_collective(frame: Frame) -> bool:
    if frame.native or not frame.file.startswith(_COLLECTIVE_FILES) or frame.file.startswith(_NOT_COLLECTIVE_FILES):
        return False
    return frame.name.rsplit(".", 1)[-1] in _COLLECTIVES


def main_thread(process: RankProcess, threads: list[ThreadStack]) -> list[ThreadStack]:
    """The threads to judge by: the main thread (its id is the pid), else all of them."""
    main = [t for t in threads if t.os_thread_id == process.pid] or [t for t in threads if t.name == "MainThread"]
    return main or threads


def view(process: RankProcess, node: str) -> RankView:
    rank = process.rank if process.rank is not None else -1
    if not process.samples:
        return RankView(rank, node, "unread", None, "", False, process.error or "no stack")
    shown: list[str] = []
    waits: list[Frame | None] = []
    for threads in process.samples:
        judged = main_thread(process, threads)
        frame = next((f for f in (collective_frame(t) for t in judged) if f is not None), None)
        waits.append(frame)
        shown.append(_shown(judged[0] if judged else ThreadStack(), frame))
    state: State = "waiting" if all(waits) else "outside" if not any(waits) else "moving"
    last = process.samples[-1]
    judged = main_thread(process, last)
    where = waits[-1] or next((f for t in judged for f in t.frames if not f.native), None)
    return RankView(rank, node, state, where, shown[-1], len(set(shown)) == 1)


def _shown(thread: ThreadStack, wait: Frame | None) -> str:
    """Python frames, innermost first; a native wait first when Python shows no collective."""
    frames = [f for f in thread.frames if not f.native][:MAX_SHOWN_FRAMES]
    if wait is not None and wait.native:
        frames = [wait, *frames[: MAX_SHOWN_FRAMES - 1]]
    if not frames:
        frames = thread.frames[:MAX_SHOWN_FRAMES]
    name = f"{thread.name}: " if thread.name else ""
    return name + " < ".join(f.describe() for f in frames)
