"""Real lines from the software around a job (CUDA start-up, Slurm's MPI plugins, missing driver
libraries), each with where it was printed, diagnosed as the systems' own sources say they mean."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.diagnosis import LogDiagnoser, LogDiagnosis


def diagnose(text: str) -> LogDiagnosis:
    diagnoser = LogDiagnoser()
    diagnoser.feed((text + "\n").encode())
    diagnoser.finish()
    return diagnoser.diagnosis()


# PyTorch c10/cuda/CUDAFunctions.cpp warns when cudaGetDeviceCount() fails; the number and text
# after "Error" are the CUDA runtime's (driver_types.h), and they say why torch saw no GPU.
CUDA_INIT = [
    # a cluster's user Q&A: node gpu023, fixed by --exclude gpu023 (NVSwitch fabric manager down)
    (
        "/usr/local/lib/python3.8/dist-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization:"
        " Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling"
        " NumCudaDevices() that might have already set an error? Error 802: system not yet initialized"
        " (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)",
        "cuda-system-not-ready",
    ),
    # vllm-project/vllm issue: vllm-openai v0.16.0 image on driver 590.48.01
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before"
        " calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported"
        " display driver / cuda driver combination",
        "cuda-system-driver-mismatch",
    ),
    # a PyTorch-from-source build note: the container's CUDA compat libraries on a consumer GPU
    (
        "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization:"
        " Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling"
        " NumCudaDevices() that might have already set an error? Error 804: forward compatibility was"
        " attempted on non supported HW (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:104.)",
        "cuda-compat-not-supported-on-device",
    ),
]


@pytest.mark.parametrize(("line", "signature"), CUDA_INIT)
def test_cuda_initialisation_warning_names_the_runtime_error(line: str, signature: str) -> None:
    found = diagnose(line)
    assert [e.signature for e in found.evidence][:1] == [signature]
    assert (found.category, found.retryable) == ("system_software", True)
