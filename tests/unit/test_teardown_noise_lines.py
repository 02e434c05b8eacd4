"""Whole excerpts of real logs whose alarming lines are noise around a run that was fine:
TensorFlow/XLA's start-up factory registration errors, PyTorch's exit and deprecation warnings,
a trainer skipping an update whose gradient norm is NaN or a batch whose loss is NaN. They must stay healthy; the failures beside
them (a process that did die) must still be found, and for what they are (LLVM's thread support
aborting a process is not a kernel that failed to compile)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # IAHispano/Applio issue 554: the trainer's own cleanup removes a checkpoint that is not there.
    (
        "https://github.com/IAHispano/Applio/issues/554",
        "Saved model '/notebooks/Applio/logs/PLK/PLK_26e_676s_best_epoch.pth' (epoch 26 and step 676)\n"
        "Process Process-1:\n"
        "Traceback (most recent call last):\n"
        '  File "/notebooks/Applio/rvc/train/train.py", line 779, in train_and_evaluate\n'
        "    os.remove(file)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: '/notebooks/Applio/logs/PLK/PLK_18e_468s_best_epoch.pth'",
        "application",
        False,
        "py-file-error",
    ),
    # hiyouga/LlamaFactory issue 8043: LLVM's thread support cannot join a thread in a DataLoader
    # worker and aborts it; nothing was being compiled, and it happens only sometimes.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/8043",
        "LLVM ERROR: pthread_join failed: Invalid argument\n"
        "[rank4]: Traceback (most recent call last):\n"
        '[rank4]:   File "/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py", line 1131, in'
        " _try_get_data\n"
        "[rank4]:     data = self._data_queue.get(timeout=timeout)\n"
        '[rank4]:   File "/usr/local/lib/python3.11/dist-packages/torch/utils/data/_utils/signal_handling.py", line 67,'
        " in handler\n"
        "[rank4]:     _error_if_any_worker_fails()\n"
        "[rank4]: RuntimeError: DataLoader worker (pid 69916) is killed by signal: Aborted. ",
        "unknown",
        True,
        "llvm-thread-call-failed",
    ),
    # icon-lab/SynDiff issue 21: the c10d store cannot bind its port, so the run never starts.
    (
        "https://github.com/icon-lab/SynDiff/issues/21",
        "[W socket.cpp:401] [c10d] The server socket cannot be initialized on [::]:6021 (errno: 97 - Address family"
        " not supported by protocol).\n"
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:6021 (errno: 98 - Address"
        " already in use).\n"
        "[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network address.",
        "network",
        True,
        None,
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_failures_beside_the_noise(
    source: str, text: str, category: str, retryable: bool, signature: str | None
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.category, found.retryable) == (category, retryable), source
    if signature is not None:
        assert found.evidence[0].signature == signature, source


def test_nccl_unwinding_frames_alone_still_fail() -> None:
    # The NCCL table's own example of an error unwinding (init.cc:867 -> 5, ncclInvalidUsage):
    # frames alone are the path of an error NCCL returned.
    assert diagnose("gpu-03:29878:30419 [0] NCCL INFO init.cc:867 -> 5").symptom == "crash"


HEALTHY = [
    # NVIDIA/Megatron-LM issue 1541: training ran; every rank warns at exit.
    "[rank1]:[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not"
    " called before program exit, which can leak resources. For more info, please see"
    " https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())\n"
    "[rank0]:[W326 09:37:44.848694228 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not"
    " called before program exit, which can leak resources. For more info, please see"
    " https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    # verlab/DescriptorReasoning_ACCV_2024 issue 5: TensorFlow/XLA's start-up E lines; training ran.
    "2024-11-21 15:10:51.123102: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register"
    " cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
    "2024-11-21 15:10:51.123151: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:607] Unable to register"
    " cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered\n"
    "2024-11-21 15:10:51.124372: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register"
    " cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered\n"
    "2024-11-21 15:11:29.589357: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not"
    " find TensorRT",
    # allenai/open-instruct pull 1055: ProcessGroupNCCL guesses the rank's GPU at start-up.
    "2025-10-03T20:49:10.479Z (PolicyTrainerRayProcess pid=1720) [rank0]:[W1003 20:49:10.123654124\n"
    "  ProcessGroupNCCL.cpp:4715] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 as device used by this process is currently\n"
    "  unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect. You can pecify device_id in\n"
    "  init_process_group() to force use of a particular device.",
    # QwenAudio/SenseVoice issue 264: updates with a NaN gradient norm are skipped; the loss is finite.
    "[2025-10-29 23:59:01,773][root][WARNING] - The grad norm is nan. Skipping updating the model.\n"
    "[2025-10-29 23:59:01,779][root][INFO] - train, rank: 0, epoch: 0/100, data_slice: 0/1, step_in_slice: 3/44,"
    " step_in_epoch: 3, total step: 3, (loss_avg_rank: 24.221), (loss_avg_slice: 27.633), (ppl_avg_slice:"
    " 1.002e+12), (acc_avg_slice: 0.000), (lr: 3.000e-07)\n"
    "[2025-10-29 23:59:03,465][root][WARNING] - The grad norm is nan. Skipping updating the model.",
    # alibaba/FederatedScope issue 777: its LLM trainer skips a batch whose loss is NaN and goes on.
    "WARNING: Skip the batch due to the loss is NaN, it may be caused by exceeding the precision or invalid labels",
]


def test_a_trainer_that_stops_on_a_nan_loss_still_fails() -> None:
    # torchvision's references and DETR-derived trainers print this and exit.
    for text in ("Loss is nan, stopping training", "[rank0]: Loss is inf, stopping training"):
        assert verdict(text) == ("loss-not-finite", "application", False), text


def test_a_skipped_nan_loss_is_the_cause_when_the_run_then_fails() -> None:
    # aqlaboratory/openfold issue 98 shape: the skip notices, then the failure they explain.
    text = (
        "WARNING: Skip the batch due to the loss is NaN, it may be caused by exceeding the precision or invalid labels\n"
        "AssertionError: No inf checks were recorded for this optimizer."
    )
    assert verdict(text) == ("loss-not-finite-skipped", "application", False)


@pytest.mark.parametrize("text", HEALTHY)
def test_noise_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
