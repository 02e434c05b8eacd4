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
    # hpc-community.unige.ch t/4121 (c10/cuda/CUDAFunctions.cpp, cudaErrorInitializationError)
    (
        TRACEBACK + "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
        "cuda-initialization-error",
    ),
    # YanWenKun/ComfyUI-Docker #74 (c10/cuda/CUDAFunctions.cpp counting GPUs; fixed by updating Docker)
    (
        TRACEBACK + "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions"
        " before calling NumCudaDevices() that might have already set an error? Error 500: named symbol not found",
        "cuda-device-count-failed",
    ),
    # xorbitsai/inference #1704: the same as torch.cuda's start-up warning
    (
        "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization:"
        " Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling"
        " NumCudaDevices() that might have already set an error? Error 500: named symbol not found (Triggered"
        " internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0",
        "cuda-device-count-failed",
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
    # ai-dynamo/dynamo #391 (vLLM's DeviceConfig finding no platform)
    (
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/config.py", line 1626, in __init__\n'
        '    raise RuntimeError("Failed to infer device type")\nRuntimeError: Failed to infer device type',
        "vllm-no-device-platform",
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


# MVIG-SJTU/AlphaPose #752: PyTorch 1.x's THC printed a caught start-up error twice and the demo
# ran on to 100 %: a THCudaCheck line alone is no failure.
THC_CAUGHT = (
    "Loading YOLO model..\n"
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument\n"
    "Loading pose model from ./pretrained_models/fast_421_res152_256x192.pth...\n"
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument\n"
)


def test_a_thc_check_printed_and_caught_is_no_failure() -> None:
    assert verdict(THC_CAUGHT) == (None, "none", None)


@pytest.mark.parametrize("text", HEALTHY)
def test_a_backend_skipped_at_start_is_no_failure(text: str) -> None:
    assert verdict(text) == (None, "none", None)


# Old print formats of CUDA's errors and the node's GPU held by someone else (cudaErrorDevicesUnavailable
# in its pre-CUDA-11 text), a full /dev/shm under PyTorch's shared tensors, and a required SPANK
# plugin failing on the node: each line from the public thread named beside it.
NODE_LINES = [
    # jade-hpc-gpu/jade-hpc-gpu.github.io #59 (PyTorch 0.4's THCudaCheck)
    (
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorRandom.cu line=25 error=46 : all CUDA-capable"
        " devices are busy or unavailable",
        "cuda-device-unavailable",
        True,
    ),
    # NVIDIA/DIGITS #2005 (Caffe's CUDA_CHECK through glog)
    (
        "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable",
        "cuda-device-unavailable",
        True,
    ),
    # facebookresearch/detectron2 #2580
    (
        TRACEBACK + "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
        "cuda-device-unavailable",
        True,
    ),
    # huaweicloud/dls-example #26 (TH's allocator for the /dev/shm segment)
    (
        TRACEBACK
        + "RuntimeError: unable to write to file </torch_76_3625483894> at /pytorch/aten/src/TH/THAllocator.c:383",
        "shm-too-small",
        False,
    ),
    # MIC-DKFZ/nnUNet #294
    (TRACEBACK + "RuntimeError: unable to write to file </torch_15769_1517813162>", "shm-too-small", False),
    # pytorch/pytorch #31701 (MapAllocator's shm_open failing for the segment)
    (
        TRACEBACK + "RuntimeError: unable to open shared memory object </torch_5962_408180057> in read-write mode",
        "shm-too-small",
        False,
    ),
    # apptainer/apptainer #1893 (nvidia-smi without the driver's library)
    (
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA"
        " Display Driver is properly installed and present in your system.",
        "nvidia-smi-no-driver",
        True,
    ),
    # ROCm/rocBLAS #1339 (no Tensile kernels for the GPU; the process then aborts)
    (
        "rocBLAS error: Cannot read /opt/rocm-5.4.0/lib/rocblas/library/TensileLibrary.dat: Illegal seek\n"
        "Aborted (core dumped)",
        "rocblas-no-kernel-library",
        True,
    ),
    # ArjunaCluster/ArjunaUsers #21 (slurmd's own copy of the batch script gone on node c002)
    (
        "slurmstepd: error: execve(): /tmp/slurmd/job2997814/slurm_script: No such file or directory",
        "scheduler-slurm-node-spool-missing",
        True,
    ),
    # ArjunaCluster/ArjunaUsers #123 (job_container/tmpfs on the node)
    (
        "slurmstepd: error: container_p_join: open failed /scratch/119383/.active: No such file or directory\n"
        "slurmstepd: error: container_g_join failed: 119383",
        "scheduler-slurm-node-spool-missing",
        True,
    ),
    # NVIDIA/pyxis #4 (slurmd's log on the compute node, then srun's)
    (
        "[2019-09-24T10:10:06.901] [321.0] error: pyxis: couldn't mkdir /run/pyxis/100005: No such file or"
        " directory\n[2019-09-24T10:10:06.901] [321.0] error: spank: required plugin spank_pyxis.so:"
        " init_post_opt() failed with rc=-1\n[2019-09-24T10:10:06.901] [321.0] error: Plugin stack"
        " initialization failed.",
        # pyxis's own error (it could not make its runtime directory on the node) speaks first
        "container-pyxis-node-setup-failed",
        True,
    ),
    (
        "srun: error: task 0 launch failed: Plugin initialization failed",
        "slurm-plugin-name-invalid",
        True,
    ),
    # NVIDIA/pyxis #42
    (
        "slurmstepd: error: pyxis: seccomp filter failed: Function not implemented",
        "container-spank-required-plugin-failed",
        True,
    ),
]


@pytest.mark.parametrize(("text", "signature", "retryable"), NODE_LINES)
def test_the_nodes_gpu_shm_and_plugins(text: str, signature: str, retryable: bool) -> None:
    assert verdict(text) == (signature, "system_software", retryable)


def test_a_container_runtimes_own_error_speaks_before_the_spank_line() -> None:
    # NVIDIA/enroot #140: pyxis's error and enroot's log come first; the SPANK line only follows
    text = (
        "slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "slurmstepd: error: pyxis: printing enroot log file:\n"
        "slurmstepd: error: pyxis:     enroot-mount: failed to mount: /home/wjy/nv-maskrcnn/dataset_dir/coco2017"
        " at /tmp/enroot-data/user-0/pyxis_object_detection/data: Permission denied\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "slurmstepd: error: Failed to invoke spank plugin stack\n"
        "srun: error: node0: task 0: Exited with exit code 1"
    )
    assert verdict(text) == ("container-pyxis-start-failed", "system_software", True)


# What the probe of the node's software found already right, kept so it stays right: each a line
# from the public thread named beside it, with the labels tests/corpus/README.md gives it.
ALREADY_RIGHT = [
    # jax-ml/jax #28376 (XLA's cuInit on a node without a visible GPU)
    (
        "2025-04-29 09:53:32.455092: E external/xla/xla/stream_executor/cuda/cuda_platform.cc:51] failed call to"
        " cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is"
        " detected",
        True,
    ),
    # NVIDIA/cuml #5961 (NCCL's CUDA check on a driver older than the runtime)
    (
        "VM-192-150-centos:2871:2871 [32523] misc/cudawrap.cc:182 NCCL WARN Cuda failure 'CUDA driver version is"
        " insufficient for CUDA runtime version'",
        True,
    ),
    # modelscope/ms-swift #6695 (a shared cache on NFS, every node)
    (
        '[rank1]:   File "/usr/local/lib/python3.10/dist-packages/datasets/arrow_dataset.py", line 4101, in'
        " _select_with_indices_mapping\n[rank1]:     os.chmod(indices_cache_file_name, 0o666 & ~umask)\n"
        "[rank1]: OSError: [Errno 116] Stale file handle: xxx",
        True,
    ),
    # THUDM/slime #326 (Megatron's async checkpoint writer)
    (
        "ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 encountered an error:"
        " [Errno 5] Input/output error",
        True,
    ),
    # open-mmlab/mmdetection #12069 (saving a checkpoint)
    (TRACEBACK + "OSError: [Errno 122] Disk quota exceeded", False),
    # pytorch/ci-infra #490 (NCCL's shared-memory segment in a pod with a small /dev/shm)
    (
        "[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0]"
        " misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No"
        " space left on device (28)",
        False,
    ),
    # NVIDIA/enroot #111 (the NVIDIA hook failing in enroot)
    (
        "nvidia-container-cli: mount error: mount operation failed:"
        " /tmp/enroot/pccl+containertest+0.1/usr/lib/firmware/nvidia/470.57.02: operation not permitted\n"
        "[ERROR] /apps/enroot/3.4.0/gcc-11.2.0/etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
        True,
    ),
    # apptainer/apptainer #952 (the image cannot be mounted on the node)
    (
        "           FATAL:   container creation failed: mount hook function failure: mount"
        " /proc/self/fd/9->/var/apptainer/mnt/session/rootfs error: while mounting image /proc/self/fd/9:"
        " squashfuse_ll exited with status 255: Something went wrong trying to read the squashfs image.",
        True,
    ),
    # NVIDIA/nccl #1247 (NCCL's internal error through PyTorch)
    (
        "torch.distributed.DistBackendError: NCCL error in:"
        " /root/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, internal error - please report this"
        " issue to the NCCL developers, NCCL version 2.18.6\nncclInternalError: Internal check failed.\nLast"
        " error:\nAttribute busid of node nic not found",
        True,
    ),
]


@pytest.mark.parametrize(("text", "retryable"), ALREADY_RIGHT)
def test_the_nodes_software_that_was_already_read_right(text: str, retryable: bool) -> None:
    _, category, retry = verdict(text)
    assert (category, retry) == ("system_software", retryable)
