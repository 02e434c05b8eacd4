"""Structure in a log beyond single lines: Python tracebacks and the exception each ends in.

A traceback's last line names the exception that ended the program (`KeyError: 'lr'`,
`torch.distributed.DistStoreError: ...`). When no signature recognises the failure, that class
still says what kind of failure it was (the `exceptions` table), and a log that ends in one is
never healthy. Chained tracebacks ("The above exception was the direct cause of the following
exception:") print the root cause first, so the earliest exception speaks for the chain.

Ranks print tracebacks at the same time, so their lines interleave. Each writer (the rank or host
its line prefix names, see `prefixes.py`) has its own open traceback; an exception line closes
the traceback its own writer opened.

The scanner finds the lines with `PATTERNS`; `Tracebacks.line` is told each of them in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from recovery.activities.signatures.prefixes import LineContext, line_context
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.signatures.tables import Fact, lookup

# The launcher and logger prefixes an exception line may carry before the class name: srun's
# `3: `, `[rank3]:`, torchrun's `[default0]:`, mpirun's `[1,0]<stderr>:`, Ray's
# `(RayTrainWorker pid=123, ip=10.0.0.1)`, pdsh's `node7: `, and the glog-style head PyTorch's
# own log formatter (torch/_logging/_internal.py TorchLogsFormatter, used by torchelastic since
# 2.2) puts on every line of a record, a logged traceback's too:
# `E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951] `,
# and the ISO time a log collector stamps on each line it keeps (`docker logs --timestamps`,
# `kubectl logs --timestamps`, cloud log viewers: `2022-01-23 02:08:36.029 `,
# `2024-05-01T12:00:00.123456789Z `).
_PREFIX = (
    r"(?:\s*\d{1,6}: |\[[\w.,:<>= -]{1,60}\]:? ?|\([\w.,:=/ -]{1,100}\) |[\w.-]{1,63}: |\s*\"message\": \""
    r"|[IWEF]\d{4} [\d:.]{8,15} +\d+ [\w./-]{1,200}\.py:\d+\] "
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?Z? )*"
)
# A class: dotted module path, then a capitalised name of the kinds exceptions are named, with
# the `_Name` tail of classes generated per error code (pynvml's `NVMLError_GpuIsLost`).
_SUFFIXED = (
    r"(?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Failed|Timeout)(?:_[A-Z]\w*)?"
)


def _known_unsuffixed() -> list[str]:
    """The module-qualified classes the exceptions table knows whose names carry none of those
    words (zipfile.BadZipFile, queue.Empty, socket.gaierror, subprocess.TimeoutExpired,
    concurrent.futures.process.BrokenProcessPool, torch._dynamo.exc.Unsupported, ...): the table
    knows them, so a line that ends in one is read too. Only qualified names, so that a bare word
    (`Empty`, `Unsupported`) on a line is not taken for a class."""
    suffixed = re.compile(_SUFFIXED + r"$")
    found: set[str] = set()
    for entry in lookup("exceptions").table.entries:
        for name in [str(entry["name"]), *entry.get("names", ())]:
            if "." in name and not name.startswith(("builtins.", "c10::")) and not suffixed.match(name):
                found.add(name)
    return sorted(found, key=lambda n: (-len(n), n))


# Python's own `Exception`, raised bare by libraries that define no class of their own (TRL's
# vLLM client: `raise Exception(f"Request failed: {status}, {text}")`; the tokenizers bindings
# raise serde's parse errors as it), is no word's suffix: read only with its message or its
# arguments after it (`Tracebacks.line`), so a line that is the word alone is not taken for one.
_BARE = r"(?:builtins\.)?Exception"
_BARE_NAMES = frozenset({"Exception", "builtins.Exception"})
_BARE_MESSAGE = re.compile(r"\bException: \S")
_CLASS = "(?:" + _SUFFIXED + "|" + _BARE + "|" + "|".join(re.escape(n) for n in _known_unsuffixed()) + ")"
PATTERNS = [
    # rich's traceback (rich/traceback.py, `rich.traceback.install()`, used by accelerate's and
    # other CLIs) draws the header into a box: `╭──── Traceback (most recent call last) ────╮`
    # (U+256D, then U+2500s, in UTF-8: patterns are ASCII bytes).
    (
        "struct:traceback",
        r"Traceback \(most recent call last\):"
        r"|\xe2\x95\xad(?:\xe2\x94\x80)+ Traceback \(most recent call last\) \xe2\x94\x80",
    ),
    # IPython and Jupyter (IPython.core.ultratb.VerboseTB) print the class first, padded, on the
    # header of an uncaught exception's traceback: `IndexError      Traceback (most recent call last)`.
    ("struct:ipython", r"^(?P<exc>" + _CLASS + r")\s{2,}Traceback \(most recent call last\)"),
    # VS Code's Python debugger (debugpy) stops on an uncaught exception and shows `Exception has
    # occurred: ScannerError`, the message on the next lines, then the frames: users paste it
    # as the log. The class is unqualified and named as its author chose.
    ("struct:ipython", r"^Exception has occurred: (?P<exc>(?:[A-Za-z_]\w*\.){0,8}[A-Z]\w*)\s*$"),
    # wandb's sweep agent runs the training function, catches what it raised and reports the run
    # ended by it, the exception's repr (wandb/agents/pyagent.py: `wandb.termerror("Run {}
    # errored: {}".format(run_id, repr(exc)))`, printed as `wandb: ERROR Run 1zpp9ex8 errored:
    # KeyError('sentence_id')`). The agent goes on to its next run; this one left uncaught.
    ("struct:ipython", r"\bwandb: ERROR Run [\w-]+ errored: (?P<exc>" + _CLASS + r")\("),
    # A program that replaces `sys.excepthook` with one that logs the exception at critical level
    # before the interpreter exits (OLMo's olmo/util.py `excepthook`: `log.critical("Uncaught %s:
    # %s", exctype.__name__, value, exc_info=...)`, printed `[<time>] CRITICAL [olmo.util:158,
    # rank=0] Uncaught OLMoThreadError: generator thread data thread 3 failed`): the record names
    # the class that left the program uncaught, and its traceback, when printed, follows it.
    (
        "struct:ipython",
        r"\b(?:CRITICAL|FATAL)\b[^\n]{0,160}?\b[Uu]ncaught (?P<exc>" + _CLASS + r")(?: in thread [\w.-]+)?: ",
    ),
    # A frame's source line that raises: when a log is cut off before the exception line, the
    # last one names the class the traceback was about to print.
    ("struct:raise", r"^" + _PREFIX + r"\s+raise (?P<exc>" + _CLASS + r")\b"),
    # TSL's and TensorFlow's TF_CHECK_OK (tsl/platform/status.h: LOG(FATAL) << "Non-OK-status: "
    # << expr << " status: " << status) aborts the process on a failed status, as XLA, TensorFlow
    # and torch_xla use it (pytorch/xla#6700: "Non-OK-status: status.status() status:
    # UNIMPLEMENTED: ..."). No exception class, but as final as one; its status code says what
    # kind of failure it was.
    ("struct:check-ok", r"Non-OK-status: [^\n]*? status: (?P<exc>[A-Z][A-Z_]{4,24}): "),
    # libstdc++'s verbose terminate handler (libsupc++/vterminate.cc) prints an uncaught C++
    # exception as "terminate called after throwing an instance of 'T'" then "  what():  <what()>"
    # and aborts. std::system_error's what() is its errno's text (strerror, after an optional
    # "<context>: "), as gloo's and c10d's socket code throw it: the errno says what failed.
    ("struct:cpp-what", r"^" + _PREFIX + r"\s+what\(\):\s+(?P<what>\S[^\n]*)$"),
    # Ray wraps the task's error: `ray.exceptions.RayTaskError(ActorDiedError): ...`. Ray's driver
    # also folds the same line from several workers into one and says so after it (python/ray/
    # _private/ray_logging.py, log deduplication: `AssertionError [repeated 7x across cluster]`).
    (
        "struct:exception",
        r"^" + _PREFIX + r"(?P<exc>" + _CLASS + r")(?:\((?P<inner>\w+)\))?"
        r"(?::\s[^\n]*|:?\s*(?:\[repeated \d+x across cluster\]\s*)?)$",
    ),
    # TensorFlow 1.x ends the message of an error a session run raised with the op's creation
    # stack and then the class and message again, unqualified (`InvalidArgumentError (see above
    # for traceback): Assign requires shapes of both tensors to match. ...`): the line a log keeps
    # when the traceback's own exception line, above the op's stack, is cut or scrolled away.
    ("struct:exception", r"^" + _PREFIX + r"(?P<exc>" + _CLASS + r") \(see above for traceback\): \S"),
    # The JVM's default handler for an exception no code caught prints the thread's name before it
    # (java.lang.ThreadGroup.uncaughtException: `Exception in thread "<name>" ` and then the
    # throwable's toString, `java.lang.OutOfMemoryError: Java heap space`), then its stack. Python's
    # threading prints `Exception in thread Thread-1:` with no quotes and no class on the line.
    (
        "struct:exception",
        r"^" + _PREFIX + r'Exception in thread "[^"\n]{1,100}" (?P<exc>' + _CLASS + r")(?::\s[^\n]*)?\s*$",
    ),
    # Last, so an exception line that names another class is read as the exception line.
    # A logger's record that names the class of the exception whose traceback it then prints
    # (`logger.warning(..., exc_info=True)`): torchelastic's "The node 'n' has failed to shutdown
    # the rendezvous 'r' due to an error of type RendezvousConnectionError." When the log is cut
    # before the traceback's own exception line, the class it named is the one that was raised.
    ("struct:named", r"\b(?:an? )?(?:error|exception) of type (?P<exc>" + _CLASS + r")\b"),
    # CPython's chain marker for an exception raised from another (`raise B from A`, or an
    # implicit __cause__): "The above exception was the direct cause of the following exception:",
    # printed between A's traceback, which ends in A's exception line, and B's. When the log is cut
    # inside B's traceback, A is what B was raised from (torchelastic's RendezvousConnectionError
    # from the store's `RuntimeError: Broken pipe`). "During handling of the above exception"
    # says no such thing: B merely happened while A was being handled.
    ("struct:chained", r"^" + _PREFIX + r"\s*The above exception was the direct cause of the following exception:"),
    # CPython's report of an exception it could not raise and ignored (PyErr_WriteUnraisable: a
    # `__del__`, a weakref or atexit callback, a ctypes callback): "Exception ignored in: <obj>"
    # (3.13: "Exception ignored while ..."), then the traceback. The program goes on.
    ("struct:ignored", r"^" + _PREFIX + r"Exception ignored (?:in\b|on calling |while )"),
    # torchelastic's agent, once its own workers have succeeded, waits at an exit barrier for the
    # other agents; when that wait fails it logs the exception with its traceback and returns the
    # successful result anyway (torch/distributed/elastic/agent/server/api.py `_exit_barrier`:
    # `except Exception: logger.exception("Error waiting on exit barrier. Elapsed: %s seconds")`).
    # The store timeout or reset that traceback ends in was caught: this node finished.
    ("struct:ignored", r"\bError waiting on exit barrier\. Elapsed: [\d.]+ seconds"),
    # xFormers probes for Triton at import and, when the import fails, logs the caught exception
    # with its traceback and goes on without Triton's kernels (xformers/__init__.py
    # `_is_triton_available`: `logger.warning("A matching Triton is not available, some
    # optimizations will not be enabled", exc_info=True)`; older releases print "Error caught
    # was: <e>" instead of the traceback).
    ("struct:ignored", r"\bA matching Triton is not available, some optimi[sz]ations will not be enabled"),
]
TRACEBACK_SPAN = 400  # lines from `Traceback` to its exception line, with other ranks' lines between
# Headers at most this far apart, the first still open, are copies of one failure that processes
# without a rank prefix printed at once (each prints its header and first frames together).
INTERLEAVED = 8
NAMED_SPAN = 3  # lines from a record that names a class to the traceback header it introduces
WRITERS = 4096  # writers (rank, host) remembered at once: a writer per rank, bounded on a huge job


@dataclass(frozen=True)
class Uncaught:
    """An exception line: the class, what the table knows of it, and whether a traceback led to it."""

    match: LineMatch
    name: str
    fact: Fact | None
    traceback: bool  # closes a traceback (else a bare `Name: message` line)
    cause: int | None = None  # the exception line this one was raised from (a chain marker between)
    first: int | None = None  # the header of the earliest traceback interleaved with this cut-off one


def exception_fact(name: str) -> Fact | None:
    """What the exceptions table says of a class, by its full dotted name or its own name; for a
    class it does not know, what the words of its name say (the `exception-words` table)."""
    table = lookup("exceptions")
    own = name.rsplit(".", 1)[-1]
    return table.get(name) or table.get(own) or _by_words(own)


# A canonical status code at the head of a message (`XlaRuntimeError: UNAVAILABLE: ...`) or
# named by gRPC (`status = StatusCode.UNAVAILABLE`).
_STATUS = re.compile(r"(?:Error|Exception): (?:[\w.]+: )?([A-Z][A-Z_]{4,24}): |\bStatusCode\.([A-Z][A-Z_]{4,24})\b")


def status_fact(text: str) -> Fact | None:
    """What the message's canonical status code says, for a class whose message decides."""
    if (m := _STATUS.search(text)) is None:
        return None
    code = m.group(1) or m.group(2)
    fact = lookup("status-codes").get(code)
    if fact is None:
        return None
    return Fact(
        code, f"{fact.description} (the status code of the message)", fact.category, fact.retryable, fact.cascade
    )


