"""PyTorch's flight recorder dumps, where a job enabled them, as each rank's collective sequence.

A job turns the recorder on with `TORCH_FR_BUFFER_SIZE` (or the older `TORCH_NCCL_TRACE_BUFFER_SIZE`)
above 0; PyTorch then writes a rank's dump to `TORCH_FR_DUMP_TEMP_FILE` (older:
`TORCH_NCCL_DEBUG_INFO_TEMP_FILE`; default `/tmp/nccl_trace_rank_`) followed by the rank, when a
collective times out or on request. Nothing here asks for a dump: a dump that is there, and newer
than the process, is read; else the note says why there is none.

A dump is a pickle. Unpickling runs code named in the file, so it is read with an unpickler that
refuses every class: PyTorch's dumps hold only dicts, lists, tuples, strings and numbers.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recovery.activities.hangstacks.model import FlightState

DEFAULT_PREFIX = "/tmp/nccl_trace_rank_"
MAX_DUMP_BYTES = 64 * 1024 * 1024
MAX_GROUPS = 16  # a job with hundreds of process groups: the busiest are enough to compare


class _DataOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing {module}.{name}: a flight recorder dump holds plain data")


def enabled(env: Mapping[str, str]) -> bool:
    size = env.get("TORCH_FR_BUFFER_SIZE") or env.get("TORCH_NCCL_TRACE_BUFFER_SIZE") or "0"
    try:
        return int(size) > 0
    except ValueError:
        return False


def dump_path(env: Mapping[str, str], rank: int, cwd: str | None = None) -> Path:
    prefix = env.get("TORCH_FR_DUMP_TEMP_FILE") or env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or DEFAULT_PREFIX
    path = Path(prefix + str(rank))
    return path if path.is_absolute() or cwd is None else Path(cwd) / path


def read_flight(path: Path, not_before: float | None = None) -> tuple[list[FlightState], str]:
    """(the rank's state per process group, a note when there is none). `not_before`: a dump
    older than this (the process's start) belongs to an earlier run and is ignored."""
    try:
        stat = path.stat()
        if not_before is not None and stat.st_mtime < not_before:
            return [], f"flight recorder dump {path} predates the process"
        if stat.st_size > MAX_DUMP_BYTES:
            return [], f"flight recorder dump {path} is too large ({stat.st_size} bytes)"
        data = path.read_bytes()
    except FileNotFoundError:
        return [], f"no flight recorder dump at {path} (PyTorch writes one on a collective timeout)"
    except OSError as err:
        return [], f"cannot read flight recorder dump {path}: {err.strerror or err}"
    try:
        dump = _DataOnly(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError) as err:
        return [], f"flight recorder dump {path} is unreadable: {err}"
    states = summarize(dump)
    return states, "" if states else f"flight recorder dump {path} records no collective"


def summarize(dump: object) -> list[FlightState]:
    """Per process group: the last collective this rank enqueued (`pg_status`, or the newest
    entry where the dump has no status), the last it completed, and the last entry's name."""
    if not isinstance(dump, dict):
        return []
    entries = [e for e in dump.get("entries") or [] if isinstance(e, dict) and not e.get("is_p2p")]
    ops: dict[str, tuple[int, str]] = {}
    for entry in entries:
        group, seq = _group(entry), entry.get("collective_seq_id")
        if group is not None and isinstance(seq, int) and seq >= ops.get(group, (-1, ""))[0]:
            ops[group] = (seq, str(entry.get("profiling_name") or ""))
    status = dump.get("pg_status")
    states: dict[str, FlightState] = {}
    if isinstance(status, dict):
        for group, value in status.items():
            if isinstance(value, dict) and isinstance(value.get("last_enqueued_collective"), int):
                seq = value["last_enqueued_collective"]
                done = value.get("last_completed_collective")
                newest = ops.get(str(group), (-1, ""))
                states[str(group)] = FlightState(
                    group=str(group),
                    last_seq=seq,
                    last_completed=done if isinstance(done, int) and done >= 0 else None,
                    op=newest[1] if newest[0] == seq else "",
                )
    for group, (seq, op) in ops.items():
        states.setdefault(group, FlightState(group=group, last_seq=seq, op=op))
    return sorted(states.values(), key=lambda s: -s.last_seq)[:MAX_GROUPS]


def _group(entry: Mapping[str, Any]) -> str | None:
    """An entry's process group by name, as `pg_status` keys it (`process_group` is (name, desc))."""
    group = entry.get("process_group")
    if isinstance(group, list | tuple) and group:
        return str(group[0])
    pg_id = entry.get("pg_id")
    return str(pg_id) if isinstance(pg_id, int) else None


def process_started_at(pid: int) -> float | None:
    """When a process started, in seconds since the epoch (from /proc), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(
            float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
        )
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    try:
        ticks = int(fields[19])  # field 22 of stat: starttime, in clock ticks since boot
    except (IndexError, ValueError):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")
