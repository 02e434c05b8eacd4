"""Whole excerpts of real logs where a failure reached the log in another program's words: NVIDIA
PhysX's GPU pipeline as Isaac Sim's omni.physx plugin logs it (the CUresult of a failed driver call,
or the name of a kernel that did not launch, then the plugin's notice that it stopped the
simulation), NCCL's own refused CUDA call as PyTorch quotes it under "Last error:", a failed execve
as slurmstepd writes it to the step's stderr in its daemon form ("[<timestamp>] error: ...", no
program name), and the CUDA runtime's message under the CHECK macro of a CUDA book; and PhysX's
buffer-overflow reports, which the simulation goes on after, and a program's advice that names a
CUDA error, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # isaac-sim/IsaacLab issue 1460: an RL environment's cup hits the table and PhysX's narrowphase
    # fails with 700 (an illegal address); the plugin's "Cuda context manager error" follows it.
    (
        "https://github.com/isaac-sim/IsaacLab/issues/1460",
        "2024-11-25 09:13:08 [11,526ms] [Error] [omni.physx.plugin] PhysX error: Synchronizing GPU Narrowphase"
        " failed! 700\n"
        ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 1259\n"
        "2024-11-25 09:13:08 [11,526ms] [Error] [omni.physx.plugin] Cuda context manager error, simulation will be"
        " stopped and new cuda context manager will be created.\n"
        "2024-11-25 09:13:08 [11,526ms] [Error] [omni.physx.plugin] PhysX error: Fetching GPU Narrowphase failed!"
        " 700\n"
        ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 1367\n"
        "2024-11-25 09:13:08 [11,526ms] [Error] [omni.physx.plugin] Cuda context manager error, simulation will be"
        " stopped and new cuda context manager will be created.\n"
        "2024-11-25 09:13:08 [11,526ms] [Error] [omni.physx.plugin] PhysX error: SynchronizeStreams cuEventRecord"
        " failed with error 700\n"
        ", FILE /builds/omniverse/physics/physx/source/gpucommon/include/PxgCudaUtils.h, LINE 57",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
    # isaac-sim/IsaacLab issue 2423: a narrowphase kernel does not launch, over and over (no CUresult).
    (
        "https://github.com/isaac-sim/IsaacLab/issues/2423",
        "2025-05-04 10:16:56 [58,167ms] [Error] [omni.physx.plugin] PhysX error: GPU convexCoreConvexNphase_Kernel"
        " fail to launch!!\n"
        ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 920\n"
        "2025-05-04 10:16:56 [58,175ms] [Error] [omni.physx.plugin] PhysX error: GPU convexCoreConvexNphase_Kernel"
        " fail to launch!!\n"
        ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 920",
        "unknown",
        True,
        "physx-gpu-kernel-launch-failed",
    ),
    # isaac-sim/OmniIsaacGymEnvs issue 11: the plugin's notice comes first; the solver's kernels that
    # did not launch are the failure, one of them named in words.
    (
        "https://github.com/isaac-sim/OmniIsaacGymEnvs/issues/11",
        "2022-09-22 01:17:40 [28,763ms] [Error] [omni.physx.plugin] Cuda context manager error, simulation will be"
        " stopped and new cuda context manager will be created.\n"
        "2022-09-22 01:17:40 [28,763ms] [Error] [omni.physx.plugin] PhysX error: GPU solveContactParallel fail to"
        " launch kernel!!\n"
        ", FILE /buildAgent/work/99bede84aa0a52c2/source/gpusolver/src/PxgTGSCudaSolverCore.cpp, LINE 1529\n"
        "2022-09-22 01:17:40 [28,763ms] [Error] [omni.physx.plugin] Cuda context manager error, simulation will be"
        " stopped and new cuda context manager will be created.\n"
        "2022-09-22 01:17:40 [28,763ms] [Error] [omni.physx.plugin] PhysX error: GPU compute solver bodies average"
        " velocities fail to launch kernel!!\n"
        ", FILE /buildAgent/work/99bede84aa0a52c2/source/gpusolver/src/PxgTGSCudaSolverCore.cpp, LINE 1697",
        "unknown",
        True,
        "physx-gpu-kernel-launch-failed",
    ),
    # InternLM/xtuner issue 314: eight ranks print the DistBackendError interleaved; the detail under
    # "Last error:" is NCCL's own CUDA call refused with 'invalid argument' (NCCL and the stack).
    (
        "https://github.com/InternLM/xtuner/issues/314",
        "NPROC_PER_NODE=8 xtuner train internlm_chat_7b_qlora_antibody_e3.py --deepspeed deepspeed_zero2\n"
        "torch.distributedtorch.distributed..DistBackendError: DistBackendErrorNCCL error in:"
        " ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled cuda error (run with NCCL_DEBUG=INFO"
        " for details), NCCL version 2.18.1\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\n"
        "Cuda failure 'invalid argument':\n"
        "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled cuda error (run with"
        " NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\n"
        "Cuda failure 'invalid argument'",
        "system_software",
        True,
        "nccl-own-cuda-call-refused",
    ),
    # interTwin-eu/itwinai issue 472: the step's program is not found on either node; slurmstepd's
    # execve error comes through srun in the daemon form, between srun's exit-code lines.
    (
        "https://github.com/interTwin-eu/itwinai/issues/472",
        "srun: error: udc-aj36-35: task 0: Exited with exit code 2\n"
        "srun: Terminating StepId=6666903.0\n"
        "[2025-12-11T02:29:03.160] error: execve(): bash: No such file or directory\n"
        "[2025-12-11T02:29:03.321] error: execve(): bash: No such file or directory\n"
        "srun: error: udc-aj40-35: task 1: Exited with exit code 2",
        "application",
        False,
        "scheduler-slurm-execve-failed",
    ),
    # brucefan1983/GPUMD issue 1210: MD with a self-trained NEP potential; GPUMD's CHECK macro (the
    # one of Zheyong Fan's CUDA book, copied into many projects) prints the runtime's message last.
    (
        "https://github.com/brucefan1983/GPUMD/issues/1210",
        "CUDA Error:\n"
        "    File:       force/potential.cu\n"
        "    Line:       332\n"
        "    Error code: 700\n"
        "    Error text: an illegal memory access was encountered",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_relayed_reports(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_physx_kernel_launch_error_reads_its_curesult() -> None:
    # isaac-sim/IsaacLab issue 2647: PxgKernelLauncher's launch error carries the CUresult (400: an
    # invalid handle), which says more than the plugin's notice before it.
    found = diagnose(
        "2025-06-09 17:58:44 [10,519ms] [Error] [omni.physx.plugin] Cuda context manager error, simulation will be"
        " stopped and new cuda context manager will be created.\n"
        "2025-06-09 17:58:44 [10,520ms] [Error] [omni.physx.plugin] PhysX error: GPU kernel 'aggCopyReports' failed"
        " to launch with error 400!!\n"
        ", FILE /builds/omniverse/physics/physx/source/gpubroadphase/src/PxgAABBManager.cpp, LINE 742"
    )
    assert found.evidence[0].signature == "cuda-invalid-resource-handle"


HEALTHY = [
    # isaac-sim/IsaacLab issue 931: rsl-rl training goes on while PhysX reports its patch buffer
    # overflowing (it drops contacts and says which buffer to grow).
    "                   Total timesteps: 8650752\n"
    "                    Iteration time: 8.99s\n"
    "                        Total time: 729.23s\n"
    "                               ETA: 539.3s\n"
    "\n"
    "2024-09-05 14:18:43 [759,765ms] [Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected,"
    " please increase its size to at least 178421 in the scene desc!\n"
    ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 1272\n"
    "2024-09-05 14:18:43 [759,853ms] [Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected,"
    " please increase its size to at least 178421 in the scene desc!\n"
    ", FILE /builds/omniverse/physics/physx/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp, LINE 1272",
    # isaac-sim/IsaacLab issue 1199: the same report for the collision stack, as PhysX prints it itself.
    "/buildAgent/work/99bede84aa0a52c2/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp (2185) : internal error :"
    " PxgDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its size to at least"
    " 1484688128 in the scene desc!\n"
    "\n"
    "/buildAgent/work/99bede84aa0a52c2/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp (2185) : internal error :"
    " PxgDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its size to at least"
    " 1484579544 in the scene desc!",
    # deepmodeling/deepmd-kit issue 5024: training starts on ROCm; XLA's plugin notices are logged as
    # errors, and DeePMD's advice names 'an illegal memory access was encountered'.
    "(deepmd-kit-3.1.1-py310) user@host:~/CH4/01.train$ dp train input.json \n"
    "2025-10-26 17:00:50.514247: E external/local_xla/xla/stream_executor/plugin_registry.cc:91] Invalid plugin"
    " kind specified: FFT\n"
    "2025-10-26 17:00:50.759782: E external/local_xla/xla/stream_executor/plugin_registry.cc:91] Invalid plugin"
    " kind specified: DNN\n"
    "Switch to serial execution due to lack of horovod module.\n"
    "[2025-10-26 17:00:53,061] DEEPMD INFO    Calculate neighbor statistics... (add --skip-neighbor-stat to skip"
    " this step)\n"
    "[2025-10-26 17:00:53,384] DEEPMD INFO    If you encounter the error 'an illegal memory access was"
    " encountered', this may be due to a TensorFlow issue. To avoid this, set the environment variable"
    " DP_INFER_BATCH_SIZE to a smaller value than the last adjusted batch size.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_relayed_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
