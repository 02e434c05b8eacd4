"""How launchers, schedulers and shells report an abnormal end: each such line alone is a failure.

Every line here is a real line from a public log (the code index's id where the thread's address
is not shown there), printed by the format string the comment names."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose


@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        # Slurm 25.11.7 src/api/step_launch.c: info("Job step aborted: Waiting up to %d seconds for
        # job step to finish.") (code index 42767948513, after a scancel).
        ("srun: Job step aborted: Waiting up to 12 seconds for job step to finish.", "unknown", True),
        # src/srun/allocate.c: info("Force Terminated %ps", msg) (the same thread).
        ("srun: Force Terminated job 32779", "unknown", True),
        # src/api/step_launch.c: error("Timed out waiting for job step to complete") (code index 27234431590).
        ("  srun: error: Timed out waiting for job step to complete", "unknown", True),
        # src/srun/srun_job.c: info("forcing job termination") (code index 20940807595).
        ("srun: forcing job termination", "unknown", True),
        # src/salloc/salloc.c: "Job %u has exceeded its time limit and its allocation has been
        # revoked." (code index 48498618144).
        ("salloc: Job 1962228 has exceeded its time limit and its allocation has been revoked.", "scheduler", True),
        # bash's job status of a job a signal ended (strsignal text padded to a column).
        # code index 35808133980 (after `terminate called after throwing ...`):
        (
            '/home/mobile/hashkat/run.sh: line 80:  4026 Aborted                 (core dumped) "$HASHKAT/build/src/hashkat" $args',
            "unknown",
            True,
        ),
        # code index 59087999424 (SIGILL: a binary built for another CPU):
        (
            "/bin/bash: line 1:   137 Illegal instruction     (core dumped) ./flow_server --config node_config",
            "system_software",
            True,
        ),
        # code index 56835017795 (SIGFPE: integer division by zero):
        ("./install.sh: line 332: 14075 Floating point exception(core dumped) $install_prog $@", "application", False),
    ],
)
def test_an_end_notice_alone_is_a_failure(line: str, category: str, retryable: bool) -> None:
    result = diagnose(line + "\n")
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)


def test_srun_noticing_a_signal_is_not_a_failure() -> None:
    # src/srun/srun_job.c: info("got SIGCONT") (code index 20940807595): srun passes signals on.
    assert diagnose("srun: got SIGCONT\n").symptom == "none"


def test_the_step_abort_is_a_cascade_of_the_task_that_failed() -> None:
    # Code index 9440879573: the memory limit is the cause, srun's abort and the task kill follow.
    log = (
        "slurmstepd: error: Step 1594750.0 exceeded memory limit (6776728 > 6291456), being killed\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "srun: error: node008: task 0: Killed\n"
    )
    result = diagnose(log)
    assert (result.category, result.retryable) == ("out_of_memory", False)


def test_the_debuggers_uncaught_exception_header_is_a_failure_of_its_class() -> None:
    # github.com/ChenhongyiYang/QueryDet-PyTorch/issues/67: VS Code's debugger stopped on it.
    log = (
        "Exception has occurred: ScannerError\n"
        "mapping values are not allowed here\n"
        '  in "/home/xxx/project/QueryDet-PyTorch-main/models/config.py", line 5, column 29\n'
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("crash", "application", False)
    # Code index 21978750092: a class no table knows is still a failure.
    log = "Exception has occurred: RuntimeError\nFailed to use '0' as HackRF device index: not enough devices\n"
    assert diagnose(log).symptom == "crash"


def test_rays_memory_monitor_kill_message_cut_after_any_of_its_parts_is_out_of_memory() -> None:
    # github.com/hiyouga/LlamaFactory/issues/9258 (the line cut after "memory used" in the thread),
    # and Ray's grouping policy's message (code index 54561742029).
    for line, node in (
        (
            "Memory on the node (IP: 10.1.180.84, ID: ba65c80c8aec6b1c406693f640c53f85422d4d73b069747d69875d42)"
            " where the task (task ID: d221d26232c9bae05def6a6d00dbd292d4fc77cc01000000, name=head, rank=0,,"
            " pid=4503, memory used",
            ["10.1.180.84"],
        ),
        ("running low on memory. Memory on the node (IP: 10.10.10.1) was 110.41GB /", ["10.10.10.1"]),
    ):
        result = diagnose(line + "\n")
        assert (result.category, result.retryable, result.implicated.nodes) == ("out_of_memory", False, node)


@pytest.mark.parametrize(
    ("line", "category"),
    [
        # A platform on Kubeflow's training operator (code index 62304326317).
        (
            '{"overview":"PyTorchJob dlcymzh8p8f6818o failed because 1 Master replica(s) failed.",'
            '"content":[{"time":"1772684043","pods":{"Master":[0]},"reason":"128"}]}',
            "unknown",
        ),
        # The training operator's own test of its condition message (code index 29214527752).
        ("XGBoostJob test-sgboostjob is failed because 2 Worker replica(s) failed.", "unknown"),
        # Open MPI's TCP BTL help text (code index 18649329302): the peer died.
        ("An MPI communication peer process has unexpectedly disconnected.  This", "network"),
    ],
)
def test_a_launchers_notice_that_a_replica_or_peer_failed_is_a_failure(line: str, category: str) -> None:
    result = diagnose(line + "\n")
    assert (result.symptom, result.category, result.retryable) == ("crash", category, True)


def test_an_operator_restarting_a_replica_is_not_the_end() -> None:
    # The training operator's restart condition (code index 3299716247).
    assert diagnose("TensorFlowJob the-job is restarting because some replica(s) failed.\n").symptom == "none"


def test_nccls_connect_warning_cut_short_is_still_a_network_failure() -> None:
    # github.com/Oneflow-Inc/oneflow/issues/3586: the retries are INFO, the WARN (cut in the
    # thread) is the failure.
    log = (
        "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n"
        "\n"
        "worker:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to f\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("crash", "network", True)
    # The retry alone is no failure of its own (a log that ends in retries: test_diagnosis_phases.py).
    assert diagnose(log.rsplit("\n\n", 1)[0] + "\n").symptom != "crash"


def test_any_fatal_python_error_ends_the_process() -> None:
    # CPython aborts after every "Fatal Python error:" (Py_FatalError). What CPython 3.11 prints
    # here for ctypes.pythonapi.Py_FatalError(b"boom"), and the shutdown one of code index 34393709983.
    for line in (
        "Fatal Python error: boom",
        "Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'>"
        " at interpreter shutdown, possibly due to daemon threads",
    ):
        result = diagnose(line + "\nPython runtime state: finalizing (tstate=0x555a\n")
        assert (result.symptom, result.category, result.retryable) == ("crash", "unknown", True)
    # The messages that say why keep their own reading.
    assert diagnose("Fatal Python error: Cannot recover from stack overflow.\n").category == "application"


@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        # What GNU bash 5 prints here for a command in a script that died of SIGABRT, SIGILL and
        # SIGFPE (no core dump: the strsignal text padded to its column, then the command).
        ('bash: line 1:  3021 Aborted                 python3 -c "import os; os.abort()"', "unknown", True),
        (
            'bash: line 1:  3062 Illegal instruction     python3 -c "import os,signal; os.kill(os.getpid(), signal.SIGILL)"',
            "system_software",
            True,
        ),
        (
            'bash: line 1:  3103 Floating point exceptionpython3 -c "import os,signal; os.kill(os.getpid(), signal.SIGFPE)"',
            "application",
            False,
        ),
        # zsh's own names (code index 37039773401, 12376909604, 26021877349).
        ("zsh: illegal hardware instruction  python", "system_software", True),
        (
            "                                                 | 5/15 [02:32<05:36, 33.69s/it]zsh: killed     python3 commandR.py",
            "unknown",
            True,
        ),
        ("zsh: segmentation fault  python main.py", "unknown", True),
        # Hydra's last line after the exception that ended the job (code index 22839117380).
        ("Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.", "unknown", True),
        # glibc's assert() in malloc, and zsh's job report after it (code index 33616273705).
        (
            "python: malloc.c:2379: sysmalloc: Assertion `(old_top == initial_top (av) && old_size == 0) ||"
            " ((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top) &&"
            " ((unsigned long) old_end & (pagesize - 1)) == 0)' failed.",
            "unknown",
            True,
        ),
        ("[1]    1603318 abort (core dumped)  ipython", "unknown", True),
    ],
)
def test_a_shell_or_runtime_report_of_a_dead_process_is_a_failure(line: str, category: str, retryable: bool) -> None:
    result = diagnose(line + "\n")
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)


@pytest.mark.parametrize(
    "line",
    [
        # github.com/deepspeedai/DeepSpeed/pull/854 (DeepSpeed's launcher, sigkill_handler).
        "Killing subprocess 3232868",
        # The same launcher with its logger's prefix (github.com/hiyouga/LlamaFactory/issues/251).
        "[2023-07-26 15:19:24,960] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45098",
        # PyCharm's run console after a ZeroDivisionError (code index 19480405772).
        "Process finished with exit code 1",
    ],
)
def test_a_launcher_or_console_saying_the_child_failed_is_a_failure(line: str) -> None:
    result = diagnose(line + "\n")
    assert (result.symptom, result.category, result.retryable) == ("crash", "unknown", True)


def test_a_console_saying_the_program_succeeded_is_healthy() -> None:
    assert diagnose("Process finished with exit code 0\n").symptom == "none"


IGNORED = (
    # What CPython 3.11 here prints for an exception raised in a `__del__` (PyErr_WriteUnraisable):
    # reported, ignored, and the program goes on.
    "Exception ignored in: <function Loader.__del__ at 0x7f2769b25bc0>\n"
    "Traceback (most recent call last):\n"
    '  File "<string>", line 4, in __del__\n'
    "AttributeError: 'Loader' object has no attribute '_workers_status'\n"
)


def test_an_exception_python_reports_as_ignored_is_no_failure() -> None:
    assert diagnose(IGNORED + "step 2 done\n").symptom == "none"


def test_an_uncaught_exception_after_an_ignored_one_still_is() -> None:
    uncaught = IGNORED.replace("Exception ignored in: <function Loader.__del__ at 0x7f2769b25bc0>\n", "")
    result = diagnose(IGNORED + uncaught)
    assert (result.symptom, result.evidence[0].line) == ("crash", 7)


def test_a_missed_rendezvous_keep_alive_is_a_warning_the_agent_recovers_from() -> None:
    # torch/distributed/elastic/rendezvous/dynamic_rendezvous.py logs it as a warning and keeps
    # sending heartbeats (code index 20593718333: the DDP example goes on).
    line = (
        "W0813 22:23:32.979031 140204091807488 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1267]"
        " The node 'xxxxx' has failed to send a keep-alive heartbeat to the rendezvous '100' due to an error"
        " of type RendezvousTimeoutError.\n"
    )
    assert diagnose(line).symptom == "none"


def test_the_hip_runtimes_queue_abort_is_a_faulting_kernel() -> None:
    # Code index 27679631767 (a Fortran offload program on a ROCm node), then bash's "Aborted".
    log = (
        ":0:rocdevice.cpp            :2614: 281102691423 us: 54282: [tid:0x7ff1f9c47700] Device::callbackQueue"
        " aborting with error : HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to access an inaccessible"
        " address. code: 0x2b\n\nAborted\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.exclude) == ("crash", "unknown", False)
    assert result.evidence[0].signature == "rocm-queue-callback-abort"


def test_nccl_skipping_an_hca_it_cannot_open_is_no_failure() -> None:
    # github.com/zai-org/ImageReward/issues/65: ncclIbInit warns and skips the two HCAs it cannot
    # open, then uses the others.
    log = (
        "65826-86bd789679-2dxbs:80744:80744 [1] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"
        "\n"
        "65826-86bd789679-2dxbs:80744:80744 [1] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_58\n"
        "65826-86bd789679-2dxbs:80746:80746 [3] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_18:1/RoCE ;"
        " OOB eth0:10.117.221.247<0>\n"
    )
    assert diagnose(log).symptom == "none"
    # A verbs call that fails while connecting is one (code index 1252677613).
    failed = "misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument\n"
    assert diagnose(failed).category == "network"