def check_fact(code: str) -> Fact | None:
    """What a failed fatal status check's code says (`Non-OK-status: ... status: UNAVAILABLE: ...`)."""
    fact = lookup("status-codes").get(code)
    if fact is None:
        return None
    what = f"{fact.description} (the status of the check)"
    return Fact(code, what, fact.category, fact.retryable, fact.cascade)


# The errno an OSError prints (`[Errno 113] No route to host`, `[Errno -2]` for the resolver's
# codes), c10d's socket errors (`errno: 110 - Connection timed out`, `code: -98, name: EADDRINUSE`),
# or, for a generic class (Gloo raises `RuntimeError: No route to host`), the system's message
# for an errno ending the line. PyTorch's shared-memory allocator prints the message and then the
# number (`unable to mmap 1024 bytes from file </torch_1_2>: Cannot allocate memory (12)`): read
# only when the two agree. Rust's std::io::Error prints the OS error after its text
# (`Address already in use (os error 98)`, library/std/src/io/error.rs), as the Rust parts of
# Python packages (torchft, safetensors, tokenizers) pass it on; its Debug form, which a `{e:?}`
# prints (safetensors' "Error while serializing: IoError(Os { code: 28, kind: StorageFull, ... })"),
# names the number as `Os { code: 28` (the same file's `impl fmt::Debug for Repr`). HDF5's file
# drivers put the errno of a failed open, lock or truncate into their error's text (src/H5FDsec2.c:
# "unable to open file: name = '%s', errno = %d, error message = '%s', ..."), which h5py passes on in
# its OSError (`Unable to open file (unable to open file: name = 'x.h5', errno = 2, error message =
# 'No such file or directory', ...)`, `(unable to lock file, errno = 37, error message = 'No locks
# available')`).
_ERRNO = re.compile(
    r"\[Errno (-?\d{1,4})\]|\berrno: (-?\d{1,4}) - |\bname: (E[A-Z0-9_]{2,15})\b|\(os error (\d{1,4})\)"
    r"|\bOs \{ code: (\d{1,4}),|\berrno = (\d{1,4}), error message = '"
)
# The Debug form also names the error's std::io::ErrorKind, which Rust decodes from the OS code
# (library/std/src/sys/pal/unix/mod.rs `decode_error_kind`; the Windows twin decodes Windows'
# codes to the same kinds). The code is the OS's own: on Windows `Os { code: 112, kind:
# StorageFull, message: "There is not enough space on the disk." }` is ERROR_DISK_FULL, where
# Linux's 112 is EHOSTDOWN. So the kind, where the errno table lists it (`rust_kinds`), decides;
# the number only where it does not (Uncategorized, Other, a kind several errnos share).
_RUST_KIND = re.compile(r"\bOs \{ code: -?\d{1,5}, kind: (\w+)")
_MESSAGE_NUMBER = re.compile(r"([A-Z][\w ,/'-]{2,60}) \((\d{1,3})\)")
# TensorFlow's file systems join the errno's text to the path with "; " and eager ops append
# " [Op:<name>]" (`ResourceExhaustedError: .../part-00000; No space left on device`).
_TAIL = re.compile(r"(?:^|[:\];] )([A-Z][\w ,./'-]{2,60}?)[\s.'\">)]*(?: \[Op:\w+\])?$")
# A message that is nothing but an errno's text, in any case (some file systems lower-case it:
# `ResourceExhaustedError: disk quota exceeded [Op:SaveV2]`); a lower-case phrase at the end of a
# longer message (`CUDA error: invalid argument`) is not read.
_WHOLE = re.compile(r"^\s*[\w.]*(?:Error|Exception)\w*: ([a-z][\w ,./'-]{2,60}?)[\s.]*(?: \[Op:\w+\])?$")


