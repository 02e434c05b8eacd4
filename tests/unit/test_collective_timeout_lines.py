"""Collective timeouts and desyncs as whole excerpts show them: ProcessGroupNCCL's watchdog and
heartbeat monitor, its desync report, TORCH_DISTRIBUTED_DEBUG's mismatch check, NCCL's own
mismatch WARN, TCPStore and Gloo. The rank that times out waits (a victim); the ranks a desync
report or a barrier names as missing are the culprits; mismatched collectives are the program's
bug. Healthy start-up and shutdown warnings of the same components stay healthy. Real lines,
with their sources."""

from __future__ import annotations

from tests.unit.real_lines import diagnose, verdict

HUNG = ("hang", "unknown", True)  # a timeout whose cause the log does not say


def _read(text: str) -> tuple[str, str, bool | None]:
    found = diagnose(text)
    return found.symptom, found.category, found.retryable


# --- desyncs: the program's bug, not retryable ---------------------------------------------------


def test_nccl_device_mismatch_warn_is_the_programs_bug() -> None:
    # NVIDIA/nccl#296 (NCCL 2.4.8; src/init.cc ncclCommGetAsyncError sets ncclInvalidUsage)
    line = (
        "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at"
        " and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs"
    )
    assert verdict(line) == ("nccl-device-collective-mismatch", "application", False)
    # "around rank 39" is the rank that noticed, not one to blame.
    assert diagnose(line).implicated.ranks == []


def test_fingerprint_mismatch_under_debug_detail_is_the_programs_bug() -> None:
    # modelscope/ms-swift#9443 (TORCH_DISTRIBUTED_DEBUG=DETAIL's ProcessGroupWrapper)
    log = (
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective:"
        " CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480],"
        " TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda,"
        " layout=Strided (default), requires_grad=false (default), pinned_memory=false (default),"
        " memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104,"
        " OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions("
        "dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default),"
        " pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects:"
        "   Tensor Tensor shapes: 195812480vs 51123456"
    )
    assert verdict(log) == ("collective-mismatch", "application", False)


# --- timeouts: a rank waited; the culprit is the one the report names ----------------------------


def test_watchdog_timeout_on_two_ranks_is_a_hang_of_unknown_cause() -> None:
    # NVIDIA/physicsnemo#691
    log = (
        "[rank3]:[E1016 03:33:45.317536384 ProcessGroupNCCL.cpp:568] [Rank 3] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=50, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
        " ran for 600011 milliseconds before timing out.\n"
        "[rank3]:[E1016 03:33:45.319862434 ProcessGroupNCCL.cpp:1628] [PG 0 Rank 3] Timeout at NCCL work: 50,"
        " last enqueued NCCL work: 50, last completed NCCL work: 49.\n"
        "[rank3]:[E1016 03:33:45.319870659 ProcessGroupNCCL.cpp:582] [Rank 3] Some NCCL operations have failed or"
        " timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on"
        " corrupted/incomplete data.\n"
        "[rank2]:[E1016 03:33:45.380539738 ProcessGroupNCCL.cpp:568] [Rank 2] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=50, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
        " ran for 600012 milliseconds before timing out."
    )
    assert _read(log) == HUNG
    # The ranks that report the timeout waited: they are not to blame.
    assert diagnose(log).implicated.ranks == []


