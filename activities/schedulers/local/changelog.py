"""What changed in the daemon, in order: the memory behind its list-and-watch answers.

A watcher reads everything once and keeps the cursor it was given; from then on it asks for what
changed since that cursor, which is the keys (job ids, node names) touched since, each listed
once. A cursor names the daemon's epoch (a random token per start), so a cursor from before a
restart, from another daemon or from too far back is answered "read everything", never with a
partial list.
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")

# Changes remembered: a watcher further behind than this reads everything again.
MAX_CHANGES = 100_000


class ChangeLog(Generic[K]):
    def __init__(self, epoch: str, limit: int = MAX_CHANGES) -> None:
        self.epoch = epoch
        self.limit = limit
        # Change number n (a cursor's count) is `_keys[n - _base - 1]`.
        self._keys: list[K] = []
        self._base = 0

    def add(self, key: K) -> None:
        self._keys.append(key)
        if len(self._keys) > self.limit:
            half = len(self._keys) // 2
            del self._keys[:half]
            self._base += half

    @property
    def cursor(self) -> str:
        """Where a watcher that has read everything up to now stands."""
        return f"{self.epoch}:{self._base + len(self._keys)}"

    def since(self, cursor: str | None) -> set[K] | None:
        """The keys touched after `cursor`; None if this log cannot tell (no cursor, another
        epoch, malformed, or further back than it remembers): the watcher must read everything."""
        epoch, _, seen = (cursor or "").partition(":")
        if epoch != self.epoch or not seen.isdigit():
            return None
        done = int(seen)
        if not self._base <= done <= self._base + len(self._keys):
            return None
        return set(self._keys[done - self._base :])
