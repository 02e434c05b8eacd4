"""From a log to a diagnosis: what went wrong, is it worth retrying, and where.

    diagnoser = LogDiagnoser(layout={0: "node1", 1: "node1", 2: "node2", 3: "node2"})
    for chunk in follow(path, stop=job_ended):
        records = diagnoser.feed(chunk.data)   # new progress records, for hang detection
    diagnoser.finish()
    print(diagnoser.diagnosis())               # a LogDiagnosis (the `diagnose --json` shape)

Rules:

- A signature match is fatal unless the run made progress after it: once `survive_steps`
  distinct steps beyond the highest step seen before the match are reported, the match is
  dropped (a traceback that was caught and logged, a retried connection, a warning). A log
  without any progress lines cannot show survival, so every match in it counts.
- The earliest fatal root-cause match wins; cascades (follow-on errors) win only when no root
  cause is left. On one line, the signature with the higher `priority` speaks for it. An NCCL
  result code (an exception's `unhandled cuda error`, a frame of NCCL's unwinding) gives way to
  a root cause read from an NCCL WARN line, which says what failed. A node
  fault (hardware, excluding its node) outranks an earlier error of the kinds it causes
  (`unknown`, `system_software`, `network`): it is their cause even when printed after them.
- A root cause implicates the rank and host that wrote its line (from line prefixes, see
  `prefixes.py`) and what its pattern's groups name. A cascade implicates only what its groups
  name: the rank that reports a timeout is a victim, not the culprit. A hardware cascade (Xid
  154 after the Xid that caused it) is the exception: the host that logged it holds the GPU.
  torchelastic's "Root Cause (first observed failure)" block fills in rank and host when the
  winner lacks them. A network error that names no peer takes the peers other fatal lines
  name (NCCL's "unhandled system error" names nobody, the socket error after it names the
  peer that went away). Ranks become nodes through the task layout when one is given.
- With no fatal match, a sustained slowdown in the log's own progress is a `straggler`;
  otherwise the log is healthy (`none`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from recovery.activities.progress import ProgressParser, ProgressRecord
from recovery.activities.signatures.catalog import Catalog, Signature, builtin_catalog
from recovery.activities.signatures.pace import REPORT_PATTERNS, LogPace, ReportedStragglers
from recovery.activities.signatures.phases import (
    BARRIER_OVERCOUNT_TIMEOUT,
    FOLLOWERS,
    INTERRUPTED_WAITING,
    WAIT,
    WAKERS,
    Phases,
    overcounted,
)
from recovery.activities.signatures.phases import PATTERNS as PHASE_PATTERNS
from recovery.activities.signatures.prefixes import LineContext, line_context, line_rank, ray_task_host
from recovery.activities.signatures.result import (
    HEALTHY,
    EvidenceLine,
    Implicated,
    Implicating,
    LogDiagnosis,
    evidence_line,
)
from recovery.activities.signatures.scanner import Gate, LineMatch, LogScanner, PatternSet, Sampler
from recovery.activities.signatures.structure import PATTERNS as STRUCTURE_PATTERNS
from recovery.activities.signatures.structure import TRACEBACK_SPAN, Tracebacks, Uncaught, remember
from recovery.activities.straggler import StragglerConfig

__all__ = ["EvidenceLine", "Implicated", "LogDiagnoser", "LogDiagnosis"]

# torchelastic's error summary, one field per line, after "Root Cause (first observed failure):".
ELASTIC_PATTERNS = [
    ("elastic:root-cause", r"Root Cause \(first observed failure\)"),
    # An entry of its "Failures:" list (`[1]:` on a line of its own): the other ranks that
    # failed. It speaks only when the root-cause block is not in the log (an excerpt cut short).
    ("elastic:failure", r"^\s*\[\d+\]:\s*$"),
    ("elastic:time", r"\btime\s*: (?P<when>\S+)"),
    ("elastic:host", r"\bhost\s*: (?P<host>[\w.-]+)"),
    ("elastic:rank", r"\brank\s*: (?P<rank>\d+) \(local_rank: \d+\)"),
    ("elastic:exitcode", r"\bexitcode\s*: (?P<exit_code>-?\d+)"),
    ("elastic:signal", r"\btraceback\s*: Signal (?P<signal>\d+) \((?P<signame>SIG\w+)\)"),
]
ELASTIC_BLOCK_LINES = 12
CHILD_FAILED = "torchelastic-child-failed"  # the signature of the exception the summary belongs to
STORE_BARRIER = "store-barrier-timeout"  # its line says how many processes came (phases.overcounted)
# A NaN or infinite loss read on a progress line (`loss: nan` among the step's fields) says the
# training diverged only if it stays so: a later progress line of the same writer that reports a
# finite loss shows one bad interval (an fp16 overflow, one bad batch) the run got past, as MMEngine
# and MMCV average the loss over the logging interval and print the next one finite.
LOSS_NOT_FINITE = "loss-not-finite"
# nvidia-smi's table row of a GPU: its index, then (after the name) its PCI bus id with an
# 8-digit domain (`|   0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off |`). A log that
# holds the table maps the bus ids the driver's messages name to the indices the user knows.
GPU_PATTERNS = [
    (
        "gpu:smi-row",
        r"^\|\s+(?P<gpu>\d{1,2})\s+[^|]{1,60}\|\s+(?:0000)?(?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})\.\d\s",
    )
]
MAX_GPUS = 256
# The node a job or pod ran on, as its scheduler reports it: PBS/Torque's job mail and qstat
# ("Exec host:  gpu-2-17/5", "exec_host = node1/0*8"), `kubectl describe pod` ("Node:
# gpu-node-3/10.0.0.5"). A node fault that names no node happened on the job's node when the
# log names exactly one.
EXEC_HOST_PATTERNS = [
    ("exec:host", r"^\s*(?:Exec host:|exec_host =)\s+(?P<host>[\w.-]+)/[\d*]+\s*$"),
    ("exec:host", r"^Node:\s+(?P<host>[\w.-]+)/\d{1,3}(?:\.\d{1,3}){3}\s*$"),
]
MAX_EXEC_HOSTS = 8
# srun announcing that it ends its own step (src/srun/launch.c _step_signal: `info("Terminating
# %ps")`, "Terminating StepId=1234.0"; older releases "Terminating job step 1234.0"). It does so
# when a task exited abnormally under --kill-on-bad-exit (or its wait for the other tasks ran
# out), and slurmstepd then reports that step as cancelled: nobody cancelled the job, a task
# failed first. Slurm 25.11 says so itself ("CANCELLED AT ... DUE TO TASK FAILURE"); older
# releases printed a bare "*** STEP 1234.0 ON node CANCELLED AT ... ***".
SRUN_PATTERNS = [("srun:terminating", r"^srun: Terminating (?:job step )?(?:StepId=)?(?P<step>\d+\.\w+)\s*$")]
MAX_SRUN_STEPS = 64
# NCCL tearing a communicator down (src/init.cc commReclaim, run by ncclCommDestroy and
# ncclCommAbort): when freeing its resources fails it says so in a WARN of its own ("commReclaim:
# cleanup comm %p rank %d failed in destroy/abort, error %d"; "commReclaim: comm %p (rank = %d) in
# abort|commDestroySync, error %d" for the sync before it), printed by the thread whose CUDACHECK
# WARN just reported the failed call. A CUDA call of NCCL's own refused there for an argument
# (`nccl-own-cuda-call-refused`: a handle or mapping the driver already dropped) belongs to the
# teardown, not to the run: the process goes on to finish its destroy (PyTorch's "Destroy
# complete."). An error a kernel left behind (`unspecified launch failure`, an illegal address)
# is the cuda table's, not this signature's, and still speaks when teardown reports it.
RECLAIM_PATTERNS = [
    (
        "teardown:nccl-reclaim",
        r"(?P<who>[\w.-]+:\d+:\d+) \[\d+\] \S+ (?:\(\w+\) )?NCCL WARN commReclaim: "
        r"(?:cleanup comm \S+ rank \d+ failed in destroy/abort|comm \S+ \(rank = \d+\) in (?:abort|commDestroySync))",
    )
]
# Ray's RayActorError for an actor that died of a system-level cause (python/ray/exceptions.py):
# "The actor died unexpectedly before finishing this task.", then tab-indented fields
# (`class_name:`, `actor_id:` and, when known, `pid:`, `name:`, `namespace:`, `ip:` with the IP
# of the node the actor ran on), then the death cause's own message on the next line ("The actor
# is dead because its worker process has died. ..."). The cause line names no node; the `ip:`
# line right above it does.
RAY_ACTOR_PATTERNS = [("ray:actor-ip", r"(?:^|\s)ip: (?P<host>\d{1,3}(?:\.\d{1,3}){3})\s*$")]
# The kernel's NFS client says when a server it had given up waiting on answers again
# (fs/nfs: "nfs: server %s not responding, still trying" or ", timed out", then "nfs: server %s
# OK"). An outage that ends with the same server's OK did not fail the run by itself: a job that
# lost I/O to it prints its own error, which still speaks.
NFS_PATTERNS = [("recovered:nfs", r"\bnfs: server (?P<peer>[\w.:-]+) OK\s*$")]
NFS_OUTAGES = frozenset({"kernel-nfs-not-responding", "kernel-nfs-timed-out"})
RECLAIM_LINES = 8  # how far back the thread's refused call may be (other ranks' lines between)
TEARDOWN_REFUSALS = frozenset({"nccl-own-cuda-call-refused"})
# libstdc++'s terminate handler (libsupc++/vterminate.cc __verbose_terminate_handler) reports an
# uncaught C++ exception, "terminate called after throwing an instance of 'T'" and its what(), then
# calls abort(): the process dies of SIGABRT, and what reports that death comes after the report
# (CPython's faulthandler "Fatal Python error: Aborted", the shell's "Aborted (core dumped)", absl's
# "*** SIGABRT received"). That abort is the terminate's own end, a follow-on of the exception the
# what() line names (a peer closing a Gloo pair, a watchdog's timeout), not a second cause. A c10
# what() carries its C++ frames (`frame #N: ...`), so the abort may come some lines after.
TERMINATE_REPORT = "cpp-terminate"
ABORT_REPORT = re.compile(r"\bAborted\b|\bSIGABRT\b")
ABORT_AFTER_TERMINATE_LINES = 64
_NCCL_WRITER = re.compile(r"([\w.-]+:\d+:\d+) \[\d+\] ")
# `kubectl describe pod` (pkg/describe describeContainerState): a container's `State:` (Running,
# Waiting or Terminated, with its Reason and Exit Code under it), then `Last State:` for the run
# before the kubelet restarted it, then `Ready:` and `Restart Count:`. An exit code under `Last
# State:` of a container whose `State:` is Running is a previous run's: the kubelet restarted it and
# it runs again, so a bare signal exit code there (a probe's kill, a node's) is not the run's end.
# A reason that names a cause (OOMKilled) still speaks, as a pod listed OOMKilled does.
K8S_STATE_PATTERNS = [
    ("k8s:running", r"^\s*State:\s+Running\s*$"),
    ("k8s:last-state", r"^\s*Last State:\s+Terminated\s*$"),
]
K8S_STATE_LINES = 4  # `Last State:` within this of `State: Running` (its `Started:` between)
K8S_EXIT_LINES = 3  # `Exit Code:` within this of `Last State:` (its `Reason:` between)
RESTARTED_EXIT = "container-exit-by-signal"
CANCELLED_BY_SRUN = ("slurm-cancelled", "scheduler-slurm-task-failure-kill")
_CANCELLED_STEP = re.compile(r"\*\*\* STEP (\S+) ")
# NCCL's detail of an error, as PyTorch prints it under the error (getNcclErrorDetailStr): a
# `Last error:` line, then the text of the WARN that caused it (`Error while creating shared
# memory segment ...`, `MNNVL ... is available but not working`).
DETAIL_PATTERNS = [("detail:last-error", r"^\s*(?:\[rank\d+\]: ?|\d+: )?Last error:\s*$")]
MAX_DETAILS = 64
# torchelastic's rendezvous result (agent/server/api.py, "[default] Rendezvous complete for
# workers. Result:"): how this agent's local ranks map to global ranks. One field per line.
RENDEZVOUS_PATTERNS = [
    ("rdzv:group-world-size", r"^\s*group_world_size=(?P<n>\d+)\s*$"),
    ("rdzv:local-ranks", r"^\s*local_ranks=\[(?P<list>[\d, ]{0,1000})\]"),
    ("rdzv:global-ranks", r"^\s*global_ranks=\[(?P<list>[\d, ]{0,1000})\]"),
    # DeepSpeed's launcher (deepspeed/launcher/launch.py) says how many nodes the job has.
    ("rdzv:group-world-size", r"\bnnodes=(?P<n>\d+), num_local_procs=\d+, node_rank=\d+"),
    # torchrun's own command line, as a script echoes it or a user pastes it above the output
    # (torch/distributed/run.py): `--nnodes N` is the number of nodes (or a `MIN:MAX` range, not
    # read here), and `--standalone` launches a single-node job with a local rendezvous.
    (
        "rdzv:group-world-size",
        r"\b(?:torchrun|torch\.distributed\.(?:run|launch))\b[^\n]*?\s\\?--nnodes[= ](?P<n>\d+)(?:\s[^\n]*)?$",
    ),
    ("rdzv:standalone", r"\b(?:torchrun|torch\.distributed\.run)\b[^\n]*?\s\\?--standalone(?:\s[^\n]*)?$"),
]
# PyTorch's ProcessGroupNCCL destructor, when the program never called destroy_process_group:
# it runs only as the interpreter tears the global context down, so the program is exiting
# (ProcessGroupNCCL.cpp: "WARNING: destroy_process_group() was not called before program exit";
# 2.4 "process group has NOT been destroyed before we destruct ProcessGroupNCCL", its nightlies
# "... before it is being destructed"; newer "must call destroy_process_group() before process
# exit"). The other ranks' heartbeat monitors then find the store gone with it: their lines are
# the exit's noise (STORE_GONE_AT_EXIT). A crash still speaks through its own error.
EXIT_PATTERNS = [
    (
        "exit:pg-destructed",
        r"destroy_process_group\(\) was not called before program exit"
        r"|process group has NOT been destroyed before (?:we destruct ProcessGroupNCCL|it is being destructed)"
        r"|must call destroy_process_group\(\) before process exit",
    )
]
STORE_GONE_AT_EXIT = frozenset({"torch-heartbeat-store-lost"})
# srun's report of a task that failed (`srun: error: gpu-1-0: task 0: Exited with exit code 1`):
# where the step's task ran, whatever failed it.
SRUN_TASK_FAILED = "srun-task-failed"
EXTRA_PATTERNS = (
    ELASTIC_PATTERNS
    + STRUCTURE_PATTERNS
    + GPU_PATTERNS
    + DETAIL_PATTERNS
    + RENDEZVOUS_PATTERNS
    + PHASE_PATTERNS
    + EXEC_HOST_PATTERNS
    + SRUN_PATTERNS
    + RECLAIM_PATTERNS
    + RAY_ACTOR_PATTERNS
    + NFS_PATTERNS
    + K8S_STATE_PATTERNS
    + EXIT_PATTERNS
    + REPORT_PATTERNS
)
MAX_BLOCKS = 16  # root-cause blocks remembered (one per agent and attempt in an append-mode log)
MAX_PENDING = 128  # per kind (root cause, cascade); the earliest are kept since the earliest wins
# How close to an interrupt's exception line its wait frame must be: the innermost three frames,
# each a `File` line, its source line and (Python 3.11+) a line of carets under the call.
INNERMOST_LINES = 9
# A bare `Name: message` line (no traceback before it) is fatal only this close to the log's end:
# a log that ends in one died of it; one in the middle was logged and lived on.
BARE_EXCEPTION_TAIL = 100
# How far above a cut-off traceback an exception's own message may be logged (the line above,
# or one blank line between).
MESSAGE_ABOVE = 2


@dataclass
class _Candidate:
    match: LineMatch
    signature: Signature
    context: LineContext
    max_step: int  # the highest step reported before this line
    later: set[int] = field(default_factory=set)  # distinct higher steps reported after it
    later_stepless: int = 0
    # Other signatures on the same line: one speaks for it, the others may still name a peer
    # or a GPU (a console that ran a whole traceback into one line).
    siblings: list[LineMatch] = field(default_factory=list)
    # An uncaught exception no signature recognised: it speaks only when no signature's root
    # cause does (`bare`: no traceback led to it, so it must also end the log).
    fallback: bool = False
    bare: bool = False
    # Its line is also a progress line (a step's fields, the loss among them), not a message.
    on_progress: bool = False


@dataclass
class _ElasticBlock:
    line: int
    root: bool = True  # the root-cause block, or an entry of the other failures
    fields: dict[str, str] = field(default_factory=dict)
    lines: list[LineMatch] = field(default_factory=list)

    def opens(self, line: int) -> bool:
        """Whether `line` is the first line of this root-cause block's entry."""
        return self.root and not self.fields and line == self.line + 1


