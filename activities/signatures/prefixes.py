"""Who wrote a log line: rank and host from the prefixes launchers and loggers put on lines.

    3: ...                               srun --label (the task, i.e. global rank, 3)
    [rank3]: ...                         PyTorch's per-rank log prefix
    [default3]: ...                      torchrun's local-rank prefix (local rank 3)
    node7:12345:12399 [0] NCCL WARN ...  NCCL's host:pid:tid prefix
    Mar  3 12:34:56 node7 kernel: ...    syslog (also ISO timestamps)
    [node7] ...                          a bracketed host name (with a digit in it)
    node7: ...                           pdsh/clush host prefix (with a digit in it)
    [node7:12345:0] ...                  UCX's and Open MPI's host:pid(:tid) prefix
    slurmstepd-node7: error: ...         Slurm's step daemon, built for several slurmd per host
    (RayWorkerWrapper pid=67, ip=10.1.0.7) ...   Ray's prefix on a worker's or actor's lines
    RayTaskError(E): ray::W.f() (pid=67, ip=10.1.0.7)   Ray's header of a task's remote traceback
    (VllmWorker rank=3 pid=2120) ...     vLLM's worker processes (V1: `(Worker_TP3 pid=2120)`)
    [1,3]<stderr>: ...                   Open MPI's --tag-output ([jobid,rank]; Horovod under mpirun)
    [3]<stderr>: ...                     Horovod's own runner (horovodrun with Gloo)
    [rank: 3] ...                        Lightning's rank-prefixed messages
    rank:  3 | ...                       ParlAI's prefix on a distributed worker's lines
    MPICH ERROR [Rank 3] [job id 41.0] [<time>] [nid006700] - Abort(...)   HPE Cray MPICH's abort
    [2025-04-21 07:28:41 TP3] ...        SGLang's scheduler of tensor-parallel rank 3
    trainer/0 ...                        TorchX's (and NeMo-Run's) role/replica prefix, read past
    NVRM: GPU0 nvAssertFailedNoLog: ...  the NVIDIA driver names the GPU it speaks of (GPU 0)
    NVRM: GPU 0000:3b:00.0: ...          ... or its PCI bus id

Only the first few hundred characters are looked at, with anchored patterns, so this is cheap
and cannot be slowed down by long lines.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

_HEAD = 300
_SRUN = re.compile(r"\s*(\d{1,6}): ")
_PDSH = re.compile(r"([A-Za-z][\w.-]{0,62}|\d{1,3}(?:\.\d{1,3}){3}): ")
# Slurm built with --enable-multiple-slurmd names its step daemon `slurmstepd-<node>` in the
# messages it writes into a job's output (src/slurmd/slurmstepd/mgr.c); the node is the rest.
_STEPD = "slurmstepd-"
_RANK = re.compile(r"\[rank(\d{1,6})\]:")
# PyTorch names the rank inside its own messages: `[Rank 1] NCCL watchdog thread terminated with
# exception: ...`, `[PG ID 1 PG GUID 1 Rank 19] Process group watchdog ...`. For a root cause
# that is the rank that hit the error (for a timeout it is a victim, but cascades do not use it).
# MPICH's own abort (ch4 MPID_Abort, src/mpid/ch4/src/ch4_globals.c) writes "Abort(<code>) on
# node <n> (rank <r> in comm <id>): ...", where "node" is the process's rank in MPI_COMM_WORLD
# (MPIR_Process.rank), not a host: Intel MPI and MPICH on Aurora print it so.
_MESSAGE_RANK = re.compile(r"\[(?:PG [^\]]{0,40}?)?Rank (\d{1,6})\]|\bAbort\(-?\d{1,12}\) on node (\d{1,7}) \(rank \d")
_LOCAL = re.compile(r"\[default(\d{1,4})\]:")
# The NVIDIA driver's messages about one GPU: `NVRM: GPU0 ...` (open-gpu-kernel-modules'
# per-GPU NV_PRINTF prefix), `NVRM: GPU 0000:3b:00.0: ...` and `NVRM: GPU at PCI:0000:3b:00: ...`.
_NVRM_GPU = re.compile(r"NVRM: GPU(?:(\d{1,3})\b| (?:at PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}))")
# NCCL's host is gethostname() up to its first dot, which may begin with a digit: a Docker
# container's default hostname is its 12-hex-digit id (`8470dd07de42:174:239 [0] ... NCCL WARN`).
# A letter somewhere in it keeps a time of day (`08:39:46 [0]`) from reading as a host, and an
# ISO date before one (`2025-04-08T08:39:46 [0]`) is not a host either. The device in brackets
# is whatever cudaGetDevice left in an uninitialised int before NCCL 2.19 (src/debug.cc), any
# number when CUDA itself would not start (`VM-192-150-centos:2871:2871 [32523] ... NCCL WARN
# Cuda failure 'CUDA driver version is insufficient ...'`), which is when the host matters most.
_NCCL = re.compile(
    r"(?:^|[\s\]:])((?=[\w.-]{0,62}[A-Za-z])(?!\d{4}-\d\d-\d\dT)[A-Za-z0-9][\w.-]{0,62})"  # the host
    r":\d{1,9}:\d{1,9} \[-?\d{1,10}\]"  # :pid:tid [cuda device]
)
_SYSLOG = re.compile(
    r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S{0,20})"  # the time
    r" ([\w.-]{1,63}) [\w./-]{1,40}(?:\[\d+\])?: "  # host, then program[pid]:
)
_BRACKET = re.compile(r"\[([A-Za-z][\w.-]{0,62})\] ")
# UCX's `[host:pid:tid]` (`[1659624398.917405] [node7:12345:0]`) and Open MPI's `[host:pid]`,
# structured prefixes whose first field is the host whatever its name (not a `file.py:line`).
# UCX pads the pid to five places (src/ucs/debug/log.c, "[%s:%-5d:%d:%d] "): `[node7:6807 :0:6807]`.
# As for NCCL's prefix, a Docker container's hostname is its hex id and may begin with a digit
# (`[09677202c889:5283 :0:5704] Caught signal 7 (Bus error ...)`): a letter somewhere in it
# keeps a time of day (`[12:34:56]`) from reading as a host. A cloud VM's default hostname may be
# its address with dashes and nothing else (`[10-7-133-247:16170:0:17316] Caught signal 11`, a
# NeMo-Run job's UCX prefix): four dash-joined numbers are no time of day either.
_HOST_PID = re.compile(
    r"(?:^|\] )\[(?![\w-]*\.(?:py|cc|cpp|c|h|hpp|cu|rs|go|java)[:\]])"
    r"((?=[\w.-]{0,62}[A-Za-z])[A-Za-z0-9][\w.-]{0,62}|\d{1,3}(?:-\d{1,3}){3}):\d{1,9} {0,4}(?::\d{1,9}){0,2}\]"
)
# HPE Cray MPICH (cray-mpich 8, on Perlmutter, Frontier, Polaris, Aurora, LUMI, Alps) heads an
# aborting process's message with its rank, the Slurm or PALS job id, the time and the node:
# `MPICH ERROR [Rank 519] [job id 947981.0] [Tue Jun 11 15:11:42 2024] [c1207] - Abort(...)`, as
# the logs of ofiwg/libfabric#10072 and #11307, pmodels/mpich#6362 and flux-framework/flux-coral2#36
# show it (the library is closed source). The rank is read by `_MESSAGE_RANK`.
_CRAY_MPICH = re.compile(r"MPICH ERROR \[Rank \d{1,7}\] \[job id [^\]]{0,80}\] \[[^\]]{0,40}\] \[([\w.-]{1,63})\] ")
# Ray puts the process's name, pid and node address before every line it forwards to the driver;
# a remote node's raylet lines have no pid, only `(raylet, ip=10.0.0.7)` (python/ray/_private/
# worker.py print_worker_logs: no `pid=` prefix for the raylet and the autoscaler; releases
# before 1.0 wrote `(pid=raylet, ip=...)`).
# Ray colours the prefix (dim, then cyan, and a reset after it: `\x1b[2m\x1b[36m(...)\x1b[0m`); the
# scanner strips whole escape sequences, but a copy from a terminal or a web console often drops
# only the ESC and keeps the rest: `[36m(RayTrainWorker pid=3462, ip=100.64.83.225)[0m [nltk_data] ...`.
_SGR = r"(?:\[\d{1,3}(?:;\d{1,3}){0,4}m){0,3}"
_RAY = re.compile(
    r"\s*" + _SGR + r"\((?:(?:[\w.:-]{1,80} )?pid=(?:\d{1,9}|raylet)|raylet), ip=([\w.:-]{1,63})\)" + _SGR + " "
)
# Ray's RayTaskError prints the remote traceback with each `Traceback (most recent call last):`
# replaced by the process that ran the task: its title, pid and node address (python/ray/
# exceptions.py RayTaskError.__str__: f"{proctitle} (pid={pid}, ip={ip}" and `, repr=...)` for an
# actor), after the class on the exception line: `ray.exceptions.RayTaskError(RuntimeError):
# ray::TorchTrainable.train_buffered() (pid=881, ip=172.31.1.180)`. The address names the node
# the task raised on; an unspecified or loopback address (`ip=0.0.0.0`) names no node.
_RAY_TASK = re.compile(r"\bray::[\w.]{1,200}\(\) \(pid=\d{1,9}, ip=([\w.:-]{1,63})[,)]")
_NO_NODE = frozenset({"0.0.0.0", "127.0.0.1", "::", "::1", "localhost"})
# TorchX prints each line of a role's replica after `<role>/<replica id> ` (torchx/cli/cmd_log.py:
# f"{role_name}/{replica_id} {line}", in green on a terminal), and so does NeMo-Run, which runs
# its local and Slurm jobs through TorchX (`nemo.collections.llm.api.finetune/0 ...`). It says
# which replica printed the line, not where: the prefixes after it name the host or rank.
_TORCHX = re.compile(r"(?:\x1b\[\d{1,2}m)?[A-Za-z][\w.-]{0,100}/\d{1,5}(?:\x1b\[0m)? ")
# Inference engines name a worker's rank in their own prefixes (tensor parallel = the rank there).
# vLLM's V1 workers are `(Worker_TP1 pid=530)`, `(Worker_PP0_TP1 pid=...)`: with pipeline stages
# the TP index is a global rank only on the first stage.
_ENGINE_RANK = re.compile(
    r"\(VllmWorker rank=(\d{1,5}) pid=\d+\)|^\[[\d: -]{0,30}(?:[DP]P\d+ )*TP(\d{1,5})\]"
    r"|\((?:VllmWorker|Worker)(?:_PP0)?_TP(\d{1,5}) pid=\d+\)"
)
# Open MPI's --tag-output (`[jobid,rank]<stderr>:`, the rank in MPI_COMM_WORLD), Horovod's own
# runner (horovodrun with Gloo: its task service tags each worker's line `[rank]<stdout>:` or
# `[rank]<stderr>:`, after a time with --prefix-output-with-timestamp), Lightning's
# rank_prefixed_message (`[rank: 3] ...`) and ParlAI's distributed_context, which puts
# `'rank:{:3d} |'.format(rank)` (the global rank) before every print and log record of a worker
# (parlai/utils/distributed.py, logging.py add_format_prefix): `rank:  3 | 2022-04-03 ... CRITICAL |`.
_OMPI_TAG = re.compile(r"\[(?:\d{1,9},)?(\d{1,6})\]<std(?:out|err|diag)>:")
_TAGGED_RANK = re.compile(_OMPI_TAG.pattern + r"|\[rank: (\d{1,6})\]|^rank: {0,2}(\d{1,6}) \| ")
_OMPI_TAG_HEAD = 80  # a `--timestamp-output` date (`Sun Oct  1 17:01:10 2017`) and the tag


# The severity glog-style loggers put before a source location: PyTorch's `[W socket.cpp:663]`
# and `[E1023 10:11:12.345678 4242 ProcessGroupNCCL.cpp:616]`, absl's `W1129 13:47:03.171 12 x.cc:67]`.
_SEVERITY = re.compile(r"(?:^|[\]:\s])\[?([IWEF])(?:\d{3,4} [\d:.]+(?: +\d+)?)? ?[\w./-]+\.(?:cpp|cc|hpp|h|c):\d+\]")
# Libraries that mark their own warnings with a fixed prefix. rdma-core's libibverbs (PFX
# "libibverbs: " in libibverbs/ibverbs.h) prints "Warning: couldn't load driver '<name>': <dlerror>"
# for a provider listed in /etc/libibverbs.d that fails to load (dynamic_driver.c), then goes on
# with the providers that did: the dlerror it quotes (`version ... not found`) is no failure.
# JAX logs "CUDA backend failed to initialize: <error>." as a warning after it has already
# gone on with its default backend (jax/_src/xla_bridge.py _suggest_missing_backends, at
# logger.warning; Python's last-resort handler prints the bare message): the error it quotes
# was caught. A run that needed the GPU fails later, and that failure speaks.
_LIBRARY_WARNING = re.compile(
    r"\s*(?:libibverbs: Warning: |(?:WARNING:jax\._src\.xla_bridge:)?CUDA backend failed to initialize: )"
)
# Python's warnings module shows a warning it did not raise as `<file>:<line>: <category>: <message>`
# (Lib/warnings.py formatwarning), the category a Warning subclass: torchvision's "image.py:13:
# UserWarning: Failed to load image Python extension: ...: undefined symbol: ..." for an optional
# extension it goes on without. A warning turned into an error (`-W error`) is raised instead,
# and its line in the traceback has no file and line before the class. PyTorch warns, not raises,
# when CUDA fails to start (torch/cuda/__init__.py: "UserWarning: CUDA initialization: <error>")
# and goes on with no GPU, which a training job cannot: those lines stay failures.
_PY_WARNING = re.compile(
    r"\s*(?:[A-Za-z]:)?[^:'\"\n]{1,250}\.py:\d{1,6}: (?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning: (?!CUDA initialization: )"
)
# Python logging's DEBUG level where a record's format puts the level name before the message
# (`DEBUG:root:...`, `[DEBUG]`, `- DEBUG -`, `| DEBUG |`, `root[14429] DEBUG ...`). An error a
# program logs at DEBUG is one it caught and judged routine (logging's HOWTO: "detailed
# information, typically of interest only when diagnosing problems"); an uncaught one reaches
# stderr through sys.excepthook, not through a logger's DEBUG records. Upper case and standing
# alone, so `NCCL_DEBUG=INFO` and `TORCH_DISTRIBUTED_DEBUG` in a message are not a level; set off
# by spaces, brackets or colons only, as Python's formats do: Go's zap console encoder separates
# its fields by tabs (`1.7e+09\tDEBUG\tevents\t...`), and a Kubernetes controller records the
# failures of the pods it supervises as DEBUG events, which are failures all the same. HPE Cray
# MPICH's GPU transport layer tags the GPU runtime errors it hits `(GTL DEBUG: <n>) ...`: a
# failed call that aborts the MPI operation, not a debug record.
_DEBUG_LEVEL = re.compile(r"(?:^|[ \[|:-])(?<!\(GTL )DEBUG(?:[\]|:]| -? ?)")
_LEVEL_HEAD = 160  # a record's level comes before its message, after at most a time and a logger name


# TorchInductor's max-autotune (torch/_inductor/select_algorithm.py, AlgorithmSelectorCache)
# compiles and benchmarks candidate kernels for one operation and keeps the fastest. A candidate
# that fails is dropped and the search goes on: a precompile failure is logged at ERROR
# ("Exception <e> for benchmark choice <choice>") and the choice marked failed, a Triton kernel
# that does not fit the GPU (OutOfResources) is logged at WARNING with Triton's own message and
# given an infinite time. When no candidate is left Inductor raises (NoValidChoicesError, then
# InductorError), and that traceback is the failure. So a record this module logs is a dropped
# candidate, never fatal alone, whatever error it quotes; torch._logging gives it a glog-style
# prefix naming the Python file (`W1216 12:34:56.789000 1234 torch/_inductor/select_algorithm.py:1997]`).
_INDUCTOR_AUTOTUNE = re.compile(r"(?:^|[\]:\s])[IWEF]\d{4}\b[^\]]{0,200}?\b_inductor/select_algorithm\.py:\d+\]")


# The NVIDIA driver prints the severity of an NVLink 5 error (Xid 144-150) in the line itself:
# `NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (...)` beside `... 149,
# NETIR_LINK_EVT Fatal ...`. NVIDIA's Xid catalog sends the fatal variants to a GPU reset (its
# "XID 144-150 Decode" sheet; tables/xid.yaml); a non-fatal one is an event the link survived,
# which the GPU node monitor leptonai/gpud (components/accelerator/nvidia/xid) reports as a
# warning. Like a logger's warning it is never fatal alone, and still names its GPU.
_NVLINK_NONFATAL = re.compile(
    r"NVRM: Xid \([^)]{1,40}\): 1(?:4[4-9]|50), (?:pid=[^,]{0,40}, name=[^,]{0,40}, )?\w{1,40} Nonfatal "
)


def _library_or_debug(head: str) -> str | None:
    """W for a library's own warning prefix, a Python warning, a driver record marked non-fatal or a
    candidate kernel Inductor's autotuning dropped, D for a Python logging record at DEBUG level."""
    if (
        _LIBRARY_WARNING.match(head)
        or _PY_WARNING.match(head)
        or _NVLINK_NONFATAL.search(head)
        or _INDUCTOR_AUTOTUNE.search(head)
    ):
        return "W"
    return "D" if _DEBUG_LEVEL.search(head[:_LEVEL_HEAD]) else None


