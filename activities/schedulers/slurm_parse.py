"""Pure parsers for what Slurm's commands print: no processes, no clock, no I/O.

Slurm prints text meant for people, and a job's name, comment, reason and output paths are
free text that may hold any character, newlines and our own delimiters included. So:

- Tabular output (`squeue -O`, `sacct -P`, `sinfo -O`) is requested with a delimiter that ends in
  a random nonce chosen per call (`Delimiters`): a job name cannot forge a field or a record it
  cannot predict.
- `scontrol show job -o` (one job per call) is parsed by known keys, in the order Slurm prints
  them, after removing the job name, which the caller already knows exactly from `squeue`.

Values that Slurm writes for "nothing" (`(null)`, `None`, `N/A`, `Unknown`, `None assigned`)
become empty values here, so callers never see them.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

EMPTY_VALUES = frozenset({"", "(null)", "null", "None", "NONE", "none", "N/A", "n/a", "Unknown", "None assigned"})


def clean(value: str) -> str:
    """Slurm's placeholders for "nothing" as an empty string; anything else unchanged."""
    return "" if value.strip() in EMPTY_VALUES else value


# --- delimited tables ------------------------------------------------------------------------


@dataclass(frozen=True)
class Delimiters:
    """A field and a record delimiter no job's free text can contain by accident or on purpose.

    Control characters keep them out of anything a person types; the nonce keeps them out of
    anything an adversary types, since it is chosen after the job was submitted.
    """

    field: str
    record: str

    @classmethod
    def fresh(cls) -> Delimiters:
        nonce = secrets.token_hex(6)
        return cls(field=f"\x1f{nonce}\x1f", record=f"\x1e{nonce}\x1e")


def split_records(text: str, delims: Delimiters, fields: list[str]) -> list[dict[str, str]]:
    """Rows of a table whose every field ends with `delims.field`, the last with `delims.record`
    (as `squeue -O 'A:<field>,B:<record>'` prints it). Rows of the wrong width are dropped."""
    rows = []
    for chunk in text.split(delims.record)[:-1]:
        values = chunk.lstrip("\r\n").split(delims.field)
        if len(values) == len(fields):
            rows.append(dict(zip(fields, values, strict=True)))
    return rows


def split_lines(text: str, sep: str, fields: list[str]) -> list[dict[str, str]]:
    """Rows of a table with one delimiter between fields and a newline after each row (as
    `sacct -P --delimiter=SEP` prints it). A newline inside a field is kept: rows are cut only
    where the separator count says a row is complete, so the first and last field must be ones
    that never hold a newline (a job id, a time)."""
    parts = text.split(sep)
    rows: list[dict[str, str]] = []
    current = [parts[0]] if parts else []
    for part in parts[1:]:
        if len(current) == len(fields) - 1:
            last, _, rest = part.partition("\n")
            current.append(last)
            rows.append(dict(zip(fields, current, strict=True)))
            current = [rest]
        else:
            current.append(part)
    return [row for row in rows if row[fields[0]].strip()]


# --- scontrol show job -o --------------------------------------------------------------------

# The keys `scontrol show job -o` prints, 22.05 through 25.x. A value runs until the next known
# key, so values with spaces (Reason, Comment, paths) are kept whole.
SCONTROL_JOB_KEYS: tuple[str, ...] = tuple(
    re.findall(
        r"\S+",
        "JobId ArrayJobId ArrayTaskId ArrayTaskThrottle JobName UserId GroupId MCS_label Priority Nice "
        "Account QOS JobState Reason Dependency Requeue Restarts BatchFlag Reboot ExitCode DerivedExitCode "
        "RunTime TimeLimit TimeMin SubmitTime EligibleTime AccrueTime StartTime EndTime Deadline "
        "SuspendTime SecsPreSuspend LastSchedEval Scheduler Partition AllocNode:Sid ReqNodeList "
        "ExcNodeList NodeList SchedNodeList BatchHost StepMgrEnabled NumNodes NumCPUs NumTasks CPUs/Task "
        "ReqB:S:C:T TRES ReqTRES AllocTRES Socks/Node NtasksPerN:B:S:C CoreSpec MinCPUsNode "
        "MinMemoryNode MinMemoryCPU "
        "MinTmpDiskNode Features DelayBoot OverSubscribe Contiguous Licenses LicensesAlloc Network "
        "Command WorkDir AdminComment SystemComment Comment StdErr StdIn StdOut Power Reservation "
        "TresPerNode TresPerJob TresPerTask CpusPerTres MemPerTres MailUser MailType NtasksPerTRES "
        "Prefer Container ContainerID OOMKillStep ResvPort Partitions Flags Nodes CPU_IDs Mem GRES "
        "Segment HetJobId HetJobOffset HetJobIdSet CronJob CrontabSpec",
    )
)

