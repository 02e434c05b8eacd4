"""Whole excerpts of real logs from training stacks other than PyTorch on NVIDIA GPUs: Huawei
Ascend's runtime reporting a failed call in its own words (MindSpore and torch_npu jobs), Apple
MLX's Metal and ring backends, and a Dask cluster whose task failed; each with where it was
printed. And the alarming but harmless lines the same stacks print while training goes on (a
torch_npu warning that carries a runtime code, Paddle's sampler notice, MLX and MindSpore progress
lines), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # Ascend/pytorch issue 43: the runtime's call report and its reason, both "task timeout"
    # (107020); torch_npu only warned with the same code and went on.
    (
        "https://github.com/Ascend/pytorch/issues/43",
        "worker-1: EH9999: 2024-07-03-11:28:40.450.757  wait for compute device to finish failed, runtime result = 107020.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]\n"
        "worker-1:         TraceBack (most recent call last):\n"
        "worker-1:  (function npuSynchronizeDevice)\n"
        "worker-1: [W NPUStream.cpp:365] Warning: NPU warning, error code is 107020[Error]: .\n"
        "worker-1: EH9999: Inner Error!\n"
        "worker-1:         rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
        "hang",
        "unknown",
        True,
        "ascend-rt-task-timeout",
    ),
    # candle-org/MindAct (mindnlp) issue 1752: a MindSpore kernel launch fails on an AI CPU
    # exception; no torch_npu line, only the runtime's.
    (
        "https://github.com/candle-org/MindAct/issues/1752",
        "Launch kernel failed: Bprop/gradDense/Reshape-op278\n"
        "\n"
        "----------------------------------------------------\n"
        "- Ascend Error Message:\n"
        "----------------------------------------------------\n"
        "E39999: Inner Error!\n"
        "E39999: 2024-10-20-22:34:40.965.193  The error from device(chipId:0, dieId:0), serial number is 3, an exception occurred during AICPU execution, stream_id:2, task_id:19016, errcode:21008, msg:inner error.[FUNC:ProcessStarsAicpuErrorInfo][FILE:device_error_proc.cc][LINE:1232][THREAD:123358]\n"
        "        TraceBack (most recent call last):\n"
        "        Kernel task happen error, retCode=0x2a, [aicpu exception].[FUNC:PreCheckTaskErr][FILE:task_info.cc][LINE:1776][THREAD:123358]\n"
        "        rtMemcpyAsync execute failed, reason=[aicpu exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53][THREAD:123358]",
        "crash",
        "unknown",
        True,
        "ascend-rt-aicpu-exception",
    ),
    # ml-explore/mlx-examples issue 1296: MLX distributed over Open MPI; the Metal library lacks
    # a kernel (the two Macs run different macOS versions).
    (
        "https://github.com/ml-explore/mlx-examples/issues/1296",
        "[node01.local:62282] btl:tcp: my listening v6 socket port is 1024\n"
        "[node01.local:62282] btl: tcp: exchange: 4 4 IPv4 10.0.2.85\n"
        "Terminating due to uncaught exception: [metal::Device] Unable to load kernel input_coherent",
        "crash",
        "system_software",
        True,
        "mlx-metal-kernel-load-failed",
    ),
    # ml-explore/mlx issue 1231: four processes under mpirun; a command buffer fails (the GPU
    # watchdog ended it, the thread says).
    (
        "https://github.com/ml-explore/mlx/issues/1231",
        "$ mpirun -n 4 -- python <script>\n"
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Internal Error (0000000e:Internal Error)",
        "crash",
        "unknown",
        True,
        "mlx-metal-command-buffer-failed",
    ),
    # ml-explore/mlx issue 4276: the ring backend gives up on its peer socket.
    (
        "https://github.com/ml-explore/mlx/issues/4276",
        "[ring] Receiving from socket 51 failed with errno 14\n"
        "[ring] Receiving from socket 51 failed with errno 14\n"
        "... (x10 within milliseconds)\n"
        "[ring] Too many send/recv errors. Aborting...",
        "crash",
        "network",
        True,
        "mlx-ring-peer-lost",
    ),
    # dmlc/xgboost issue 11804: xgboost.dask trains, the scheduler loses both workers, the
    # nannies restart them, and a task then fails.
    (
        "https://github.com/dmlc/xgboost/issues/11804",
        "[21:05:23] [9]  dt-rmse:34617.87699\n"
        "[21:05:24] [10] dt-rmse:34584.33838\n"
        "2025-11-11 21:05:26,575 - distributed.scheduler - WARNING - Removing worker 'tcp://127.0.0.1:40689' caused the cluster to lose already computed task(s), which will be recomputed elsewhere: {'dict-c61bc932-9a43-45c7-8b34-c0a6717a70aa'} (stimulus_id='handle-worker-cleanup-1762895126.574773')\n"
        "2025-11-11 21:05:26,758 - distributed.nanny - WARNING - Restarting worker\n"
        "2025-11-11 21:05:27,787 - distributed.nanny - WARNING - Restarting worker\n"
        "2025-11-11 21:05:55,828 - distributed.worker - ERROR - Compute Failed",
        "crash",
        "unknown",
        True,
        "dask-compute-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_other_stack_failures(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == symptom, source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_metal_out_of_memory_wins_over_the_generic_buffer_failure() -> None:
    # The out-of-memory reason Metal gives (as MLX users' logs print it) decides the category.
    found = diagnose(
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer"
        " execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)."
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "mlx-metal-command-buffer-oom",
        "out_of_memory",
        False,
    )


HEALTHY = [
    # Ascend/pytorch issue 43: torch_npu's warning alone (it logged the code and went on).
    "worker-1: [W NPUStream.cpp:365] Warning: NPU warning, error code is 107020[Error]: .",
    # PaddlePaddle/Paddle issue 55740: training goes on; the bvar sampler notice is harmless.
    "Train [2023-07-27 12:00:34.371266] epoch: [1/50], batch: [200/8832], learning rate: 0.00050000, train loss: 55.890755, eta: 1 day, 6:20:33\n"
    "Train [2023-07-27 12:01:00.692479] epoch: [1/50], batch: [300/8832], learning rate: 0.00050000, train loss: 55.849007, eta: 1 day, 7:47:28\n"
    "W0727 13:09:26.365279 5320 sampler.cpp:139] bvar is busy at sampling for 2 seconds!",
    # Blaizzy/mlx-vlm pull 795: MLX training iterations.
    "Iter 40: Train loss 3.842, Learning Rate 2.000e-08, It/sec 1.655, Tokens/sec 76.123, Trained Tokens 1840, Peak mem 5.094 GB\n"
    "Iter 41: Train loss 3.795, Learning Rate 2.000e-08, It/sec 1.673, Tokens/sec 76.965, Trained Tokens 1886, Peak mem 5.094 GB",
    # mindspore-lab/mindocr issue 77: MindSpore training progress in sink mode.
    "2023-02-17 14:27:29,405:INFO:epoch: [1/90] loss: 1.082604, epoch time: 40.559 s, per step time: 207.995 ms, fps: 16.54 img/s\n"
    "2023-02-17 14:27:31,711:INFO:epoch: [2/90] loss: 1.045892, epoch time: 2.413 s, per step time: 12.377 ms, fps: 14.97 img/s",
    # determined-ai/determined pull 5677: the trial exits with zero and the master reclaims its resources.
    "[2023-01-05T20:31:10.935174Z] 85473e71 || INFO: resources exited successfully with a zero exit code\n"
    "[2023-01-05T20:31:10.935260Z]          || INFO: forcibly killing allocation's remaining resources (reason: resources exited successfully with a zero exit code)",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_other_stack_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
