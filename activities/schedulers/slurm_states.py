"""Slurm's job and node states in `recovery`'s words.

Slurm has about thirty job states (and compact codes for them); `JobState` has nine. The raw
state stays visible in `JobObservation.scheduler_state`. Decisions made here:

- BOOT_FAIL is a node's fault (it did not boot): NODE_FAIL. OUT_OF_MEMORY is the job's own
  failure: FAILED (the reason says OutOfMemory). DEADLINE is a time limit: TIMEOUT. REVOKED (a
  federated sibling ran elsewhere) ends the job here: CANCELLED.
- Allocated but not plainly running (CONFIGURING, COMPLETING, SUSPENDED, RESIZING, STOPPED,
  SIGNALING, STAGE_OUT) is RUNNING: the job holds its nodes and has not ended yet.
- On its way back to the queue (REQUEUED, REQUEUE_HOLD, REQUEUE_FED, SPECIAL_EXIT,
  RESV_DEL_HOLD, EXPEDITING, and COMPLETING after a requeue) is PENDING: a requeued job is pending again
  with its restart count already raised, and an exclusion or a release can follow. EXPEDITING
  (a `sbatch --requeue=expedite` job that failed, where `enable_expedited_requeue` allows it;
  flagged REQUEUED too) is named before REQUEUED in Slurm's own job_state_string
  (src/common/slurm_protocol_defs.c), and ends held unless an epilog failed
  (batch_requeue_fini in src/slurmctld/job_mgr.c).
- Held: a pending job whose priority is 0 (Slurm's definition of held), whose reason says held
  (JobHeldUser, JobHeldAdmin, "job requeued in held state", "launch failed requeued held"), or in
  a held state (REQUEUE_HOLD, SPECIAL_EXIT, RESV_DEL_HOLD).
"""

from __future__ import annotations

from recovery.workflows.models import JobState

_BY_NAME: dict[str, JobState] = {
    "PENDING": JobState.PENDING,
    "RUNNING": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
    "CANCELLED": JobState.CANCELLED,
    "NODE_FAIL": JobState.NODE_FAIL,
    "TIMEOUT": JobState.TIMEOUT,
    "PREEMPTED": JobState.PREEMPTED,
    "BOOT_FAIL": JobState.NODE_FAIL,
    "OUT_OF_MEMORY": JobState.FAILED,
    "LAUNCH_FAILED": JobState.FAILED,
    "DEADLINE": JobState.TIMEOUT,
    "REVOKED": JobState.CANCELLED,
    "CONFIGURING": JobState.RUNNING,
    "COMPLETING": JobState.RUNNING,
    "SUSPENDED": JobState.RUNNING,
    "RESIZING": JobState.RUNNING,
    "STOPPED": JobState.RUNNING,
    "SIGNALING": JobState.RUNNING,
    "STAGE_OUT": JobState.RUNNING,
    "POWER_UP_NODE": JobState.RUNNING,
    "UPDATE_DB": JobState.RUNNING,
    "REQUEUED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING,
    "REQUEUE_FED": JobState.PENDING,
    "SPECIAL_EXIT": JobState.PENDING,
    "RESV_DEL_HOLD": JobState.PENDING,
    "EXPEDITING": JobState.PENDING,
}

# squeue's and sacct's compact codes (`%t`, `StateCompact`), for output that uses them.
_COMPACT = {
    "PD": "PENDING",
    "R": "RUNNING",
    "CD": "COMPLETED",
    "F": "FAILED",
    "CA": "CANCELLED",
    "NF": "NODE_FAIL",
    "TO": "TIMEOUT",
    "PR": "PREEMPTED",
    "BF": "BOOT_FAIL",
    "OOM": "OUT_OF_MEMORY",
    "DL": "DEADLINE",
    "RV": "REVOKED",
    "CF": "CONFIGURING",
    "CG": "COMPLETING",
    "S": "SUSPENDED",
    "RS": "RESIZING",
    "ST": "STOPPED",
    "SI": "SIGNALING",
    "SO": "STAGE_OUT",
    "RQ": "REQUEUED",
    "RH": "REQUEUE_HOLD",
    "RF": "REQUEUE_FED",
    "SE": "SPECIAL_EXIT",
    "RD": "RESV_DEL_HOLD",
}

_HELD_STATES = frozenset({"REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"})
_HELD_REASONS = frozenset({"jobheldadmin", "jobhelduser"})


def base_state(raw: str) -> str:
    """`CANCELLED by 1000` -> CANCELLED; `PENDING+REQUEUE_HOLD`/`RUNNING,COMPLETING` -> the first
    word; compact codes -> names. Always upper case."""
    word = raw.strip().split(" ", 1)[0]
    for sep in ("+", ","):
        word = word.split(sep, 1)[0]
    word = word.upper()
    return _COMPACT.get(word, word)


def state_flags(raw: str) -> set[str]:
    """Every state word in `PENDING+REQUEUE_HOLD` or `["PENDING", "REQUEUE_HOLD"]`-style output."""
    words = raw.replace(",", "+").split(" ", 1)[0].split("+")
    return {_COMPACT.get(w.strip().upper(), w.strip().upper()) for w in words if w.strip()}


def map_state(raw: str, reason: str = "", priority: int | None = None) -> tuple[JobState, bool]:
    """(JobState, held) for a Slurm job state, its reason and its priority."""
    name = base_state(raw)
    flags = state_flags(raw)
    state = _BY_NAME.get(name, JobState.UNKNOWN)
    if name == "COMPLETING" and _requeued(reason, flags):
        state = JobState.PENDING
    if flags & {"REQUEUE_HOLD", "REQUEUED", "REQUEUE_FED", "SPECIAL_EXIT", "EXPEDITING"} and not _ended(name):
        state = JobState.PENDING
    held = state is JobState.PENDING and (bool(flags & _HELD_STATES) or _held_reason(reason) or priority == 0)
    return state, held


def _ended(name: str) -> bool:
    state = _BY_NAME.get(name)
    return state is not None and state.ended


def _requeued(reason: str, flags: set[str]) -> bool:
    return "requeue" in reason.lower() or bool(flags & {"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "EXPEDITING"})


def _held_reason(reason: str) -> bool:
    text = reason.strip().lower().replace("_", " ")
    return text in _HELD_REASONS or "held" in text.split()


# --- nodes -----------------------------------------------------------------------------------

UNUSABLE_NODE_WORDS = ("down", "drain", "fail", "not_responding", "no_respond", "*")


def node_state(raw: str) -> str:
    """A node state as one lowercase word with its flags: `DOWN+NOT_RESPONDING` ->
    `down+not_responding`, `IDLE+DRAIN` -> `idle+drain`, `down*` stays `down*`."""
    return raw.strip().lower().replace(" ", "")


def node_unusable(state: str) -> bool:
    """DOWN, DRAIN(ED/ING), FAIL(ING) or NOT_RESPONDING (`*`), as the issue's item 7 names them."""
    return any(word in state for word in UNUSABLE_NODE_WORDS)
