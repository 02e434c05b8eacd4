"""Whole excerpts of real logs from large-scale LLM training stacks (NeMo, Megatron-LM and its
forks, Megatron-Bridge, nanotron, DeepSpeed, and the launchers and schedulers around them): NCCL
watchdog timeouts, InfiniBand completion errors, rendezvous timeouts, node failures, checkpoint
writes that the shared filesystem refused, out-of-memory kills, configuration and data-index
errors, NaN/Inf gradients caught by Megatron; each with the thread it was posted in. And the
alarming but harmless lines the same stacks print (index maps built on first use, deprecation
warnings, a checkpoint monitor without its metric), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # NVIDIA-NeMo/Speech issue 9563: after 25 h, rank 1 BROADCAST watchdog timeout, then the heartbeat monitor finds the watchdog stuck and kills the process
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/9563",
        "Epoch 0:  78%|█████████████████████████████████████████████████████████████▎                 | 64809/83556 [25:06:58<7:15:54,  1.40s/it, v_num=18][rank1]:[E ProcessGroupNCCL.cpp:563] [Rank \n"
        "1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1363596, OpType=BROADCAST, NumelIn=5158880, NumelOut=5158880, Timeout(ms)=1800000) ran for 1800047 milliseconds before timin\n"
        "g out.\n"
        "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2\n"
        "[rank1]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 1] ProcessGroupNCCL preparing to dump debug info.\n"
        "[rank1]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] [PG 0 Rank 1] ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued collectives. This typi\n"
        "cally indicates a NCCL/CUDA API hang blocking the watchdog, and could be triggered by another thread holding the GIL insi",
        "hang",
        "unknown",
        True,
        "nccl-watchdog-timeout",
    ),
    # epfLLM/Megatron-LLM issue 77: AssertionError: tokenizer is not initialized in finetune get_batch (program/configuration error)
    (
        "https://github.com/epfLLM/Megatron-LLM/issues/77",
        "    output_tensor = forward_step(forward_step_func, data_iterator,\n"
        '  File "/home/user/Megatron-LLM/megatron/schedules.py", line 117, in forward_step\n'
        "    output_tensor, loss_func = forward_step_func(data_iterator, model)\n"
        '  File "/home/user/Megatron-LLM/finetune.py", line 223, in forward_step\n'
        "    batch = get_batch(data_iterator)\n"
        '  File "/home/user/Megatron-LLM/finetune.py", line 101, in get_batch\n'
        "    tokenizer = get_tokenizer()\n"
        '  File "/home/user/Megatron-LLM/megatron/global_vars.py", line 45, in get_tokenizer\n'
        "    _ensure_var_is_initialized(_GLOBAL_TOKENIZER, 'tokenizer')\n"
        '  File "/home/user/Megatron-LLM/megatron/global_vars.py", line 198, in _ensure_var_is_initialized\n'
        "    assert var is not None, '{} is not initialized.'.format(name)\n"
        "AssertionError: tokenizer is not initialized.",
        "crash",
        "application",
        False,
        "py-assertion-error",
    ),
    # deepspeedai/DeepSpeed issue 2931: NET/IB completion error 12 (transport retry exceeded) from peer 10.226.98.98 on node PHLRR4036; ncclSystemError takes the process down
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/2931",
        "PHLRR4036:24142:24263 [3] NCCL INFO comm 0x5562191160f0 rank 3 nranks 16 cudaDev 3 busId 13000 - Init COMPLETE\n"
        "PHLRR4036:24148:24269 [6] NCCL INFO comm 0x55cede6d3870 rank 6 nranks 16 cudaDev 6 busId 8e000 - Init COMPLETE\n"
        "PHLRR4036:24139:24253 [0] NCCL INFO comm 0x5634028d2ec0 rank 0 nranks 16 cudaDev 0 busId 5000 - Init COMPLETE\n"
        "\n"
        "PHLRR4036:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> with error 12, opcode 0, len 0, vendor err 129\n"
        "PHLRR4036:24141:24296 [2] NCCL INFO include/net.h:35 -> 2\n"
        "PHLRR4036:24141:24296 [2] NCCL INFO transport/net.cc:1034 -> 2\n"
        "PHLRR4036:24141:24296 [2] NCCL INFO proxy.cc:520 -> 2\n"
        "PHLRR4036:24141:24296 [2] NCCL INFO proxy.cc:684 -> 2 [Proxy Thread]\n"
        "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
        "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  NCCL error: unhandled system error, NCCL version 2.14.3\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "Last error:\n"
        "NET/IB : Got completion from peer 10.226.98.98<48598> with error 12, opcode 0",
        "crash",
        "network",
        True,
        "ib-completion-error",
    ),
    # NVIDIA-NeMo/Megatron-Bridge issue 771: NCCL WARN Cuda failure 2 'out of memory' on all eight ranks at the start of training
    (
        "https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/771",
        "> finished creating GPT datasets ...\n"
        "[after dataloaders are built] datetime: 2025-09-24 16:15:24\n"
        "done with setup ...\n"
        "(min, max) time across ranks (ms):\n"
        "    model-and-optimizer-setup ......................: (15102.03, 15102.30)\n"
        "    train/valid/test-data-iterators-setup ..........: (118.87, 152.37)\n"
        "Training ...\n"
        "Setting rerun_state_machine.current_iteration to 0...\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999605:3004403 [0] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:3000032:3004399 [4] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999784:3004405 [3] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999535:3004401 [7] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999880:3004393 [6] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"
        "\n"
        "[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999722:3004395 [1] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'",
        "crash",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # epfLLM/Megatron-LLM issue 63: UCX handler: Caught signal 7 (Bus error: nonexistent physical address) in several threads
    (
        "https://github.com/epfLLM/Megatron-LLM/issues/63",
        " -------------------- end of arguments ---------------------\n"
        "setting number of micro-batches to constant 1\n"
        "Setting consumed_train_samples to 0 and consumed_valid_samples to 0\n"
        "sending embeddings\n"
        "Detected CUDA files, patching ldflags\n"
        "Emitting ninja build file /mpt/Megatron-LLM/megatron/fused_kernels/build/build.ninja...\n"
        "[9c77a8dc6f05:3439 :0:3755] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "[9c77a8dc6f05:3439 :1:3786] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "[1695633523.972560] [9c77a8dc6f05:3439 :3]        spinlock.c:29   UCX  WARN  ucs_recursive_spinlock_destroy() failed: busy\n"
        "[9c77a8dc6f05:3439 :7:3780] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "[9c77a8dc6f05:3439 :3:3773] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "[1695633523.972560] [9c77a8dc6f05:3439 :2]        spinlock.c:29   UCX  WARN  ucs_recursive_spinlock_destroy() failed: busy\n"
        "[9c77a8dc6f05:3439 :2:3774] Caught signal 7 (Bus error: nonexistent physical address)",
        "crash",
        "unknown",
        True,
        "bus-error",
    ),
    # InternLM/xtuner issue 315: torchelastic root cause: rank 3 on ip-172-31-37-82 exited with code 1, no traceback
    (
        "https://github.com/InternLM/xtuner/issues/315",
        '  File "/data/envs/xtuner/lib/python3.9/site-packages/torch/distributed/run.py", line 797, in run\n'
        "    elastic_launch(\n"
        '  File "/data/envs/xtuner/lib/python3.9/site-packages/torch/distributed/launcher/api.py", line 134, in __call__\n'
        "    return launch_agent(self._config, self._entrypoint, list(args))\n"
        '  File "/data/envs/xtuner/lib/python3.9/site-packages/torch/distributed/launcher/api.py", line 264, in launch_agent\n'
        "    raise ChildFailedError(\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "/data/envs/xtuner/lib/python3.9/site-packages/xtuner/tools/train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Failures:\n"
        "  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-01-14_07:09:25\n"
        "  host      : ip-172-31-37-82.ec2.internal\n"
        "  rank      : 3 (local_rank: 3)\n"
        "  exitcode  : 1 (pid: 2353012)\n"
        "  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
        "============================================================",
        "crash",
        "unknown",
        True,
        "torchelastic-child-failed",
    ),
    # NVIDIA-BioNeMo/bionemo-recipes issue 784: AssertionError: num_layers should be divisible by pipeline_model_parallel_size (config error)
    (
        "https://github.com/NVIDIA-BioNeMo/bionemo-recipes/issues/784",
        ' 2: [rank2]:   File "/usr/local/lib/python3.12/dist-packages/lightning/pytorch/trainer/call.py", line 46, in _call_and_handle_interrupt\n'
        " 2: [rank2]:     return trainer.strategy.launcher.launch(trainer_fn, *args, trainer=trainer, **kwargs)\n"
        "15: [rank15]:                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '15: [rank15]:   File "/usr/local/lib/python3.12/dist-packages/megatron/core/transformer/transformer_block.py", line 201, in _get_block_submodules\n'
        "15: [rank15]:     num_layers = get_num_layers_to_build(config)\n"
        "15: [rank15]:                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '15: [rank15]:   File "/usr/local/lib/python3.12/dist-packages/megatron/core/transformer/transformer_block.py", line 110, in get_num_layers_to_build\n'
        "15: [rank15]:     num_layers % config.pipeline_model_parallel_size == 0\n"
        "15: [rank15]: AssertionError: num_layers should be divisible by pipeline_model_parallel_size\n"
        " 2: [rank2]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        ' 2: [rank2]:   File "/usr/local/lib/python3.12/dist-packages/lightning/pytorch/strategies/launchers/subprocess_script.py", line 105, in launch\n'
        " 2: [rank2]:     return function(*args, **kwargs)\n"
        " 2: [rank2]:            ^^^^^^^^^^^^^^^^^^^^^^^^^",
        "crash",
        "application",
        False,
        "py-assertion-error",
    ),
    # nvidia-cosmos/cosmos-rl issue 681: rendezvous TCPStore client timed out after 300 s connecting to 036c56dce41b:41331
    (
        "https://github.com/nvidia-cosmos/cosmos-rl/issues/681",
        '  File "/pfss/workspace/cosmos-rl/.venv/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1126, in _create_tcp_store_server\n'
        "    return dist.TCPStore(\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 300000ms while trying to connect to (036c56dce41b, 41331).\n"
        "[cosmos] 2026-05-14 05:28:06,261 - cosmos - ERROR - Process 1 failed with return code 1",
        "crash",
        "network",
        True,
        "c10d-store-connect-timeout",
    ),
    # nebius/soperator issue 854: salloc: error: Node failure on worker-1 (the scheduler reports a node failure)
    (
        "https://github.com/nebius/soperator/issues/854",
        "srun -l -N4 -n4 hostname | sort\n"
        "0: worker-2\n"
        "1: worker-5\n"
        "2: worker-1\n"
        "3: worker-3\n"
        "srun -l -N3 -n3 --exclude worker-1 hostname | sort\n"
        "0: worker-2\n"
        "1: worker-5\n"
        "2: worker-3\n"
        "salloc: error: Node failure on worker-1",
        "crash",
        "hardware",
        True,
        "srun-node-failure",
    ),
    # NVIDIA-NeMo/Speech issue 14751: Unexpected result inf: found Inf in local grad norm before the first step when resuming from a checkpoint
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/14751",
        "Unexpected result inf (message='found Inf in local grad norm for bucket #6 in backward pass before data-parallel communication collective')\n"
        'i.pretrain/0 [rank4]:   File "/opt/venv/lib/python3.12/site-packages/lightning/pytorch/loops/optimization/automatic.py", line 319, in _training_step\n'
        'i.pretrain/0 [rank4]:     training_step_output = call._call_strategy_hook(trainer, "training_step", *kwargs.values())\n'
        "i.pretrain/0 [rank4]:                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "crash",
        "application",
        False,
        "megatron-nan-grad",
    ),
    # h5py/h5py issue 2346: saving a checkpoint on a NAS mount: OSError errno 116 Stale file handle
    (
        "https://github.com/h5py/h5py/issues/2346",
        "Traceback (most recent call last):\n"
        '  File "/mnt/NAS/mypath/train.py", line 395, in <module>\n'
        "    model.save(save_path, \n"
        '  File "/home/user/.local/lib/python3.10/site-packages/keras/utils/traceback_utils.py", line 67, in error_handler\n'
        "    raise e.with_traceback(filtered_tb) from None\n"
        '  File "/home/user/.local/lib/python3.10/site-packages/h5py/_hl/files.py", line 562, in __init__\n'
        "    fid = make_fid(name, mode, userblock_size, fapl, fcpl, swmr=swmr)\n"
        '  File "/home/user/.local/lib/python3.10/site-packages/h5py/_hl/files.py", line 241, in make_fid\n'
        "    fid = h5f.create(name, h5f.ACC_TRUNC, fapl=fapl, fcpl=fcpl)\n"
        '  File "h5py/_objects.pyx", line 54, in h5py._objects.with_phil.wrapper\n'
        '  File "h5py/_objects.pyx", line 55, in h5py._objects.with_phil.wrapper\n'
        "OSError: [Errno 116] Unable to synchronously create file (unable to fstat file, errno = 116, error message = 'Stale file handle')",
        "crash",
        "system_software",
        True,
        "fs-stale-handle",
    ),
    # NVIDIA-NeMo/Speech issue 14348: RuntimeError on rank 2: unexpected result nan, found NaN in local grad norm
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/14348",
        "Error:\n"
        "i.pretrain/0 [default2]:[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1: Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')",
        "crash",
        "application",
        False,
        "megatron-unexpected-result",
    ),
    # NVIDIA/Megatron-LM issue 119: Dataset does not exist (bad data prefix), then AttributeError 'NoneType' has no attribute 'sizes'
    (
        "https://github.com/NVIDIA/Megatron-LM/issues/119",
        "Dataset does not exist: /data/openwebtext/subset-01\n"
        "Path should be a basename that both .idx and .bin can be appended to get full filenames.\n"
        " > finished creating indexed dataset in 0.000021 seconds\n"
        "Traceback (most recent call last):\n"
        '  File "/mega/Megatron-LM/pretrain_gpt.py", line 124, in <module>\n'
        "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step,\n"
        '  File "/mega/Megatron-LM/megatron/training.py", line 131, in pretrain\n'
        "    = build_train_valid_test_data_iterators(\n"
        '  File "/mega/Megatron-LM/megatron/training.py", line 815, in build_train_valid_test_data_iterators\n'
        "    train_ds, valid_ds, test_ds = build_train_valid_test_datasets_provider(\n"
        '  File "/mega/Megatron-LM/pretrain_gpt.py", line 109, in train_valid_test_datasets_provider\n'
        "    train_ds, valid_ds, test_ds = build_train_valid_test_datasets(\n"
        '  File "/mega/Megatron-LM/megatron/data/gpt_dataset.py", line 54, in build_train_valid_test_datasets\n'
        "    train_ds, valid_ds, test_ds = _build_train_valid_test_datasets(\n"
        '  File "/mega/Megatron-LM/megatron/data/gpt_dataset.py", line 86, in _build_train_valid_test_datasets\n'
        "    indexed_dataset = get_indexed_dataset_(data_prefix,\n"
        '  File "/mega/Megatron-LM/megatron/data/gpt_dataset.py", line 134, in get_indexed_dataset_\n'
        "    indexed_dataset.sizes.shape[0]))\n"
        "AttributeError: 'NoneType' object has no attribute 'sizes'",
        "crash",
        "application",
        False,
        "py-attribute-error",
    ),
    # THUDM/slime issue 326: Megatron async checkpoint writer: [Errno 5] Input/output error on the second save (shared filesystem)
    (
        "https://github.com/THUDM/slime/issues/326",
        "ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 encountered an error: [Errno 5] Input/output error",
        "crash",
        "system_software",
        True,
        "fs-io-error",
    ),
    # NVIDIA/Megatron-LM issue 1657: DataLoader worker killed by signal: Killed at the first step with 90K sequences (host memory)
    (
        "https://github.com/NVIDIA/Megatron-LM/issues/1657",
        "training ...\n"
        "Setting rerun_state_machine.current_iteration to 0...\n"
        "[before the start of training step] datetime: 2025-06-30 01:59:29 \n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1130, in _try_get_data\n'
        "[rank0]:     data = self._data_queue.get(timeout=timeout)\n"
        '[rank0]:   File "/usr/lib/python3.10/queue.py", line 180, in get\n'
        "[rank0]:     self.not_empty.wait(remaining)\n"
        '[rank0]:   File "/usr/lib/python3.10/threading.py", line 324, in wait\n'
        "[rank0]:     gotit = waiter.acquire(True, timeout)\n"
        '[rank0]:   File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler\n'
        "[rank0]:     _error_if_any_worker_fails()\n"
        "[rank0]: RuntimeError: DataLoader worker (pid 2637) is killed by signal: Killed. \n"
        "\n"
        "[rank0]: The above exception was the direct cause of the following exception:",
        "crash",
        "out_of_memory",
        False,
        "dataloader-killed",
    ),
    # NVIDIA/Megatron-LM issue 935: rank 1's watchdog terminates the process: _REDUCE_SCATTER_BASE timed out after 600 s; no root cause
    (
        "https://github.com/NVIDIA/Megatron-LM/issues/935",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x99 (0x7fe76ab98969 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n"
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1e1 (0x7fe705ea04e1 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x222 (0x7fe705ea81a2 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10f (0x7fe705ea9a0f in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #4: <unknown function> + 0xdc253 (0x7fe76a6b0253 in /usr/lib/x86_64-linux-gnu/libstdc++.so.6)\n"
        "frame #5: <unknown function> + 0x94ac3 (0x7fe7765d9ac3 in /usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "frame #6: clone + 0x44 (0x7fe77666aa04 in /usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\n"
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG 1 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, NumelOut=443687168, Timeout(ms)=600000) ra",
        "hang",
        "unknown",
        True,
        "nccl-watchdog-timeout",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_training_stack_failures(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == symptom, source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable), source


def test_terminate_gives_way_to_the_watchdog_timeout_in_its_what_line() -> None:
    # NVIDIA/Megatron-LM issue 935: the watchdog's frames, then libstdc++'s terminate report; the
    # what() line under it is the exception's message, a collective timeout: the job hung.
    found = diagnose(FAILURES[-1][1])
    assert [e.signature for e in found.evidence[:2]] == ["nccl-watchdog-timeout", "cpp-terminate"]


def test_terminate_without_a_message_stays_a_crash() -> None:
    # the same report with its what() line cut off says only that a C++ exception aborted it
    found = diagnose("terminate called after throwing an instance of 'c10::DistBackendError'")
    assert (found.symptom, found.evidence[0].signature) == ("crash", "cpp-terminate")


# (source, excerpt)
HEALTHY = [
    # NVIDIA/Megatron-LM pull 310: WARNING: could not find index map files, building them: normal first-run dataset setup
    (
        "https://github.com/NVIDIA/Megatron-LM/pull/310",
        "> WARNING: could not find index map files for data/wiki_text_document_train_0_indexmap_5145600ns_2048sl_1234s, building the indices on rank 0 ...\n"
        " > elasped time to build and save doc-idx mapping (seconds): 0.008020\n"
        "    using:\n"
        "     number of documents:       2662\n"
        "     number of epochs:          1\n"
        "     tokens_per_epoch:          109490076893\n"
        "     sequence length:           2048\n"
        "     total number of samples:   53461951\n"
        " > elapsed time to build and save sample-idx mapping (seconds): 1.838097\n"
        " > elapsed time to build and save shuffle-idx mapping (seconds): 4.836150",
    ),
    # NVIDIA-NeMo/Speech issue 369: warning that the trainer (optimizer) state was not restored; training went on
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/369",
        "2020-02-13 22:21:50,567 - INFO - Restoring checkpoint from folder /data/quartznet_checkpoints/ ...\n"
        "2020-02-13 22:21:50,727 - WARNING - For module trainer, no file matches  in /data/quartznet_checkpoints/\n"
        "2020-02-13 22:21:50,727 - WARNING - Trainer state wasn't restored",
    ),
    # huggingface/nanotron issue 390: nanotron iteration lines, steady throughput
    (
        "https://github.com/huggingface/nanotron/issues/390",
        "10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.25\n"
        "10/17/2025 16:32:07 [INFO|DP=0|PP=0|TP=0]: iteration: 327282 / 378950 | consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.35 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.22\n"
        "10/17/2025 16:32:19 [INFO|DP=0|PP=0|TP=0]: iteration: 327283 / 378950 | consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.51 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.21\n"
        "10/17/2025 16:32:30 [INFO|DP=0|PP=0|TP=0]: iteration: 327284 / 378950 | consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.36 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.18",
    ),
    # huggingface/nanotron pull 23: nanotron iteration lines near the end of a resumed run, memory fields
    (
        "https://github.com/huggingface/nanotron/pull/23",
        "01/17/2024 14:02:16 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | consumed_tokens: 634K | elapsed_time_per_iteration_ms: 272 | tokens_per_sec: 2.35K | tokens_per_sec_per_gpu: 294 | global_batch_size: 20 | lm_loss: 9.63 | lr: 1e-05 | model_tflops_per_gpu: 0.00744 | hardware_tflops_per_gpu: 0.0075 | grad_norm: 1.11 | cuda_memory_allocated: 90.9M | cuda_max_memory_reserved: 570M | hd_total_memory_tb: 312G | hd_used_memory_tb: 61.8G | hd_free_memory_tb: 250G\n"
        "01/17/2024 14:02:16 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 992 / 1000 | consumed_tokens: 635K | elapsed_time_per_iteration_ms: 268 | tokens_per_sec: 2.39K | tokens_per_sec_per_gpu: 298 | global_batch_size: 20 | lm_loss: 9.69 | lr: 1e-05 | model_tflops_per_gpu: 0.00755 | hardware_tflops_per_gpu: 0.00761 | grad_norm: 1.1\n"
        "01/17/2024 14:02:16 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 993 / 1000 | consumed_tokens: 636K | elapsed_time_per_iteration_ms: 269 | tokens_per_sec: 2.38K | tokens_per_sec_per_gpu: 298 | global_batch_size: 20 | lm_loss: 9.67 | lr: 1e-05 | model_tflops_per_gpu: 0.00754 | hardware_tflops_per_gpu: 0.00759 | grad_norm: 1.07",
    ),
    # flagos-ai/TransformerEngine-FL pull 61: Megatron deprecation warnings for the legacy tokenizer and argument overrides at startup
    (
        "https://github.com/flagos-ai/TransformerEngine-FL/pull/61",
        "WARNING:megatron.core.datasets.megatron_tokenizer:You\u2019re using the legacy tokenizer system, which is deprecated and will be removed in a future release. Please migrate to the new tokenizer system (`megatron.core.tokenizers.MegatronTokenizer`).\n"
        "WARNING:megatron.core.datasets.megatron_tokenizer:You\u2019re using the legacy tokenizer system, which is deprecated and will be removed in a future release. Please migrate to the new tokenizer system (`megatron.core.tokenizers.MegatronTokenizer`).\n"
        "WARNING:megatron.core.datasets.megatron_tokenizer:You\u2019re using the legacy tokenizer system, which is deprecated and will be removed in a future release. Please migrate to the new tokenizer system (`megatron.core.tokenizers.MegatronTokenizer`).\n"
        "WARNING:megatron.core.datasets.megatron_tokenizer:You\u2019re using the legacy tokenizer system, which is deprecated and will be removed in a future release. Please migrate to the new tokenizer system (`megatron.core.tokenizers.MegatronTokenizer`).\n"
        "using world size: 8, data-parallel size: 8, context-parallel size: 1, hierarchical context-parallel sizes: None, tensor-model-parallel size: 1, pipeline-model-parallel size: 1\n"
        "WARNING: overriding default arguments for tokenizer_type:GPT2BPETokenizer                        with tokenizer_type:HuggingFaceTokenizer\n"
        "Number of virtual stages per pipeline stage: None",
    ),
    # NVIDIA-NeMo/Speech issue 4522: NeMo W: ModelCheckpoint cannot find val_loss in the metrics (a warning)
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/4522",
        "[NeMo W 2022-07-07 21:18:38 nemo_logging:349] /opt/conda/lib/python3.8/site-packages/pytorch_lightning/callbacks/model_checkpoint.py:378: UserWarning: `ModelCheckpoint(monitor='val_loss')` could not find the monitored key in the returned metrics: ['epoch', 'step']. HINT: Did you call `log('val_loss', value)` in the `LightningModule`?\n"
        "      warning_cache.warn(m)",
    ),
    # NVIDIA/Megatron-LM issue 1134: FutureWarnings from Transformer Engine and torch.distributed private API
    (
        "https://github.com/NVIDIA/Megatron-LM/issues/1134",
        "/scratch/user/miniconda3/envs/megatron/lib/python3.10/site-packages/transformer_engine/pytorch/jit.py:111: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n"
        "  with torch.cuda.amp.autocast(enabled=False):\n"
        "/scratch/user/miniconda3/envs/megatron/lib/python3.10/site-packages/transformer_engine/pytorch/jit.py:162: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n"
        "  with torch.cuda.amp.autocast(enabled=False):\n"
        "/scratch/user/miniconda3/envs/megatron/lib/python3.10/site-packages/transformer_engine/pytorch/jit.py:111: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n"
        "  with torch.cuda.amp.autocast(enabled=False):\n"
        "/scratch/user/test/Megatron-LM.bak/megatron/core/tensor_parallel/layers.py:431: FutureWarning: `torch.distributed._reduce_scatter_base` is a private function and will be deprecated. Please use `torch.distributed.reduce_scatter_tensor` instead.\n"
        "  handle = torch.distributed._reduce_scatter_base(",
    ),
    # NVIDIA-NeMo/Speech issue 10675: NeMo 2 iteration lines, a ModelCheckpoint warning and 'val_loss was not in top 10'
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/10675",
        "Training epoch 0, iteration 196/3999 | lr: 2.954e-05 | consumed_samples: 4728 | global_batch_size: 24 | global_step: 196 | reduced_train_loss: 10.84 | train_step_timing in s: 0.9765\n"
        "Training epoch 0, iteration 197/3999 | lr: 2.969e-05 | consumed_samples: 4752 | global_batch_size: 24 | global_step: 197 | reduced_train_loss: 10.84 | train_step_timing in s: 0.9826\n"
        "Training epoch 0, iteration 198/3999 | lr: 2.984e-05 | consumed_samples: 4776 | global_batch_size: 24 | global_step: 198 | reduced_train_loss: 10.84 | train_step_timing in s: 0.9742\n"
        "Training epoch 0, iteration 199/3999 | lr: 2.999e-05 | consumed_samples: 4800 | global_batch_size: 24 | global_step: 199 | reduced_train_loss: 10.85 | train_step_timing in s: 1.085\n"
        "[NeMo W 2024-09-29 08:11:31 nemo_logging:349] /home/usr/.local/lib/python3.10/site-packages/pytorch_lightning/callbacks/model_checkpoint.py:384: `ModelCheckpoint(monitor='val_loss')` could not find the monitored key in the returned metrics: ['lr', 'consumed_samples', 'global_batch_size', 'global_step', 'step', 'reduced_train_loss', 'grad_norm', 'train_step_timing in s', 'epoch']. HINT: Did you call `log('val_loss', value)` in the `LightningModule`?\n"
        "    \n"
        "Epoch 0, global step 199: 'val_loss' was not in top 10",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY)
def test_training_stack_noise_stays_healthy(source: str, text: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.evidence) == ("none", "none", []), source
