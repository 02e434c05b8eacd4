"""Hangs a static log shows mid-run, as users posted them: gdb backtraces of a stuck rank whose
frames stay inside an NCCL collective call (the enqueue that never returned) or inside
`Tensor.item()` on a CUDA tensor (the copy back to the host waits for the GPU), and MXNet's (and
GluonTS's) DataLoader giving up on its workers; tracebacks that processes without a rank prefix
cut off together after watchdog timeouts. Each excerpt is quoted from the public thread named
above it. The alarming but healthy logs of the same family stay healthy: a slow first iteration that
ends, a progress bar or user prints that simply stop, torchelastic's exit-barrier error after its own
workers finished, PyTorch's warning at exit."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

HANG = ("hang", "unknown", True)


def _read(text: str) -> tuple[str, str, bool | None]:
    found = diagnose(text)
    return found.symptom, found.category, found.retryable


# (source, excerpt): gdb dumps that end the log inside a wait point the table names.
DUMPS = [
    # horovod/horovod#1799: TensorFlow + Horovod stuck; NCCL 2.4's enqueue (its CPU barrier, then the
    # kernel launch) under ncclAllReduce never returns.
    (
        "https://github.com/horovod/horovod/issues/1799",
        "(gdb) thread apply all bt\n"
        "Thread 307 (Thread 0x7fb67c314700 (LWP 55522)):\n"
        "#0  0x00007fb6932cbc81 in ?? () from /lib64/libcuda.so.1\n"
        "#1  0x00007fb6932cbd85 in ?? () from /lib64/libcuda.so.1\n"
        "#10 0x00007fb6932b0e9e in ?? () from /lib64/libcuda.so.1\n"
        "#11 0x00007fb693438a4e in cuLaunchKernel () from /lib64/libcuda.so.1\n"
        "#12 0x00007fb6d246723d in ?? () from /usr/local/cuda/lib64/libcudart.so.10.0\n"
        "#14 0x00007fb6d249b3c5 in cudaLaunchKernel () from /usr/local/cuda/lib64/libcudart.so.10.0\n"
        "#15 0x00007fb60cb15695 in ncclBarrierEnqueueWait (comm=0x7fb60a43a1a0) at enqueue.cc:195\n"
        "#16 0x00007fb60cb15b0f in ncclEnqueueCheck (info=info@entry=0x7fb67c313420) at enqueue.cc:460",
    ),
    # pytorch/pytorch#95944: the one rank not in cudaDeviceSynchronize is reading a CUDA scalar back.
    (
        "https://github.com/pytorch/pytorch/issues/95944",
        "#0  0x000014cd955ebdbc in ?? () from /lib64/libcuda.so.1\n"
        "#1  0x000014cd953608b6 in ?? () from /lib64/libcuda.so.1\n"
        "#11 0x000014cd954fd9e1 in ?? () from /lib64/libcuda.so.1\n"
        "#12 0x000014cdd8a4d4f9 in ?? () from /g/data/z00/user/installation/cuda/11.3.0/lib64/libcudart.so.11.0\n"
        "#14 0x000014cdd8a6cf36 in cudaMemcpyAsync () from /g/data/z00/user/installation/cuda/11.3.0/lib64/libcudart.so.11.0\n"
        "#15 0x000014cdb53ae194 in at::native::_local_scalar_dense_cuda(at::Tensor const&)::{lambda()#1}::operator()()"
        " const [clone .isra.100] ()",
    ),
]


@pytest.mark.parametrize(("source", "text"), DUMPS)
def test_gdb_dump_stuck_in_nccl_or_a_cuda_read_back_is_a_hang(source: str, text: str) -> None:
    assert _read(text) == HANG, source


def test_the_same_dump_with_progress_after_it_was_not_stuck() -> None:
    # horovod/horovod#1799's frames, then Horovod/MXNet epoch lines (horovod/horovod#2935): the run
    # got past whatever the dump caught.
    text = (
        DUMPS[0][1] + "\n"
        "Mon May 24 07:12:58 2021[1,0]<stderr>:INFO:root:[Epoch 4 Batch 400] Training: accuracy=0.995273\n"
        "Mon May 24 07:12:59 2021[1,0]<stderr>:INFO:root:Epoch[4]\tSpeed=34617.01 samples/s\tTime cost=1.730479\n"
        "Mon May 24 07:12:59 2021[1,0]<stderr>:INFO:root:Epoch[4]\tTrain: accuracy=0.995259\tValidation: accuracy=0.990084"
    )
    assert diagnose(text).symptom == "none"


def test_an_nccl_kernel_or_a_library_frame_is_no_wait_point() -> None:
    # k2-fsa/snowfall#71: cuda-gdb's kernel list names an NCCL kernel, which is no call frame.
    text = (
        "(cuda-gdb) info cuda kernels\n"
        "  Kernel Parent Dev Grid Status   SMs Mask GridDim BlockDim Invocation\n"
        "*      0      -   0 52162520 Active 0x00000001 (1,1,1) (64,1,1) ncclReduceRingLLKernel_sum_f64()"
    )
    assert diagnose(text).symptom == "none"


def test_mxnet_style_dataloader_worker_timeout_is_a_hang() -> None:
    # awslabs/gluonts#689: GluonTS's copy of MXNet Gluon's multi-worker loader gives up after 120 s.
    text = (
        "INFO:gluonts.trainer:Epoch[58] Evaluation metric 'epoch_loss'=8.910754\n"
        "Worker timed out after 120 seconds. This might be caused by \n"
        "\n"
        "                - Slow transform. Please increase timeout to allow slower data loading in each worker.\n"
        "                - Insufficient shared_memory if `timeout` is large enough.\n"
        "                Please consider reduce `num_workers` or increase shared_memory in system.\n"
        "                \n"
        "#0150it [00:00, ?it/s]#0150it [02:03, ?it/s, validation_avg_epoch_loss=8.88]\n"
        "Traceback (most recent call last):\n"
        '  File "sm_entry_point.py", line 56, in <module>\n'
        "    train_and_eval_model.main(parser.parse_args())\n"
        '  File "/opt/ml/code/gluonts/trainer/_base.py", line 305, in __call__\n'
        "    epoch_no, validation_iter, is_training=False"
    )
    assert verdict(text) == ("mxnet-dataloader-worker-timeout", "unknown", True)
    assert diagnose(text).symptom == "hang"


def test_interleaved_cut_tracebacks_after_watchdog_timeouts_are_that_hang() -> None:
    # open-mmlab/mmdetection#11096: during evaluation the other ranks' BROADCAST times out; two
    # processes without a rank prefix then start their tracebacks at once and the log ends. The line
    # above the first header says what they were (the second header's line above is a frame).
    text = (
        "10/26 11:27:48 - mmengine - INFO - Evaluating bbox...\n"
        "Evaluate annotation type *bbox*\n"
        "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=987156,"
        " OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800777 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=987156,"
        " OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800794 milliseconds before timing out.\n"
        "Traceback (most recent call last):\n"
        '  File "/root/user/GroundingDINO/mmdetection_1024/tools/train.py", line 121, in <module>\n'
        "Traceback (most recent call last):\n"
        '  File "/root/user/GroundingDINO/mmdetection_1024/tools/train.py", line 121, in <module>'
    )
    assert verdict(text) == ("nccl-watchdog-timeout", "unknown", True)
    assert diagnose(text).symptom == "hang"


def test_one_cut_traceback_under_an_unrelated_earlier_error_stays_unexplained() -> None:
    # The same excerpt's second header alone, far below the timeouts: no line right above it.
    text = (
        "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=987156,"
        " OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800794 milliseconds before timing out.\n"
        "10/26 11:27:48 - mmengine - INFO - Evaluating bbox...\n"
        "Loading and preparing results...\n"
        "DONE (t=27.37s)\n"
        "Traceback (most recent call last):\n"
        '  File "/root/user/GroundingDINO/mmdetection_1024/tools/train.py", line 121, in <module>'
    )
    assert verdict(text)[0] == "uncaught-exception"


HEALTHY = [
    # NVIDIA/Megatron-LM#1570: the first iteration takes 21.8 s, the next ones 3.3 s.
    " [2025-05-09 06:11:17] iteration        1/      10 | consumed samples:           32 | elapsed time per iteration"
    " (ms): 21847.9 | throughput per GPU (TFLOP/s/GPU): 4.5 | learning rate: 3.333333E-05 | global batch size:    32"
    " | lm loss: 1.186396E+01 | loss scale: 1.0 | grad norm: 6.321 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |\n"
    " [2025-05-09 06:11:20] iteration        2/      10 | consumed samples:           64 | elapsed time per iteration"
    " (ms): 3286.6 | throughput per GPU (TFLOP/s/GPU): 30.2 | learning rate: 6.666667E-05 | global batch size:    32"
    " | lm loss: 1.186432E+01 | loss scale: 1.0 | grad norm: 6.350 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |",
    # pytorch/pytorch#69520: torchelastic logs its exit barrier's failure after its own workers finished
    # and returns their result.
    "2023-03-09T10:53:23.670-05:00\tERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier."
    " Elapsed: 315.7792458534241 seconds\n"
    "2023-03-09T10:53:23.670-05:00\tTraceback (most recent call last):\n"
    '2023-03-09T10:53:23.670-05:00\tFile "/app/pip_torch/torch/distributed/elastic/agent/server/api.py", line 906,'
    " in _exit_barrier\n"
    "2023-03-09T10:53:23.670-05:00\tstore_util.barrier(\n"
    '2023-03-09T10:53:23.670-05:00\tFile "/app/pip_torch/torch/distributed/elastic/utils/store.py", line 78, in barrier',
    # deepspeedai/DeepSpeed#942: a progress bar that simply ends.
    "96%|█████████▌| 61438/64146 [4:33:58<06:02, 7.46it/s]\n96%|█████████▌| 61439/64146 [4:33:58<09:36, 4.69it/s]",
    # deepspeedai/DeepSpeed#7044: the user's own prints of each device passing the backward.
    "pass backward on device 7 step 33417\npass backward on device 1 step 33417\npass backward on device 5 step 33417",
    # Lightning-AI/pytorch-lightning#19931: PyTorch 2.4's warning at a normal exit.
    "[rank0]:[W602 08:42:46.129824551 ProcessGroupNCCL.cpp:1126] Warning: WARNING: process group has NOT been"
    " destroyed before we destruct ProcessGroupNCCL. ",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_alarming_but_healthy_logs_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
