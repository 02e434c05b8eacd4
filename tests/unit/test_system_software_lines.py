"""Real lines from the software around a job (CUDA start-up, Slurm's MPI plugins, missing driver
libraries), each with where it was printed, diagnosed as the systems' own sources say they mean."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

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
    assert verdict(line) == (signature, "system_software", True)


# Slurm's MPI plugins (src/plugins/mpi/pmix/pmixp_debug.h prints "<plugin_type>: <function>: <host>
# [<nodeid>]: <file>:<line>: <text>"); lines as Slurm 25.11.7's format strings print them, the
# second as a user's log quoted it (a step left RUNNING after its PMIx fence timed out).
SLURM_MPI = [
    (
        "slurmstepd: error:  mpi/pmix_v4: pmixp_coll_ring_reset_if_to: node01 [0]: pmixp_coll_ring.c:742:"
        " 0x7f1c2c0a1b40: collective timeout seq=0",
        "slurm-pmix-collective-timeout",
        ("hang", "network", True),
    ),
    (
        "mpi/pmix_v3: pmixp_coll_tree_reset_if_to: collective timeout seq=1",
        "slurm-pmix-collective-timeout",
        ("hang", "network", True),
    ),
    (
        "slurmstepd: error:  mpi/pmix_v3: pmixp_p2p_send: node02 [1]: pmixp_utils.c:467: send failed, rc=2,"
        " exceeded the retry limit",
        "slurm-pmix-send-failed",
        ("crash", "network", True),
    ),
    (
        "srun: error: mpi/pmi2: failed to send temp kvs to compute nodes",
        "slurm-pmi2-kvs-send-failed",
        ("crash", "network", True),
    ),
    (
        "srun: error: MPI: Cannot create context for mpi/pmix",
        "slurm-mpi-plugin-unavailable",
        ("crash", "system_software", False),
    ),
]


@pytest.mark.parametrize(("line", "signature", "labels"), SLURM_MPI)
def test_slurm_mpi_plugin_errors(line: str, signature: str, labels: tuple[str, str, bool]) -> None:
    symptom, category, retryable = labels
    assert verdict(line) == (signature, category, retryable)
    assert diagnose(line).symptom == symptom


def test_pmix_unreachable_after_a_dead_rank_is_its_cascade() -> None:
    # myqueue's stderr parser test quotes this job (gpaw under Open MPI): the rank's import failed,
    # then PMIx's server could no longer reach the processes that had died.
    found = diagnose(
        "L17: ModuleNotFoundError: No module named 'gpaw.bz_tools'\n"
        "[x069] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2193\n"
        "[x069] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2193"
    )
    assert found.evidence[0].signature == "py-import-error"
    assert (found.category, found.retryable) == ("application", False)
    assert diagnose("[x069] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2193").category == "network"


# libcuda/libnvidia-ml come with the NVIDIA driver (mounted into containers by the toolkit); libnccl
# and libcudnn come with the program's own packages.
LIBRARIES = [
    # a Megatron/Miles run log: a CPU container without the driver's libraries
    ("OSError: libcuda.so.1: cannot open shared object file", "driver-library-missing", ("system_software", True)),
    # a troubleshooting guide's error message for a missing driver
    (
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
        "driver-library-missing",
        ("system_software", True),
    ),
    # a CUDA project's README: "The CUDA runtime library is in the driver, not the toolkit"
    (
        "error while loading shared libraries: libcuda.so.1: cannot open shared object file",
        "driver-library-missing",
        ("system_software", True),
    ),
    # ctypes.CDLL's OSError for a library of the program's environment
    (
        "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
        "py-import-error",
        ("application", False),
    ),
]


@pytest.mark.parametrize(("line", "signature", "labels"), LIBRARIES)
def test_missing_libraries_are_the_driver_or_the_environment(
    line: str, signature: str, labels: tuple[str, bool]
) -> None:
    assert verdict(line) == (signature, *labels)


@pytest.mark.parametrize(
    "line",
    [
        # TensorFlow on a machine without a GPU goes on on the CPU (a user's notebook output)
        "2023-06-18 17:29:09.362227: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64]"
        " Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file:"
        " No such file or directory; LD_LIBRARY_PATH: /home/jry/.conda/envs/palivo/lib/python3.10/site-packages/cv2/../../lib64:",
        # vllm-project/vllm issue: collect_env's warning, the tool went on
        "WARNING 08-29 11:55:28 _custom_ops.py:17] Failed to import from vllm._C with"
        " ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')",
    ],
)
def test_warnings_about_the_driver_library_are_not_failures(line: str) -> None:
    assert diagnose(line).symptom == "none"


# PyTorch's checkpoint writer (caffe2/serialize/inline_container.cc) after a short write.
CHECKPOINT_WRITES = [
    # a write-up of a RunPod run whose disk ran out saving a 6.9B model's state dict
    "RuntimeError: [enforce fail at inline_container.cc:664] . unexpected pos 1353023680 vs 1353023568",
    # a project's "Disk Space Error Fix" note (the writer's name as its author spelled it)
    "PyTorchStreamWriter failed writing file data/217: file write failed",
    # a training README's troubleshooting: disk full, permissions, filesystem errors
    "RuntimeError: [enforce fail at inline_container.cc:858] . PytorchStreamWriter failed writing file",
]


@pytest.mark.parametrize("line", CHECKPOINT_WRITES)
def test_a_checkpoint_the_filesystem_would_not_take_is_the_storage(line: str) -> None:
    # The end-of-file check ("unexpected pos") has its own id: it also follows any other error
    # inside torch.save, so it speaks only when the log shows nothing before it. The short write
    # alone does not say the disk is full (these sources' authors knew it from elsewhere), so it is
    # retried as a storage fault; the disk's own ENOSPC line, when logged, is not.
    expected = "checkpoint-write-end-failed" if "unexpected pos" in line else "checkpoint-write-failed"
    assert verdict(line) == (expected, "system_software", True)


def test_a_short_write_after_the_disks_own_error_is_the_full_disk() -> None:
    # The errno line comes first in a chained traceback (torch.save's OSError, then the writer's
    # end-of-file check while handling it): the full disk speaks, not retried.
    text = (
        "OSError: [Errno 28] No space left on device\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        + TRACEBACK
        + "RuntimeError: [enforce fail at inline_container.cc:664] . unexpected pos 1353023680 vs 1353023568"
    )
    assert (diagnose(text).category, diagnose(text).retryable) == ("system_software", False)


def test_a_checkpoint_that_cannot_be_read_is_still_the_programs() -> None:
    # the reader's failure: a truncated or wrong file given to torch.load
    line = "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"
    assert (diagnose(line).category, diagnose(line).retryable) == ("application", False)


def test_the_open_file_limit_is_the_nodes_setting_and_not_retried() -> None:
    # a user's traceback in a PyTorch pipeline-parallel thread (DataLoader workers, file_descriptor
    # sharing against the open-file limit: pytorch/pytorch#973)
    found = diagnose(
        '  File "/home/chaoyanghe/anaconda3/envs/pipe_ditributed/lib/python3.7/multiprocessing/reduction.py",'
        " line 161, in recvfds\n"
        "    len(ancdata))\n"
        "RuntimeError: received 0 items of ancdata"
    )
    assert found.evidence[0].signature == "open-files-limit"
    assert (found.category, found.retryable) == ("system_software", False)


# The program's environment, not the node: what the loader and the interpreter print before the
# program runs (glibc elf/dl-version.c; CPython's runpy for `python -m`).
ENVIRONMENT = [
    # a cross-compiling write-up: a binary built against a newer glibc than the machine's
    (
        "./hello: /lib/arm-linux-gnueabihf/libc.so.6: version `GLIBC_2.34' not found (required by ./hello)",
        "native-undefined-symbol",
    ),
    # a Docker question: a Go binary run on an older base image
    (
        "/api: /lib/aarch64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by /api)",
        "native-undefined-symbol",
    ),
    # an HPC user's error notes: `python -m torchrun` with a PyTorch too old to have it
    ("/sciclone/home20/hmbaier/.conda/envs/dhsrl4/bin/python: No module named torchrun", "py-import-error"),
    # a course's conda lesson: the new environment has no torch
    ("/Users/me/miniconda3/envs/myproject2/bin/python: No module named torch", "py-import-error"),
]


@pytest.mark.parametrize(("line", "signature"), ENVIRONMENT)
def test_a_program_its_environment_cannot_load_is_not_retried(line: str, signature: str) -> None:
    assert verdict(line) == (signature, "application", False)
