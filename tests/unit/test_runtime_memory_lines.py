"""Real lines of the node's runtime software and of memory running out, as whole issue threads
show them, with the verdict a careful operator gives: the node's driver, CUDA libraries, JIT
compilers and filesystems (system_software), memory exhausted (out_of_memory), and the warnings
of the same systems that leave the run going (healthy)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

FAILURES = [
    # bitsandbytes-foundation/bitsandbytes#310: bitsandbytes' CUDA_CHECK_RETURN (the Nsight
    # template's "Error %s at line %d in file %s") quoting cudaErrorNoKernelImageForDevice
    (
        "Error no kernel image is available for execution on the device at line 167 in file"
        " D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu",
        ("cuda-no-kernel-image-for-device", "system_software", True),
    ),
    # d8ahazard/sd_dreambooth_extension#34: the same line run into by a progress bar
    (
        "Steps:   0%|          | 0/1000 [00:00<?, ?it/s]Error no kernel image is available for execution on"
        " the device at line 167 in file D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu\nPress any key to continue . . .",
        ("cuda-no-kernel-image-for-device", "system_software", True),
    ),
    # triton-lang/triton#5929: Triton's make_cubin runs the node's ptxas, older than the PTX
    (
        "ptxas C:\\Users\\user\\AppData\\Local\\Temp\\tmpafhfmeeh.ptx, line 5; fatal   : Unsupported .version 8.6;"
        " current version is '8.5'\nptxas fatal   : Ptx assembly aborted due to errors\nTraceback (most recent call"
        ' last):\n  File "triton\\backends\\nvidia\\compiler.py", line 295, in make_cubin\n'
        "    subprocess.run(ptxas_cmd, check=True, close_fds=False, stderr=flog)\n"
        "subprocess.CalledProcessError: Command '['ptxas.exe', '-lineinfo', '-v', '--gpu-name=sm_89']' returned"
        " non-zero exit status 4294967295.",
        ("ptxas-toolkit-mismatch", "system_software", True),
    ),
    # woct0rdho/triton-windows#49: no ptxas on the machine (Triton's _path_to_binary)
    (
        "!!! Exception during processing !!! backend='inductor' raised:\nRuntimeError: Cannot find ptxas.exe\n\n"
        'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information',
        ("triton-ptxas-missing", "system_software", True),
    ),
    # apple/ml-cross-entropy#41: Inductor's create_backend on a GPU older than Triton supports
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found NVIDIA GeForce"
        " GTX 1070 which is too old to be supported by the triton GPU compiler, which is used as the backend."
        " Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
        ("inductor-gpu-too-old", "system_software", True),
    ),
    # bitsandbytes-foundation/bitsandbytes#492: cextension.py raises when its CUDA library fails
    (
        "RuntimeError: \n        CUDA Setup failed despite GPU being available. Please run the following \n"
        "command to get more information:\n\n        python -m bitsandbytes",
        ("bitsandbytes-cuda-setup-failed", "system_software", True),
    ),
    # keras-team/keras-tuner#390: TensorFlow's RESOURCE_EXHAUSTED for a quota (ErrnoToCode), the
    # errno's text lower-cased and the eager op appended; and the same issue's "; <strerror>" form
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded [Op:SaveV2]",
        ("uncaught-exception", "system_software", False),
    ),
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: models/singleton_classifiers/context.model/"
        "variables/variables_temp_d0c7555bd2aa4ae682695465c0d0e2f4/part-00000-of-00002.data-00000-of-00001."
        "tempstate8490917510693379885; No space left on device",
        ("fs-no-space", "system_software", False),
    ),
    # lanl/PyBNF#118: Slurm 17-19's wording of the cgroup's OOM kills
    (
        "slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.",
        ("slurm-oom", "out_of_memory", False),
    ),
]


@pytest.mark.parametrize(("text", "labels"), FAILURES)
def test_node_software_and_memory_failures(text: str, labels: tuple[str, str, bool]) -> None:
    assert verdict(text) == labels


HEALTHY = [
    # derrian-distro/LoRA_Easy_Training_Scripts#287: xFormers logs the ImportError it caught
    # probing for Triton, with its traceback, and goes on (xformers/__init__.py)
    "WARNING  A matching Triton is not available, some optimizations will not be enabled   __init__.py:61\n"
    "Traceback (most recent call last):\n"
    '  File "D:\\AI\\sd_scripts\\venv\\Lib\\site-packages\\xformers\\__init__.py", line 57, in _is_triton_available\n'
    "    import triton  # noqa\n    ^^^^^^^^^^^^^\nModuleNotFoundError: No module named 'triton'",
    # backnotprop/Colab-Stable-Diffusion-2-Depth-UI#1: the older release's form of the same
    "WARNING:root:A matching Triton is not available, some optimisations will not be enabled.\n"
    "Error caught was: No module named 'triton'",
    # talmolab/sleap#2089: TensorFlow's BFC allocator retries with less memory and says so
    "2025-01-22 11:18:38.927063: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran"
    " out of memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not a"
    " failure, but may mean that there could be performance gains if more memory were available.",
    # lmoe/wyoming-xtts#1: a GPU newer than the build's arch list is a warning at import
    "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:287: UserWarning:\n"
    "NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current PyTorch"
    " installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_warnings_of_the_same_systems_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)


def test_a_resource_exhausted_error_without_an_errno_stays_memory() -> None:
    # TensorFlow's allocator message (tensorflow/core/common_runtime/bfc_allocator.cc's OOM)
    text = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,832,7,7]"
    assert verdict(text)[1:] == ("out_of_memory", False)
