"""Hangs a log shows without an error line: a stack dump of the stuck process (py-spy,
faulthandler, gdb) whose frames wait in a collective, a barrier, a store or a GPU
synchronisation, and a user's Ctrl-C of a process waiting there. Real lines, with their sources;
healthy logs with dumps or interrupts elsewhere stay what they were."""

from __future__ import annotations

from recovery.activities.signatures.diagnosis import LogDiagnoser
from tests.unit.real_lines import diagnose

SITE = "/usr/local/lib/python3.10/dist-packages"
C10D = f"{SITE}/torch/distributed/distributed_c10d.py"
HUNG = ("hang", "unknown", True)  # stuck where the frames wait; the cause is not in the log


def _read(text: str) -> tuple[str, str, bool | None]:
    found = diagnose(text)
    return found.symptom, found.category, found.retryable


def _frame(path: str, line: int, function: str, source: str) -> str:
    return f'  File "{path}", line {line}, in {function}\n    {source}\n'


def _interrupt(frames: str) -> str:
    return (
        "^CTraceback (most recent call last):\n"
        + _frame("train.py", 300, "<module>", "main()")
        + frames
        + "KeyboardInterrupt"
    )


# --- stack dumps at the log's end --------------------------------------------------------------


def test_py_spy_dump_of_a_rank_in_all_gather_is_a_hang() -> None:
    # huggingface/accelerate#3104 (py-spy dump of a randomly hanging DeepSpeed run)
    log = (
        'Thread 42 (idle): "MainThread"\n'
        "    backward (torch/autograd/__init__.py:266)\n"
        "    backward (deepspeed/runtime/zero/stage3.py:2213)\n"
        "    backward (accelerate/accelerator.py:2126)\n"
        'Thread 928 (idle): "Thread-1"\n'
        "    wait (threading.py:324)\n"
        "    run (tqdm/_monitor.py:60)\n"
        "Thread 4079 (active)\n"
        "    all_gather_into_tensor (torch/distributed/distributed_c10d.py:2709)\n"
        "    wrapper (torch/distributed/c10d_logger.py:72)\n"
        "    all_gather_into_tensor (deepspeed/comm/torch.py:219)\n"
    )
    assert _read(log) == HUNG


def test_py_spy_dump_with_its_process_header_in_all_reduce() -> None:
    # rwth-i6/returnn#1484 (`py-spy dump -p` of the one rank still running)
    log = (
        "Process 6473: /work/py-envs/py3.11-torch2.1/bin/python3.11 -u returnn/rnn.py config\n"
        "Python v3.11.2 (/usr/bin/python3.11)\n\n"
        'Thread 6473 (idle): "MainThread"\n'
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
        "    wrapper (torch/distributed/c10d_logger.py:47)\n"
        "    _has_data (returnn/torch/engine.py:390)\n"
    )
    assert _read(log) == HUNG


def test_py_spy_dump_in_cuda_synchronize() -> None:
    # modelscope/ms-swift#6312 (Megatron SFT hung after thousands of steps)
    log = (
        "Process 14310: /usr/local/bin/python -u swift/cli/_megatron/sft.py\n"
        'Thread 14310 (active): "MainThread"\n'
        "    synchronize (torch/cuda/__init__.py:985)\n"
        "    forward_backward_pipelining_without_interleaving (megatron/core/pipeline_parallel/schedules.py:1875)\n"
        "    train_step (megatron/training/training.py:1230)\n"
    )
    assert _read(log) == HUNG


def test_faulthandler_dump_without_a_timeout_header() -> None:
    # pytorch/pytorch#54818 (the dump of a timed-out test process, stuck in barrier)
    log = (
        "Process 3 timed out with traceback:\n"
        "Current thread 0x00007ff3363ff700 (most recent call first):\n"
        '  File "torch/testing/_internal/common_distributed.py", line 373 in _event_listener\n'
        '  File "threading.py", line 870 in run\n\n'
        "Thread 0x00007ff406132180 (most recent call first):\n"
        '  File "torch/distributed/distributed_c10d.py", line 2477 in barrier\n'
        '  File "torch/testing/_internal/distributed/rpc/rpc_test.py", line 838 in test_reinit\n'
    )
    assert _read(log) == HUNG


