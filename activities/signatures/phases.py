"""Stuck without an error line: a log that ends inside a phase its program announces but never finishes.

A job that hangs often prints nothing wrong: every rank says it is joining the process group and
then nothing follows, or ranks report that they still wait for the others, or someone dumped the
stacks of the stuck processes. When such a phase is open at the log's end, and no error line and
no progress explain the log, the job was stuck there (a `hang`, cause unknown).

Openers and closers, as their sources print them:

- Not Lightning's `Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/n`: its closer (`All
  distributed processes registered`) is rank 0's `rank_zero_info`, which many setups never show
  (another logger, another rank's log, a log cut after start-up), so a log ending after it says
  nothing; tried, it called a healthy held-out log hung and found no failure more.
- PyTorch's store-based barrier (torch/distributed/distributed_c10d.py `_store_based_barrier`):
  `Waiting in store based barrier to initialize process group for rank: ...` after each 10 s of
  waiting while ranks are missing, `Rank r: Completed store-based barrier for key:... with n
  nodes.` on exit. Its entry line (`Added key: ... to store for rank: r`) opens nothing: every
  healthy start prints it, and a log cut just after it shows no waiting.
- A watchdog's stack dump: CPython's faulthandler.dump_traceback_later prints `Timeout (0:05:00)!`
  when its deadline passes, then every thread's stack. A dump alone (a registered signal, py-spy,
  one after `Fatal Python error:`, which is a failure of its own) says nothing of being stuck: a
  healthy run gets profiled too.
- A dump whose frames stop in a wait point (the `wait-points` table: a torch.distributed
  collective or barrier, a store get, a rendezvous, a CUDA synchronisation, c10d's or NCCL's
  native waits) and that ends the log: someone dumped a process that was waiting for its peers
  and nothing followed. Read in the dumpers' own frame formats: py-spy (`    all_reduce
  (torch/distributed/distributed_c10d.py:2050)`, innermost first, under `Thread 42 (idle):
  "MainThread"`), faulthandler (`  File "x.py", line 2050 in all_reduce`, no comma) and gdb's
  backtrace (`#2  0x00007f... in c10d::ProcessGroupNCCL::WorkNCCL::wait(...)`). A traceback's
  frames (`, line 2050, in all_reduce`) are not a dump: an exception passed through there.

Any progress line (a step reported) closes every phase: the run got past it.
"""

from __future__ import annotations

from recovery.activities.signatures.catalog import Signature
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.signatures.tables import escape, lookup

OPEN = "phase:open"
CLOSE = "phase:close"
MORE = "phase:more"  # a line that belongs to an open phase's output (a frame of a stack dump)
# Each phase has a name (the `phase` group, else the pattern's own): a closer ends the phase of
# its name, and once ended a phase does not reopen until progress shows a new attempt (every
# rank adds its barrier key before any rank completes the barrier, but their lines interleave).
WAIT = "wait:frame"  # a traceback's frame in a wait point (diagnosis reads an interrupt there)


def _wait_points() -> tuple[str, str, str]:
    """Patterns for a frame in a wait point, from the `wait-points` table: the `(?:dir/)module` and
    function alternatives of Python frames (a path in any directory, `/` or `\\` separated), and
    the native symbols' alternatives."""
    python: list[tuple[str, str]] = []
    native: list[str] = []
    for entry in lookup("wait-points").table.entries:
        if entry["frame"] == "python":
            module = r"[/\\]".join(escape(part) for part in str(entry["name"]).split("/"))
            functions = "|".join(escape(str(f)) for f in entry["functions"])
            python.append((module, functions))
        else:
            native.extend(escape(str(n)) for n in [entry["name"], *entry.get("names", ())])
    # A quoted path (traceback, faulthandler): `"/site-packages/torch/.../distributed_c10d.py", line N[,] in f`.
    quoted = "|".join(rf'(?:[^"]*[/\\])?{m}", line \d+{{comma}} in (?:{f})' for m, f in python)
    # py-spy's `    f (torch/distributed/distributed_c10d.py:N)`: the path is relative to site-packages.
    spy = "|".join(rf"(?:{f}) \((?:[^()\s]*[/\\])?{m}:\d+\)" for m, f in python)
    return quoted, spy, "|".join(native)


