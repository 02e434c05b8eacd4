"""Whole excerpts of real logs where PyTorch's store-based barrier (the one init_process_group and
new_group wait in) timed out or kept waiting, each with the thread it was printed in. Its lines
say how many processes checked in (`world_size=4, worker_count=8`; `num_workers_joined=` in newer
releases). A count short of the world size is a peer that never came (the network or a process
that did not start); a count above it can never come down to the world size (phases.overcounted):
more processes registered under the barrier's key than the group has, which is the job's set-up
and not retried. The alarming but harmless barrier notices of the same family stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # epfml/powersgd issue 21: the file init method finds its file from before, and the barrier
    # times out with 4 arrivals for a world of 2.
    (
        "https://github.com/epfml/powersgd/issues/21",
        "File already exists: output.tmp/dist_init\n"
        "Distributed init: rank 0/2 - output.tmp/dist_init\n"
        "Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1"
        " (world_size=2, worker_count=4, timeout=0:02:00)",
        "crash",
        "application",
        False,
        "store-barrier-timeout",
    ),
    # ligang-cs/PseCo issue 15: 16 arrivals for a world of 4, then torchelastic's failure lines.
    (
        "https://github.com/ligang-cs/PseCo/issues/15",
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key:"
        " store_based_barrier_key:1 (world_size=4, worker_count=16, timeout=0:30:00)\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 820989)"
        " of binary: /home/user/anaconda3/envs/semi-det/bin/python\n"
        "ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed\n"
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (FAILED). Waiting 300"
        " seconds for other agents to finish",
        "crash",
        "application",
        False,
        "store-barrier-timeout",
    ),
    # tunib-ai/parallelformers issue 54: one arrival too many (9 for 8), inside a Kedro node's error.
    (
        "https://github.com/tunib-ai/parallelformers/issues/54",
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 7, for key:"
        " store_based_barrier_key:1 (world_size=8, worker_count=9, timeout=0:30:00) WARNING No nodes ran."
        " Repeat the previous runner.py:213 command to attempt a new run.",
        "crash",
        "application",
        False,
        "store-barrier-timeout",
    ),
    # ultralytics/yolov5 issue 4574: rank 0 keeps waiting with 8 arrivals for a world of 4 and the
    # log ends there.
    (
        "https://github.com/ultralytics/yolov5/issues/4574",
        "Added key: store_based_barrier_key:1 to store for rank: 0\n"
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrie"
        "r_key:1 (world_size=4, worker_count=8, timeout=0:30:00)\n"
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrie"
        "r_key:1 (world_size=4, worker_count=8, timeout=0:30:00)\n"
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrie"
        "r_key:1 (world_size=4, worker_count=8, timeout=0:30:00)",
        "hang",
        "application",
        False,
        "phase:open",
    ),
    # neu-vi/ezflow issue 194: one of two processes came: a peer is missing, the network's case.
    (
        "https://github.com/neu-vi/ezflow/issues/194",
        "`RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key:"
        " store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)`",
        "crash",
        "network",
        True,
        "store-barrier-timeout",
    ),
    # uzh-rpg/RVT issue 18: rank 0 waits with 1 of 2 arrived and the log ends: stuck, cause unknown.
    (
        "https://github.com/uzh-rpg/RVT/issues/18",
        "[2023-07-16 13:08:55,823][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to"
        " initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1,"
        " timeout=0:30:00)\n"
        "[2023-07-16 13:09:05,830][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to"
        " initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1,"
        " timeout=0:30:00)\n"
        "[2023-07-16 13:09:15,832][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to"
        " initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1,"
        " timeout=0:30:00)",
        "hang",
        "unknown",
        True,
        "phase:open",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_store_based_barrier_counts(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == (symptom, category, retryable), source
    assert found.evidence[0].signature == signature, source
    assert found.implicated.ranks == [], source  # the ranks reporting are waiting, not the cause


def test_a_count_above_the_world_size_says_why_it_never_passes() -> None:
    # epfml/powersgd issue 21, the timeout line alone.
    found = diagnose(
        "Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1"
        " (world_size=2, worker_count=4, timeout=0:02:00)"
    )
    assert "more arrivals than the world size" in found.explanation


HEALTHY = [
    # deepspeedai/DeepSpeed pull 7266: ProcessGroupNCCL guesses the barrier's GPU and warns it could hang.
    "[W404 00:15:21.693690333 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform barrier"
    " as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU"
    " mapping is incorrect. Specify device_ids in barrier() to force use of a particular device, or call"
    " init_process_group() with a device_id.",
    # pytorch/pytorch pull 123866: the same warning in its older wording, as the PR quotes it.
    "> ProcessGroupNCCL.cpp:3720] [PG 0 Rank 1]  using GPU 1 to perform barrier as devices used by this process are"
    " currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify"
    " device_ids in barrier() to force use of a particular device.",
    # huggingface/accelerate pull 3744: the Python-side warning of the same.
    "/fsx/user/miniconda3/envs/trl/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py:4631:"
    " UserWarning: No device id is provided via `init_process_group` or `barrier `. Using the current device set"
    " by the user. \n"
    "  warnings.warn(  # warn only once",
    # sehoffmann/dmlcloud issue 61: the exit-time notice that the process group was not destroyed.
    "[rank0]:[W227 10:54:51.986111855 ProcessGroupNCCL.cpp:1374] Warning: WARNING: process group has NOT been"
    " destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call"
    " destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare"
    " cases this process can exit before this point and block the progress of another member of the process"
    " group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4"
    " (function operator())",
    # ray-project/ray pull 47292: a Ray Train worker's deprecation warning for the error-handling variable.
    "(RayTrainWorker pid=2273, ip=172.24.21.66) [rank7]:[W Utils.hpp:108] Warning: Environment variable"
    " NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarString)",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_barrier_notices_stay_healthy(text: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("none", "none", None)
