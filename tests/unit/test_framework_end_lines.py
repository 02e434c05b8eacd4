"""How runs of JAX/XLA, TensorFlow, Ray, MPI launchers, Lightning and Megatron end when they fail,
beyond PyTorch's tracebacks: each must be read as a failure (a crash, or a hang where the line is
a timeout), never as healthy. And the alarming but harmless lines of the same systems' healthy
runs must stay healthy. Lines from the systems' own source (formats filled with realistic values)
and from public threads, each with its source."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

# (text, symptom, category, retryable)
FAILURES = [
    # absl/debugging/failure_signal_handler.cc WriteSignalMessage: the signals it handles beyond
    # SIGSEGV/SIGABRT, and "Signal %d" for one it has no name for; the cpu part is optional
    ("*** SIGTRAP received at time=1701518400 on cpu 3 ***", "crash", "unknown", True),
    ("*** Signal 7 received at time=1701518400 ***", "crash", "unknown", True),
    # the same handler on SIGTERM: the job was told to stop (tables/signals.yaml's SIGTERM)
    ("*** SIGTERM received at time=1701518400 on cpu 12 ***", "crash", "scheduler", True),
    # wmayner/pyphi#115: absl's handler inside a Ray actor, through Ray's log prefix
    (
        "(ProgressBarActor pid=780470) *** SIGABRT received at time=1708227421 on cpu 77 ***\n"
        "(ProgressBarActor pid=780470) PC: @     0x14779b9c618b  (unknown)  raise",
        "crash",
        "unknown",
        True,
    ),
    # TensorFlow's own fatal prefix (tsl/platform/default/logging.cc: date, time, ": F ")
    (
        "2019-03-06 11:05:01.384216: F tensorflow/core/kernels/conv_ops.cc:1122] Check failed:"
        " stream->parent()->GetConvolveAlgorithms(&algorithms)",
        "crash",
        "unknown",
        True,
    ),
    # tensorflow/tensorflow#67527: TensorShape's check on an op given a scalar for a 4-d input
    # (the maintainers' reading), the program's tensors: `tf-tensor-shape-check`.
    (
        "2024-05-14 08:19:37.953832: F tensorflow/core/framework/tensor_shape.cc:357] Check failed: d < dims() (1 vs. 0)\n"
        "Aborted (core dumped)",
        "crash",
        "application",
        False,
    ),
    # XLA xla/service/rendezvous.cc: a collective's participants did not all arrive; ERROR then
    # exit(42) in older releases (with and without the rendezvous' name), FATAL in newer ones
    (
        "E0501 12:00:40.000000 4242 rendezvous.cc:44] Termination timeout for `acquire clique` of 40 seconds"
        " exceeded. Exiting to ensure a consistent program state. Expected 8 threads to join the rendezvous,"
        " but only 7 of them arrived on time.",
        "hang",
        "unknown",
        True,
    ),
    (
        "2023-01-01 12:00:40.000000: E external/org_tensorflow/tensorflow/compiler/xla/service/rendezvous.cc:36]"
        " Termination timeout of 40 seconds exceeded. Exiting to ensure a consistent program state.",
        "hang",
        "unknown",
        True,
    ),
    (
        "F0501 12:00:40.000000 4242 rendezvous.cc:162] [id=3] Termination timeout for `initialize clique for"
        " rank 3` of 30 seconds exceeded. Exiting to ensure a consistent program state. Expected 4 threads to"
        " join the rendezvous, but not all of them arrived on time.",
        "hang",
        "unknown",
        True,
    ),
    # libstdc++'s verbose terminate handler on an uncaught std::bad_alloc (host memory)
    (
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)",
        "crash",
        "out_of_memory",
        False,
    ),
    # Open MPI orte/tools/orterun/help-orterun.txt (proc-exit-no-sync, proc-ordered-abort,
    # proc-aborted-unknown), as threads on the Open MPI users list print them
    (
        "mpirun has exited due to process rank 11 with PID 10211 on\nnode compute-12-23.local exiting improperly."
        " There are two reasons this\ncould occur:",
        "crash",
        "unknown",
        True,
    ),
    (
        'mpirun has exited due to process rank 0 with PID 16119 on\nnode kongdragon-master exiting without calling "finalize".',
        "crash",
        "unknown",
        True,
    ),
    (
        'prterun has exited due to process rank 2 with PID 4242 on node node07 calling\n"abort". This may have caused'
        " other processes in the application to be",
        "crash",
        "unknown",
        True,
    ),
    (
        "mpirun noticed that the job aborted, but has no info as to the process\nthat caused that situation.",
        "crash",
        "unknown",
        True,
    ),
    # Open MPI opal/util/stacktrace.c, its fatal-signal handler (hel-astro-lab/runko#50)
    (
        "[ethanvw:61477] *** Process received signal ***\n[ethanvw:61477] Signal: Aborted (6)\n"
        "[ethanvw:61477] Signal code:  (-6)",
        "crash",
        "unknown",
        True,
    ),
    # SGpp/DisCoTec#10: Open MPI's fatal error handler (ompi/errhandler/errhandler_predefined.c)
    # with the class the program's call got (ompi/errhandler/errcode.c)
    (
        "[ipvs-epyc1:3260534] *** An error occurred in MPI_Recv\n"
        "[ipvs-epyc1:3260534] *** reported by process [2024538113,8]\n"
        "[ipvs-epyc1:3260534] *** on communicator MPI COMMUNICATOR 10 CREATE FROM 8\n"
        "[ipvs-epyc1:3260534] *** MPI_ERR_TRUNCATE: message truncated\n"
        "[ipvs-epyc1:3260534] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
        "[ipvs-epyc1:3260534] ***    and potentially your MPI job)",
        "crash",
        "application",
        False,
    ),
    # the handler's block without a class it can name: the job still aborted
    (
        "[node07:04242] *** An error occurred in MPI_Allreduce\n[node07:04242] *** Error code: 77 (no associated"
        " error message)\n[node07:04242] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
        "crash",
        "unknown",
        True,
    ),
    # ORNL-Fusion/aorsa#45 and PrincetonUniversity/athena#271: MPICH's (src/mpi/errhan/errutil.c)
    (
        "Abort(469879054) on node 3421 (rank 3421 in comm 0): Fatal error in PMPI_Recv: Message truncated,"
        " error stack:\nPMPI_Recv(171): MPI_Recv(buf=0x4000740012d0, count=1, dtype=USER<vector>, src=53,"
        " tag=9976, comm=0x84000001, status=0x177116c0) failed \n(unknown)(): Message truncated",
        "crash",
        "application",
        False,
    ),
    (
        "Fatal error in PMPI_Test: Message truncated, error stack:\nPMPI_Test(189)....: MPI_Test(request=0x1ff2200,"
        " flag=0x7ffd7293b2d0, status=0x1) failed\nMPIR_Test_impl(67): fail failed\n(unknown)(): Message truncated",
        "crash",
        "application",
        False,
    ),
    # MPI's out-of-memory class, in both libraries' words
    ("[node07:04242] *** MPI_ERR_NO_MEM: out of memory", "crash", "out_of_memory", False),
    (
        "Fatal error in MPI_Alloc_mem: Unable to allocate memory for MPI_Alloc_mem, error stack:",
        "crash",
        "out_of_memory",
        False,
    ),
    # Lightning signal_connector.py _sigterm_notifier_fn: the run was told to stop
    ("[rank: 0] Received SIGTERM: 15", "crash", "scheduler", True),
    # Megatron-LM training.py with --exit-signal-handler, through print_datetime
    (
        "[default0]:[exiting program after receiving SIGTERM.] datetime: 2026-09-06 17:57:10 ",
        "crash",
        "scheduler",
        True,
    ),
    # ray-project/ray#18377: Ray's worker-death warning wrapped inside a word by the terminal
    (
        "2021-09-05 13:40:52,522 WARNING worker.py:1215 -- A worker died or was killed while executing a task"
        " by an unexpecte\nd system error. To troubleshoot the problem, check the logs for the dead worker.",
        "crash",
        "unknown",
        True,
    ),
]


@pytest.mark.parametrize(("text", "symptom", "category", "retryable"), FAILURES)
def test_a_failed_run_is_never_read_as_healthy(text: str, symptom: str, category: str, retryable: bool) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == (symptom, category, retryable)


def test_a_sigterm_after_the_programs_own_error_is_not_the_cause() -> None:
    # a launcher stops the other workers with SIGTERM after one failed: the failure speaks
    log = TRACEBACK + "ValueError: bad shape\n*** SIGTERM received at time=1701518400 on cpu 3 ***"
    assert verdict(log)[1:] == ("application", False)


HEALTHY = [
    # XLA rendezvous.cc: the stuck warning and its all-clear, then training goes on
    "E0501 12:00:10.000000 4242 rendezvous.cc:38] This thread has been waiting for `acquire clique` for 10 seconds"
    " and may be stuck. Expected 8 threads to join the rendezvous, but not all of them arrived on time.\n"
    "E0501 12:00:12.000000 4242 rendezvous.cc:42] Thread is unstuck! Warning above was a false-positive. Perhaps"
    " the timeout is too short.\nstep 200 loss 2.0",
    # verlab/DescriptorReasoning_ACCV_2024#5: TensorFlow's start-up registers its plugins twice
    "2024-11-21 15:10:51.123102: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register"
    " cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
    "2024-11-21 15:10:51.124372: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to"
    " register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered",
    # sehoffmann/dmlcloud#38: the same through absl before its logging is set up, wrapped
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
    "E0000 00:00:1736163964.084812 3415088 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to"
    " register factory for plugin cuDNN when one has already been registered\n"
    "2025-01-06 12:46:04.109737: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is"
    " optimized to use available CPU instructions in performance-critical\n operations.",
    # XLA nvptx_compiler.cc: a warning at TensorFlow's prefix
    "2024-05-01 12:00:00.123456: W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA"
    " version is 12.2 which is older than the ptxas CUDA version (12.4.131). Because the driver is older than"
    " the ptxas version, XLA is disabling parallel compilation, which may slow down compilation.",
    # ray-project/ray#23315: Ray's periodic warning about many worker processes
    "2022-03-18 10:00:35,393 WARNING worker.py:1326 -- WARNING: 28 PYTHON worker processes have been started on"
    " node: 3738e1f74ff547b9f368c09710b064194328f7bc884887383f22e1ee with address: 7.189.31.231. This could be a"
    " result of using a large number of actors, or due to tasks blocked in ray.get() calls (see"
    " https://github.com/ray-project/ray/issues/3644 for some discussion of workarounds).",
    # Ray's object spilling notice (raylet)
    "(raylet) Spilled 2048 MiB, 16 objects, write throughput 1200 MiB/s. Set RAY_verbose_spill_logs=0 to disable"
    " this message.",
    # DeepSpeed launch.py: workers that ended well
    "[2024-05-01 12:00:01,000] [INFO] [launch.py:351:main] Process 4242 exits successfully.",
    # DeepSpeed stage3.py: allocator cache flushes are a performance warning
    "[2024-05-01 12:00:01,000] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache flushes since last step."
    " this happens when there is high memory pressure and is detrimental to performance.",
    # Open MPI: a component it could not load and skipped, and its help-message aggregation
    "[node07:04242] mca_base_component_repository_open: unable to open mca_btl_openib: librdmacm.so.1: cannot open"
    " shared object file: No such file or directory (ignored)",
    "[node07:04242] 3 more processes have sent help message help-mpi-btl-openib.txt / no active ports found",
    # Megatron-LM's planned ends (--exit-duration-in-mins, --exit-interval)
    "[default0]:[exiting program after 690.0159624854724 minutes] datetime: 2026-08-25 19:54:10 ",
    # Lightning's SIGTERM handler when auto-requeue is on (SIGUSR1 requeues; SIGTERM is let pass)
    "Bypassing SIGTERM: 15",
    # glog W line: a coordination-service connect retried, then connected
    "W0501 12:00:00.000000 4242 coordination_service_agent.cc:100] Failed to connect to coordination service, will"
    " retry: UNAVAILABLE: failed to connect to all addresses\nI0501 12:00:05.000000 4242"
    " coordination_service_agent.cc:307] Coordination agent has successfully connected.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_alarming_lines_of_a_healthy_run_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
