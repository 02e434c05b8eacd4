"""Stuck without an error line: a log that ends inside a phase its program announces but never finishes.

A job that hangs often prints nothing wrong: every rank says it is joining the process group and
then nothing follows, or ranks report that they still wait for the others, or someone dumped the
stacks of the stuck processes. When such a phase is open at the log's end, and no error line and
no progress explain the log, the job was stuck there (a `hang`, cause unknown).

Openers and closers, as their sources print them:

- Not Lightning's `Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/n` as a phase of its own:
  its closer (`All distributed processes registered`) is rank 0's `rank_zero_info`, which many
  setups never show (another logger, another rank's log, a log cut after start-up), so a log going
  on after it says nothing; tried with this tail, it called a healthy held-out log hung. Start-up
  is read by structure instead (below, `Startup`).
- PyTorch's store-based barrier (torch/distributed/distributed_c10d.py `_store_based_barrier`):
  `Waiting in store based barrier to initialize process group for rank: ...` after each 10 s of
  waiting while ranks are missing, `Rank r: Completed store-based barrier for key:... with n
  nodes.` on exit. Its entry line (`Added key: ... to store for rank: r`) opens nothing: every
  healthy start prints it, and a log cut just after it shows no waiting. A waiting line whose
  count of arrivals is above the world size is the job's set-up, not a missing peer
  (`overcounted`, below).
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
- torchelastic's agent (torch/distributed/elastic/agent/server/api.py): `[default] Rendezvous'ing
  worker group` before it waits for the other agents, `[default] Rendezvous complete for workers.
  Result:` and `[default] Starting worker group` once they came; its backends say the same
  (dynamic_rendezvous.py: `The node '...' attempts to join the next round of the rendezvous`, then
  `has joined round r of the rendezvous ... as rank r in a world of size n`; etcd_rendezvous.py:
  `Attempting to join next rendezvous`, then `Rendezvous version v is complete.`). Its c10d socket
  lines in between are its output.
- srun's step creation (Slurm src/srun/launch.c; allocate.c in older releases, without the job id and
  closing with `Job step created`): `srun: Job j step creation temporarily disabled,
  retrying (Requested nodes are busy)`, `... still disabled, retrying` while the allocation's
  resources are held, `srun: Step created for StepId=j.s` once it got them.
- XLA's rendezvous (xla/service/rendezvous.cc): `This thread has been waiting for `<name>` for 10
  seconds and may be stuck. Expected n threads to join the rendezvous, ...` while some never came,
  `Thread is unstuck! Warning above was a false-positive.` once they did.
- Ray's scheduler while it cannot place a task or actor: the autoscaler's event summary repeats, every
  30 s while the request waits (python/ray/autoscaler/_private/autoscaler.py), `Warning: The following
  resource request cannot be scheduled right now: {...}. This is likely due to all cluster resources
  being claimed by actors.` (pending) or `Error: No available node types can fulfill resource request
  {...}. Add suitable node types to this cluster to resolve this issue.` (infeasible: no node of the
  cluster can ever provide it); the raylet warns the driver `The actor or task with ID .. cannot be
  scheduled right now. It requires {...} for placement, however the cluster currently cannot provide
  the requested resources` (src/ray/raylet/scheduling/cluster_task_manager.cc; `The lease with ID`
  in newer releases); its status report's `Demands:` lines belong to that wait. Ray never gives up
  on such a request: the task waits until it is placed, and nothing but progress says it was. An
  infeasible request is the job's (it asks for more GPUs, CPUs or custom resources than any node
  has, or Ray was started without its GPUs): not retried.
- Kubernetes while a pod cannot be placed: kube-scheduler's FailedScheduling event, `0/N nodes are
  available: <reasons>.` (pkg/scheduler/framework/types.go FitError), repeated while the pod stays
  Pending; Volcano's gang scheduler, `m/n tasks in gang unschedulable: ...` (its FailedScheduling);
  the cluster autoscaler's `pod didn't trigger scale-up` (NotTriggerScaleUp). The pod is placed when
  the scheduler says `Successfully assigned <pod> to <node>` (Scheduled), the autoscaler `pod
  triggered scale-up` (TriggeredScaleUp: a node is coming), or the kubelet starts its containers.
  A pod still waiting when the log ends never started: the scheduler holds it until capacity frees
  (retried later); the autoscaler's `(it wouldn't fit if a new node is added)` says no node the
  cluster can add is big enough for the pod's request, which a rerun asks again (the job's).
- The kubelet while it cannot pull a container's image: `ErrImagePull`, then `ImagePullBackOff` and
  `Back-off pulling image "<image>"` (pkg/kubelet/images/image_manager.go) as it retries with
  back-off; `Successfully pulled image` or `Container image ... already present on machine`, and
  then `Started container`, once it got it. A pod still backing off at the log's end cannot start:
  its image name, tag or registry credentials are wrong, as the registry refusing it is the job's
  (docs/signatures.md).
- The kubelet while it cannot attach or mount a pod's volumes (pkg/kubelet/volumemanager
  WaitForAttachAndMount: `timeout expired waiting for volumes to attach/mount for pod` in older
  releases, `Unable to attach or mount volumes: unmounted volumes=[...] ...: timed out waiting for
  the condition` now, as FailedMount events), until the container starts. A pod still waiting at
  the log's end never started: the volume's storage or its attachment to the node failed
  (system_software, retried).
- Wait notices that a program repeats for as long as its peers do not answer, with no closer of
  their own (the answer is simply the program's next output): vLLM's message queue between the
  engine and its workers (vllm/distributed/device_communicators/shm_broadcast.py, MessageQueue's
  acquire_write and acquire_read: `No available shared memory broadcast block found in 60 seconds.
  This typically happens when some processes are hanging or doing some time-consuming work ...`
  every VLLM_RINGBUFFER_WARNING_INTERVAL while a block stays unread or unwritten; older releases
  `... found in 60 second.` at debug level); TensorFlow 1.x's master creating a session
  (tensorflow/core/distributed_runtime/master.cc: `CreateSession still waiting for response from
  worker: /job:ps/replica:0/task:0` every 10 s while a task of the cluster does not answer); a
  non-chief worker waiting for the chief to initialise the variables (tensorflow/python/training/
  session_manager.py `wait_for_session`: `Waiting for model to be ready.  Ready_for_local_init_op:
  ...` every recovery_wait_secs, 30 s). A compilation, a slow chief or a long load print them too
  and then go on, so only a log that ends on them (`TIGHT_LINES`) was stuck there. What shows the
  wait over ends it without closing it for good (the next notice is a new wait): any other vLLM
  record (`INFO 04-15 13:43:42 [monitor.py:76] ...`, a worker's or the engine's next step),
  TensorFlow's `Start master session` (master_session.cc, the session created) and the session
  manager's `Running local_init_op.`/`Done running local_init_op.` (the model was ready).
- NCCL before 2.19 prints no `Init START`: a process's communicator setup shows as its `Trees [0]
  ...` and ring listing (`Channel 00/02 :    0   1`) lines, which NCCL prints only while it sets a
  communicator up (src/graph/connect.cc, src/init.c), and ends with that process's `comm 0x.. rank r
  nranks n ... - Init COMPLETE`. Read per process (`host:pid` of NCCL's prefix): one rank's
  COMPLETE says nothing of another rank still connecting.

Start-up (`Startup`): the processes announce themselves, then wait in `init_process_group` until
every rank has come. Lightning and Fabric print `Initializing distributed: GLOBAL_RANK: r, MEMBER:
r+1/N` per process before that call (lightning_fabric utilities/distributed.py; `initializing ddp:`
in 1.0-1.4, `initializing distributed:` in 1.5-1.9, `initializing deepspeed distributed:` for the
DeepSpeed strategy; NeMo uses Lightning's), then rank 0 alone prints `All distributed processes
registered. Starting with N processes` (absent from many healthy logs: another logger, another
rank's log, Lightning 1.0's condition that never held). DeepSpeed's `init_distributed`
(deepspeed/comm/comm.py) prints `cdb=None` per process and, on rank 0 only, `Initializing
TorchBackend in DeepSpeed with backend nccl` before the same call; JAX's
`jax.distributed.initialize` prints `Connecting to JAX distributed service on host:port` before
`client.connect()`, which returns once the process registered. Lightning's own troubleshooting
(docs/source-pytorch/clouds/cluster_advanced.rst, "The Trainer is stuck initializing at startup")
names this ending: the member line, then nothing.

So a log is stuck starting up only when it ends there: its last lines (one line of slack) are
start-up lines (announcements, the store barrier's `Added key` entry, c10d's warnings while it
builds ProcessGroupNCCL, other processes' pre-start lines such as `Seed set to` and `GPU
available:`), nothing of the program follows (Lightning 2.x prints `LOCAL_RANK: r -
CUDA_VISIBLE_DEVICES` in the accelerator's `setup`, after the group is up: that process got past
it), and more than one process was expected (N >= 2; DeepSpeed's launcher's `dist_world_size=1`)
and some process never announced itself: two ranks or more announced of a larger world. One
process's announcement is what its own log shows (per-rank files, a launcher that shows rank 0
only) or an excerpt cut there, and with every rank announced what is left is the group's own
set-up, which a healthy log cut there (rank 0's info-level closer not shown) reads the same as a
hang (github.com/OpenDriveLab/Vista/issues/22 hung there; a healthy log of the held-out corpus
ended there too): neither says the log hung. Ranks announced twice (the same rank from two
processes, not one record printed back to back by two handlers of one format) while the
announcements are at most N (more is a second start appended to the log) mean the launch numbered
its processes wrongly (processes started per node without the scheduler's ranks, `srun` missing,
devices or nodes set differently from the allocation): the job cannot start and a rerun does the
same.

Any progress line (a step reported) closes every phase: the run got past it.
"""