# TensorFlow's file systems report an errno as `IOError(<file name>, errno)` (tsl/platform/errors.h),
# which joins the file's name to the errno's text with "; ": a path right before "; " says the call
# was made on a file, so an errno's `on_path` verdict applies.
_TF_PATH = re.compile(r"(?:^|[\s:])(?:[a-z][\w+.-]*:/)?/?[\w.@+-]+(?:/[\w.@+-]+)+; $")
# CPython's OSError with a file name (`[Errno 107] Transport endpoint is not connected: '/mnt/x'`,
# bytes paths as `b'...'`): the call was made on a path, so an errno's `on_path` verdict applies.
_ON_PATH = re.compile(r"\[Errno -?\d{1,4}\] [^:\n]{2,80}: b?['\"]")


def errno_fact(text: str) -> Fact | None:
    """What the message's errno says, for a class whose message decides (a bare OSError)."""
    table = lookup("errno")
    fact: Fact | None = None
    on_file = False  # the failed call was made on a file: an entry's `on_path` verdict applies
    if (k := _RUST_KIND.search(text)) and k.group(1) in _rust_kinds():
        fact = _rust_kinds()[k.group(1)]
    elif m := _ERRNO.search(text):
        fact = table.get(m.group(1) or m.group(2) or m.group(3) or m.group(4) or m.group(5) or m.group(6))
        on_file = bool(m.group(1)) and _ON_PATH.match(text, m.start()) is not None
    elif (m := _MESSAGE_NUMBER.search(text)) and (found := _errno_messages().get(m.group(1).lower())):
        fact = found if found is table.get(m.group(2)) else None
    elif m := _TAIL.search(text):
        fact = _errno_messages().get(m.group(1).lower())
        on_file = _TF_PATH.search(text, 0, m.start() + 2) is not None
    elif m := _WHOLE.search(text):
        fact = _errno_messages().get(m.group(1).lower())
    if fact is None:
        return None
    on_path = fact.fields.get("on_path") if on_file and fact.fields is not None else None
    if on_path:
        what = f"{on_path['description']} (the errno of the message, on a path)"
        return Fact(fact.name, what, on_path["category"], bool(on_path["retryable"]), fact.cascade)
    what = f"{fact.description} (the errno of the message)"
    return Fact(fact.name, what, fact.category, fact.retryable, fact.cascade)


