"""Real lines printed when a node's GPU software does not start (no device visible, CUDA's start-up
failing), from PyTorch, XLA/JAX and ROCm, each with the public thread that quotes it: the node's
software (system_software, retried elsewhere), not the program's fault and not an unknown crash."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, verdict

LINES = [
    # pytorch/pytorch #70036: PyTorch's ROCm build (hipified "No CUDA GPUs are available")
    (TRACEBACK + "RuntimeError: No HIP GPUs are available", "rocm-no-device"),
    # pytorch/pytorch #70036: the HIP enum name where the message is not printed
    (TRACEBACK + "RuntimeError: HIP error: hipErrorNoDevice", "rocm-no-device"),
    # ROCm/legacy-rocm-build #1159: PyTorch's old THH check at start-up
    (
        TRACEBACK + "RuntimeError: cuda runtime error (100) : hipErrorNoDevice at ../aten/src/THH/THHGeneral.cpp:47",
        "rocm-no-device",
    ),
    # pytorch/pytorch #49327 (c10/cuda/CUDAFunctions.cpp, cudaErrorUnknown from cudaGetDeviceCount)
    (
        TRACEBACK + "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment,"
        " e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices"
        " to be zero.",
        "cuda-init-unknown-error",
    ),
    # zhanghang1989/PyTorch-Encoding #368: the same, as torch.cuda's start-up warning
    (
        "/home/mona/venv/torchenc/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA"
        " initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g."
        " changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be"
        " zero. (Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n"
        "  return torch._C._cuda_getDeviceCount() > 0",
        "cuda-init-unknown-error",
    ),
    # pytorch/pytorch #8039: PyTorch 0.4's THC start-up check
    (
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=70 error=30 : unknown error\n"
        + TRACEBACK
        + "RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:70",
        "cuda-init-unknown-error",
    ),
    # KosinskiLab/AlphaPulldown #571: XLA's cuInit failing, then jaxlib's raised status
    (
        "2026-01-22 22:32:40.809897: E external/xla/xla/stream_executor/cuda/cuda_platform.cc:51] failed call"
        " to cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n"
        + TRACEBACK
        + "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.",
        "cuda-init-unknown-error",
    ),
    # jax-ml/jax #24866 (the raised status alone, as a traceback's last line)
    (
        TRACEBACK + "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.",
        "xla-no-visible-gpu",
    ),
]


@pytest.mark.parametrize(("text", "signature"), LINES)
def test_gpu_software_that_does_not_start_is_the_nodes(text: str, signature: str) -> None:
    assert verdict(text) == (signature, "system_software", True)


HEALTHY = [
    # ikostrikov/walk_in_the_park #5: xla_bridge's INFO line; JAX goes on with the backends it has
    "I0919 21:58:29.120949 139995721590592 xla_bridge.py:350] Unable to initialize backend 'rocm': NOT_FOUND:"
    ' Could not find registered platform with name: "rocm". Available platform names are: Interpreter CUDA Host',
    # tensorflow/tensorflow #37689: TensorFlow on a node without libcuda, then runs on CPU
    "2020-07-26 19:52:32.814680: E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit:"
    " UNKNOWN ERROR (303)",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_a_backend_skipped_at_start_is_no_failure(text: str) -> None:
    assert verdict(text) == (None, "none", None)