def test_desync_report_names_the_rank_that_fell_behind() -> None:
    # pytorch/pytorch#152623 (TORCH_NCCL_DESYNC_DEBUG=1; TraceUtils.h retrieveDesyncReport)
    log = (
        "[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, Timeout(ms)=600000)"
        " ran for 600086 milliseconds before timing out.\n"
        "[rank0]:[E515 18:36:47.343377708 ProcessGroupNCCL.cpp:1937] Rank 0\n"
        "         - [0] Timeout at collective: ALLREDUCE, #315\n"
        "         - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
        "             [7] finished collective #182, but didn't join collective #183 (count from 1)\n"
        "         - Snapshot of ranks' latest states:\n"
        "           #182 finished ranks:\n"
        "             [7] finished ALLREDUCE\n"
        "           #315 started ranks:\n"
        "             [0, 1, 2] started ALLREDUCE\n"
        "           #317 started ranks:\n"
        "             [3, 4, 5, 6] started _ALLGATHER_BASE\n"
        "[rank0]:[E515 18:36:47.343391940 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) Rank 0]"
        "  failure detected by watchdog at work sequence id: 241 PG status: last enqueued work: 315,"
        " last completed work: 183"
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == HUNG
    assert found.implicated.ranks == [7]


def test_desync_report_of_ranks_that_never_joined_names_them_all() -> None:
    # torch/csrc/distributed/c10d/TraceUtils.h analyzeMissingRanks (the text as it formats it;
    # the ranks are ours), after the watchdog line of NVIDIA/physicsnemo#691
    log = (
        "[rank3]:[E1016 03:33:45.317536384 ProcessGroupNCCL.cpp:568] [Rank 3] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
        " ran for 600011 milliseconds before timing out.\n"
        "\t - To our best knowledge, ranks [5, 6] are the lagging ranks that caused this timeout."
        " They never joined any collectives"
    )
    assert diagnose(log).implicated.ranks == [5, 6]


def test_monitored_barrier_names_every_rank_that_missed_it() -> None:
    # ProcessGroupGloo.cpp monitoredBarrier ("Ranks 3, 5 failed to pass monitoredBarrier"): every
    # listed rank is a culprit, not only the first
    found = diagnose("RuntimeError: [Rank 0]: Ranks 3, 5 failed to pass monitoredBarrier in 30000 ms")
    assert found.implicated.ranks == [3, 5]


def test_heartbeat_monitor_killing_a_stuck_watchdog_is_a_hang() -> None:
    # facebookresearch/dinov2#447
    log = (
        "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be"
        " terminated after dumping debug info. workMetaList_.size()=1\n"
        "[rank0]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 0] ProcessGroupNCCL preparing to dump debug info.\n"
        "[rank0]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 0] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck"
        " for 600 seconds without making progress in monitoring enqueued collectives."
    )
    assert _read(log) == HUNG


# --- store, rendezvous and Gloo: the network, retryable ------------------------------------------


def test_legacy_tcpstore_connect_timeout_is_the_network() -> None:
    # pytorch/pytorch#69197 (PyTorch 1.x tcputil::connect, "connect() timed out.")
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/elastic/'
        'rendezvous/c10d_rendezvous_backend.py", line 155, in _create_tcp_store\n'
        "    store = TCPStore(\n"
        "RuntimeError: connect() timed out. Original timeout was 60000 ms.\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/run.py",'
        " line 719, in main\n"
        "    run(args)"
    )
    assert verdict(log) == ("torch-store-connect-timed-out-legacy", "network", True)


def test_store_wait_timeout_in_a_barrier_is_the_network() -> None:
    # modelscope/ms-swift#4906
    log = (
        "[rank0]:     recv_obj = pickle.loads(self.store.get(key))\n"
        "[rank0]:                             ^^^^^^^^^^^^^^^^^^^\n"
        "[rank0]: torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /broadcast_from/0/75465"
    )
    assert _read(log)[1:] == ("network", True)


def test_gloo_peer_closed_names_the_peer() -> None:
    # pantheon5100/pid_diffusion#2
    log = (
        '  File "/opt/conda/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 1408,'
        " in broadcast\n"
        "    work.wait()\n"
        "RuntimeError: [/opt/conda/conda-bld/pytorch_1670525551200/work/third_party/gloo/gloo/transport/tcp/"
        "pair.cc:598] Connection closed by peer [10.0.1.17]:22780"
    )
    found = diagnose(log)
    assert (found.category, found.retryable) == ("network", True)
    assert found.implicated.peers == ["10.0.1.17"]


def test_rendezvous_timeout_is_the_network() -> None:
    # pytorch/pytorch#80772
    log = (
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/'
        'dynamic_rendezvous.py", line 637, in run\n'
        "    raise RendezvousTimeoutError()\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"
    )
    assert verdict(log) == ("rendezvous-timeout", "network", True)