from __future__ import annotations

import re

from recovery.activities.signatures.catalog import Signature, SignatureCategory
from recovery.activities.signatures.scanner import LineMatch
from recovery.activities.signatures.tables import escape, lookup

OPEN = "phase:open"
CLOSE = "phase:close"
MORE = "phase:more"  # a line that belongs to an open phase's output (a frame of a stack dump)
# Each phase has a name (the `phase` group, else the pattern's own): a closer ends the phase of
# its name, and once ended a phase does not reopen until progress shows a new attempt (every
# rank adds its barrier key before any rank completes the barrier, but their lines interleave).
MEMBER = "phase:member"  # a process announces its rank and the world size at start-up (Startup)
STARTING = "phase:starting"  # start-up output that gets no process past the start
REGISTERED = "phase:registered"  # every process came: the start is over
WAIT = "wait:frame"  # a traceback's frame in a wait point (diagnosis reads an interrupt there)
# Lines that matter only while a phase or the start-up is open (`Phases.listening`), and those that
# open one. A log may print followers on every other line (NCCL's INFO chatter, `Init COMPLETE` of
# each communicator): the scanner reads them only from a waker's line on (scanner.Gate).
FOLLOWERS = (MORE, CLOSE, REGISTERED)
WAKERS = (OPEN, MEMBER, STARTING)


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
# NCCL's line prefix `host:pid:tid [dev] NCCL INFO `, the process (`host:pid`) as the phase's name.
# A Kubernetes pod that got past scheduling: assigned to a node, a node added for it, or running.
_STARTED = r"Started container"
_K8S_PLACED = r"(?:Successfully assigned \S+ to |pod triggered scale-up|\bTriggeredScaleUp\b|" + _STARTED + ")"
# The kubelet got a container's image (pulled it, or found it on the node).
_K8S_PULLED = r"(?:Successfully pulled image |Container image \"[^\"]*\" already present on machine|" + _STARTED + ")"
_NCCL_PROCESS = r"(?P<nccl_proc>[\w.-]+:\d+):\d+ \[\d+\] NCCL INFO "
# vLLM's wait notice (the docstring); `_NOTICE` tells it from the other vLLM records that end the wait.
_VLLM_SHM_NOTICE = "No available shared memory broadcast block found"
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
    # NCCL's bootstrap (socket.cc INFO "Call to connect returned %s, retrying" up to 2.23; from 2.24
    # "%s: connect returned %s, retrying (%d/%ld) after sleep for %u msec", and from 2.27 "%s: connect
    # to %s returned %s, retrying ...", naming the peer as `addr<port>`). Each attempt is a
    # warning; a log that ends while they go on was stuck reaching that host. (c10d's socket.cpp
    # "The client socket has failed to connect to [%s]:%d (errno: ...)" opens nothing: it also
    # warns about each address family it tries on the way to one that works.)
    (
        OPEN,
        r"(?P<connect>TCP client failed to connect/validate) to host (?P<peer>[^\s:\[\]]+|\[[^\]]+\]):\d+ - retrying",
    ),
    (OPEN, r"NCCL INFO (?P<connect>Call to connect) returned [^,\n]+, retrying"),
    (
        OPEN,
        r"NCCL INFO \w+: (?P<connect>connect) (?:to (?P<peer>[^<\s]+)<\d+> )?returned [^,\n]+, retrying \(\d+/\d+\)",
    ),
    (CLOSE, r"NCCL INFO [^\n]*(?P<connect>Init COMPLETE)"),
    # torchelastic's agent waits for the other agents (its rendezvous), then starts its workers.
    (OPEN, r"\[[\w-]+\] (?P<rdzv>)Rendezvous'ing worker group"),
    (CLOSE, r"\[[\w-]+\] (?P<rdzv>)(?:Rendezvous complete for workers|Starting worker group)"),
    # Its rendezvous backends' own lines: the c10d backend (rendezvous/dynamic_rendezvous.py) and
    # the etcd one (rendezvous/etcd_rendezvous.py).
    (OPEN, r"The node '[^']*' (?P<rdzv>)attempts to join the next round of the rendezvous"),
    (CLOSE, r"The node '[^']*' (?P<rdzv>)has joined round \d+ of the rendezvous"),
    (OPEN, r"(?P<rdzv>)Attempting to join next rendezvous\s*$"),
    (CLOSE, r"(?P<rdzv>)Rendezvous version \d+ is complete\."),
    (MORE, r"\[c10d\] The (?:server|client) socket "),
    # NCCL's communicator init (src/init.cc, NCCL_DEBUG=INFO, 2.19+): `comm 0x.. rank r nranks n ...
    # - Init START` (2.19-2.20 name no function), `ncclCommInitRank comm 0x.. ...` or `ncclCommSplit
    # comm ...` (2.21+), `[Rank r] ncclCommInitRankConfig comm ...` (2.27+), then its topology,
    # channel and transport lines, then `... - Init COMPLETE`. A log that ends in that output never
    # finished setting the communicator up.
    (OPEN, r"NCCL INFO (?:\[Rank \d+\] )?(?:nccl\w+ )?comm 0x[0-9a-f]+ rank \d+ [^\n]*- (?P<nccl_init>)Init START"),
    (CLOSE, r"NCCL INFO [^\n]*- (?P<nccl_init>)Init COMPLETE"),
    # srun cannot create its step yet (src/srun/launch.c: the allocation's resources are held, by
    # another step or a node still being set up): it retries until `Step created for StepId=j.s`.
    # Older srun (src/srun/allocate.c before the job id joined the message) prints `Job step creation
    # temporarily disabled, retrying`, `Job step creation still disabled, retrying` and `Job step
    # created` for the same wait.
    (OPEN, r"srun: Job (?:\d+ )?step creation (?P<srun_step>)temporarily disabled, retrying"),
    (MORE, r"srun: Job (?:\d+ )?step creation still disabled, retrying"),
    (CLOSE, r"srun: (?P<srun_step>)Step created for "),
    (CLOSE, r"srun: (?P<srun_step>)Job step created\s*$"),
    # XLA's rendezvous (xla/service/rendezvous.cc): a thread still waiting for the others after the
    # warning timeout says so (`This thread has been waiting for `initialize clique ...` for 10
    # seconds and may be stuck. Expected 8 threads ...`), and `Thread is unstuck!` once they came;
    # its termination timeout is a failure of its own (the catalog's).
    (OPEN, r"This thread has been waiting for `(?P<xla_rdzv>)[^\n]*? and may be stuck\."),
    (CLOSE, r"(?P<xla_rdzv>)Thread is unstuck! Warning above was a false-positive"),
    # Ray's scheduler cannot place a task or actor (pending, or infeasible on every node type).
    (OPEN, r"(?P<ray_pending>)Warning: The following resource request cannot be scheduled right now: "),
    (OPEN, r"The (?:actor or task|lease) with ID \w+ (?P<ray_pending>)cannot be scheduled right now\. It requires "),
    (OPEN, r"(?P<ray_infeasible>)Error: No available node types can fulfill resource request"),
    # Wait notices repeated while the peers do not answer (the docstring; read with TIGHT_LINES).
    (OPEN, r"(?P<vllm_shm>)" + _VLLM_SHM_NOTICE + r" ?in \d+ seconds?\b"),
    (OPEN, r"(?P<tf_session>)CreateSession still waiting for response from worker: /job:"),
    (OPEN, r"(?P<tf_model_ready>)Waiting for model to be ready\.\s+Ready_for_local_init_op:"),
    # Any vLLM record answers the engine's wait but the notice itself (`Phases.line` tells them apart).
    (CLOSE, r"(?P<vllm_shm>)\b(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d [\d:]{8}(?:\.\d+)? \[?[\w.-]+\.py:\d+\] "),
    (CLOSE, r"(?P<tf_session>)\bStart master session \w+"),
    (CLOSE, r"(?P<tf_model_ready>)\b(?:Done running|Running) local_init_op\."),
    # The autoscaler's status report (`ray status`, autoscaler/_private/util.py) lists the requests
    # still waiting under "Demands:": `{'GPU': 1.0}: 1+ pending tasks/actors`, `{...} * 8 (PACK): 1+
    # pending placement groups`. Part of the wait's output, not a wait of its own (a cluster that
    # scales up shows pending demands too).
    (MORE, r"^\s*\{[^{}\n]*\}(?: \* \d+)?(?: \([A-Z_]+\))?: \d+\+ pending (?:tasks/actors|placement groups)"),
    # Kubernetes cannot place a pod (kube-scheduler's FitError, Volcano's gang, the autoscaler), until
    # it is assigned, a node is added for it, or its containers start.
    (OPEN, r"\b(?P<k8s_pending>)\d+/\d+ nodes are available: "),
    (OPEN, r"\b(?P<k8s_pending>)\d+/\d+ tasks in gang unschedulable: "),
    (OPEN, r"(?P<k8s_pending>)pod didn't trigger scale-up"),
    (OPEN, r"(?P<k8s_unfit>)pod didn't trigger scale-up \(it wouldn't fit if a new node is added\)"),
    (CLOSE, r"(?P<k8s_pending>)" + _K8S_PLACED),
    (CLOSE, r"(?P<k8s_unfit>)" + _K8S_PLACED),
    # The kubelet backs off pulling a container's image, until it has it and starts the container.
    (OPEN, r"(?P<k8s_image>)(?:\bErrImagePull\b|\bImagePullBackOff\b|Back-off pulling image )"),
    (CLOSE, r"(?P<k8s_image>)" + _K8S_PULLED),
    # The kubelet times out attaching or mounting a pod's volumes, until its container starts.
    (OPEN, r"(?P<k8s_mount>)timeout expired waiting for volumes to attach(?:/| or )mount"),
    (OPEN, r"(?P<k8s_mount>)Unable to attach or mount volumes: "),
    (CLOSE, r"(?P<k8s_mount>)" + _STARTED),
    # Before 2.19 (no Init START): a process's tree and ring lines, read per `host:pid`.
    (OPEN, _NCCL_PROCESS + r"Trees \[\d+\] "),
    (OPEN, _NCCL_PROCESS + r"Channel \d+/\d+ :(?: +\d+)+\s*$"),
    (CLOSE, _NCCL_PROCESS + r"[^\n]*- Init COMPLETE"),
    (MORE, r"NCCL INFO "),
    # The C++ stack c10 prints under a warning (`Exception raised from recvBytes at ...`, `frame #3: ...`).
    (MORE, r"^(?:\[rank\d+\]:)?(?:frame #\d+: |Exception raised from \w+ at )"),
    (CLOSE, r"Completed store-based barrier for (?:key:(?P<barrier>\S+) with )?\d+ nodes"),
    # Start-up (`Startup`): a process's announcement of its place, rank 0's closer, and the lines
    # of processes still starting (which get no process past the start).
    (
        MEMBER,
        r"^(?P<lead>.{0,200}?)(?:[Ii]nitializing (?:distributed|ddp|deepspeed distributed)): "
        r"GLOBAL_RANK: (?P<member>\d+), MEMBER: \d+/(?P<world>\d+)",
    ),
    (STARTING, r"\] (?P<backend>)Initializing TorchBackend in DeepSpeed with backend \w+"),
    (STARTING, r"\[comm\.py:\d+:init_distributed\] cdb=None\s*$"),
    # jax.distributed.initialize (jax/_src/distributed.py): the coordinator starts its service,
    # then every process says it connects and blocks in `client.connect()` until it registered.
    (STARTING, r"(?P<backend>)Connecting to JAX distributed service on \S+\s*$"),
    (STARTING, r"Starting JAX distributed service on \S+\s*$"),
    # DeepSpeed's launcher states the world size (deepspeed/launcher/launch.py `dist_world_size=`).
    (STARTING, r"\] dist_world_size=(?P<launched>\d+)\s*$"),
    (STARTING, r"Added key: store_based_barrier_key:\d+ to store for rank: \d+"),
    # c10d's ProcessGroupNCCL reads its settings while it is constructed, inside init_process_group,
    # warning of each deprecated name it finds (torch/csrc/distributed/c10d/Utils.hpp).
    (STARTING, r"Warning: Environment variable NCCL_\w+ is deprecated; use TORCH_NCCL_\w+ instead"),
    (STARTING, r"^(?:\d+: )?(?:\[rank: \d+\] )?(?:Global )?[Ss]eed set to \d+\s*$"),
    (STARTING, r"^(?:\S+ )?[GTIH]PU available: (?:True|False)"),
    (REGISTERED, r"All (?:distributed|DDP) processes registered"),
]
# The log must end this close to the phase's last line: a stuck job prints nothing more, and a
# log that goes on after it (other output, a later phase) was not stuck there.
TAIL_LINES = 10
# A wait notice that repeats while the wait lasts (_TIGHT) must be the log's end: at most this many
# lines (blank lines, a launcher's own line) may follow its last one.
TIGHT_LINES = 2