@cache
def _default_patterns() -> PatternSet:
    return _compiled(builtin_catalog(), ProgressParser(), None)


def scanner_patterns(catalog: Catalog | None, progress: ProgressParser | None, engine: str | None = None) -> PatternSet:
    """What a diagnoser's scanner looks for: the catalog's signatures, the structure and the
    progress gates, compiled for the engine. Compiling takes a database and every pattern's RE2
    (hundreds of KB outside Python's heap): build it once per catalog, not once per log."""
    if catalog is None and progress is None and engine is None:
        return _default_patterns()
    return _compiled(catalog or builtin_catalog(), progress or ProgressParser(), engine)


def _compiled(catalog: Catalog, progress: ProgressParser, engine: str | None) -> PatternSet:
    extra = EXTRA_PATTERNS + progress.gates
    return PatternSet.from_catalog(catalog, extra, engine, followers=FOLLOWERS, wakers=WAKERS)


class LogDiagnoser:
    """Diagnoses one log stream incrementally. Not thread-safe; one per log."""

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        layout: Mapping[int, str] | None = None,
        progress: ProgressParser | None = None,
        survive_steps: int = 2,
        straggler: StragglerConfig | None = None,
        engine: str | None = None,
        whole: bool = False,
        patterns: PatternSet | None = None,
    ) -> None:
        """`whole`: the log is finished (a file given to `recovery diagnose`), so a progress
        series too short for the straggler statistic is judged whole (`LogPace`). `patterns`:
        `scanner_patterns(catalog, progress)` built once and shared by every log read with them."""
        self.catalog = catalog or builtin_catalog()
        self.progress = progress or ProgressParser()
        if patterns is None:
            patterns = scanner_patterns(catalog, progress, engine)
        self.scanner = LogScanner(patterns)
        self.scanner.sampler = Sampler()
        # A phase's closers and further output (NCCL's INFO lines among them) are read only while
        # a phase or the start-up is open, or from the line that opens one (phases.FOLLOWERS).
        self._gate = self.scanner.gate = Gate()
        self.layout = dict(layout or {})
        self.survive_steps = max(1, survive_steps)
        self.max_step = -1
        self.progress_lines = 0
        self.last_progress: ProgressRecord | None = None
        self._pending: list[_Candidate] = []
        self._blocks: list[_ElasticBlock] = []
        self._tracebacks = Tracebacks()
        self._unled: dict[int, None] = {}  # lines of exception lines no traceback led to (bounded)
        self._gpu_index: dict[str, str] = {}  # PCI bus id -> `gpuN`, from nvidia-smi's table
        self._details: list[int] = []  # lines of `Last error:` headers
        self._rendezvous = RankMapping()
        self._exec_hosts: set[str] = set()  # the nodes the scheduler says the job ran on
        self._srun_ended: set[str] = set()  # steps srun said it was terminating itself
        self._exiting = False  # the program said it is exiting normally (EXIT_PATTERNS)
        self._actor_ip: tuple[int, str] | None = None  # a RayActorError's `ip:` field (line, IP)
        self._k8s_running = -K8S_STATE_LINES - 1  # line of the latest `State: Running`
        self._k8s_last_state = -K8S_EXIT_LINES - 1  # line of a `Last State:` under a running one
        self._phases = Phases()  # a phase the program announced and has not finished (phases.py)
        self._wait_frame: LineMatch | None = None  # the latest traceback frame in a wait point
        # The writer of the last traceback header: a logger that prefixes only a record's first
        # line (`[... TP3] Scheduler hit an exception: Traceback ...`) leaves the rest bare.
        self._header: tuple[int, LineContext] | None = None
        self._traceback_start = 0  # the line of the last `Traceback (most recent call last):`
        self._pace = LogPace(straggler or StragglerConfig(), whole=whole)
        self._reported = ReportedStragglers()  # a straggler detector's own verdict (pace.py)

    # --- feeding -------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[ProgressRecord]:
        """Scan more of the log; returns the progress records found in it (a sample of them in
        a long log, see `Sampler`; every one while a failure waits to be survived)."""
        assert self.scanner.sampler is not None
        self.scanner.sampler.hold = bool(self._pending)
        self._gate.open = self._phases.listening()
        return self._consume(self.scanner.feed(data))

    def finish(self) -> list[ProgressRecord]:
        """The log is complete: scan its last line even without a line break."""
        self._gate.open = self._phases.listening()
        return self._consume(self.scanner.finish())

    def _consume(self, matches: list[LineMatch]) -> list[ProgressRecord]:
        records: list[ProgressRecord] = []
        i = 0
        while i < len(matches):
            j = i
            while j < len(matches) and matches[j].line == matches[i].line:
                j += 1
            record = self._line(matches[i:j])
            if record is not None:
                records.append(record)
            i = j
        return records

    def _line(self, matches: list[LineMatch]) -> ProgressRecord | None:
        signatures = [m for m in matches if m.pattern in self.catalog]
        structure = [m for m in matches if m.pattern.startswith("struct:")]
        if structure:
            # A line only an `alone: false` signature read is still an uncaught exception's line
            # when it is one: that signature only explains a failure shown elsewhere.
            recognised = any(self.catalog[m.pattern].alone for m in signatures)
            self._structure(structure[0], recognised=recognised)
            if self._tracebacks.ignored_line == structure[0].line:
                signatures = []  # the exception CPython reported as ignored: the program went on
        if signatures and self._restarted(signatures):
            signatures = []  # a previous run's exit code, and the container runs again
        if signatures:
            # The more specific signature speaks for its line; between equals, a root cause before
            # a cascade (`Xid 45 ... caused by previous Xid 149` is both), then the one that names
            # more places (`srun: error: c002: task 0: Killed` is srun's, not a bare `Killed`).
            best = max(signatures, key=self._rank_on_line)
            # A store-based barrier that timed out counting more arrivals than the world size was
            # never short of a peer: the job's set-up registered too many (phases.overcounted).
            chosen = BARRIER_OVERCOUNT_TIMEOUT if best.pattern == STORE_BARRIER and overcounted(best.text) else None
            on_progress = any(m.pattern.startswith("progress:") for m in matches)
            self._add_candidate(
                best, chosen, siblings=[m for m in signatures if m is not best], on_progress=on_progress
            )
        if structure and structure[0].pattern in ("struct:exception", "struct:ipython"):
            self._header = None  # its exception line closed the traceback
        for phase in (m for m in matches if m.pattern.startswith("phase:")):
            self._phases.line(phase)
        for frame in (m for m in matches if m.pattern == WAIT):
            self._wait_frame = frame
        for report in (m for m in matches if m.pattern.startswith("straggler:")):
            self._reported.line(report)
        if signatures or structure:
            return None
        if all(m.pattern.startswith("phase:") or m.pattern == WAIT for m in matches):
            return None
        if matches[0].pattern.startswith("rdzv:"):
            self._rendezvous.line(matches[0])
            return None
        if matches[0].pattern == "detail:last-error":
            self._details = [*self._details[-MAX_DETAILS + 1 :], matches[0].line]
            return None
        if matches[0].pattern == "ray:actor-ip":
            self._actor_ip = (matches[0].line, matches[0].groups["host"])
            return None
        if matches[0].pattern == "teardown:nccl-reclaim":
            self._reclaimed(matches[0])
            return None
        if matches[0].pattern == "recovered:nfs":
            self._nfs_answered(matches[0].groups["peer"])
            return None
        if matches[0].pattern == "exit:pg-destructed":
            self._exiting = True
            return None
        if matches[0].pattern == "srun:terminating":
            if len(self._srun_ended) < MAX_SRUN_STEPS:
                self._srun_ended.add(matches[0].groups["step"])
            return None
        if matches[0].pattern == "k8s:running":
            self._k8s_running = matches[0].line
            return None
        if matches[0].pattern == "k8s:last-state":
            if matches[0].line - self._k8s_running <= K8S_STATE_LINES:
                self._k8s_last_state = matches[0].line
            return None
        if matches[0].pattern == "exec:host":
            if len(self._exec_hosts) < MAX_EXEC_HOSTS:
                self._exec_hosts.add(matches[0].groups["host"])
            return None
        if matches[0].pattern == "gpu:smi-row":
            if len(self._gpu_index) < MAX_GPUS:
                self._gpu_index[matches[0].groups["pci"].lower()] = f"gpu{matches[0].groups['gpu']}"
            return None
        elastic = [m for m in matches if m.pattern.startswith("elastic:")]
        if elastic:
            self._elastic(elastic)
            # MMEngine's and Detectron2's `time: 0.59` is also an elastic field's shape: a line a
            # progress gate matched is still read for its progress.
            matches = [m for m in matches if m.pattern.startswith("progress:")]
            if not matches:
                return None
        user = any(m.pattern.startswith("progress:user") for m in matches)
        formats = None if user else [m.pattern.removeprefix("progress:") for m in matches]
        rank = line_rank(matches[0].text)
        record = self.progress.parse(matches[0].text, matches[0].line, formats=formats, rank=rank)
        return self._progress(record) if record is not None else None

    def _restarted(self, signatures: list[LineMatch]) -> bool:
        """An exit code under `kubectl describe`'s `Last State:` of a container now Running."""
        line = signatures[0].line
        recent = 0 < line - self._k8s_last_state <= K8S_EXIT_LINES
        return recent and all(m.pattern == RESTARTED_EXIT for m in signatures)

    def _rank_on_line(self, match: LineMatch) -> tuple[int, bool, int]:
        signature = self.catalog[match.pattern]
        places = sum(1 for k, v in match.groups.items() if v and k in PLACE_GROUPS)
        return signature.priority, not signature.cascade, places

    def _add_candidate(
        self,
        match: LineMatch,
        signature: Signature | None = None,
        siblings: list[LineMatch] | None = None,
        *,
        fallback: bool = False,
        bare: bool = False,
        on_progress: bool = False,
    ) -> None:
        signature = signature or self.catalog[match.pattern]
        same_kind = sum(1 for c in self._pending if c.signature.cascade == signature.cascade)
        if same_kind >= MAX_PENDING:
            return
        context = self._writer(match)
        if context.host is None and signature.id.startswith("ray-") and self._actor_ip is not None:
            line, ip = self._actor_ip
            if line == match.line - 1:
                context = replace(context, host=ip)  # the dead actor's node, from the field above
        if context.host is not None and ray_task_host(match.text) == context.host:
            self._unwrap_ray_task(match, context.host)
        if _unwinding(match) and any(_unwinding(c.match) for c in self._pending):
            # NCCL prints a line per frame as an error unwinds (`socket.cc:546 -> 6`), and a
            # frame may hand on another code (`group.cc:421 -> 3`): the first frame is the cause.
            signature = signature.model_copy(update={"cascade": True})
        elif not signature.cascade and signature.category == "unknown" and self._terminated(match, context):
            signature = signature.model_copy(update={"cascade": True})
        self._pending.append(
            _Candidate(
                match,
                signature,
                context,
                self.max_step,
                siblings=siblings or [],
                fallback=fallback,
                bare=bare,
                on_progress=on_progress,
            )
        )

    def _unwrap_ray_task(self, match: LineMatch, host: str) -> None:
        """A task that called `ray.get` on one that raised re-raises its RayTaskError, and Ray
        prints the chain outermost first, each remote traceback headed by the process that ran it
        (`ray::_Inner.train() (pid=249, ip=10.0.0.78)`, then `ray::_RayTrainWorker__execute...
        (pid=192, ip=10.0.0.19)`): the wrappers only passed the error on, the last header's node
        is where it was raised. A header before a traceback that began since is another error's."""
        for i, c in enumerate(self._pending):
            wraps = self._traceback_start < c.match.line and 0 < match.line - c.match.line <= TRACEBACK_SPAN
            if wraps and ray_task_host(c.match.text) == c.context.host:
                self._pending[i] = replace(c, context=replace(c.context, host=host))

    def _terminated(self, match: LineMatch, context: LineContext) -> bool:
        """An abort report (`Fatal Python error: Aborted`) of a process whose C++ terminate report
        came just before: the abort is how that uncaught exception ended the process."""
        if not ABORT_REPORT.search(match.text):
            return False
        return any(
            c.signature.id == TERMINATE_REPORT
            and 0 < match.line - c.match.line <= ABORT_AFTER_TERMINATE_LINES
            and (c.context.rank, c.context.host) == (context.rank, context.host)
            for c in self._pending
        )

    def _writer(self, match: LineMatch) -> LineContext:
        """Who wrote a line: its own prefix, else that of the traceback it ends."""
        context = line_context(match.text)
        if context.rank is not None or context.host is not None or self._header is None:
            return context
        line, header = self._header
        if match.line - line > TRACEBACK_SPAN:
            return context
        return LineContext(header.rank, header.host, header.local_rank, severity=context.severity)

    def _structure(self, match: LineMatch, *, recognised: bool) -> None:
        """Tracebacks: an exception line that no signature recognised is a fallback candidate."""
        if match.pattern == "struct:traceback":
            self._traceback_start = match.line
            context = line_context(match.text)
            prefixed = context.rank is not None or context.host is not None
            self._header = (match.line, context) if prefixed else None
        uncaught = self._tracebacks.line(match, line_context(match.text))
        if uncaught is not None and not uncaught.traceback:
            remember(self._unled, match.line, None, MAX_PENDING)
        if uncaught is not None and not recognised:
            if self._interrupted_waiting(uncaught):
                self._add_candidate(match, INTERRUPTED_WAITING)
                return
            self._add_candidate(match, uncaught_signature(uncaught), fallback=True, bare=not uncaught.traceback)

    def _ignored_tail(self, candidate: _Candidate) -> bool:
        """An exception line no traceback led to that repeats, word for word, the end of a
        traceback CPython reported as ignored (`Exception ignored in: <function X.__del__>`, one
        per object at interpreter exit): a paste that starts inside that run of reports begins
        with such a line, its header and frames cut off. It is the same ignored report."""
        return candidate.match.line in self._unled and self._tracebacks.repeats_ignored(candidate.match.text)

    def _interrupted_waiting(self, uncaught: Uncaught) -> bool:
        """A KeyboardInterrupt whose traceback's innermost frames wait in a collective, a barrier, a
        store or a rendezvous: someone stopped a process stuck there (Ctrl-C on a hung job)."""
        frame = self._wait_frame
        if uncaught.fact is None or uncaught.fact.name != "KeyboardInterrupt" or frame is None:
            return False
        same_writer = line_context(frame.text).rank == line_context(uncaught.match.text).rank
        return same_writer and 0 < uncaught.match.line - frame.line <= INNERMOST_LINES

    def _elastic(self, matches: list[LineMatch]) -> None:
        for m in matches:
            if m.pattern == "elastic:failure" and self._blocks and self._blocks[-1].opens(m.line):
                continue  # the `[0]:` under "Root Cause (first observed failure):" is its own entry
            if m.pattern in ("elastic:root-cause", "elastic:failure"):
                block = _ElasticBlock(m.line, lines=[m], root=m.pattern == "elastic:root-cause")
                self._blocks = [*self._blocks[-MAX_BLOCKS + 1 :], block]
                if block.root and not any(c.signature.id == CHILD_FAILED for c in self._pending):
                    self._summary_without_exception(m)
            elif self._blocks and m.line - self._blocks[-1].line <= ELASTIC_BLOCK_LINES:
                block = self._blocks[-1]
                block.fields.update(m.groups)
                block.lines.append(m)

    def _summary_without_exception(self, heading: LineMatch) -> None:
        """torchelastic prints its "Root Cause (first observed failure):" heading only inside
        ChildFailedError's message (torch/distributed/elastic/multiprocessing/errors/__init__.py,
        ChildFailedError.format_msg): the heading is that failure where the exception line is not
        in the log (an excerpt that starts below it; a launcher that wraps torchrun and prints the
        summary alone, as `colossalai run` and llamafactory-cli do)."""
        if CHILD_FAILED in self.catalog:
            self._add_candidate(heading, self.catalog[CHILD_FAILED])

    def _progress(self, record: ProgressRecord) -> ProgressRecord:
        self.progress_lines += 1
        self.last_progress = record
        self._phases.progress()
        self._survive(record)
        if record.step is not None:
            self.max_step = max(self.max_step, record.step)
        self._pace.add(record)
        return record

    def _survive(self, record: ProgressRecord) -> None:
        """Drop the matches that this progress shows the run got past: enough later steps, or
        (LOSS_NOT_FINITE) a finite loss after a NaN or infinite one an earlier progress line of the
        same writer reported, which was one bad interval, not a diverged run."""
        step = record.step
        finite = record.loss is not None and math.isfinite(record.loss)
        kept = []
        for c in self._pending:
            if c.signature.replays_tail:
                kept.append(c)  # what follows it is the ended job's own output, quoted
                continue
            if finite and c.on_progress and c.signature.id == LOSS_NOT_FINITE and self._same_writer(c, record):
                continue
            if step is None:
                c.later_stepless += 1
            elif step > c.max_step:
                c.later.add(step)
            if len(c.later) + c.later_stepless < self.survive_steps:
                kept.append(c)
        self._pending = kept

    @staticmethod
    def _same_writer(candidate: _Candidate, record: ProgressRecord) -> bool:
        return (record.line or 0) > candidate.match.line and line_rank(candidate.match.text) == record.rank

    # --- the verdict -----------------------------------------------------------------------

    def diagnosis(self, straggling: str | None = None) -> LogDiagnosis:
        """`straggling`: a slowdown the caller already judged (described), to be explained with
        this log's per-rank times even if the log's own pace has not reached a verdict yet."""
        pool = self._tiers()
        winner = _winner(pool, self._details) if pool else None
        if self._reported.stop is not None and (
            winner is None
            or self._reported.explains(winner.match.line, winner.signature.category, winner.signature.cascade)
        ):
            return self._reported.diagnosis(self.layout)
        if winner is not None:
            return self._explain(winner)
        if (stuck := self._phases.verdict(self.scanner.lines)) is not None:
            match, signature = stuck
            return self._explain(_Candidate(match, signature, line_context(match.text), self.max_step))
        slowdown = self._pace.verdict()
        if slowdown is None and straggling is not None:
            slowdown = self._pace.slowdown(straggling)
        if slowdown is not None:
            return slowdown.diagnosis(self.layout)
        return HEALTHY.model_copy(deep=True)

    def _tiers(self) -> list[_Candidate]:
        """The candidates that may speak, by tier: signatures' root causes; else uncaught
        exceptions no signature knew (a bare one only at the log's end, as a traceback the log
        ends inside); else cascades."""
        tail = self.scanner.lines - BARE_EXCEPTION_TAIL
        self._srun_cancels()
        # A line its logger marked a warning (`[W socket.cpp:663]`, a retry) is never fatal alone,
        # unless its signature is a failure its library logs at warning level (`warned`); its
        # peers still tell a network error who went away.
        heard = [
            c
            for c in self._pending
            if (not c.bare or c.match.line > tail)
            and (not c.context.warning or c.signature.warned)
            and not self._ignored_tail(c)
            and not (self._exiting and c.signature.id in STORE_GONE_AT_EXIT)
        ]
        # A line that only explains a failure (`alone: false`, a batch skipped for its NaN loss)
        # speaks when another line of the log is one; by itself the run went on.
        live = heard if any(c.signature.alone for c in heard) else []
        roots = [c for c in live if not c.signature.cascade and not c.fallback]
        fallbacks = [c for c in live if not c.signature.cascade and c.fallback]
        cut = False
        causes: set[int] = set()  # the exception lines cut tracebacks were raised from
        heads: set[int] = set()
        if not roots and not fallbacks:
            progressed = self.last_progress.line or 0 if self.last_progress is not None else 0
            unfinished = self._tracebacks.unfinished(max(tail, progressed))
            fallbacks = self._unfinished(unfinished)
            cut = bool(fallbacks)
            causes = {u.cause for u in unfinished if u.cause is not None}
            # The earliest of tracebacks printed at once by processes without a rank prefix: the
            # line above it is where the log said what they were (the second one's line above is
            # the first one's frame).
            heads = {u.first for u in unfinished if u.first is not None}
        # Fallbacks alone, and none says more than "unknown": the log may name the cause elsewhere.
        unexplained = not roots and bool(fallbacks) and all(c.signature.category == "unknown" for c in fallbacks)
        if unexplained:
            roots = self._quiet_causes(min(c.match.line for c in fallbacks))
        # Among follow-on errors alone, one that says what failed (a peer's socket closed) tells
        # more than one that only waited (a timeout, a failed proxy call).
        told = [c for c in live if c.signature.category != "unknown"]
        if cut and unexplained and not roots:
            # The log ends inside a traceback cut off before its exception line, so its class is
            # unknown; a program that logs an exception's message and then its traceback
            # (`ConnectionResetError: [Errno 104] ...` on the line right above `Traceback (most
            # recent call last):`) has said what that exception was. Only the line right above
            # counts: an error further up (a peer's socket closing before a launcher's own
            # traceback) is another process's story.
            # A line that only explains a failure (`alone: false`: PyTorch's THC check, printed
            # before it raised) counts here too, since the cut traceback is the failure it explains,
            # even when its message is of unknown cause: it still names what the exception was.
            # So does a wait that timed out (`symptom: hang`): c10d logs "Work ... timed out in
            # blocking wait" and then raises it, so the traceback cut below is that timeout's own.
            # A cut traceback CPython printed as raised from the exception above it ("The above
            # exception was the direct cause of the following exception:") was raised from that
            # exception's failure: its line explains the cut one however many lines the marker takes.
            starts = {c.match.line for c in fallbacks} | heads
            explaining = [c for c in heard if not c.signature.alone or c.signature.symptom == "hang"]
            above = [
                c
                for c in [*told, *explaining]
                if c.match.line in causes or any(0 < start - c.match.line <= MESSAGE_ABOVE for start in starts)
            ]
            if above:
                return above
        if not (roots or fallbacks or told) and any(c.signature is INTERRUPTED_WAITING for c in live):
            # Follow-on lines of unknown cause only, and an interrupt whose frames show the process
            # waiting: the user stopped a hung job, so the interrupt notices before it (torchelastic's
            # "Received 2 death signal") are the stop, and the wait (or another hang line) is the story.
            return [c for c in live if c.signature.symptom == "hang"]
        return roots or fallbacks or told or live

    def _quiet_causes(self, before: int) -> list[_Candidate]:
        """Root causes a logger recorded below error level (a warning, a DEBUG record) before an
        uncaught exception whose class says nothing: the program went on past the line, then died
        of something no table knows, and the quiet line is the only cause the log names. A test
        harness that relays its child's output as DEBUG records (microsoft/lisa) shows torch's
        start-up warning that CUDA could not initialise, then its own test's traceback."""
        return [
            c
            for c in self._pending
            if c.context.warning
            and c.match.line < before
            and not c.signature.cascade
            and not c.fallback
            and c.signature.alone
            and c.signature.category != "unknown"
        ]

    def _reclaimed(self, match: LineMatch) -> None:
        """NCCL reports its communicator teardown failed: the CUDA call its thread just reported
        refused (for an argument) is that teardown's, and the run is not failed by it."""
        who = match.groups.get("who")
        self._pending = [
            c
            for c in self._pending
            if not (
                c.signature.id in TEARDOWN_REFUSALS
                and 0 < match.line - c.match.line <= RECLAIM_LINES
                and _nccl_writer(c.match.text) == who
            )
        ]

    def _nfs_answered(self, server: str) -> None:
        """The kernel says an NFS server answers again: its earlier outage lines are not the run's
        failure."""
        self._pending = [
            c for c in self._pending if not (c.signature.id in NFS_OUTAGES and c.match.groups.get("peer") == server)
        ]

    def _srun_cancels(self) -> None:
        """srun ended a step itself after a task exited: that step's cancellation notice reads as
        the task failure's kill, and the termination signals the step's processes then report
        (a scheduler's, were it not srun) as follow-on errors of unknown cause. The failed task's
        own error, when the log shows one, still wins over both."""
        cancelled, killed = CANCELLED_BY_SRUN
        if not self._srun_ended or cancelled not in self.catalog or killed not in self.catalog:
            return
        for c in self._pending:
            if not c.signature.cascade or c.signature.category != "scheduler":
                continue
            step = _CANCELLED_STEP.search(c.match.text) if c.signature.id == cancelled else None
            if step is not None and step.group(1) in self._srun_ended:
                c.signature = self.catalog[killed]
            elif c.signature.id != cancelled:
                c.signature = c.signature.model_copy(update={"category": "unknown", "retryable": True})

    def _unfinished(self, unfinished: Sequence[Uncaught]) -> list[_Candidate]:
        """A log that ends inside a traceback (cut off before its exception line) died of it."""
        found = []
        for uncaught in unfinished:
            signature = uncaught_signature(uncaught)
            if not signature.cascade:
                writer = self._writer(uncaught.match)
                found.append(_Candidate(uncaught.match, signature, writer, self.max_step, fallback=True))
        return found

    def _stack_header(self, winner: _Candidate) -> _Candidate | None:
        """The `Fatal error in ..., error stack:` line a winning MPICH stack frame belongs to."""
        if not winner.signature.id.startswith(STACK_FAMILY):
            return None
        headers = [
            c
            for c in self._pending
            if c.match.line < winner.match.line <= c.match.line + STACK_LINES and _ERROR_STACK.search(c.match.text)
        ]
        return max(headers, key=lambda c: c.match.line) if headers else None

    def _explain(self, winner: _Candidate) -> LogDiagnosis:
        sig = winner.signature
        found = Implicating()
        found.add_groups(winner.match.groups)
        for sibling in winner.siblings:
            # Another signature on the winning line names places of the same failure: srun's
            # `node7: tasks 0-3: Segmentation fault` is the segfault's, with srun's node and tasks.
            found.add_groups({k: v for k, v in sibling.groups.items() if k in PLACE_GROUPS})
        if not sig.cascade or sig.category == "hardware":
            found.add_context(winner.context)
        if (header := self._stack_header(winner)) is not None:
            # A frame of MPICH's error stack says what failed; the stack's header says where
            # (Cray MPICH's `MPICH ERROR [Rank 519] ... [c1207] - Abort(...)`, `(rank 519 in comm 0)`).
            found.add_groups({k: v for k, v in header.match.groups.items() if k in PLACE_GROUPS})
            found.add_context(header.context)
        block = self._root_cause_block()
        if block is not None:
            found.add_root_cause(block.fields)
        if sig.category == "network" and not found.peers:
            found.add_peers(c.match.groups for c in self._pending if c is not winner)
        for other in self._pending:
            # The same failure seen on other ranks or nodes (two nodes marked dead, tasks 10
            # and 11 exiting): each is part of it.
            if other is not winner and other.signature.id == sig.id and not other.context.warning:
                found.add_groups(other.match.groups)
                if not sig.cascade or sig.category == "hardware":
                    found.add_context(other.context)
        if not found.ranks and not found.nodes:
            # The first line of a failure often names nobody (`Detected 1 oom_kill event`); a
            # later root-cause line of the same kind does (`srun: error: n1: task 4: Out Of Memory`).
            # Not a line marked a warning (an NVLink error the driver calls non-fatal): it failed nothing.
            for other in self._pending:
                if (
                    other is not winner
                    and not other.signature.cascade
                    and other.signature.category == sig.category
                    and not other.context.warning
                ):
                    found.add_groups(other.match.groups)
                    for sibling in other.siblings:
                        # As the winner's: srun's `n1: task 0: Aborted (core dumped)` on the
                        # abort's line says where the C library's message above it was printed.
                        found.add_groups({k: v for k, v in sibling.groups.items() if k in PLACE_GROUPS})
                    found.add_context(other.context)
        if sig.category == "system_software" and not found.nodes:
            # The node's software failed a task and its own line names no node (pyxis and
            # enroot's container start, printed by the node's slurmstepd): srun's report of the
            # failed task after it says on which node, when all such reports name one node.
            hosts = {
                other.match.groups["host"]
                for other in self._pending
                if other.signature.id == SRUN_TASK_FAILED
                and other.match.line > winner.match.line
                and other.match.groups.get("host")
            }
            if len(hosts) == 1:
                found.add_groups({"host": next(iter(hosts))})
        if sig.cascade and not (found.ranks or found.nodes or found.peers):
            # Follow-on errors alone: what a cascade's groups name is the failed party (never the
            # rank reporting), so another's (`Process name: [[29973,1],0]` after Open MPI's
            # "exited with non-zero status") says where the first one happened.
            for other in self._pending:
                if other is not winner and other.signature.cascade and not other.context.warning:
                    found.add_groups(other.match.groups)
        found.map_local_ranks(self._rendezvous.global_of(self.layout))
        found.map_ranks(self.layout)
        found.map_gpus(self._gpu_index)
        if sig.exclude and sig.category == "hardware" and not found.nodes and len(self._exec_hosts) == 1:
            found.add_groups({"host": next(iter(self._exec_hosts))})  # the job's one node failed
        # The winning line first, then its context in log order.
        context = sorted(self._followers(winner) + (block.lines if block else []), key=lambda m: m.line)
        explanation = _sentence(sig, found, len(self._pending) - 1)
        if winner.fallback:
            explanation += f"; no signature recognises the cause: line {winner.match.line} made it a failure"
        return LogDiagnosis(
            symptom=sig.symptom,
            category=sig.category,
            retryable=sig.retryable,
            implicated=found.implicated(),
            exclude=sig.exclude and sig.category not in NO_NODE_FAULT,
            evidence=[evidence_line(m) for m in [winner.match, *context]],
            explanation=explanation,
        )

    def _followers(self, winner: _Candidate) -> list[LineMatch]:
        """A few other fatal lines, to show the cascade the winner set off."""
        others = [c.match for c in self._pending if c is not winner]
        return others[:4]

    def _root_cause_block(self) -> _ElasticBlock | None:
        """torchelastic's first observed failure; with several agents, the earliest by time.
        Without one, the earliest of the other failures it listed."""
        blocks = [b for b in self._blocks if "rank" in b.fields or "host" in b.fields]
        blocks = [b for b in blocks if b.root] or blocks
        if not blocks:
            return None
        return min(blocks, key=lambda b: (b.fields.get("when", "~"), b.line))