def test_gdb_backtrace_in_cuda_stream_synchronize() -> None:
    # NVIDIA/nccl#901 (FasterTransformer all-reduce on 4 GPUs hangs; gdb thread apply all bt)
    log = (
        "Thread 1 (Thread 0x7fd4cb6ee000 (LWP 500838)):\n"
        "#0  0x00007fd4ca0afb41 in ?? () from /lib/x86_64-linux-gnu/libcuda.so\n"
        "#4  0x00007fd4dbc14c90 in ?? () from /usr/local/cuda-11.6/lib64/libcudart.so.11.0\n"
        "#5  0x00007fd4dbc6ba38 in cudaStreamSynchronize () from /usr/local/cuda-11.6/lib64/libcudart.so.11.0\n"
        "#6  0x00005636d9e7ed18 in fastertransformer::GlmDecoder<__half>::forward() ()\n"
    )
    assert _read(log) == HUNG


def test_gdb_backtrace_in_c10d_work_wait() -> None:
    # c10d ProcessGroupNCCL.cpp WorkNCCL::wait under pthread_cond_wait (gdb's frame format as in
    # pytorch/pytorch#76760)
    log = (
        "Thread 1 (Thread 0x7f9b6fe93600 (LWP 47240)):\n"
        "#0  0x00007f9b6f12ad2d in pthread_cond_wait@@GLIBC_2.3.2 () from /lib/x86_64-linux-gnu/libpthread.so.0\n"
        "#2  0x00007f9b6202463e in c10d::ProcessGroupNCCL::WorkNCCL::wait(std::chrono::duration<long,"
        " std::ratio<1l, 1000l> >) () from /usr/local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so\n"
    )
    assert _read(log) == HUNG


# --- Ctrl-C of a process stuck in a wait ---------------------------------------------------------


def test_interrupt_in_barrier_is_a_hang() -> None:
    # pytorch/pytorch#54059 (torch.distributed.barrier() makes the whole code hang; ^C)
    log = _interrupt(_frame("train.py", 120, "main", "dist.barrier()") + _frame(C10D, 3446, "barrier", "work.wait()"))
    assert _read(log) == HUNG


def test_interrupt_in_ddp_buffer_broadcast_on_windows() -> None:
    # ultralytics/ultralytics#1662 (training stopped after 2 epochs; ^C in DDP's _sync_buffers)
    site = r"C:\Users\Administrator\anaconda3\envs\pytorch_wf\lib\site-packages"
    log = _interrupt(
        _frame(site + r"\torch\nn\parallel\distributed.py", 1034, "forward", "self._sync_buffers()")
        + _frame(site + r"\torch\nn\parallel\distributed.py", 1621, "_sync_buffers", "self._sync_module_buffers(0)")
    )
    assert _read(log) == HUNG


def test_interrupt_of_the_agent_waiting_for_nodes() -> None:
    # pytorch/pytorch#63802 (^C of torchrun while it waits for other nodes in the rendezvous)
    rdzv = f"{SITE}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py"
    log = _interrupt(
        _frame(rdzv, 1030, "next_rendezvous", "self._op_executor.run(join_op, deadline)")
        + _frame(rdzv, 630, "run", "time.sleep(action_delay)")
    )
    assert _read(log) == HUNG


def test_the_agents_interrupt_notice_gives_way_to_the_workers_wait() -> None:
    # huggingface/lerobot#3818 (the agent's ^C line), then a worker's interrupt in barrier
    worker = "Traceback (most recent call last):\n" + _frame("train.py", 50, "<module>", "dist.barrier()")
    worker += _frame(C10D, 3446, "barrier", "work.wait()") + "KeyboardInterrupt"
    log = (
        "^CW0616 16:14:04.056000 3791882 site-packages/torch/distributed/elastic/agent/server/api.py:739]"
        " Received 2 death signal, shutting down workers\n"
        + "\n".join("[rank0]: " + line for line in worker.split("\n"))
    )
    assert _read(log) == HUNG


def test_interrupt_elsewhere_stays_an_interrupt() -> None:
    # k2-fsa/icefall#1084 (^C of mp.spawn's parent waiting for its children: not a collective)
    spawn = _frame(f"{SITE}/torch/multiprocessing/spawn.py", 99, "join", "ready = multiprocessing.connection.wait(")
    spawn += _frame("/usr/lib/python3.8/selectors.py", 415, "select", "fd_event_list = self._selector.poll(timeout)")
    assert _read(_interrupt(spawn))[0] == "crash"
    # GuHuangAI/ADM-Public#6 (^C in the DataLoader's queue get)
    loader = _frame(f"{SITE}/torch/utils/data/dataloader.py", 1132, "_try_get_data", "data = self._data_queue.get()")
    assert _read(_interrupt(loader))[0] == "crash"


# --- healthy logs stay healthy --------------------------------------------------------------------