# --- healthy but alarming ------------------------------------------------------------------------


def test_healthy_process_group_warnings_stay_healthy() -> None:
    lines = [
        # goodfire-ai/spd#250
        "[rank0]:[W1111 11:55:57.148815586 Utils.hpp:112] Warning: Environment variable"
        " NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead"
        " (function operator())",
        # pytorch/pytorch#71864
        "[W socket.cpp:634] The server socket on [localhost]:29501 is not yet listening (errno: 111 -"
        " Connection refused), will retry.",
        # deepspeedai/DeepSpeed#7266
        "[W404 00:15:21.693690333 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to"
        " perform barrier as devices used by this process are currently unknown. This can potentially cause"
        " a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a"
        " particular device, or call init_process_group() with a device_id.",
        # huggingface/accelerate#3744
        "/fsx/user/miniconda3/envs/trl/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py:4631:"
        " UserWarning: No device id is provided via `init_process_group` or `barrier `. Using the current"
        " device set by the user. \n  warnings.warn(  # warn only once",
        # sehoffmann/dmlcloud#61
        "[rank0]:[W227 10:54:51.986111855 ProcessGroupNCCL.cpp:1374] Warning: WARNING: process group has NOT"
        " been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should"
        " call destroy_process_group to ensure that any pending NCCL operations have finished in this process."
        " In rare cases this process can exit before this point and block the progress of another member of"
        " the process group. This constraint has always been present,  but this warning has only been added"
        " since PyTorch 2.4 (function operator())",
    ]
    for line in lines:
        assert diagnose(line).category == "none", line


def test_failed_store_connect_warning_before_training_goes_on_stays_healthy() -> None:
    # YYuX-1145/Bert-VITS2-Integration-package#80
    log = (
        "MASTER_PORT: 10086,\n"
        "WORLD_SIZE: 1,\n"
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [www.wondershare.net]:10086"
        " (system error: 10049 - 在其上下文中，该请求的地址无效。).\n"  # noqa: RUF001 (the real Windows message)
        "05-25 15:21:28 INFO     | data_utils.py:63 | Init dataset...\n"
        "05-25 15:21:28 INFO     | data_utils.py:78 | skipped: 2, total: 8\n"
        "INFO:models:Loaded checkpoint 'Data\\linra\\models\\G_0.pth' (iteration 0)\n"
        "INFO:models:Loaded checkpoint 'Data\\linra\\models\\D_0.pth' (iteration 0)"
    )
    assert diagnose(log).category == "none"


def test_gloo_read_timeout_names_the_peer_it_waited_on() -> None:
    # gloo/transport/tcp/pair.cc and buffer.cc: GLOO_ERROR_MSG("Read timeout ", peer.str()), the
    # peer that never sent; the address is ours
    found = diagnose("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:523] Read timeout [10.0.0.2]:22153")
    assert (found.symptom, found.category, found.retryable) == HUNG
    assert found.implicated.peers == ["10.0.0.2"]


def test_older_flight_recorder_notices_are_the_hang_not_its_culprit() -> None:
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp heartbeatMonitor of PyTorch 2.3/2.4 (the
    # texts as it formats them; sequence numbers ours): the rank that dumps first timed out first,
    # a victim, and the rank told by the store waited too.
    lines = [
        "[rank5]:[E ProcessGroupNCCL.cpp:1209] [PG 0 Rank 5] Received a dump signal from this local rank and"
        " will start to dump the debug info. Last enqueued NCCL work: 1234, last completed NCCL work: 1233.",
        "[rank1]:[E ProcessGroupNCCL.cpp:1285] [PG 0 Rank 1] Received a global timeout from another rank and"
        " will start to dump the debug info. Last enqueued NCCL work: 9, last completed NCCL work: 8.",
        "[rank7]:[E1019 01:04:03.357615073 ProcessGroupNCCL.cpp:1375] [PG 3 Rank 7] First PG on this rank that"
        " detected no heartbeat of its watchdog.",
    ]
    for line in lines:
        found = diagnose(line)
        assert (found.symptom, found.category, found.retryable) == HUNG, line
        assert found.implicated.ranks == [], line