class RankMapping:
    """How local ranks map to global ranks, from torchelastic's rendezvous results in the log:
    one agent's `local_ranks=[...]` and `global_ranks=[...]`, or a single node
    (`group_world_size=1`, DeepSpeed's `nnodes=1`, torchrun's `--nnodes=1` or `--standalone` on its
    command line, or a layout that puts every rank on one node). Several agents that
    disagree (a log of many nodes) leave it unknown."""

    def __init__(self) -> None:
        self._local: list[int] | None = None
        self._mappings: set[tuple[tuple[int, int], ...]] = set()
        self._single_node = False

    def line(self, match: LineMatch) -> None:
        if match.pattern in ("rdzv:group-world-size", "rdzv:standalone"):
            one = match.pattern == "rdzv:standalone" or match.groups.get("n") == "1"
            self._single_node = self._single_node or one
            return
        ranks = [int(r) for r in match.groups.get("list", "").replace(" ", "").split(",") if r.isdigit()]
        if match.pattern == "rdzv:local-ranks":
            self._local = ranks
        elif self._local is not None and len(self._local) == len(ranks) and len(self._mappings) < 2:
            self._mappings.add(tuple(zip(self._local, ranks, strict=True)))

    def global_of(self, layout: Mapping[int, str]) -> Callable[[int], int | None] | None:
        if len(self._mappings) == 1:
            return dict(next(iter(self._mappings))).get
        if self._single_node or (layout and len(set(layout.values())) == 1):
            return lambda local: local  # one node: its local ranks are the global ones
        return None