@dataclass(frozen=True, slots=True)
class LineContext:
    rank: int | None = None
    host: str | None = None
    local_rank: int | None = None
    # I, W, E or F from a glog-style prefix; W for a library's own warning prefix; D for a Python
    # logging record at DEBUG level
    severity: str | None = field(default=None, compare=False)
    gpu: str | None = field(default=None, compare=False)  # `gpu0` or a PCI bus id `0000:3b:00`

    @property
    def warning(self) -> bool:
        return self.severity in ("I", "W", "D")


def _named(host: str) -> bool:
    """Node names carry a digit (node7, gpu-a12, 10.0.0.5); words like `RuntimeError` do not."""
    return any(c.isdigit() for c in host)


# A module-qualified exception class before its message (`torch._C._distributed_c10d.DistBackendError: ...`)
# looks like a pdsh prefix with a digit in it: a private module (`._C`) or a class name ends it.
_QUALIFIED_CLASS = re.compile(r"\._|(?:Error|Exception|Warning|Exit|Interrupt|Failure)$")


# Huawei CANN opens each error report with its error code and a colon (`EJ0001: 2024-05-21-11:57:54
# Failed to initialize the HCCP process`, `EE1002: ... Stream synchronize timeout`): an `E`, a
# letter for the component (I for HCCL, J for HCCP, E for the runtime, H, Z, L, ...) and four
# digits (tables/ascend.yaml). Like a node name it has a digit in it, but no node is named so.
_CANN_CODE = re.compile(r"E[A-Z]\d{4}")