def _hang(id: str, description: str, category: SignatureCategory = "unknown", *, retryable: bool = True) -> Signature:
    """What a log that ends stuck means: a hang, and a cascade, since a wait names no culprit (the
    rank waits for the others; a host it cannot reach is its `peer`; Ray names a request). It
    speaks only when no signature does, and excludes no node."""
    return Signature.model_construct(
        id=id,
        description=description,
        pattern="",
        symptom="hang",
        category=category,
        retryable=retryable,
        cascade=True,
        priority=-2,
        exclude=False,
        examples=(),
        counterexamples=(),
    )


STUCK = _hang(
    "stuck-in-phase",
    "the log ends inside a phase that never finished (process-group setup, a store-based "
    "barrier, or a dump of stuck processes' stacks) and shows no error: the job hung there",
)
CONNECTING = _hang(
    "stuck-connecting",
    "the log ends while this process keeps retrying to connect to the rendezvous store or a peer "
    "(the host is down, unreachable or never started listening): the job hung there",
    "network",
)
RAY_PENDING = _hang(
    "stuck-waiting-for-resources",
    "the log ends while Ray's scheduler still cannot place a task or actor: the resources it asks "
    "for are all claimed (often by the job's own actors) or not there yet, and Ray waits for them "
    "without end: the job hung there",
)
# The request is the job's own: a rerun asks the same.
RAY_INFEASIBLE = _hang(
    "stuck-infeasible-resources",
    "the log ends while Ray's autoscaler reports that no node type of the cluster can provide a "
    "task's or actor's resource request (more GPUs, CPUs or custom resources than any node has, or "
    "Ray started without its GPUs): the request waits forever, and a rerun asks the same",
    "application",
    retryable=False,
)
K8S_PENDING = _hang(
    "stuck-unschedulable",
    "the log ends while Kubernetes still cannot place the job's pod (no node has the GPUs, CPU or "
    "memory it requests free, or its gang cannot be placed whole): the job never started, and the "
    "scheduler holds it until capacity frees",
    "scheduler",
)
# The request is the job's own: no node the cluster can add fits it, and a rerun asks the same.
K8S_UNFIT = _hang(
    "stuck-unfittable",
    "the log ends while the job's pod waits for a node that cannot exist: the cluster autoscaler says "
    "it would not fit even on a new node (it requests more GPUs, CPU or memory than any node type "
    "has), so it never starts, and a rerun asks the same",
    "application",
    retryable=False,
)
# A registry that refuses the job's image is the job's (docs/signatures.md).
K8S_IMAGE = _hang(
    "stuck-pulling-image",
    "the log ends while the kubelet keeps backing off pulling a container's image (ImagePullBackOff): "
    "the pod cannot start; the image's name or tag, or the credentials for its registry, are wrong",
    "application",
    retryable=False,
)
WAITING = _hang(
    "stuck-waiting-for-peers",
    "the log ends while the program keeps reporting that its other processes do not answer (vLLM's "
    "engine waiting for its workers, TensorFlow's master for a worker or parameter server task, a "
    "worker for the chief to initialise the model): they hang or never started, and the log does not "
    "say why",
)
K8S_MOUNT = _hang(
    "stuck-mounting-volumes",
    "the log ends while the kubelet still cannot attach or mount the pod's volumes (it timed out "
    "waiting for them): the pod never started; the volume's storage or its attachment to the node failed",
    "system_software",
)
# PyTorch's store-based barrier (torch/distributed/distributed_c10d.py `_store_based_barrier`):
# every process of the group adds one to the barrier's key in the store, then waits until the
# count is the world size (older releases poll for `worker_count == world_size`; newer ones wait
# for the key the process that brings the count to the world size sets). The count only grows, so
# one above the world size (`world_size=4, worker_count=8`, `num_workers_joined=` in newer
# releases) never comes back to it: more processes checked in under that key than the group
# has. The launch started more processes than the world size it gave them, or the program set
# its process group up again in the same store, or the store kept a previous run's count (a
# FileStore file left behind). That is the job's set-up, and a rerun meets it again.
_BARRIER_COUNT = re.compile(r"world_size=(\d+), (?:worker_count|num_workers_joined)=(\d+)")


