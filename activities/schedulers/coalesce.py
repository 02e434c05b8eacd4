"""One scheduler poll for every watched job in a worker.

Each watch activity asks about its own job; `CoalescingObserver` answers all the questions that
arrive within `window` seconds with a single `observe` of all their job ids (on Slurm, one
`squeue`), so a worker watching a thousand runs does not run a thousand squeues per interval.
Reads right before an action do not come through here: they must be fresh, and are.

`nodes` shares one read of every node the same way, among the diagnoses of a burst: each of
100 failures at once read all 1,208 nodes of the benchmark's cluster, a quarter of the worker's
CPU in the burst (py-spy). Every caller still gets a read begun after it asked. A scheduler that
can say which nodes changed (`NodesWatchable`: the local one) is read as a list-and-watch by a
`NodeBook`: every node once, then only the nodes that changed. At 10,000 nodes a full read
parsed 10,000 `NodeInfo` (50 ms holding the GIL, in a thread) for each diagnosis of a burst.
A read is a `NodeIndex`, which the book keeps current from the changed nodes too (the usable
count with it), so that a diagnosis never walks every node.
"""

from __future__ import annotations

import asyncio

from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.schedulers.base import NodesWatchable, Scheduler
from recovery.workflows.models import JobObservation, NodeInfo

_Waiter = tuple[list[str], "asyncio.Future[dict[str, JobObservation]]"]


NODES_WINDOW = 0.25  # diagnoses asking for the nodes within this share one read


class NodeBook:
    """Every node as of the last read, kept current from what changed since (list-and-watch).
    Reads take turns: an older answer applied after a newer one would bring back old states."""

    def __init__(self, scheduler: NodesWatchable) -> None:
        self.scheduler = scheduler
        self.full_reads = 0  # for tests: how often it had to read every node
        self._nodes: dict[str, NodeInfo] = {}
        self._unusable: set[str] = set()
        self._cursor: str | None = None
        self._turn = asyncio.Lock()

    async def read(self) -> NodeIndex:
        """Every node, as of a read begun after the call."""
        async with self._turn:
            changes = await self.scheduler.node_changes(self._cursor)
            if changes.full:
                self.full_reads += 1
                self._nodes, self._unusable = {}, set()
            for node in changes.nodes:
                self._nodes[node.name] = node
                if unusable(node):
                    self._unusable.add(node.name)
                else:
                    self._unusable.discard(node.name)
            self._cursor = changes.cursor
            # A copy of the dict (not of the nodes, which are never changed): later reads go on
            # updating the book while diagnoses still read this one.
            return NodeIndex(dict(self._nodes), len(self._nodes) - len(self._unusable))


class CoalescingObserver:
    def __init__(self, scheduler: Scheduler, window: float) -> None:
        self.scheduler = scheduler
        self.window = window
        self.polls = 0  # scheduler calls made, for tests and metrics
        self._waiting: list[_Waiter] = []
        self._flusher: asyncio.Task[None] | None = None
        self._node_read: asyncio.Task[NodeIndex] | None = None
        self.book = NodeBook(scheduler) if isinstance(scheduler, NodesWatchable) else None

    async def nodes(self) -> list[NodeInfo]:
        """Every node, from a read begun after the call; callers within NODES_WINDOW share it."""
        return (await self.node_index()).nodes

    async def node_index(self) -> NodeIndex:
        """`nodes`, indexed; shared by its callers, who only read it."""
        if self._node_read is None:
            self._node_read = asyncio.create_task(self._read_nodes())
        # shield: one caller cancelled (its activity) must not cancel the read the others wait for
        return await asyncio.shield(self._node_read)

    async def _read_nodes(self) -> NodeIndex:
        # A book's read is cheap: it shares only among the callers of this turn of the loop.
        await asyncio.sleep(NODES_WINDOW if self.book is None else 0)
        self._node_read = None  # whoever asks from now on waits for the next read
        if self.book is not None:
            return await self.book.read()
        return NodeIndex.of(await self.scheduler.nodes())

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        future: asyncio.Future[dict[str, JobObservation]] = asyncio.get_running_loop().create_future()
        self._waiting.append((job_ids, future))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_after_window())
        return await future

    async def _flush_after_window(self) -> None:
        await asyncio.sleep(self.window)
        batch, self._waiting, self._flusher = self._waiting, [], None
        wanted = sorted({job for ids, _ in batch for job in ids})
        self.polls += 1
        try:
            found = await self.scheduler.observe(wanted)
        except BaseException as e:  # every waiter hears of it, whatever it was; nothing is swallowed
            for _, future in batch:
                if not future.done():
                    future.set_exception(e)
            raise
        for ids, future in batch:
            if not future.done():  # a cancelled watch no longer listens
                future.set_result({job: found[job] for job in ids if job in found})
