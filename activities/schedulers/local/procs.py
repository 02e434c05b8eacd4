"""Process plumbing of the local cluster: Slurm's environment, hostlists, process groups.

Each copy of a batch script is the leader of its own process group, so one `killpg` reaches
everything the script started (unless it starts a new session itself, which Slurm would catch
with cgroups and we do not).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Iterable, Mapping
from itertools import groupby
from pathlib import Path

_NUMBERED = re.compile(r"^(.*?)(\d+)$")

# Set on every copy, so a restarted daemon can tell its own orphans from unrelated processes
# that happen to reuse a recorded process group id.
CLUSTER_ID_VAR = "RECOVERY_LOCAL_CLUSTER_ID"


def compress_hostlist(names: Iterable[str]) -> str:
    """Slurm's compressed hostlist: `node1,node2,node4` -> `node[1-2,4]`."""
    plain: list[str] = []
    numbered: dict[str, list[int]] = {}
    for name in names:
        match = _NUMBERED.match(name)
        if match is None:
            plain.append(name)
        else:
            numbered.setdefault(match.group(1), []).append(int(match.group(2)))
    parts = list(plain)
    for prefix, numbers in numbered.items():
        ranges = _ranges(sorted(set(numbers)))
        if len(ranges) == 1 and "-" not in ranges[0]:
            parts.append(prefix + ranges[0])
        else:
            parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)


def _ranges(numbers: list[int]) -> list[str]:
    out: list[str] = []
    for _, run in groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
        values = [number for _, number in run]
        first, last = values[0], values[-1]
        out.append(str(first) if first == last else f"{first}-{last}")
    return out


def slurm_env(
    *,
    base: Mapping[str, str],
    extra: Mapping[str, str],
    cluster_id: str,
    job_id: int,
    name: str,
    nodes: list[str],
    index: int,
    restart_count: int,
    submit_dir: str,
) -> dict[str, str]:
    """The environment of one copy: daemon env, then the request's, then Slurm's names on top."""
    # A daemon started inside a real Slurm job must not leak that job's identity into ours.
    env = {key: value for key, value in base.items() if not key.startswith("SLURM")}
    env.update(extra)
    hostlist = compress_hostlist(nodes)
    count = str(len(nodes))
    env.update(
        {
            "SLURM_JOB_ID": str(job_id),
            "SLURM_JOBID": str(job_id),
            "SLURM_JOB_NAME": name,
            "SLURM_JOB_NODELIST": hostlist,
            "SLURM_NODELIST": hostlist,
            "SLURM_JOB_NUM_NODES": count,
            "SLURM_NNODES": count,
            "SLURM_NTASKS": count,
            "SLURM_NODEID": str(index),
            "SLURM_PROCID": str(index),
            "SLURMD_NODENAME": nodes[index],
            "SLURM_RESTART_COUNT": str(restart_count),
            "SLURM_SUBMIT_DIR": submit_dir,
            "SLURM_CLUSTER_NAME": "local",
            "RECOVERY_LOCAL_CLUSTER": "1",
            CLUSTER_ID_VAR: cluster_id,
        }
    )
    return env


def script_argv(script: Path, args: list[str]) -> list[str]:
    """Run a script with a `#!` line directly, like sbatch; anything else with bash."""
    with script.open("rb") as handle:
        shebang = handle.read(2) == b"#!"
    return [str(script), *args] if shebang else ["/bin/bash", str(script), *args]


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal a process group we created; an already empty group is not an error."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _read_stat(int(entry.name))
        if stat is not None and stat[0] != "Z" and stat[1] == pgid:
            members.append(int(entry.name))
    return members


def _read_stat(pid: int) -> tuple[str, int] | None:
    """(state, pgrp) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces or parentheses.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[2])


def group_is_ours(pgid: int, cluster_id: str, job_id: int) -> bool:
    """True if a live member of the group carries this cluster's and this job's marks."""
    wanted = {
        f"{CLUSTER_ID_VAR}={cluster_id}".encode(),
        f"SLURM_JOB_ID={job_id}".encode(),
    }
    for pid in group_members(pgid):
        try:
            environ = set(Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"))
        except OSError:
            continue
        if wanted <= environ:
            return True
    return False


def process_alive(pid: int) -> bool:
    """True if `pid` runs and is not a zombie; reaps it if it is our own zombie child."""
    stat = _read_stat(pid)
    if stat is None:
        return False
    if stat[0] != "Z":
        return True
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return False


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


async def terminate_groups(pgids: list[int], grace: float) -> None:
    """SIGTERM the groups, then SIGKILL whatever of them is still alive after `grace` seconds."""
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + grace
    while pgids and asyncio.get_running_loop().time() < deadline:
        pgids = [pgid for pgid in pgids if group_members(pgid)]
        await asyncio.sleep(0.05)
    for pgid in pgids:
        signal_group(pgid, signal.SIGKILL)