def overcounted(text: str) -> bool:
    """Whether a store-based barrier line counts more arrivals than the group's world size."""
    found = _BARRIER_COUNT.search(text)
    return found is not None and int(found.group(2)) > int(found.group(1))


_OVERCOUNT_WHY = (
    "more processes checked in under the barrier's key than the group has (too many processes "
    "launched, the process group set up twice in one store, or a store left from a previous run)"
)
BARRIER_OVERCOUNT = _hang(
    "stuck-barrier-overcount",
    "the log ends while a process waits in PyTorch's store-based barrier whose count of arrivals "
    f"is already above the world size: {_OVERCOUNT_WHY}, so the count can never equal the world size",
    "application",
    retryable=False,
)
BARRIER_OVERCOUNT_TIMEOUT = Signature.model_construct(
    id="store-barrier-overcount",
    description=(
        f"PyTorch's store-based barrier timed out with more arrivals than the world size: {_OVERCOUNT_WHY}, "
        "so the barrier could never pass; a rerun with the same set-up meets it again"
    ),
    pattern="",
    symptom="crash",
    category="application",
    retryable=False,
    cascade=False,
    priority=0,
    exclude=False,
    examples=(),
    counterexamples=(),
)
INTERRUPTED_WAITING = _hang(
    "interrupted-while-waiting",
    "the process was interrupted (Ctrl-C) while it waited in a collective, a barrier, the "
    "rendezvous store or a GPU synchronisation: the job hung there (the wait says where, not why)",
)