# Values that never hold a space.
_ONE_WORD_KEYS = frozenset(
    re.findall(
        r"\S+",
        "JobId ArrayJobId ArrayTaskId UserId GroupId Priority JobState Restarts ExitCode DerivedExitCode "
        "SubmitTime EligibleTime StartTime EndTime Partition ReqNodeList ExcNodeList NodeList "
        "SchedNodeList BatchHost NumNodes Requeue BatchFlag",
    )
)
_KEY_ALTERNATIVES = "|".join(re.escape(k) for k in sorted(SCONTROL_JOB_KEYS, key=len, reverse=True))
_KEY_RE = re.compile(r"(?:^|(?<=\s))(" + _KEY_ALTERNATIVES + r")=")


def parse_scontrol_job(text: str, name: str | None = None) -> dict[str, str]:
    """One job from `scontrol show job -o J` as {key: value}.

    With `name` (known exactly from squeue) the name is cut out first, so a name holding
    " JobState=COMPLETED" cannot pose as a field. Of each key the first occurrence counts:
    fields come in a fixed order and the user's free text (command, workdir, comment, output
    paths) comes after the fields that matter; those free-text fields are the last occurrence
    before the next known key, and are better taken from squeue.
    """
    text = text.strip()
    fields: dict[str, str] = {}
    if name is not None:
        match = re.match(r"JobId=(\S+) JobName=", text)
        if match and text[match.end() :].startswith(name + " "):
            fields["JobId"], fields["JobName"] = match.group(1), name
            text = text[match.end() + len(name) + 1 :]
    matches = list(_KEY_RE.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        key, value = match.group(1), text[match.end() : end].rstrip()
        if key in _ONE_WORD_KEYS:
            # A key this parser does not know yet (a newer release) must not stick to the value.
            value = value.split(None, 1)[0] if value.strip() else ""
        fields.setdefault(key, value)
    return fields


# --- hostlists -------------------------------------------------------------------------------

_BRACKET = re.compile(r"\[([^\]]*)\]")


def expand_hostlist(text: str) -> list[str]:
    """`node[1-3,5],gpu01` -> every host name, in order; `node[01-02]` keeps the zero padding."""
    text = clean(text.strip())
    hosts: list[str] = []
    for item in _split_top_level(text):
        for host in _expand_one(item):
            if host and host not in hosts:
                hosts.append(host)
    return hosts


def _split_top_level(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _expand_one(item: str) -> list[str]:
    match = _BRACKET.search(item)
    if match is None:
        return [item]
    head, tail = item[: match.start()], item[match.end() :]
    return [head + part + rest for part in _expand_ranges(match.group(1)) for rest in _expand_one(tail)]


def _expand_ranges(spec: str) -> list[str]:
    out: list[str] = []
    for part in spec.split(","):
        lo, sep, hi = part.partition("-")
        if not sep:
            out.append(lo)
            continue
        width = len(lo) if lo.startswith("0") else 0
        out.extend(str(n).zfill(width) for n in range(int(lo), int(hi) + 1))
    return out


# --- exit codes, times, numbers --------------------------------------------------------------


def parse_exit_code(text: str) -> tuple[int | None, int | None]:
    """(exit status, signal) from Slurm's `EXIT:SIGNAL` (`3:0` exit 3, `0:9` killed by signal 9)
    or from a raw wait status (`768`, as `squeue -O exit_code` and slurmrestd print it)."""
    text = clean(text.strip())
    if not text:
        return None, None
    if ":" in text:
        code_text, _, sig_text = text.partition(":")
        code, sig = _int(code_text), _int(sig_text)
        if sig:
            return (code or None), sig
        return code, None
    raw = _int(text)
    return (None, None) if raw is None else decode_wait_status(raw)


def decode_wait_status(status: int) -> tuple[int | None, int | None]:
    """A POSIX wait status as (exit status, signal): 768 -> (3, None), 9 -> (None, 9)."""
    signal = status & 0x7F
    if signal:
        return None, signal
    return (status >> 8) & 0xFF, None


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def parse_int(text: str, default: int = 0) -> int:
    value = _int(clean(text))
    return default if value is None else value


def parse_time(text: str) -> datetime | None:
    """Slurm's local time without a zone (`2024-05-01T10:00:00`) as aware UTC; placeholders and
    epoch 0 as None. The local zone is the one this process runs in, the same as Slurm's client
    commands on this machine use to print it."""
    text = clean(text.strip())
    if not text or text.isdigit():
        return _from_epoch(text)
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.astimezone()  # a naive datetime is taken as local time
    return value.astimezone(UTC)


def _from_epoch(text: str) -> datetime | None:
    return datetime.fromtimestamp(int(text), UTC) if text and int(text) > 0 else None


# --- output paths ----------------------------------------------------------------------------


def expand_output_path(
    pattern: str,
    *,
    job_id: str,
    name: str,
    user: str,
    node: str,
    workdir: str = "",
    array_job_id: str = "",
    array_task_id: str = "",
) -> str:
    """The file a batch job writes, from its `-o`/`-e` pattern (`%j`, `%x`, `%u`, `%N`, `%A`, `%a`,
    `%%`...). 22.05's squeue prints the pattern unexpanded; newer releases expand it. A pattern
    with a backslash is taken literally, as sbatch does."""
    pattern = clean(pattern)
    if not pattern:
        return ""
    if "\\" not in pattern and "%" in pattern:
        values = {
            "%": "%",
            "j": job_id,
            "J": f"{job_id}.batch",
            "x": name,
            "u": user,
            "N": node,
            "n": "0",
            "s": "batch",
            "t": "0",
            "A": array_job_id or job_id,
            "a": array_task_id or "4294967294",
            "b": str(int(array_task_id) % 10) if array_task_id.isdigit() else "0",
        }
        pattern = re.sub(r"%(\d*)([%jJxuNnstAab])", lambda m: _pad(m.group(1), values[m.group(2)]), pattern)
    if workdir and not pattern.startswith("/"):
        pattern = f"{workdir.rstrip('/')}/{pattern}"
    return pattern


def _pad(width: str, value: str) -> str:
    return value.zfill(int(width)) if width and value.isdigit() else value


# --- srun's own words in a job's error output ------------------------------------------------

_SRUN_EXIT = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): Exited with exit code (\d+)")
_SRUN_KILLED = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): (Killed|Terminated|Segmentation fault)")
_SRUN_NODE_FAIL = re.compile(r"srun: error: Node failure on (\S+)")
_KILLED_SIGNAL = {"Killed": 9, "Terminated": 15, "Segmentation fault": 11}


@dataclass(frozen=True)
class SrunFailure:
    """One line in which srun names a node whose task failed."""

    node: str
    exit_code: int | None = None
    signal: int | None = None
    node_failure: bool = False


def parse_srun_failures(text: str) -> list[SrunFailure]:
    """srun's per-node failure lines, in order: the only place Slurm 22.05 says which node's task
    of a multi-node step failed (sacct has one exit code per step, not per node)."""
    out: list[SrunFailure] = []
    for line in text.splitlines():
        if m := _SRUN_EXIT.search(line):
            out.append(SrunFailure(node=m.group(1), exit_code=int(m.group(3))))
        elif m := _SRUN_KILLED.search(line):
            out.append(SrunFailure(node=m.group(1), signal=_KILLED_SIGNAL[m.group(3)]))
        elif m := _SRUN_NODE_FAIL.search(line):
            out.append(SrunFailure(node=m.group(1).rstrip("."), node_failure=True))
    return out
