"""Whole excerpts of real logs from PyTorch's distributed stack (torch 2.x): the TCPStore server
that cannot bind its port, told apart by errno (a port another job holds is retried, a port the
process may not bind at all is the setting's fault), ProcessGroupNCCL's watchdog and heartbeat
monitor with their `[PG ID n PG GUID n(default_pg) Rank n]` prefixes, the c10d store's
rendezvous errors, DTensor/FSDP2, distributed checkpoint and torch.compile errors; and healthy
torchtitan starts whose launcher warnings must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # KimMeen/Time-LLM issue 158: the configured master port is 98, which a normal user may not bind.
    (
        "https://github.com/KimMeen/Time-LLM/issues/158",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address."
        " The server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has"
        " failed to bind to 0.0.0.0:98 (errno: 13 - Permission denied).",
        "crash",
        "application",
        False,
        "c10d-store-bind-denied",
    ),
    # meta-pytorch/torchtune issue 1025: two runs on one machine; the second finds 29500 taken.
    (
        "https://github.com/meta-pytorch/torchtune/issues/1025",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address."
        " The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket"
        " has failed to bind to ?UNKNOWN? (errno: 98 - Address already in use).",
        "crash",
        "network",
        True,
        "c10d-store-listen-failed",
    ),
    # hao-ai-lab/FastVideo issue 575: torchrun's own store cannot listen, then its traceback.
    (
        "https://github.com/hao-ai-lab/FastVideo/issues/575",
        "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        "[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).\n"
        "[E socket.cpp:500] [c10d] The server socket has failed to listen on any local network address.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/usr/local/lib/python3.11/dist-packages/torch/distributed/launcher/api.py", line 254, in launch_agent\n'
        "    result = agent.run()",
        "crash",
        "network",
        True,
        "c10d-store-listen-failed",
    ),
    # pytorch/pytorch pull 111805: the master store gives up on a worker that never joined.
    (
        "https://github.com/pytorch/pytorch/pull/111805",
        "creating store\n"
        "torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.",
        "crash",
        "network",
        True,
        "uncaught-exception",
    ),
    # bytedance/HLLM issue 20: rank 3 cannot fetch the NCCL unique id from rank 0 via the store.
    (
        "https://github.com/bytedance/HLLM/issues/20",
        "+ echo 'start_time: 2024-11-11T15:13:01'\n"
        "start_time: 2024-11-11T15:13:01\n"
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0]"
        " via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout [rank3]:",
        "crash",
        "network",
        True,
        "c10d-store-error",
    ),
    # hiyouga/LlamaFactory issue 8549: the heartbeat monitor finds the watchdog stuck.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/8549",
        "[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2]"
        " ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued"
        " collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog,"
        " and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy),"
        " or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout"
        " would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or"
        " disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).",
        "hang",
        "unknown",
        True,
        "nccl-heartbeat-monitor",
    ),
    # sgl-project/sglang issue 28396: PyTorch 2.7+'s heartbeat monitor (a class since
    # pytorch/pytorch#153977) loses the store; the stack of its failed read names the new loop.
    (
        "https://github.com/sgl-project/sglang/issues/28396",
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:679 (most recent call"
        " first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> >) + 0x9d (0x7b0fd3f7305d in /usr/local/lib/python3.12/dist-packages/torch/lib/libc10.so)\n"
        "frame #1: <unknown function> + 0x6a91532 (0x7b0e0dba5532 in"
        " /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so)\n"
        "frame #2: c10d::TCPStore::check(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> > > > const&) + 0x273 (0x7b0e0dba3413 in"
        " /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so)\n"
        "frame #3: c10d::ProcessGroupNCCL::HeartbeatMonitor::runLoop() + 0x4a5 (0x7b0df038f8c5 in"
        " /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #4: <unknown function> + 0xecdb4 (0x7b10613d1db4 in /usr/lib/x86_64-linux-gnu/libstdc++.so.6)",
        "crash",
        "network",
        True,
        "torch-heartbeat-store-lost",
    ),
    # pytorch/pytorch issue 156535: FSDP2 left an embedding unsharded; DTensor refuses the mix.
    (
        "https://github.com/pytorch/pytorch/issues/156535",
        "got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed"
        " operators!\n"
        '[rank1]:   File "/home/user/envs/suave2/lib/python3.11/site-packages/torch/nn/modules/sparse.py", line 190,'
        " in forward\n"
        "[rank1]:     return F.embedding(",
        "crash",
        "application",
        False,
        "torch-dtensor-mixed-with-tensor",
    ),
    # pytorch/pytorch issue 148252: loading a distributed checkpoint into a bigger model; the script's
    # own comment on the call names the missing key the rank's traceback would print after (RANK 0).
    (
        "https://github.com/pytorch/pytorch/issues/148252",
        "Traceback (most recent call last):\n"
        '  File "scratch.py", line 103, in <module>\n'
        "    load_into_bigger_model()  # RuntimeError: Missing key in checkpoint state_dict: model.2.weight\n"
        '  File "scratch.py", line 78, in load_into_bigger_model\n'
        "    dcp.load(to_load, storage_reader=dcp.filesystem.FileSystemReader(tmp_dir))\n"
        '  File "torch/distributed/checkpoint/utils.py", line 192, in reduce_scatter\n'
        "    raise result\n"
        "torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0])\n"
        "Traceback (most recent call last): (RANK 0)",
        "crash",
        "application",
        False,
        "state-dict-mismatch",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_torch_distributed_failures(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == symptom, source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # pytorch/torchtitan pull 171: torchrun's OMP_NUM_THREADS notice and torchtitan overriding
    # TORCH_NCCL_ASYNC_ERROR_HANDLING at a normal start.
    "W0327 14:29:58.902000 140021143774208 torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment"
    " variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the"
    " variable for optimal performance in your application as needed.\n"
    "W0327 14:29:58.902000 140021143774208 torch/distributed/run.py:757] *****************************************\n"
    "[rank0]:2024-03-27 14:30:00,872 - root - INFO - Starting job: LLaMA debug training\n"
    "[rank0]:2024-03-27 14:30:01,177 - root - WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden"
    " to 3 based on job config\n"
    "[rank0]:2024-03-27 14:30:01,182 - root - INFO - Building 2-D device mesh with ['dp', 'tp'], [2, 2]",
    # pytorch/torchtitan pull 1814: steps with falling loss and the process groups' timeout change.
    "[rank0]:[titan] 2025-06-16 16:24:16,593 - root - INFO - Training starts at step 1.\n"
    "[rank0]:[titan] 2025-06-16 16:24:23,544 - root - INFO - step:  1  loss:  8.1880  memory:  4.88GiB(6.16%)  tps: 28\n"
    "[rank0]:[titan] 2025-06-16 16:24:23,545 - root - INFO - Synchronizing and adjusting timeout for all"
    " ProcessGroups to 0:01:40\n"
    "[rank0]:[titan] 2025-06-16 16:24:23,842 - root - INFO - step:  2  loss:  8.1610  memory:  4.90GiB(6.20%)"
    "  tps: 13,785",
    # pytorch/torchtitan pull 3360: a launch command with long store and train timeouts.
    "--rdzv_conf read_timeout=3600 --local-ranks-filter 0 --role rank --tee 3 -m torchtitan.train"
    " --comm.init_timeout_seconds=3600 --comm.train_timeout_seconds=3600\n"
    "[rank0]:[titan] 2026-05-21 13:41:40,784 - root - INFO - torchtitan version: 0.2.2+git28c986b (0.0.0 means"
    " __version__ is not defined correctly).\n"
    "[rank0]:[titan] 2026-05-21 13:41:41,422 - root - WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be"
    " overridden to 3 based",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_torch_distributed_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