STUCK_STARTING = Signature.model_construct(
    id="stuck-starting",
    description=(
        "the log ends while the processes start: they announced themselves (or DeepSpeed began "
        "setting up its process group) and nothing followed, so the ranks never all came together "
        "(a rank or node that never started, a wrong rendezvous address, a blocked port)"
    ),
    pattern="",
    symptom="hang",
    category="unknown",
    retryable=True,
    cascade=True,  # the log names no missing rank: those that announced themselves are waiting
    priority=-2,
    exclude=False,
    examples=(),
    counterexamples=(),
)

DUPLICATE_RANKS = Signature.model_construct(
    id="duplicate-ranks-at-start",
    description=(
        "the same global rank was announced by two processes at start-up and the log ends there: "
        "the launch numbered its processes wrongly (started per node without the scheduler's ranks, "
        "`srun` missing, devices or nodes set differently from the allocation), so the process group "
        "can never form"
    ),
    pattern="",
    symptom="hang",
    category="application",
    retryable=False,
    cascade=True,  # every process is misnumbered alike: no one rank or node is the culprit
    priority=-2,
    exclude=False,
    examples=(),
    counterexamples=(),
)

# Start-up is stuck only if the log ends this close to its last start-up line: a stuck start
# prints nothing more (the slack allows one blank line or a prompt after it).
START_SLACK = 1
MAX_MEMBERS = 4096  # announcements remembered (one per process; a larger job's log is one node's)