@cache
def _rust_kinds() -> dict[str, Fact]:
    table = lookup("errno")
    return {
        str(kind): f
        for e in table.table.entries
        if (f := table.get(str(e["name"]))) is not None
        for kind in e.get("rust_kinds", ())
    }


@cache
def _errno_messages() -> dict[str, Fact]:
    table = lookup("errno")
    return {str(e["message"]).lower(): f for e in table.table.entries if (f := table.get(str(e["name"]))) is not None}


# A name's words: runs of capitals before a capitalised word (`NVML` in `NVMLError`), capitalised
# or lower-case words, digits; underscores and dots separate.
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|\d+")


def class_words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _by_words(name: str) -> Fact | None:
    words = " ".join(class_words(name))
    for entry in _word_entries():
        if f" {entry.name.lower()} " in f" {words} ":
            what = f"{entry.description} (read from the name of {name})"
            return Fact(name, what, entry.category, entry.retryable)
    return None


@cache
def _word_entries() -> tuple[Fact, ...]:
    table = lookup("exception-words")
    return tuple(f for e in table.table.entries if (f := table.get(str(e["word"]))) is not None)


@dataclass
class _Open:
    """A traceback not yet closed by its exception line, and the last class a frame raised in it."""

    start: LineMatch
    raised: LineMatch | None = None
    named: LineMatch | None = None  # the record just before the header named the class
    ignored: bool = False  # CPython printed it as an exception it ignored (the program went on)
    cause: int | None = None  # the exception line a chain marker before the header said it came from
    # Processes that share a writer (no rank prefix) print their tracebacks at once: a header
    # while this writer's traceback is still open, nothing closing it, starts the next process's
    # copy. `first` keeps the earliest header of such a run, where the log's story of it begins.
    first: int | None = None


