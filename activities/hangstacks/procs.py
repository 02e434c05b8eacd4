"""Finding a job's ranks among this machine's processes, from /proc.

Two ways in:

- by environment (Slurm): every process of a job step carries `SLURM_JOB_ID` and
  `SLURMD_NODENAME` in its environment. The helper runs as a step of the same job, so it leaves
  out its own step (`SLURM_STEP_ID`) and its own ancestry. The node name matters even on a real
  cluster's one-node-per-host: on the dev cluster every node shares this machine's /proc.
- by process group (local scheduler): the daemon starts each node's copy of the script as the
  leader of its own group; the group's members and their descendants are the copy's processes.

A rank is a Python process with `RANK` in its environment (torchrun, and most launchers, set it);
in a job where no process has one, `SLURM_PROCID` is the rank (one srun task per rank). Only the
topmost process of each rank is dumped: its data loader workers inherit the same variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_PYTHON = re.compile(r"^(python|pypy)[\d.]*m?$")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    exe: str
    cmdline: tuple[str, ...]
    env: dict[str, str] = field(hash=False, compare=False)

    @property
    def python(self) -> bool:
        names = [Path(self.exe).name, Path(self.cmdline[0]).name if self.cmdline else ""]
        return any(_PYTHON.match(name) for name in names if name)

    @property
    def command(self) -> str:
        return " ".join(self.cmdline)[:200]


@dataclass(frozen=True)
class Rank:
    proc: Proc
    rank: int | None
    world_size: int | None


def read_proc(pid: int) -> Proc | None:
    """A process's identity and environment; None if it is gone or not ours to read."""
    base = Path(f"/proc/{pid}")
    try:
        stat = (base / "stat").read_text()
        environ = (base / "environ").read_bytes()
        cmdline = (base / "cmdline").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if not fields or fields[0] == "Z":
        return None
    try:
        exe = os.readlink(base / "exe")
    except OSError:
        exe = ""
    env = dict(_pair(item) for item in environ.split(b"\0") if b"=" in item)
    args = tuple(part.decode(errors="replace") for part in cmdline.split(b"\0") if part)
    return Proc(pid=pid, ppid=int(fields[1]), exe=exe, cmdline=args, env=env)


def _pair(item: bytes) -> tuple[str, str]:
    key, _, value = item.decode(errors="replace").partition("=")
    return key, value


def all_procs() -> list[Proc]:
    pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    return [p for p in (read_proc(pid) for pid in pids) if p is not None]


def by_environment(procs: Iterable[Proc], job_id: str, node: str | None, me: int | None = None) -> list[Proc]:
    """The job's processes on `node`, without the asking step's own processes and ancestry."""
    everything = list(procs)
    me = os.getpid() if me is None else me
    mine = _ancestry(everything, me)
    own_step = next((p.env.get("SLURM_STEP_ID") for p in everything if p.pid == me), None)
    return [
        p
        for p in everything
        if _job_of(p) == job_id
        and (node is None or p.env.get("SLURMD_NODENAME") == node)
        and p.pid not in mine
        and (own_step is None or p.env.get("SLURM_STEP_ID") != own_step)
    ]


def by_group(procs: Iterable[Proc], pgid: int, job_id: str, groups: dict[int, int] | None = None) -> list[Proc]:
    """The group's members and all their descendants that belong to the job (a recycled group
    id of some other process is not the job's). `groups`: pid -> pgid (default: read /proc)."""
    everything = list(procs)
    group_of = groups if groups is not None else {p.pid: _pgid(p.pid) for p in everything}
    children: dict[int, list[Proc]] = {}
    for p in everything:
        children.setdefault(p.ppid, []).append(p)
    found: dict[int, Proc] = {}
    todo = [p for p in everything if group_of.get(p.pid) == pgid]
    while todo:
        p = todo.pop()
        if p.pid not in found:
            found[p.pid] = p
            todo += children.get(p.pid, [])
    return [p for p in found.values() if _job_of(p) == job_id]


def ranks(procs: Iterable[Proc]) -> tuple[list[Rank], int]:
    """The topmost Python process of each rank, and how many other Python processes there are.
    Processes without a rank (launchers) are left out, unless no process has one: then the
    topmost Python processes are all there is to show, unjudged."""
    python = [p for p in procs if p.python]
    key = "RANK" if any("RANK" in p.env for p in python) else "SLURM_PROCID"
    size_key = "WORLD_SIZE" if key == "RANK" else "SLURM_NTASKS"
    same: dict[str | None, set[int]] = {}
    for p in python:
        same.setdefault(p.env.get(key), set()).add(p.pid)
    top = [p for p in python if p.ppid not in same[p.env.get(key)]]
    found = [Rank(p, _int(p.env.get(key)), _int(p.env.get(size_key))) for p in top]
    ranked = [r for r in found if r.rank is not None]
    chosen = ranked or found
    chosen.sort(key=lambda r: (r.rank is None, r.rank, r.proc.pid))
    return chosen, len(python) - len(chosen)


def _ancestry(procs: list[Proc], pid: int) -> set[int]:
    parents = {p.pid: p.ppid for p in procs}
    seen = {pid}
    while (pid := parents.get(pid, 0)) > 1 and pid not in seen:
        seen.add(pid)
    return seen


def _job_of(proc: Proc) -> str | None:
    return proc.env.get("SLURM_JOB_ID") or proc.env.get("SLURM_JOBID")


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