_QUOTED, _SPY, _NATIVE = _wait_points()
PATTERNS = [
    (OPEN, r"Waiting in store based barrier to initialize process group for rank: \d+, key: (?P<barrier>\S+?),? \("),
    # faulthandler.dump_traceback_later's deadline passed (Modules/faulthandler.c: "Timeout (%s)!"
    # with H:MM:SS[.us]), then the stacks of every thread.
    (OPEN, r"^(?:\[rank\d+\]:)?(?P<dump>Timeout) \(\d+:\d\d:\d\d(?:\.\d+)?\)!\s*$"),
    # faulthandler's thread header and frame (`  File "x.py", line 324 in wait`: no comma, unlike a traceback's)
    # and py-spy's (`    fetchall (sqlalchemy/engine/cursor.py:1197)`).
    (MORE, r"^(?:\[rank\d+\]:)?(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):"),
    (MORE, r"^(?:\[rank\d+\]:)?\s+File \"[^\"]+\", line \d+ in [\w<>]+\s*$"),
    (MORE, r"^\s+[\w<>.]+ \([\w./<>-]+\.py:\d+\)\s*$"),
    # py-spy's headers (src/dump.rs: `Process 6473: <command line>`, `Python v3.11.2 (<binary>)`,
    # `Thread 42 (idle): "MainThread"`, `Thread 0x7F.. (active+gil)`) and gdb's (`Thread 1 (Thread
    # 0x7f.. (LWP 47240) "python"):`, frames `#2  0x00007f.. in sym (...) from lib.so`).
    (MORE, r"^Process \d+: \S|^Python v\d+\.\d+\.\d+ \("),
    (MORE, r"^(?:\[rank\d+\]:)?Thread (?:\d+|0x[0-9A-Fa-f]+) \((?:idle|active|gil)[^)]*\)"),
    (MORE, r"^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP \d+\)"),
    (MORE, r"^#\d+\s+(?:0x[0-9a-f]+ in )?[\w:~<>@.?]+ \("),
    # A dump's frame in a wait point (the `dump` phase, as the faulthandler timeout's).
    (OPEN, r"^(?:\[rank\d+\]:)?\s+File \"(?P<dump>)(?:" + _QUOTED.format(comma="") + r")\s*$"),
    (OPEN, r"^(?:\[rank\d+\]:)?\s+(?P<dump>)(?:" + _SPY + r")\s*$"),
    (OPEN, r"^#\d+\s+(?:0x[0-9a-f]+ in )?(?P<dump>)(?:" + _NATIVE + r")\s*\("),
    # A traceback's frame there: not a phase (an exception passed through it), but the frame an
    # interrupt's traceback stops in says where the process waited (diagnosis.py).
    (WAIT, r"File \"(?:" + _QUOTED.format(comma=",") + r")\s*$"),
    # Connecting again and again to the rendezvous store or a peer: c10d's TCPStore client
    # (TCPStore.cpp "TCP client failed to connect/validate to host %s:%d - retrying (try=%d, ...)"),
    # NCCL's bootstrap (socket.cc INFO "Call to connect returned %s, retrying"). Each attempt is a
    # warning; a log that ends while they go on was stuck reaching that host. (c10d's socket.cpp
    # "The client socket has failed to connect to [%s]:%d (errno: ...)" opens nothing: it also
    # warns about each address family it tries on the way to one that works.)
    (
        OPEN,
        r"(?P<connect>TCP client failed to connect/validate) to host (?P<peer>[^\s:\[\]]+|\[[^\]]+\]):\d+ - retrying",
    ),
    (OPEN, r"NCCL INFO (?P<connect>Call to connect) returned [^,\n]+, retrying"),
    (CLOSE, r"NCCL INFO [^\n]*(?P<connect>Init COMPLETE)"),
    # NCCL's communicator init (src/init.c, NCCL_DEBUG=INFO, 2.19+): `ncclCommInitRank comm 0x.. rank
    # r nranks n ... - Init START`, then its topology, channel and transport lines, then `... - Init
    # COMPLETE`. A log that ends in that output never finished setting the communicator up.
    (OPEN, r"NCCL INFO (?:ncclCommInit\w*|ncclCommSplit) comm 0x[0-9a-f]+ [^\n]*- (?P<nccl_init>)Init START"),
    (CLOSE, r"NCCL INFO [^\n]*- (?P<nccl_init>)Init COMPLETE"),
    (MORE, r"NCCL INFO "),
    # The C++ stack c10 prints under a warning (`Exception raised from recvBytes at ...`, `frame #3: ...`).
    (MORE, r"^(?:\[rank\d+\]:)?(?:frame #\d+: |Exception raised from \w+ at )"),
    (CLOSE, r"Completed store-based barrier for (?:key:(?P<barrier>\S+) with )?\d+ nodes"),
]
# The log must end this close to the phase's last line: a stuck job prints nothing more, and a
# log that goes on after it (other output, a later phase) was not stuck there.
TAIL_LINES = 10