def _pdsh_host(host: str) -> bool:
    return _named(host) and _QUALIFIED_CLASS.search(host) is None and _CANN_CODE.fullmatch(host) is None


def line_context(text: str) -> LineContext:
    head = text[:_HEAD]
    rank: int | None = None
    host: str | None = None
    if m := _TORCHX.match(head):
        head = head[m.end() :]
    if m := _SRUN.match(head):
        rank, head = int(m.group(1)), head[m.end() :]
    elif ((m := _PDSH.match(head)) and _pdsh_host(m.group(1))) or (m := _RAY.match(head)):
        host, head = m.group(1).removeprefix(_STEPD) or m.group(1), head[m.end() :]
    if rank is None and (
        m := _RANK.search(head) or _MESSAGE_RANK.search(head) or _ENGINE_RANK.search(head) or _TAGGED_RANK.search(head)
    ):
        rank = int(next(g for g in m.groups() if g is not None))
    local = _LOCAL.search(head)
    if host is None:
        host = _host(head)
    severity = _SEVERITY.search(head)
    level = severity.group(1) if severity else _library_or_debug(head)
    return LineContext(
        rank=rank,
        host=node_name(host) if host else None,
        local_rank=int(local.group(1)) if local else None,
        severity=level,
        gpu=_gpu(head),
    )