def test_dump_followed_by_progress_is_healthy() -> None:
    # a periodic py-spy dumper (radixark/miles#1461) caught a rank in all_reduce; training went on
    log = (
        'Thread 77 (idle): "MainThread"\n'
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
        "    step (train.py:90)\n" + "".join(f"Epoch 1 | step {100 + i} | loss 0.5{i}\n" for i in range(12))
    )
    assert _read(log)[0] == "none"


def test_dump_of_a_computing_process_is_healthy() -> None:
    # py-spy's format (src/dump.rs) on a process profiled mid-step: no frame waits for a peer
    log = (
        'Thread 5120 (active): "MainThread"\n'
        "    forward (torch/nn/modules/linear.py:116)\n"
        "    forward (model.py:88)\n"
        'Thread 5300 (idle): "Thread-2"\n'
        "    wait (threading.py:320)\n"
        "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:49)\n"
    )
    assert _read(log)[0] == "none"


def test_dump_printed_on_purpose_at_exit_is_healthy() -> None:
    # CPython faulthandler.dump_traceback() called by the program as it finishes
    log = (
        "Training finished.\n"
        "Current thread 0x00007f2c2b5ff740 (most recent call first):\n"
        '  File "/work/train.py", line 410 in _on_exit\n'
        '  File "/work/train.py", line 430 in <module>\n'
    )
    assert _read(log)[0] == "none"


def test_a_caught_error_from_barrier_then_progress_is_healthy() -> None:
    # a traceback's frame in barrier is not a dump: the exception passed through and was logged
    log = (
        "Traceback (most recent call last):\n"
        + _frame(C10D, 3446, "barrier", "work.wait()")
        + "torch.distributed.DistBackendError: NCCL communicator was aborted\n"
        + "".join(f"Epoch 1 step {i} loss 0.{60 - i}\n" for i in range(1, 12))
    )
    assert _read(log)[0] == "none"


# --- NCCL's communicator init that never completed ------------------------------------------------

# NCCL src/init.c at NCCL_DEBUG=INFO (2.19+), as a public multi-node log prints it
NCCL = "[2026-04-28 14:14:42] worker-0:2342:3742 [{r}] NCCL INFO "


def _init(rank: int, ranks: int, end: str) -> str:
    return (
        NCCL.format(r=rank) + f"ncclCommInitRank comm 0x7fd97aa3efa{rank} rank {rank} nranks {ranks} cudaDev {rank}"
        f" nvmlDev {rank} busId 69020 commId 0x43cd2ca05a3d557 - {end}\n"
    )


def test_a_log_that_ends_inside_nccl_init_is_a_hang() -> None:
    log = "".join(_init(r, 16, "Init START") for r in range(4))
    log += "".join(NCCL.format(r=r) + "Setting affinity for GPU 4 to ffffffff\n" for r in range(4))
    log += NCCL.format(r=0) + "comm 0x7fd97aa3efa0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
    assert _read(log) == HUNG


def test_a_completed_nccl_init_is_healthy() -> None:
    log = "".join(_init(r, 2, "Init START") for r in range(2))
    log += "".join(_init(r, 2, "localSize 2 used 1234 bytes on core 1 - Init COMPLETE") for r in range(2))
    assert _read(log)[0] == "none"


def _streamed(log: str, piece: int) -> str:
    diagnoser = LogDiagnoser(whole=True)
    data = log.encode()
    for i in range(0, len(data), piece):
        diagnoser.feed(data[i : i + piece])
    diagnoser.finish()
    return diagnoser.diagnosis().symptom


def test_nccl_init_is_read_the_same_in_any_pieces_after_chatter_nobody_awaited() -> None:
    # NCCL's INFO lines and earlier communicators' Init COMPLETE before any init is open are not
    # read at all (scanner.Gate); from the Init START line on they are, in whatever pieces the log
    # comes: completed, healthy; cut off inside the init, hung.
    chatter = NCCL.format(r=0) + "Setting affinity for GPU 4 to ffffffff\n"
    before = (chatter + _init(0, 2, "localSize 2 used 1234 bytes on core 1 - Init COMPLETE")) * 200
    opened = "".join(_init(r, 2, "Init START") for r in range(2)) + chatter * 3
    completed = "".join(_init(r, 2, "localSize 2 used 1234 bytes on core 1 - Init COMPLETE") for r in range(2))
    for piece in (7, 4096, 1 << 20):
        assert _streamed(before + opened + completed, piece) == "none", piece
        assert _streamed(before + opened, piece) == "hang", piece