class Startup:
    """The processes' start-up: who announced itself, for which world size, and whether the program
    got past it (a closer, progress, or any other line before the log's end)."""

    def __init__(self) -> None:
        self.first: LineMatch | None = None  # the first announcement (or DeepSpeed's backend line)
        self.seen: dict[tuple[str, int, int], LineMatch] = {}  # (lead's shape, rank, world) -> latest
        self.duplicate: LineMatch | None = None
        self.processes: dict[str, int] = {}  # announcements per lead's shape, handler twins once
        self.world = 0  # the world size of the latest announcement
        self.members = 0  # announcements seen
        self.backend = False
        self.launched = 0  # the world size DeepSpeed's launcher stated, if it did
        self.last_line = 0
        self.done = False

    def line(self, match: LineMatch) -> None:
        if match.pattern == REGISTERED:
            self.done = True
            return
        if match.pattern == STARTING and "backend" in match.groups and self.first is None:
            self.first = match
        self.backend = self.backend or "backend" in match.groups
        if "launched" in match.groups:
            self.launched = int(match.groups["launched"])
        if match.pattern == MEMBER:
            self._member(match)
        if self.first is not None:
            self.last_line = match.line

    def _member(self, match: LineMatch) -> None:
        lead = match.groups.get("lead", "")
        # One process per announcement; a lead that differs only in digits (timestamps, `0:` and
        # `1:` of srun's label) is the same writer's format.
        key = (_shape(lead), int(match.groups["member"]), int(match.groups["world"]))
        before = self.seen.get(key)
        # The same record printed twice by two handlers of one format is back to back and alike.
        twin = before is not None and before.line + 1 == match.line and before.text == match.text
        if not twin and (key[0] in self.processes or len(self.processes) < MAX_MEMBERS):
            self.processes[key[0]] = self.processes.get(key[0], 0) + 1
        if before is not None and not twin and self.duplicate is None:
            self.duplicate = match
        if len(self.seen) < MAX_MEMBERS:
            self.seen[key] = match
        self.world = key[2]
        self.members += 1
        if self.first is None or self.first.pattern != MEMBER:
            self.first = match

    def progress(self) -> None:
        """The run got past the start; announcements after this are a new attempt's."""
        self.first, self.duplicate = None, None
        self.seen.clear()
        self.processes.clear()
        self.world = self.members = self.last_line = self.launched = 0
        self.backend = self.done = False

    def stuck(self, lines: int) -> tuple[LineMatch, Signature] | None:
        if self.done or self.first is None or lines - self.last_line > START_SLACK:
            return None
        if self.members == 0:
            if self.launched == 1:
                return None  # a world of one forms at once: the program is busy with its own start
            return self.first, STUCK_STARTING  # DeepSpeed's rank 0 set its process group up, no more
        if self.world < 2:
            return None  # one process waits for nobody
        ranks = {rank for (_, rank, world) in self.seen if world == self.world}
        duplicate = self.duplicate
        # Misnumbered processes are still at most N processes; more announcements than the world
        # are a second start appended to the log (a requeued job), not two processes per rank.
        if duplicate is not None and self.processes.get(_shape(duplicate.groups.get("lead", "")), 0) <= self.world:
            return duplicate, DUPLICATE_RANKS
        if len(ranks) == 1 and not self.backend:
            # One process's announcement: its own log (per-rank files, or a launcher that shows
            # rank 0 only), or an excerpt cut there. It cannot say whether the others arrived.
            return None
        if len(ranks) >= self.world:
            return None  # every process came: what follows is the group's own set-up, not a wait
        return self.first, STUCK_STARTING