STUCK = Signature.model_construct(
    id="stuck-in-phase",
    description=(
        "the log ends inside a phase that never finished (process-group setup, a store-based "
        "barrier, or a dump of stuck processes' stacks) and shows no error: the job hung there"
    ),
    pattern="",
    symptom="hang",
    category="unknown",
    retryable=True,
    cascade=True,  # a hang whose cause the log does not show names no culprit
    priority=-2,
    exclude=False,
    examples=(),
    counterexamples=(),
)

CONNECTING = Signature.model_construct(
    id="stuck-connecting",
    description=(
        "the log ends while this process keeps retrying to connect to the rendezvous store or a peer "
        "(the host is down, unreachable or never started listening): the job hung there"
    ),
    pattern="",
    symptom="hang",
    category="network",
    retryable=True,
    cascade=True,  # the reporter waits; the host it cannot reach (its `peer`) is the place
    priority=-2,
    exclude=False,
    examples=(),
    counterexamples=(),
)


INTERRUPTED_WAITING = Signature.model_construct(
    id="interrupted-while-waiting",
    description=(
        "the process was interrupted (Ctrl-C) while it waited in a collective, a barrier, the "
        "rendezvous store or a GPU synchronisation: the job hung there (the wait says where, not why)"
    ),
    pattern="",
    symptom="hang",
    category="unknown",
    retryable=True,
    cascade=True,  # the interrupted rank waited for the others: it is not the culprit
    priority=-2,
    exclude=False,
    examples=(),
    counterexamples=(),
)


class Phases:
    """The phases a log is in: the first line of each phase still open, and the latest phase line."""

    def __init__(self) -> None:
        self.open: dict[str, LineMatch] = {}
        self.ended: set[str] = set()
        self.last_line = 0

    def line(self, match: LineMatch) -> None:
        if match.pattern == MORE:
            if self.open:
                self.last_line = match.line
            return
        name = _name(match)
        if match.pattern == CLOSE:
            if name == "barrier":  # an older PyTorch names no key: every barrier is done
                self.ended.update(n for n in self.open if n.startswith("barrier"))
            self.ended.add(name)
            self.open = {n: m for n, m in self.open.items() if n not in self.ended}
        elif name not in self.ended:
            self.open.setdefault(name, match)
            self.last_line = match.line

    def progress(self) -> None:
        """The run got past every phase; a later one is a new attempt's."""
        self.open.clear()
        self.ended.clear()

    def stuck(self, lines: int) -> LineMatch | None:
        """The line that opened the earliest phase still open, if the log ends within `TAIL_LINES`
        of the last phase line."""
        if not self.open or lines - self.last_line > TAIL_LINES:
            return None
        return min(self.open.values(), key=lambda m: m.line)


def signature(match: LineMatch) -> Signature:
    """What being stuck in the phase `match` opened means."""
    return CONNECTING if _name(match) == "connect" else STUCK


def _name(match: LineMatch) -> str:
    for group in ("barrier", "dump", "connect", "nccl_init"):
        if group in match.groups:
            value = match.groups[group]
            return f"barrier:{value}" if group == "barrier" and value else group
    return match.pattern
