"""The process's memory as the system sees it: its resident size, and handing freed pages back.

glibc keeps memory a program frees inside its heaps while live allocations sit between the
freed blocks, so a resident size stays at its high-water mark long after the objects are gone.
`trim` (glibc's `malloc_trim`) returns those pages: a worker does it after a collection that
freed much (worker/gc_pauses.py), the catalog after compiling patterns only to check them.
Elsewhere (no glibc, no /proc) both do nothing.
"""

from __future__ import annotations

import ctypes
import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def trim() -> None:
    """Hand the pages freed inside the allocator's heaps back to the system (glibc only)."""
    malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)


def resident_bytes() -> int | None:
    """This process's resident set size; None where the system does not say (no /proc)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None
