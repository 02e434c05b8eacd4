"""A log that ends inside a phase its program announced and never finished is a hang (phases.py).

The lines are real: from the development corpus's excerpts (their threads named here) and from
public logs in the code index (its id where the thread's address is not shown there)."""

from __future__ import annotations

from recovery.activities.report import format_progress
from tests.unit.real_lines import diagnose

# github.com/Lightning-AI/pytorch-lightning/issues/4420: ranks wait, one never checks in.
WAITING = (
    "INFO:root:Waiting in store based barrier to initialize process group for rank: {r},"
    " key: store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)\n"
)
# github.com/Lightning-AI/pytorch-lightning/issues/19606: rank 0 starts, nothing follows.
INIT_ALONE = "[rank: 0] Seed set to 42\nInitializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5\n"
# github.com/Lightning-AI/pytorch-lightning/issues/19606 too: another rank's log never shows
# rank 0's "registered" (code index 55351576619 prints it once, for all).
OTHER_RANK = "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
# Lightning's own example output (code index 55351576619): every rank joined, training starts.
INIT_DONE = (
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
    "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
    "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
    "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n" + "-" * 100 + "\ndistributed_backend=nccl\n"
    "All distributed processes registered. Starting with 4 processes\n" + "-" * 100 + "\n\n"
    "Number of model parameters: 3.5 B\n"
    "Starting training ...\n"
)


def test_ranks_waiting_in_the_store_based_barrier_at_the_end_is_a_hang_naming_nobody() -> None:
    result = diagnose("".join(WAITING.format(r=r) for r in (0, 2, 6, 1, 3, 7, 5)))
    assert (result.symptom, result.category, result.retryable) == ("hang", "unknown", True)
    assert result.implicated.ranks == [] and result.implicated.nodes == []
    assert not result.exclude
    assert "Waiting in store based barrier" in result.evidence[0].text


def test_a_log_that_ends_at_rank_0s_announcement_alone_is_not_judged() -> None:
    # Lightning's troubleshooting (docs/source-pytorch/clouds/cluster_advanced.rst, "The Trainer
    # is stuck initializing at startup") names this ending, but one process's announcement is
    # what its own log shows (per-rank files, a launcher that shows rank 0 only) or an excerpt cut
    # there: it cannot say whether the others came. Two announcements of a larger world can.
    assert diagnose(INIT_ALONE).symptom == "none"
    second = "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/5\n"  # rank 1's, in the same format
    result = diagnose(INIT_ALONE + second)
    assert (result.symptom, result.category, result.retryable) == ("hang", "unknown", True)
    assert result.implicated.ranks == []
    # Anything the program prints after it shows it went on (a warning here, code index 30836247073).
    later = "/usr/local/lib/python3.8/dist-packages/requests/__init__.py:102: RequestsDependencyWarning: urllib3\n"
    assert diagnose(INIT_ALONE + second + later * 3).symptom == "none"


def test_every_rank_registered_closes_the_phase() -> None:
    assert diagnose(INIT_DONE).symptom == "none"


def test_another_ranks_join_alone_opens_nothing() -> None:
    assert diagnose(OTHER_RANK).symptom == "none"


def test_progress_after_the_phase_closes_it() -> None:
    steps = "".join(f"{format_progress(s, total=100, rank=0, loss=1 / s)}\n" for s in range(1, 4))
    assert diagnose(WAITING.format(r=0) + steps).symptom == "none"


def test_a_barrier_completed_by_one_rank_is_done_for_the_ranks_whose_entry_prints_later() -> None:
    # Code index 78807632: ranks' lines interleave; a wait before it is over too.
    log = WAITING.format(r=0) + (
        "    [2024-03-09 10:38:03][INFO][distributed_c10d:442] - Added key: store_based_barrier_key:1 to store for rank: 5\n"
        "    [2024-03-09 10:38:03][INFO][distributed_c10d:476] - Rank 0: Completed store-based barrier"
        " for key:store_based_barrier_key:1 with 8 nodes.\n"
        "    [2024-03-09 10:38:03][INFO][distributed_c10d:442] - Added key: store_based_barrier_key:1 to store for rank: 2\n"
    )
    assert diagnose(log).symptom == "none"


def test_an_error_that_ends_the_wait_is_the_diagnosis() -> None:
    # github.com/deepspeedai/Megatron-DeepSpeed/issues/338
    log = WAITING.format(r=7) + (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 7,"
        " for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category) == ("crash", "network")


def test_a_watchdogs_stack_dump_at_the_end_is_a_hang_and_a_dump_alone_is_not() -> None:
    # `Timeout (0:00:00.500000)!` is what CPython 3.11 here prints for
    # faulthandler.dump_traceback_later(0.5) before the stacks; the thread and frame lines are
    # from github.com/pytorch/torchtitan/issues/810.
    dump = (
        "[rank0]:Thread 0x00007fdcbce00640 (most recent call first):\n"
        '[rank0]:  File "/home/user/.conda/envs/pytorch/lib/python3.11/threading.py", line 324 in wait\n'
    )
    result = diagnose("Timeout (0:00:00.500000)!\n" + dump)
    assert (result.symptom, result.implicated.ranks) == ("hang", [])
    assert diagnose(dump).symptom == "none"


def test_a_phase_long_before_the_logs_end_is_not_where_it_stuck() -> None:
    # Lightning's `rank_zero_info` lines: a rank other than 0 never prints "registered", and its
    # log goes on (a line of Lightning's, code index 43876302881, as many times as a long log has).
    later = "Global seed set to 1265\n" * 50
    assert diagnose(WAITING.format(r=0) + later).symptom == "none"


def test_a_log_that_ends_while_the_store_client_retries_is_a_network_hang_at_that_host() -> None:
    # github.com/TheTom/vllm-swift/issues/9 (the first frames of the C++ stack under the warning).
    log = (
        "[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host"
        " 100.64.0.1:59782 - retrying (try=6, timeout=1800000ms, delay=5241ms): Connection reset by peer\n"
        "Exception raised from recvBytes at /Users/runner/work/pytorch/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "Utils.hpp:680 (most recent call first):\n"
        "frame #3: c10d::TCPStore::ping() + 200 (0x11b4f5738 in libtorch_cpu.dylib)\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("hang", "network", True)
    assert result.implicated.peers == ["100.64.0.1"] and result.implicated.nodes == []


def test_nccl_connect_retries_end_when_its_communicator_is_up() -> None:
    # NCCL's retry INFO (github.com/espnet/espnet/issues/1940) and an
    # "Init COMPLETE" line (github.com/deepspeedai/DeepSpeedExamples/issues/310).
    retry = "tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
    done = "gpu1:5022:5377 [1] NCCL INFO comm 0x4438f540 rank 1 nranks 8 cudaDev 1 busId 52000 - Init COMPLETE\n"
    assert diagnose(retry * 3).symptom == "hang"
    assert diagnose(retry * 3 + done).symptom == "none"


def test_c10d_socket_connect_warnings_open_nothing() -> None:
    # c10d warns for each address it tries before one works: a healthy NeMo job's line
    # (github.com/NVIDIA-NeMo/Speech/issues/7351).
    line = (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-26-0-146-37]:22456"
        " (errno: 22 - Invalid argument).\n"
    )
    assert diagnose(line).symptom == "none"
