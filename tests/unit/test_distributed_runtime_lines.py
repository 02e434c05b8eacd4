"""Real lines of distributed runtimes (PyTorch's c10d and torchelastic, Gloo, NCCL and RCCL) and
of memory exhaustion, where network, program, memory and unknown causes are easily confused:
each diagnosed as the runtime's own source says it means, with where the line comes from.
Healthy lines (caught errors, retries that succeed, warnings) must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

STEPS = "\nstep 100 loss 1.0\nstep 200 loss 0.9\nstep 300 loss 0.8"

FAILURES = [
    # --- NCCL: WARN lines (github.com/NVIDIA/nccl at 5067397c unless a tag is named) ---
    # src/init.cc: ranks' peer info carries different NCCL versions (the nodes' installs differ)
    (
        "node1:1234:1300 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 0 version 21903"
        " rank 4 version 21805",
        "system_software",
        True,
    ),
    # src/bootstrap.cc, tag v2.18.3-1: ranks launched with different world sizes
    (
        "node1:1234:1300 [0] bootstrap.cc:126 NCCL WARN Bootstrap Root : mismatch in rank count from procs 8 : 16",
        "application",
        False,
    ),
    # src/bootstrap.cc: today's wording of the same check
    (
        "node1:1234:1300 [0] bootstrap.cc:335 NCCL WARN Bootstrap Root : mismatch in info from procs, nranks 8"
        " vs 16, nroots 1 vs 1, iroot 0 vs 0, offset 0 vs 0",
        "application",
        False,
    ),
    # src/init.cc: a node lacks a NIC the others have (ncclSystemError)
    (
        "node1:1234:1300 [0] init.cc:1339 NCCL WARN Detected mixed local Net device counts across ranks"
        " (min 4, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to continue.",
        "system_software",
        True,
    ),
    # src/transport/net_ib.cc, tag v2.18.3-1: collectives of different sizes (ncclInvalidUsage)
    (
        "node1:1234:1300 [0] transport/net_ib.cc:1081 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.0.0.2<43210>"
        " collective mismatch error, local size 2097152 remote size 1048576",
        "application",
        False,
    ),
    # src/transport/net_ib/p2p.cc: the posted receive fails a sanity check (ncclInternalError)
    (
        "node1:1234:1300 [0] transport/net_ib/p2p.cc:301 NCCL WARN NET/IB : req 0/1 tag 7 peer"
        " 10.0.0.2<43210> posted incorrect receive info: size 1048576 addr 0 rkeys[0]=0",
        "system_software",
        True,
    ),
    # github.com/ROCm/rccl src/include/checks.h: RCCL's CUDA checks print "HIP failure"
    (
        "node1:1234:1300 [0] include/checks.h:30 NCCL WARN HIP failure 'out of memory' at /src/init.cc:123",
        "out_of_memory",
        False,
    ),
    # src/transport/net_ib/p2p.cc ncclIbLogCompletionWithError: transport retries exhausted
    (
        "node3:1234:1299 [0] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion from peer"
        " 10.0.0.4<49123> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0",
        "network",
        True,
    ),
    # src/include/alloc.h: the device ran out of memory under NCCL
    ("node1:555:600 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'", "out_of_memory", False),
    # PyTorch ProcessGroupNCCL prints NCCL's last error under the result code: the WARN decides
    (
        TRACEBACK + "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Mismatched NCCL version detected : rank 0 version 21903 rank 8 version 21805",
        "system_software",
        True,
    ),
    # --- Gloo (github.com/pytorch/gloo gloo/transport/tcp/pair.cc) ---
    # older builds enforce the read's bound bare: the ranks' collectives differ in size
    (
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n  what():  [enforce fail at"
        " ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 8773632 vs 4",
        "application",
        False,
    ),
    # the peer's socket closed (its process died or the network dropped it)
    (
        TRACEBACK + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by"
        " peer [10.0.0.2]:29345",
        "network",
        True,
    ),
    # --- PyTorch c10d (torch/csrc/distributed/c10d/TCPStore.cpp, Utils.hpp, socket.cpp) ---
    # recvBytes got 0 bytes: the store's host closed the connection (it exited or crashed); with
    # nothing earlier in the log, a store connection lost is read as the network's
    (
        "[W304 19:44:41.898456436 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=73,"
        " addr=localhost:46764, remote=localhost:29500): Failed to recv, got 0 bytes. Connection was likely"
        " closed. Did the remote server shutdown or crash?\n" + TRACEBACK + "torch.distributed.DistNetworkError:"
        " Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
        "network",
        True,
    ),
    # ProcessGroupNCCL.cpp broadcastUniqueNCCLID: rank 0's store went away while others fetched the id
    (
        TRACEBACK + "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via"
        " c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        "network",
        True,
    ),
    # NVIDIA/nccl#1664: an external IB net plugin keeps NCCL's completion-error wording
    (
        "worker-node1:2304:2340 [5] NCCL WARN NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12"
        " opcode=32698 len=32696 vendor err 129 (Send)",
        "network",
        True,
    ),
    # ROCm/rccl#1454 (nccl src/proxy.cc ncclPollProxyResponse): a rank's socket to its proxy failed,
    # the consequence of an earlier failure
    (
        "UVOSLinux:31965:31971 [0] /usr/src/debug/rccl/build/hipify/src/proxy.cc:1190 NCCL WARN Socket recv"
        " failed while polling for opId=0x7d9e780c40c0",
        "unknown",
        True,
    ),
    # pytorch/pytorch#116974 (slurm src/srun/launch.c _step_signal): srun ends the step itself after a
    # task exited; the step's CANCELLED notice and the agents' SIGTERM are that kill, not a cancel
    (
        "    raise RendezvousClosedError()\ntorch.distributed.elastic.rendezvous.api.RendezvousClosedError\n"
        "srun: error: cdr2596: task 1: Exited with exit code 1\nsrun: Terminating StepId=21941655.1\n"
        "srun: error: cdr2598: task 2: Exited with exit code 1\n"
        "slurmstepd: error: *** STEP 21941655.1 ON cdr2596 CANCELLED AT 2024-01-05T14:27:50 ***\n"
        "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers",
        "unknown",
        True,
    ),
    # --- memory ---
    # libstdc++'s terminate handler: a native allocation failed
    (
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc",
        "out_of_memory",
        False,
    ),
    # github.com/huggingface/accelerate utils/memory.py find_executable_batch_size: halved to zero on OOM
    (TRACEBACK + "RuntimeError: No executable batch size found, reached zero.", "out_of_memory", False),
    # XLA's allocator
    (
        TRACEBACK + "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to"
        " allocate 17179869184 bytes.",
        "out_of_memory",
        False,
    ),
    # grpc src/core/ext/filters/message_size: RESOURCE_EXHAUSTED, but a configured size limit
    (
        TRACEBACK + "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n"
        "\tstatus = StatusCode.RESOURCE_EXHAUSTED\n"
        '\tdetails = "Received message larger than max (4198400 vs. 4194304)"',
        "application",
        False,
    ),
]

HEALTHY = [
    # torch/distributed/elastic/agent/server/api.py _exit_barrier: after the node's own workers
    # succeeded, a failed wait for the other agents is logged with its traceback and swallowed
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (WorkerState.SUCCEEDED)."
    " Waiting 300 seconds for other agents to finish\n"
    "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 300.0481 seconds\n"
    + TRACEBACK
    + "RuntimeError: Socket Timeout",
    # the same through torch/_logging's formatter (torchelastic since 2.2), which prefixes every line
    "E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951] Error waiting on"
    " exit barrier. Elapsed: 300.10335206985474 seconds\n"
    "E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951] Traceback (most"
    " recent call last):\n"
    'E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951]   File "/x/api.py",'
    " line 937, in _exit_barrier\n"
    "E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951]"
    " torch.distributed.DistStoreError: Socket Timeout",
    # api.py: RendezvousGracefulExitError is logged at INFO and the run counts as succeeded
    "torch.distributed.elastic.agent.server.api: [INFO] Rendezvous gracefully exited: Node node1_123_0 is not"
    " part of the rendezvous round",
    # nccl src/init.cc: with NCCL_IGNORE_NET_MISMATCH set the mismatch is an INFO line and NCCL goes on
    "node1:1234:1300 [0] NCCL INFO Detected mixed local Net device counts across ranks (min 4, max 8)."
    " Ignoring due to NCCL_IGNORE_NET_MISMATCH." + STEPS,
    # ProcessGroupNCCL.cpp: at a normal exit (the destructor's warning says so) a heartbeat
    # monitor's store check that failed is caught and logged, the exit's noise
    "[rank0]:[W310 15:54:44.848694228 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not"
    " called before program exit, which can leak resources. For more info, please see"
    " https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())\n"
    '[rank3]:[W310 15:54:45.576772833 ProcessGroupNCCL.cpp:1802] [PG ID 0 PG GUID 0 Rank 3] Failed to check the "should'
    ' dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Failed to recv, got 0'
    " bytes. Connection was likely closed. Did the remote server shutdown or crash?",
    # nccl src/transport/net_ib/common.cc: a non-fatal async event
    "node1:555:600 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got async event : GID table"
    " change" + STEPS,
    # rdma-core libibverbs probing the drivers of adapters the node does not have
    "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so': libmlx4-rdmav34.so: cannot open shared"
    " object file: No such file or directory" + STEPS,
    # github.com/Lightning-AI/pytorch-lightning tuner/batch_size_scaling.py: the finder's OOM is caught
    "Batch size 8 succeeded, trying batch size 16\nBatch size 16 failed, trying batch size 8\n"
    "Finished batch size finder, will continue with full run using batch size 8" + STEPS,
    # github.com/deepspeedai/DeepSpeed runtime/zero/stage3.py: memory pressure, training goes on
    "[2024-05-01 10:00:00,000] [WARNING] [stage3.py:2069:step] 1 pytorch allocator cache flushes since last"
    " step. this happens when there is high memory pressure and is detrimental to performance." + STEPS,
    # tsl/framework/bfc_allocator.cc: the caller says the failed allocation is not a failure
    "W external/tsl/tsl/framework/bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of memory trying to"
    " allocate 2.00GiB with freed_by_count=0. The caller indicates that this is not a failure, but this may"
    " mean that there could be performance gains if more memory were available." + STEPS,
    # torch/csrc/distributed/c10d/socket.cpp: a connect retry before the store came up
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 -"
    " Connection refused)." + STEPS,
]


@pytest.mark.parametrize(("text", "category", "retryable"), FAILURES)
def test_a_runtime_line_reads_as_its_source_means(text: str, category: str, retryable: bool) -> None:
    assert verdict(text)[1:] == (category, retryable)


@pytest.mark.parametrize("text", HEALTHY)
def test_a_caught_or_passing_line_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)


def test_the_network_line_names_the_peer_that_went_away() -> None:
    # nccl p2p.cc and gloo pair.cc name the remote side; the culprit figure counts peers
    ib = diagnose(
        "node3:1234:1299 [0] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion from peer"
        " 10.0.0.4<49123> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0"
    )
    assert ib.implicated.peers == ["10.0.0.4"]
    gloo = diagnose(
        TRACEBACK + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by"
        " peer [10.0.0.2]:29345"
    )
    assert gloo.implicated.peers == ["10.0.0.2"]


def test_a_memory_failure_outranks_the_cascade_it_causes() -> None:
    # the slurmstepd oom_kill notice, then another rank losing its Gloo peer
    found = diagnose(
        "slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have been OOM"
        " Killed.\n" + TRACEBACK + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598]"
        " Connection closed by peer [10.0.0.2]:29345"
    )
    assert (found.category, found.retryable) == ("out_of_memory", False)


def test_a_cancel_stays_a_cancel_unless_srun_ended_the_step() -> None:
    # slurm src/slurmd/slurmstepd/req.c: the same notice after scancel, with no srun termination
    cancelled = "slurmstepd: error: *** STEP 1234.0 ON node1 CANCELLED AT 2024-05-01T10:00:00 ***"
    assert verdict(cancelled)[1:] == ("scheduler", False)
    # srun ended another step (older wording "Terminating job step"): this step's cancel is still one
    other = "srun: Terminating job step 1234.1\n" + cancelled
    assert verdict(other)[1:] == ("scheduler", False)
    assert verdict("srun: Terminating job step 1234.0\n" + cancelled)[1:] == ("unknown", True)