def _gpu(head: str) -> str | None:
    if "NVRM" not in head or (m := _NVRM_GPU.search(head)) is None:
        return None
    return f"gpu{m.group(1)}" if m.group(1) is not None else m.group(2).lower()


def line_rank(text: str) -> int | None:
    """Just the rank, as `line_context` would find it (cheaper, for every progress line)."""
    head = text[:_HEAD]
    if m := _SRUN.match(head):
        return int(m.group(1))
    m = _RANK.search(head) or _TAGGED_RANK.search(head)
    return int(next(g for g in m.groups() if g is not None)) if m else None


def _host(head: str) -> str | None:
    if m := _CRAY_MPICH.search(head):
        return m.group(1)
    if host := ray_task_host(head):
        return host
    if m := _NCCL.search(head):
        return m.group(1)
    if m := _SYSLOG.match(head):
        return m.group(1)
    if (m := _BRACKET.match(head)) and _named(m.group(1)) and not m.group(1).startswith(("rank", "default")):
        return m.group(1)
    if m := _HOST_PID.match(head) or _HOST_PID.search(head[:64]):
        return m.group(1)
    # Under `mpirun --tag-output --timestamp-output` Open MPI puts a date and `[jobid,rank]<stdout>:`
    # before the program's own line, which pushes UCX's `[time] [host:pid:tid]` past the first
    # 64 characters: look for it again where the program's line begins.
    if (tag := _OMPI_TAG.search(head[:_OMPI_TAG_HEAD])) and (m := _HOST_PID.search(head[tag.end() : tag.end() + 64])):
        return m.group(1)
    return None


def ray_task_host(text: str) -> str | None:
    """The node a Ray task's remote traceback header names (`ray::W.f() (pid=67, ip=10.1.0.7)`)."""
    m = _RAY_TASK.search(text[:_HEAD])
    return m.group(1) if m and m.group(1) not in _NO_NODE else None


def node_name(host: str) -> str:
    """The short name schedulers use for a node (`node7` for `node7.cluster.local`); IPs stay."""
    return host if is_ip(host) else host.split(".", 1)[0]


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
