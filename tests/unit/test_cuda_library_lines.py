"""Real lines with cuBLAS's and cuDNN's status codes (tables/cuda_libraries.yaml), each with the
public thread that printed it, diagnosed as NVIDIA documents the status."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

LINES = [
    # deepseek-ai/DeepSeek-VL#30: torch 2.0.1 with CUDA 11.7/11.8 under Python 3.10 (fixed by
    # another environment): cudnnCreate failed, the node's CUDA stack
    (
        "    return F.conv2d(input, weight, bias, self.stride,\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
        ("cuda-libraries-cudnn-status-not-initialized", "system_software", True),
    ),
    # pytorch/tutorials#2123: the reinforcement Q-learning tutorial's last cell
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n,"
        " k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
        ("cuda-libraries-cublas-status-invalid-value", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), LINES)
def test_a_library_status_decides(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


def test_pytorchs_plan_warning_is_not_a_failure() -> None:
    # pytorch/pytorch#121834: cuDNN v8's API tries the next execution plan; training goes on
    line = (
        "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with a"
        " cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status:"
        " CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at"
        " /opt/conda/conda-bld/pytorch_1712608935911/work/aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)"
    )
    assert verdict(line) == (None, "none", None)


BRACKETED = [
    # facebookresearch/blt#102: Triton's driver (triton/backends/nvidia/driver.c) names the API in brackets
    ("RuntimeError: Triton Error [CUDA]: device-side assert triggered", ("cuda-device-assert", "application", False)),
    # ComputationalRadiationPhysics/picongpu#757: MPI rank 7's own CUDA check (the dev corpus's excerpt)
    (
        "[1,7]<stderr>:terminate called after throwing an instance of 'std::runtime_error'\n"
        "[1,7]<stderr>:  what():  [CUDA] Error: cannot set while device is active in this process",
        ("cuda-set-on-active-process", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), BRACKETED)
def test_a_cuda_error_named_in_brackets_reads_the_runtimes_message(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


NCCL_NUMBERED = [
    # Tencent-Hunyuan/HunyuanVideo#114: all_to_all_single through torch/csrc/cuda/nccl.cpp's check
    (
        "[rank0]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        ("nccl-system-error", "network", True),
    ),
    # pytorch/pytorch#11756: DataParallel's broadcast on four GPUs
    ("RuntimeError: NCCL Error 1: unhandled cuda error", ("nccl-unhandled-cuda-error", "unknown", True)),
]


@pytest.mark.parametrize(("text", "expected"), NCCL_NUMBERED)
def test_nccls_result_printed_with_its_number_reads_the_result(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


def test_nvidia_smi_without_a_driver_is_the_nodes_software() -> None:
    # ci-for-research/self-hosted-runners#40 (driver 440 installed, module not answering); the
    # second as qixuema/envs#4 printed it, with a typographic apostrophe
    for line in [
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest"
        " NVIDIA driver is installed and running.",
        "NVIDIA-SMI has failed because it couldn\u2018t communicate with the NVIDIA driver.",
    ]:
        assert verdict(line) == ("nvidia-smi-no-driver", "system_software", True)


HOROVOD = [
    # horovod/horovod#3618: Horovod's NCCL allreduce on A100s, raised as HorovodInternalError
    "    raise HorovodInternalError(e)\n"
    "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error",
    # horovod/horovod#610: the same check surfacing through TensorFlow's op
    "tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled cuda error",
]


@pytest.mark.parametrize("text", HOROVOD)
def test_horovods_nccl_failure_reads_the_nccl_result(text: str) -> None:
    assert verdict(text) == ("nccl-unhandled-cuda-error", "unknown", True)