# What a failing GPU or node makes a program print: an illegal memory access, no device, a
# launch failure, a peer that vanished. When the log also holds the fault itself (an Xid, a GPU
# lost, uncorrectable ECC), that fault is the cause wherever it appears: logs often carry the
# program's error first and the `dmesg` or `nvidia-smi` output pasted or collected after it.
PLACE_GROUPS = frozenset({"host", "rank", "ranks", "gpu", "pci", "peer"})
EXPLAINED_BY_HARDWARE = frozenset({"unknown", "system_software", "network"})


_UNWINDING = re.compile(r"NCCL INFO [\w./-]+\.(?:cc|cu|cpp|h|c):\d+ -> \d+")


def _nccl_writer(text: str) -> str | None:
    """The `host:pid:tid` NCCL prefixes its lines with, if the line has one."""
    found = _NCCL_WRITER.search(text)
    return found.group(1) if found else None


def _unwinding(match: LineMatch) -> bool:
    return match.pattern.startswith("nccl-") and _UNWINDING.search(match.text) is not None


# NCCL's result codes as its callers report them (tables/nccl.yaml: `unhandled system error` in
# PyTorch's exception, the `-> 2` frames NCCL prints as the error unwinds). NCCL prints a WARN
# line saying what failed before it returns the code (include/checks.h, debug.cc; its guide:
# "NCCL_DEBUG=WARN will make NCCL print an explicit warning message before returning the error"),
# so a WARN a signature knows tells more than the code does, wherever the log puts it: output of
# several processes interleaves, and a pasted log may start below a process's WARN.
NCCL_RESULTS = frozenset(
    {
        "nccl-unhandled-cuda-error",
        "nccl-system-error",
        "nccl-internal-error",
        "nccl-invalid-argument",
        "nccl-invalid-usage",
        "nccl-remote-error",
    }
)
_NCCL_WARN = re.compile(r"\] (?:[\w./-]+:\d+ )?(?:NCCL )?WARN ")