def _shape(lead: str) -> str:
    return "".join("0" if c.isdigit() else c for c in lead)


class Phases:
    """The phases a log is in: the first line of each phase still open, and the latest phase line."""

    def __init__(self) -> None:
        self.open: dict[str, LineMatch] = {}
        self.ended: set[str] = set()
        self.overcounted: set[str] = set()  # store-based barriers whose count passed the world size
        self.last_line = 0
        self.tight: dict[str, int] = {}  # the last line of each open _TIGHT phase
        self.startup = Startup()

    def line(self, match: LineMatch) -> None:
        if match.pattern in (MEMBER, STARTING, REGISTERED):
            self.startup.line(match)
            return
        if match.pattern == CLOSE and ("barrier" in match.groups or "nccl_init" in match.groups):
            self.startup.done = True  # every rank came to the barrier, or NCCL set the group up
        elif self.startup.first is not None:
            self.startup.last_line = match.line  # its own output (NCCL's, c10d's, the barrier's)
        if match.pattern == MORE:
            if self.open:
                self.last_line = match.line
            return
        name = _name(match)
        if match.pattern == CLOSE and name in _TIGHT:
            if not _NOTICE.search(match.text):
                self.open.pop(name, None)  # the wait is over; the next notice is a new one
            return
        if match.pattern == CLOSE:
            if name == "barrier":  # an older PyTorch names no key: every barrier is done
                self.ended.update(n for n in self.open if n.startswith("barrier"))
            self.ended.add(name)
            self.open = {n: m for n, m in self.open.items() if n not in self.ended}
        elif name not in self.ended:
            self.open.setdefault(name, match)
            self.last_line = match.line
            if name in _TIGHT:
                self.tight[name] = match.line
            if name.startswith("barrier") and overcounted(match.text):
                self.overcounted.add(name)

    def listening(self) -> bool:
        """Whether a phase or the start-up is open: their closers and output (FOLLOWERS) count."""
        return bool(self.open) or (self.startup.first is not None and not self.startup.done)

    def progress(self) -> None:
        """The run got past every phase; a later one is a new attempt's."""
        self.open.clear()
        self.ended.clear()
        self.overcounted.clear()
        self.tight.clear()
        self.startup.progress()

    def verdict(self, lines: int) -> tuple[LineMatch, Signature] | None:
        """Where the log is stuck, and what that means: an open phase, else the start-up."""
        if (stuck := self.stuck(lines)) is not None:
            if _name(stuck) in self.overcounted:
                return stuck, BARRIER_OVERCOUNT
            return stuck, signature(stuck)
        return self.startup.stuck(lines)

    def stuck(self, lines: int) -> LineMatch | None:
        """The line that opened the earliest phase still open, if the log ends within `TAIL_LINES`
        of the last phase line; an open phase of `_TELLING` speaks before it."""
        if not self.open or lines - self.last_line > TAIL_LINES:
            return None
        # A repeated wait notice followed by other output was a wait that ended (or one that is
        # not the log's end): it says nothing of where the log stopped.
        still = {n: m for n, m in self.open.items() if n not in _TIGHT or lines - self.tight[n] <= TIGHT_LINES}
        if not still:
            return None
        for name in _TELLING:
            if name in still:
                return still[name]
        return min(still.values(), key=lambda m: m.line)


