"""From realistic logs to a diagnosis: root cause over cascades, where it happened, healthy logs."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from recovery.activities.report import format_progress
from recovery.activities.signatures.diagnosis import LogDiagnoser, LogDiagnosis
from recovery.activities.signatures.prefixes import LineContext, line_context, node_name
from recovery.activities.straggler import StragglerConfig

LAYOUT = {0: "node1", 1: "node1", 2: "node2", 3: "node2"}


def diagnose(text: str, **kwargs: object) -> LogDiagnosis:
    diagnoser = LogDiagnoser(**kwargs)  # type: ignore[arg-type]
    data = dedent(text).lstrip("\n").encode()
    for i in range(0, len(data), 1000):  # arrives in pieces, as a growing file does
        diagnoser.feed(data[i : i + 1000])
    diagnoser.finish()
    return diagnoser.diagnosis()


def progress(first: int, last: int, prefix: str = "0: ") -> str:
    return "".join(f"{prefix}{format_progress(s, total=100, rank=0, loss=1 / s)}\n" for s in range(first, last + 1))


WATCHDOG = (
    "{r}: [rank{r}]:[E1023 10:11:12.345678 4242 ProcessGroupNCCL.cpp:616]"
    " [PG ID 0 PG GUID 0(default_pg) Rank {r}]"
    " Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2941, OpType=ALLREDUCE, NumelIn=1,"
    " NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n"
)


def test_a_cascade_is_diagnosed_as_its_root_cause_on_the_first_ranks_node() -> None:
    log = (
        progress(1, 20)
        + "3: [rank3]: Traceback (most recent call last):\n"
        + '3: [rank3]:   File "train.py", line 88, in <module>\n'
        + "3: [rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        + "".join(WATCHDOG.format(r=r) for r in (0, 1, 2))
        + "srun: error: node2: task 3: Exited with exit code 1\n"
    )
    result = diagnose(log, layout=LAYOUT)
    assert (result.symptom, result.category, result.retryable) == ("crash", "unknown", True)
    assert result.implicated.ranks == [3] and result.implicated.nodes == ["node2"]
    assert result.evidence[0].signature == "cuda-illegal-address" and result.evidence[0].line == 23
    assert {e.signature for e in result.evidence[1:]} == {"nccl-watchdog-timeout", "srun-task-failed"}


def test_root_cause_wins_even_when_its_line_comes_after_the_cascade() -> None:
    log = (
        progress(1, 5)
        + WATCHDOG.format(r=0)
        + WATCHDOG.format(r=1)
        + "2: [rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
        + " GPU 2 has a total capacity of 79 GiB\n"
    )
    result = diagnose(log, layout=LAYOUT)
    assert (result.symptom, result.category, result.retryable) == ("crash", "out_of_memory", False)
    assert result.implicated.ranks == [2] and result.implicated.gpus == ["gpu2"]
    assert result.implicated.nodes == ["node2"]


def test_only_cascades_left_is_a_hang_that_implicates_no_victim() -> None:
    result = diagnose(progress(1, 5) + "".join(WATCHDOG.format(r=r) for r in range(3)))
    assert (result.symptom, result.category) == ("hang", "unknown")
    assert result.implicated.ranks == [] and result.implicated.nodes == []


LOGS = Path(__file__).parent / "logs"


def log_file(name: str) -> str:
    return (LOGS / name).read_text()


def test_torchelastic_root_cause_names_rank_host_and_signal() -> None:
    result = diagnose(log_file("torchelastic_segfault.log"))
    assert result.symptom == "crash"
    assert result.evidence[0].signature == "segfault"  # the root cause, before the cascade's lines
    assert [e.line for e in result.evidence[1:]] == sorted(e.line for e in result.evidence[1:])
    assert result.implicated.ranks == [3] and result.implicated.nodes == ["node3"]
    assert "died of signal 11" in result.explanation
    assert any(e.signature == "torchelastic-root-cause" and "host" in e.text for e in result.evidence)


def test_xid_in_syslog_names_the_host_and_the_gpu() -> None:
    log = log_file("xid_syslog.log")
    result = diagnose(log)
    assert (result.category, result.evidence[0].signature) == ("hardware", "xid-48")
    assert result.implicated.nodes == ["gpu017"] and result.implicated.gpus == ["0000:3b:00"]


def test_the_demo_jobs_fault_is_the_gpu_on_its_node() -> None:
    log = (
        "rank 1 on node2 (restart 0): starting from step 0\n"
        + progress(1, 3, prefix="")
        + "[node2] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.\n"
        + "RuntimeError: CUDA error: unspecified launch failure\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("crash", "hardware", True)
    assert result.evidence[0].signature == "xid-79"
    assert result.implicated.nodes == ["node2"] and result.implicated.gpus == ["0000:3b:00"]


def test_an_infiniband_error_names_host_and_peer() -> None:
    log = progress(1, 3) + (
        "1: node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer"
        " 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n"
        "1: node-2:5776:5902 [0] NCCL INFO transport/net.cc:1134 -> 6\n"
    )
    result = diagnose(log, layout={1: "node-2"})
    assert (result.category, result.retryable) == ("network", True)
    assert result.implicated.nodes == ["node-2"] and result.implicated.ranks == [1]
    assert result.implicated.peers == ["10.2.0.5"]


def test_a_socket_error_implicates_the_peer_not_the_reporter() -> None:
    log = (
        progress(1, 3)
        + "node1:1234:1290 [0] misc/socket.cc:538 NCCL WARN Net :"
        + " Connection closed by remote peer 10.0.0.5<45678>\n"
    )
    result = diagnose(log)
    assert result.category == "network"
    assert result.implicated.peers == ["10.0.0.5"] and result.implicated.nodes == []


@pytest.mark.parametrize(
    ("line", "category", "retryable", "nodes"),
    [
        (
            "slurmstepd: error: *** JOB 9 ON n3 CANCELLED AT 2023-01-13T09:48:47 DUE TO TIME LIMIT ***",
            "scheduler",
            True,
            [],
        ),
        (
            "slurmstepd: error: *** JOB 9 ON n3 CANCELLED AT 2023-01-13T09:48:47 DUE TO PREEMPTION ***",
            "scheduler",
            True,
            [],
        ),
        ("srun: error: Node failure on node7", "hardware", True, ["node7"]),
        (
            "slurmstepd: error: *** JOB 9 STEPD TERMINATED ON node12 AT 2024-03-28T02:04:23"
            " DUE TO JOB NOT ENDING WITH SIGNALS ***",
            "system_software",
            True,
            ["node12"],
        ),
        (
            "slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0."
            " Some of the step tasks have been OOM Killed.",
            "out_of_memory",
            False,
            [],
        ),
        (
            "Mar  3 12:35:01 node5 kernel: Out of memory: Killed process 12345 (python) total-vm:512000000kB",
            "out_of_memory",
            False,
            ["node5"],
        ),
        ("2: [rank2]: OSError: [Errno 28] No space left on device", "system_software", False, ["node2"]),
        (
            "0: [rank0]: OSError: [Errno 116] Stale file handle: '/nfs/data/train.idx'",
            "system_software",
            True,
            ["node1"],
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 1 bytes.",
            "out_of_memory",
            False,
            [],
        ),
        (
            "node6: [rank0]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
            "hardware",
            True,
            ["node6", "node1"],
        ),
        (
            # Slurm built for several slurmd per host (as the dev cluster is) names its step
            # daemon after the node: the node is node2, not "slurmstepd-node2".
            "slurmstepd-node2: error: *** STEP 1234.0 ON node2 CANCELLED AT 2025-11-20T08:00:00 DUE TO NODE FAILURE ***",
            "hardware",
            True,
            ["node2"],
        ),
        (
            "3: [rank3]: RuntimeError: Expected all tensors to be on the same device, found cuda:0 and cpu!",
            "application",
            False,
            ["node2"],
        ),
    ],
)
def test_families_with_their_prefixes(line: str, category: str, retryable: bool, nodes: list[str]) -> None:
    result = diagnose(progress(1, 4) + line + "\n", layout=LAYOUT)
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)
    assert result.implicated.nodes == nodes


def test_a_user_bug_before_any_progress_is_application_and_not_retried() -> None:
    log = """
        Traceback (most recent call last):
          File "train.py", line 3, in <module>
            import flash_attn
        ModuleNotFoundError: No module named 'flash_attn'
    """
    result = diagnose(log)
    assert (result.category, result.retryable, result.evidence[0].signature) == (
        "application",
        False,
        "py-import-error",
    )


def test_a_healthy_log_has_no_symptom() -> None:
    result = diagnose(log_file("healthy.log"))
    assert result.symptom == "none" and result.category == "none" and result.retryable is None
    assert result.evidence == [] and result.implicated.nodes == []


def test_a_logged_error_counts_only_until_training_gets_past_it() -> None:
    caught = progress(1, 10) + "0: [rank0]: KeyError: 'sample-4242'\n"
    assert diagnose(caught).category == "application"  # nothing after it: fatal
    assert diagnose(caught + progress(11, 11)).category == "application"  # one step may be in flight
    assert diagnose(caught + progress(11, 12)).symptom == "none"  # two new steps: it was survived
    assert diagnose(caught + progress(11, 11), survive_steps=1).symptom == "none"


def test_an_error_in_a_log_without_progress_lines_is_always_fatal() -> None:
    log = "starting\nAttributeError: 'NoneType' object has no attribute 'shape'\nstill printing\nstill here\n"
    assert diagnose(log).category == "application"


def test_a_restart_in_the_same_log_must_get_past_the_failure_point() -> None:
    crashed = (
        progress(1, 50) + "slurmstepd: error: *** JOB 9 ON n3 CANCELLED AT 2024-01-01T00:00:00 DUE TO JOB REQUEUE ***\n"
    )
    assert diagnose(crashed + progress(41, 50)).category == "scheduler"  # replaying old steps
    assert diagnose(crashed + progress(41, 60)).symptom == "none"


def test_the_earliest_of_two_root_causes_wins() -> None:
    log = progress(1, 3) + "2: [rank2]: OSError: [Errno 5] Input/output error\n1: [rank1]: KeyError: 'x'\n"
    result = diagnose(log, layout=LAYOUT)
    assert result.evidence[0].signature == "fs-io-error" and result.implicated.ranks == [2]


def test_a_sustained_slowdown_in_the_logs_progress_is_a_straggler() -> None:
    lines = []
    for step in range(1, 400):
        for rank in range(4):
            # From step 201 rank 2 computes slowly; the others wait for it at every all-reduce, so
            # the run's pace drops for everyone, while the per-rank times show who is the cause.
            own = 1.6 if step > 200 and rank == 2 else 1.0
            step_time = own if rank == 2 else (0.96 if step > 200 else 0.6)
            lines.append(f"{rank}: {format_progress(step, rank=rank, step_time=step_time)}")
    result = diagnose("\n".join(lines) + "\n", layout=LAYOUT, straggler=StragglerConfig(sustain=120))
    assert (result.symptom, result.category, result.retryable) == ("straggler", "unknown", True)
    assert result.evidence[0].signature == "straggler" and "step=201" in result.evidence[0].text
    assert result.implicated.ranks == [2] and result.implicated.nodes == ["node2"]


def test_feed_returns_progress_with_ranks_from_prefixes() -> None:
    diagnoser = LogDiagnoser()
    records = diagnoser.feed(b"3: [rank3]: step=5 loss=1.0\nnothing\n[rank1]: recovery-progress step=6\n")
    assert [(r.step, r.rank, r.line) for r in records] == [(5, 3, 1), (6, 1, 3)]
    assert diagnoser.last_progress is not None and diagnoser.last_progress.step == 6


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("3: [rank3]: boom", LineContext(rank=3)),
        ("  12: text", LineContext(rank=12)),
        ("[rank7]:[E ProcessGroupNCCL.cpp:1] x", LineContext(rank=7)),
        ("[default2]: x", LineContext(local_rank=2)),
        ("gpu-a7:2211:2290 [3] NCCL WARN x", LineContext(host="gpu-a7")),
        ("5: node9.cluster:1:2 [0] NCCL INFO x", LineContext(rank=5, host="node9")),
        ("Mar  3 12:34:56 node7 kernel: NVRM: x", LineContext(host="node7")),
        ("2024-03-03T12:34:56.123456+00:00 node7 kernel: x", LineContext(host="node7")),
        ("[node3] NVRM: x", LineContext(host="node3")),
        ("node6: [launch.py:321] x", LineContext(host="node6")),
        ("RuntimeError: boom", LineContext()),
        ("[titan] x", LineContext()),
        ("12:00:01 INFO x", LineContext()),
        # Ray's worker prefix names the node by address; vLLM's and SGLang's name the TP rank.
        ("(RayWorkerWrapper pid=4242, ip=10.0.0.5) RuntimeError: x", LineContext(host="10.0.0.5")),
        # A remote node's raylet lines carry its address without a pid (print_worker_logs).
        ("(raylet, ip=10.0.0.7) x", LineContext(host="10.0.0.7")),
        ("(pid=raylet, ip=172.31.30.93) x", LineContext(host="172.31.30.93")),
        ("(raylet) x", LineContext()),
        ("(VllmWorker rank=3 pid=811) ERROR x", LineContext(rank=3)),
        ("[2026-01-12 10:57:43 TP5] Scheduler hit an exception", LineContext(rank=5)),
        ("[2026-01-12 10:57:43 DP1 TP2] x", LineContext(rank=2)),
        # vLLM V1's workers, Open MPI's --tag-output (Horovod under mpirun), Lightning's rank prefix.
        ("(Worker_TP1 pid=3534) ERROR 10-11 22:28:17 [multiproc_executor.py:694] RuntimeError: x", LineContext(rank=1)),
        ("(Worker_PP0_TP3 pid=88241) ERROR x", LineContext(rank=3)),
        ("(Worker_PP1_TP3 pid=88241) ERROR x", LineContext()),
        ("[1,3]<stderr>:Traceback (most recent call last):", LineContext(rank=3)),
        ("[rank: 2] Seed set to 42", LineContext(rank=2)),
        # UCX's host:pid:tid and Open MPI's host:pid prefixes name the host whatever its name.
        ("[master:19546:0:19546] ib_mlx5_log.c:139  Transport retry count exceeded", LineContext(host="master")),
        ("[fv-az1542-52:07730] *** End of error message ***", LineContext(host="fv-az1542-52")),
        ("[engine.py:1234] x", LineContext()),
    ],
)
def test_line_context(line: str, expected: LineContext) -> None:
    assert line_context(line) == expected


def test_node_names_are_short_but_addresses_stay() -> None:
    assert node_name("node3.cluster.local") == "node3"
    assert node_name("10.0.0.5") == "10.0.0.5"


def test_an_nccl_system_error_borrows_the_dead_peer_its_socket_error_names() -> None:
    log = (
        progress(1, 5)
        + "0: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        + "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
        + "0: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        + "0: Last error:\n"
        + "0: socketProgress: Connection closed by remote peer gpu-node-17.cluster<45678>\n"
    )
    result = diagnose(log)
    assert (result.category, result.evidence[0].signature) == ("network", "nccl-system-error")
    assert result.implicated.peers == ["gpu-node-17.cluster"]


def test_a_root_cause_that_names_its_place_keeps_other_lines_peers_out() -> None:
    log = (
        progress(1, 5)
        + "3: [rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        + "0: socketProgress: Connection closed by remote peer gpu-node-17.cluster<45678>\n"
    )
    result = diagnose(log, layout=LAYOUT)
    assert result.implicated.ranks == [3] and result.implicated.peers == []


def test_a_hardware_cascade_alone_still_names_the_host_that_logged_it() -> None:
    log = (
        "Nov 29 03:00:01 gpu-node-07 kernel: NVRM: Xid (PCI:0000:b7:00): 154, GPU recovery action"
        " changed from 0x0 (None) to 0x2 (Node Reboot Required)\n"
    )
    result = diagnose(log)
    assert (result.category, result.evidence[0].signature) == ("hardware", "xid-154")
    assert result.implicated.nodes == ["gpu-node-07"] and result.implicated.gpus == ["0000:b7:00"]


def test_a_gpu_fault_printed_after_the_error_it_caused_is_the_cause() -> None:
    # A user's report: the program's CUDA error first, then what nvidia-smi said about the GPU.
    d = diagnose(
        "CUDA Error: no CUDA-capable device is detected\n"
        "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error\n"
    )
    assert (d.symptom, d.category, d.retryable, d.exclude) == ("crash", "hardware", True, True)
    assert d.implicated.gpus == ["0000:03:00"]


def test_a_gpu_fault_does_not_explain_a_users_bug() -> None:
    d = diagnose(
        "[rank0]: ValueError: expected 3 channels, got 4\n"
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    )
    assert d.category == "application"


def test_a_bare_exception_line_belongs_to_the_prefixed_traceback_it_ends() -> None:
    # Loggers prefix a record's first line only: SGLang's "[date TP3] Scheduler hit an exception".
    d = diagnose(
        "[2026-01-12 10:57:43 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "scheduler.py", line 1105, in event_loop_normal\n'
        "    self.self_check_during_idle()\n"
        "ValueError: token_to_kv_pool_allocator memory leak detected!\n"
    )
    assert (d.category, d.implicated.ranks) == ("application", [3])


def test_a_bare_exception_after_a_closed_traceback_names_nobody() -> None:
    d = diagnose(
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 3, in <module>\n'
        "[rank1]: KeyError: 'labels'\n"
        "ValueError: expected 3 channels, got 4\n"
    )
    assert d.implicated.ranks == [1]  # the earliest root cause, rank1's KeyError
    later = diagnose("[rank1]: Traceback (most recent call last):\n[rank1]: KeyError: 'x'\nValueError: y\n")
    assert later.evidence[0].text.startswith("[rank1]")


def test_nccl_unwinding_names_the_first_frame_not_the_ones_it_passed_through() -> None:
    d = diagnose(
        "node3:811:900 [0] NCCL INFO transport/net_ib.cc:1700 -> 2\n"
        "node3:811:900 [0] NCCL INFO transport/net.cc:850 -> 2\n"
        "node3:811:900 [0] NCCL INFO group.cc:421 -> 3\n"
    )
    assert d.evidence[0].line == 1


def test_torchelastic_failures_name_the_rank_when_no_root_cause_block_is_printed() -> None:
    d = diagnose(
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Failures:\n"
        "[1]:\n"
        "  time      : 2024-05-01_10:00:01\n"
        "  host      : gpu-node-4\n"
        "  rank      : 5 (local_rank: 1)\n"
        "  exitcode  : -6 (pid: 4321)\n"
        "  error_file: <N/A>\n"
        "  traceback : Signal 6 (SIGABRT) received by PID 4321\n"
    )
    assert d.symptom == "crash"
    assert (d.implicated.ranks, d.implicated.nodes) == ([5], ["gpu-node-4"])


def test_srun_names_the_node_and_every_task_of_a_range() -> None:
    d = diagnose("srun: error: taurusi2031: tasks 10-11,14: Exited with exit code 1\n")
    assert (d.implicated.nodes, d.implicated.ranks) == (["taurusi2031"], [10, 11, 14])
    whole_job = diagnose("srun: error: n1: tasks 0-4095: Killed\n")
    assert len(whole_job.implicated.ranks) == 64


def test_on_one_line_the_signature_that_names_the_place_speaks() -> None:
    # Both srun's task line and a bare "Killed" match; srun's names the node.
    d = diagnose("srun: error: c002: task 0: Killed\nsrun: Force Terminated StepId=120.0\n")
    assert d.evidence[0].signature == "srun-task-failed" and d.implicated.nodes == ["c002"]


def test_the_kubernetes_device_plugin_names_the_lost_gpu() -> None:
    d = diagnose(
        "Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error:"
        " code = Unknown desc = Unable to retrieve list of available devices: error creating"
        " nvml.Device 5: nvml: GPU is lost\n"
        "job-2q6ld   0/1     UnexpectedAdmissionError   0          4s\n"
    )
    assert (d.category, d.implicated.gpus) == ("hardware", ["gpu5"])


# Real lines: the NVIDIA open kernel module's per-GPU checks (NVIDIA/open-gpu-kernel-modules) and
# an nvidia-smi table (lyulyul/shine-cluster) beside an Xid naming a bus id.
def test_the_nvidia_driver_names_the_gpu_it_speaks_of() -> None:
    assert line_context("Jun 12 16:31:50 fedora-box kernel: NVRM: GPU0 nvCheckFailedNoLog: Check failed").gpu == "gpu0"
    assert line_context("NVRM: GPU 0000:3B:00.0: RmInitAdapter failed! (0x26:0xffff:1517)").gpu == "0000:3b:00"
    assert line_context("[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered").gpu is None
    log = (
        "Jun 12 16:31:50 fedora-box kernel: NVRM: GPU0 nvCheckOkFailedNoLog: Check failed: Reset required"
        " [NV_ERR_RESET_REQUIRED] (0x00000062) returned from _gpushareddataSendDataPollRpc(pGpu, polle\n"
        "Jun 12 16:31:51 fedora-box kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: (status == NV_OK)\n"
    )
    assert "gpu0" in diagnose(log).implicated.gpus


def test_a_bus_id_is_also_named_by_the_index_nvidia_smis_table_gives_it() -> None:
    log = (
        "|   0  GeForce RTX 208...  On   | 00000000:1A:00.0 Off |                  N/A |\n"
        "| 27%   24C    P8     1W / 260W |      1MiB / 11019MiB |      0%      Default |\n"
        "|   1  GeForce RTX 208...  On   | 00000000:1B:00.0 Off |                  N/A |\n"
        "[  170.053881] NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    )
    result = diagnose(log)
    assert result.category == "hardware"
    assert set(result.implicated.gpus) == {"0000:1b:00", "gpu1"}


def test_another_signature_on_the_winning_line_lends_its_places() -> None:
    # A cluster user's notes: srun names the node and tasks, the bus error speaks for the line.
    result = diagnose("srun: error: comput123: tasks 29,31: Bus error\n")
    assert result.evidence[0].signature == "bus-error"
    assert (result.implicated.nodes, result.implicated.ranks) == (["comput123"], [29, 31])


# torchelastic's rendezvous result as a Kubeflow PyTorchJob's agent prints it (kubeflow/trainer),
# then the agent's report of a failed worker (mlcommons/training).
RENDEZVOUS = (
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n"
    "  restart_count=0\n"
    "  master_addr=elastic-example-imagenet-worker-0\n"
    "  master_port=23456\n"
    "  group_rank=1\n"
    "  group_world_size=2\n"
    "  local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]\n"
    "  role_ranks=[8, 9, 10, 11, 12, 13, 14, 15]\n"
    "  global_ranks=[8, 9, 10, 11, 12, 13, 14, 15]\n"
)
WORKER_FAILED = (
    "[2024-11-14 06:04:09,095] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6)"
    " local_rank: 5 (pid: 21617) of binary: /opt/conda/bin/python\n"
)


def test_a_local_rank_is_a_global_rank_only_where_the_log_maps_it() -> None:
    alone = diagnose(WORKER_FAILED)
    assert alone.implicated.ranks == [] and "local rank 5" in alone.explanation
    mapped = diagnose(RENDEZVOUS + WORKER_FAILED)
    assert mapped.implicated.ranks == [13] and "local rank" not in mapped.explanation
    single = diagnose(
        RENDEZVOUS.replace("group_world_size=2", "group_world_size=1").replace("global_ranks=", "x=") + WORKER_FAILED
    )
    assert single.implicated.ranks == [5]
    on_one_node = diagnose(WORKER_FAILED, layout={r: "node1" for r in range(8)})
    assert (on_one_node.implicated.ranks, on_one_node.implicated.nodes) == ([5], ["node1"])


def test_deepspeeds_launcher_names_the_local_rank_and_says_when_the_job_has_one_node() -> None:
    # DeepSpeed's launch.py banner (a DeepSpeed-Megatron run, 2022) and its report of a failed worker
    banner = "[2022-09-15 05:57:44,795] [INFO] [launch.py:143:main] nnodes=1, num_local_procs=4, node_rank=0\n"
    failed = (
        "[2024-05-01 12:00:01,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py',"
        " '--local_rank=3'] exits with return code = -9\n"
    )
    assert "local rank 3" in diagnose(failed).explanation
    assert diagnose(banner + failed).implicated.ranks == [3]