def _nccl_process(text: str) -> str | None:
    """The `host:pid` of an NCCL line's prefix: the process that wrote it."""
    writer = _nccl_writer(text)
    return writer.rsplit(":", 1)[0] if writer else None


def _nccl_warned(first: _Candidate, pool: Sequence[_Candidate]) -> _Candidate:
    """A result code NCCL returned gives way to a root cause read from an NCCL WARN line: of the
    same process when the code's line names one (a frame of the unwinding), else the earliest."""
    writer = _nccl_process(first.match.text)
    warned = [
        c
        for c in pool
        if c.signature.id not in NCCL_RESULTS
        and not c.signature.cascade
        and not c.fallback
        and c.signature.priority >= 0
        and _NCCL_WARN.search(c.match.text) is not None
        and (writer is None or _nccl_process(c.match.text) == writer)
    ]
    return min(warned, key=lambda c: (c.match.line, -c.signature.priority)) if warned else first


# An exception line whose message starts on the next line (`AssertionError: ` then the text, as
# Python prints a message that begins with a line break): the lines after it are its message.
# Lower-case too, with its colon: Triton's "Internal Triton PTX codegen error: " is followed by
# ptxas's own lines (python/triton/backends/nvidia/compiler.py make_cubin), which say what
# failed (a message that only ends in "error", "Input/output error", is complete).
_EMPTY_MESSAGE = re.compile(
    r"(?:(?:Error|Exception|Exit|Interrupt|Failure|Fault|Failed|Timeout)(?:_\w+)?:?|\berror:)\s*$"
)
MESSAGE_LINES = 3
# MPICH's "Fatal error in <call>: <class>, error stack:" (src/mpi/errhan/errutil.c): one frame per
# line follows, innermost last; the class is mostly "Other MPI error", and a frame's message
# (`tables/mpich_stack.yaml`) says what failed. Stacks run to about eight frames.
_ERROR_STACK = re.compile(r"error stack:\s*$")
STACK_LINES = 8
STACK_FAMILY = "mpich-stack-"
# libstdc++'s verbose terminate handler (libsupc++/vterminate.cc) names only the uncaught
# exception's type ("terminate called after throwing an instance of 'T'") and prints its what()
# on the next line: that line is the message, whatever kind of line it is (a watchdog's timeout
# that c10d rethrew as `c10::DistBackendError`), so the report of the abort gives way to it.
_TERMINATE = re.compile(r"terminate called after throwing an instance of ")