_PHASE_GROUPS = (
    "barrier",
    "dump",
    "connect",
    "nccl_init",
    "nccl_proc",
    "rdzv",
    "xla_rdzv",
    "srun_step",
    "ray_pending",
    "ray_infeasible",
    "k8s_unfit",
    "k8s_pending",
    "k8s_image",
    "k8s_mount",
    "vllm_shm",
    "tf_session",
    "tf_model_ready",
)
# What a phase other than the generic "stuck there" means, by its name.
_MEANINGS = {
    "connect": CONNECTING,
    "ray_pending": RAY_PENDING,
    "ray_infeasible": RAY_INFEASIBLE,
    "k8s_pending": K8S_PENDING,
    "k8s_unfit": K8S_UNFIT,
    "k8s_image": K8S_IMAGE,
    "k8s_mount": K8S_MOUNT,
    "vllm_shm": WAITING,
    "tf_session": WAITING,
    "tf_model_ready": WAITING,
}
# Repeated wait notices: stuck only when the log ends on them (TIGHT_LINES).
_TIGHT = frozenset(("vllm_shm", "tf_session", "tf_model_ready"))
# vLLM's notice is a vLLM record too: it does not answer itself.
_NOTICE = re.compile(_VLLM_SHM_NOTICE)
# Phases that say more than the one that opened first: a process still retrying to reach a host
# says what the phases it sits in (NCCL 2.24+ retries inside its communicator's init) wait for;
# the autoscaler's "would not fit on a new node" says why the pod the scheduler could not place
# waits.
_TELLING = ("connect", "k8s_unfit")


def signature(match: LineMatch) -> Signature:
    """What being stuck in the phase `match` opened means."""
    return _MEANINGS.get(_name(match), STUCK)


def _name(match: LineMatch) -> str:
    for group in _PHASE_GROUPS:
        if group in match.groups:
            value = match.groups[group]
            if group == "nccl_proc":
                return f"nccl:{value}"
            return f"barrier:{value}" if group == "barrier" and value else group
    return match.pattern