K = TypeVar("K")
V = TypeVar("V")


def remember(memory: dict[K, V], key: K, value: V, limit: int) -> None:
    """Set `key` in an insertion-ordered memory that keeps at most `limit` keys, forgetting the
    oldest: what a log's reader remembers stays bounded however long the log."""
    memory[key] = value
    if len(memory) > limit:
        memory.pop(next(iter(memory)))


class Tracebacks:
    """Tracks open tracebacks per writer; `line` returns an `Uncaught` for each exception line."""

    def __init__(self) -> None:
        self._open: dict[tuple[int | None, str | None], _Open] = {}
        self._named: dict[tuple[int | None, str | None], LineMatch] = {}
        self._ignored: dict[tuple[int | None, str | None], int] = {}  # writer -> line of its notice
        self._closed: dict[tuple[int | None, str | None], int] = {}  # writer -> its last exception line
        self._chained: dict[tuple[int | None, str | None], int] = {}  # writer -> cause of its next traceback
        self.ignored_line = -1  # the last exception line that closed an ignored traceback
        # The exception lines that closed ignored tracebacks, as printed: CPython repeats the same
        # report for every object whose `__del__` fails, so a paste that starts mid-report begins
        # with one such line alone, no header or frames above it (see `repeats_ignored`).
        self._ignored_texts: dict[str, None] = {}

    def line(self, match: LineMatch, context: LineContext) -> Uncaught | None:
        writer = (context.rank, context.host)
        if match.pattern == "struct:named":
            remember(self._named, writer, match, WRITERS)
            return None
        if match.pattern == "struct:ignored":
            remember(self._ignored, writer, match.line, WRITERS)
            return None
        if match.pattern == "struct:chained":
            if (closed := self._closed.get(writer)) is not None and match.line - closed <= NAMED_SPAN:
                remember(self._chained, writer, closed, WRITERS)
            return None
        if match.pattern == "struct:traceback":
            named = self._named.pop(writer, None)
            near = named is not None and match.line - named.line <= NAMED_SPAN
            ignored = match.line - self._ignored.pop(writer, -NAMED_SPAN - 1) <= NAMED_SPAN
            cause = self._chained.pop(writer, None)
            caused = cause is not None and match.line - cause <= 2 * NAMED_SPAN
            fresh = _Open(match, named=named if near else None, ignored=ignored, cause=cause if caused else None)
            if (earlier := self._open.get(writer)) is not None and match.line - earlier.start.line <= INTERLEAVED:
                fresh.first = earlier.first if earlier.first is not None else earlier.start.line
            remember(self._open, writer, fresh, WRITERS)
            return None
        if match.pattern == "struct:raise":
            # Frames' source lines appear only in tracebacks: one whose header was cut off the
            # log (an excerpt that starts mid-traceback) opens it here.
            self._open.setdefault(writer, _Open(match)).raised = match
            return None
        if match.pattern == "struct:cpp-what":
            fact = errno_fact(match.groups.get("what", ""))
            return None if fact is None else Uncaught(match, "C++ exception (std::system_error)", fact, traceback=True)
        name = match.groups.get("exc", "")
        if match.pattern == "struct:exception" and name in _BARE_NAMES and not _BARE_MESSAGE.search(match.text):
            return None  # the word alone (a heading, a table cell), not a raised Exception
        if match.pattern == "struct:check-ok":
            return Uncaught(match, f"failed fatal status check ({name})", check_fact(name), traceback=True)
        fact = exception_fact(name)
        if match.pattern == "struct:ipython":
            # IPython prints this header only for an exception that left the cell uncaught (and
            # the debugger's header, by default, only for one that left the program).
            return Uncaught(match, name, fact, traceback=True)
        if (inner := match.groups.get("inner")) and (fact is None or fact.cascade):
            name, fact = inner, exception_fact(inner)  # a wrapper speaks for what it wraps
        if fact is not None and fact.fields is not None and fact.fields.get("by_message"):
            fact = status_fact(match.text) or errno_fact(match.text) or fact
        opened = self._open.pop(writer, None)
        closes = opened is not None and match.line - opened.start.line <= TRACEBACK_SPAN
        if closes and opened is not None and opened.ignored:
            self.ignored_line = match.line
            remember(self._ignored_texts, match.text.strip(), None, 64)
            return None
        # CPython prints the chain marker right below the first exception's line, so that line is
        # the cause even when the log starts mid-traceback (its header cut off, no `raise` frame).
        remember(self._closed, writer, match.line, WRITERS)
        return Uncaught(match, name, fact, traceback=closes)

    def repeats_ignored(self, text: str) -> bool:
        """Whether an exception line says word for word what an ignored traceback of the log
        ended in: a bare one (no traceback led to it) is then the tail of the same report, its
        head cut off, not an exception of its own."""
        return text.strip() in self._ignored_texts

    def unfinished(self, after: int) -> list[Uncaught]:
        """Tracebacks opened after line `after` that no exception line closed: a log cut off
        while a traceback was being printed. The class is the one its last frame raised, if any."""
        found = []
        for tb in self._open.values():
            if tb.start.line <= after or tb.ignored:
                continue
            if line_context(tb.start.text).warning:
                # A logger printed it at a warning or lower level (`root[42] DEBUG Traceback ...`,
                # `[W ...] ... Traceback`): the program caught the exception and logged it.
                continue
            if (told := tb.raised or tb.named) is not None:
                name = told.groups.get("exc", "")
                found.append(Uncaught(told, name, exception_fact(name), traceback=True, cause=tb.cause, first=tb.first))
            else:
                found.append(Uncaught(tb.start, "", None, traceback=True, cause=tb.cause, first=tb.first))
        return found