def _winner(pool: list[_Candidate], details: Sequence[int] = ()) -> _Candidate:
    """The earliest root cause (on one line, the higher priority), unless a node fault explains it.
    An exception line with no message of its own, or whose `Last error:` detail follows it, gives
    way to a root cause its message or detail lines hold; MPICH's error-stack header, to the
    message of a frame of its stack; a C++ terminate report, to the what() line under it."""
    first = min(pool, key=lambda c: (c.match.line, -c.signature.priority))
    start = first.match.line
    if _ERROR_STACK.search(first.match.text):
        frames = range(start + 1, start + STACK_LINES + 1)
        told = [c for c in pool if c.match.line in frames and c.signature.id.startswith(STACK_FAMILY)]
    elif _EMPTY_MESSAGE.search(first.match.text):
        told = [c for c in pool if start < c.match.line <= start + MESSAGE_LINES and not c.signature.cascade]
    elif first.signature.cascade and _TERMINATE.search(first.match.text):
        told = [c for c in pool if start < c.match.line <= start + MESSAGE_LINES and "what()" in c.match.text]
    else:
        detail = next((d for d in details if start < d <= start + MESSAGE_LINES), None)
        told = [] if detail is None else [c for c in pool if detail < c.match.line <= detail + 2]
        told = [c for c in told if not c.signature.cascade and c.signature.priority >= 0]
    if told:
        first = min(told, key=lambda c: (c.match.line, -c.signature.priority))
    if first.signature.id in NCCL_RESULTS:
        first = _nccl_warned(first, pool)
    if first.signature.category not in EXPLAINED_BY_HARDWARE:
        return first
    faults = [c for c in pool if c.signature.category == "hardware" and c.signature.exclude and not c.fallback]
    return min(faults, key=lambda c: (c.match.line, -c.signature.priority)) if faults else first


def _sentence(sig: Signature, found: Implicating, others: int) -> str:
    text = sig.description
    if where := found.where():
        text += f" ({where})"
    if found.signal:
        text += f"; the process died of signal {found.signal}"
    elif found.exit_code and found.exit_code.startswith("-"):
        text += f"; the process died of signal {found.exit_code[1:]}"  # torch reports signals as -N
    elif found.exit_code:
        text += f"; the process exited with code {found.exit_code}"
    if others > 0:
        text += f"; {others} other error line{'s' if others > 1 else ''} in the log"
    return text


# Categories that say the node is not at fault: restarting elsewhere would not help, so the nodes
# the log names are the failure's place, not nodes to avoid.
NO_NODE_FAULT = frozenset({"application", "out_of_memory", "scheduler"})


def uncaught_signature(uncaught: Uncaught) -> Signature:
    """A signature standing for an exception class, from the exceptions table (else `unknown`).
    Built without validation: it has no pattern of its own, the structure found its line."""
    fact = uncaught.fact
    what = f"the program ended in an uncaught {uncaught.name or 'exception (the log ends inside its traceback)'}"
    return Signature.model_construct(
        id="uncaught-exception",
        description=f"{what} ({fact.description})" if fact else f"{what}, a class no table knows",
        pattern="",
        symptom="crash",
        category=fact.category if fact else "unknown",
        retryable=fact.retryable if fact else True,
        cascade=fact.cascade if fact else False,
        priority=-2,
        exclude=True,
        examples=(),
        counterexamples=(),
    )
