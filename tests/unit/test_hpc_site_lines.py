"""Whole excerpts of real logs from GPU jobs on HPC centres' machines (Slingshot systems with HPE Cray
MPICH and libfabric's CXI provider, PALS on Polaris and Aurora, Flux on LLNL's Cray EX, ROCm on
Frontier and LUMI, Slurm's own messages), each with where it was printed, and the alarming but
harmless lines those sites' jobs print (PMI's deliberate missing key, srun's retries, slurmstepd's
fallback to /tmp, Lmod, libibverbs, MIOpen and hipBLASLt notices), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # ofiwg/libfabric issue 11307 (Perlmutter): Cray MPICH's header names rank and node, the stack's innermost
    # frame says what failed; the CXI provider's fi_strerror in its parentheses is not a filesystem's EIO.
    (
        "https://github.com/ofiwg/libfabric/issues/11307",
        "MPICH ERROR [Rank 11122] [job id 41595204.0] [Thu Aug 14 08:27:11 2025] [nid006700] - Abort(2695311) (rank 11122 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, error stack:\n"
        "MPIDI_Progress_test(97)..............:\n"
        "MPIDI_OFI_handle_cq_error(1075)......: OFI poll failed (ofi_events.c:1077:MPIDI_OFI_handle_cq_error:Input/output error - CANCELED)",
        "network",
        True,
        "mpich-stack-ofi-poll-failed",
    ),
    # ofiwg/libfabric issue 10072 (Adastra, as LUMI and Frontier): PTLTE_NOT_FOUND from the CXI provider.
    (
        "https://github.com/ofiwg/libfabric/issues/10072",
        "MPICH ERROR [Rank 519] [job id 947981.0] [Tue Jun 11 15:11:42 2024] [c1207] - Abort(539602063) (rank 519 in comm 0): Fatal error in PMPI_Iprobe: Other MPI error, error stack:\n"
        "MPIDI_OFI_do_iprobe(77)........:\n"
        "MPIDI_OFI_handle_cq_error(1075): OFI poll failed (ofi_events.c:1077:MPIDI_OFI_handle_cq_error:Input/output error - PTLTE_NOT_FOUND)",
        "network",
        True,
        "mpich-stack-ofi-poll-failed",
    ),
    # flux-framework/flux-coral2 issue 36 (Tioga): Flux prints MPICH's whole stack on one job.exception line.
    (
        "https://github.com/flux-framework/flux-coral2/issues/36",
        "1.739s: job.exception type=exec severity=0 MPI_Abort: Fatal error in PMPI_Init: Other MPI error, error stack: MPIR_Init_thread(170).......:  MPID_Init(501)..............:  MPIDI_OFI_mpi_init_hook(814):  create_endpoint(1359).......: OFI EP enable failed (ofi_init.c:1359:create_endpoint:Address already in use)",
        "system_software",
        True,
        "mpich-stack-ofi-ep-enable-failed",
    ),
    # pmodels/mpich issue 7569 (Aurora): PALS's per-rank line; the SIGTERM after it is PALS ending the others.
    (
        "https://github.com/pmodels/mpich/issues/7569",
        "x4006c0s6b0n0.hsn.cm.aurora.alcf.anl.gov: rank 256 died from signal 11\n"
        "x4001c5s4b0n0.hsn.cm.aurora.alcf.anl.gov: rank 0 died from signal 15",
        "unknown",
        True,
        "pals-rank-signalled",
    ),
    # pmodels/mpich issue 6924 (SDSC Expanse): srun started MPICH ranks it has no PMI for.
    (
        "https://github.com/pmodels/mpich/issues/6924",
        "PMII_singinit: execv failed: No such file or directory\n"
        "[unset]:   This singleton init program attempted to access some feature\n"
        "[unset]:   for which process manager support was required, e.g. spawn or universe_size.\n"
        "[unset]:   But the necessary mpiexec is not in your path.",
        "application",
        False,
        "mpich-singleton-init-failed",
    ),
    # snakemake/snakemake-executor-plugin-slurm issue 373: an inner srun inherits SLURM_TRES_PER_TASK.
    (
        "https://github.com/snakemake/snakemake-executor-plugin-slurm/issues/373",
        "srun: fatal: SLURM_TRES_PER_TASK is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU",
        "application",
        False,
        "scheduler-slurm-conflicting-options",
    ),
    # mila-iqia/milabench issue 335: ROCm 6's runtime names the queue it aborts.
    (
        "https://github.com/mila-iqia/milabench/issues/335",
        "brax.0 [stderr] :0:rocdevice.cpp            :2984: 159730272363 us: [pid:403868 tid:0x7f37b81ff640] Callback: Queue 0x7ef728200000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29",
        "unknown",
        True,
        "rocm-queue-callback-abort",
    ),
    # mosaicml/composer issue 1165: Composer's launcher reports the rank that crashed (SIGABRT).
    (
        "https://github.com/mosaicml/composer/issues/1165",
        '[EPOCH][batch=42500]: { "metrics/eval/Accuracy": 0.7575, "metrics/eval/CrossEntropy": 1.6468, }\n'
        "ERROR:composer.cli.launcher:Rank 2 crashed with exit code -6",
        "unknown",
        True,
        "composer-rank-crashed",
    ),
    # EleutherAI/gpt-neox issue 1310 (LUMI): the ROCm runtime's memory access fault, reason unknown.
    (
        "https://github.com/EleutherAI/gpt-neox/issues/1310",
        "GPU core dump failed\n"
        "Memory access fault by GPU node-9 (Agent handle: 0x7d5f990) on address 0x14a1cfe01000. Reason: Unknown.\n"
        "Memory access fault by GPU node-6 (Agent handle: 0x7d5b060) on address 0x14c2c7e01000. Reason: Unknown.",
        "unknown",
        True,
        "rocm-memory-access-fault",
    ),
    # OSC's knowledge base: Slurm's cgroup OOM kill and srun's per-task report.
    (
        "https://www.osc.edu/documentation/knowledge_base/out_of_memory_oom_or_excessive_memory_usage",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=14604003.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\n"
        "\n"
        "srun: error: o0616: task 0: Out Of Memory",
        "out_of_memory",
        False,
        "slurm-oom",
    ),
    # SystemsGenetics/GEMmaker issue 233: preempted on a back queue.
    (
        "https://github.com/SystemsGenetics/GEMmaker/issues/233",
        "slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 DUE TO PREEMPTION ***",
        "scheduler",
        True,
        "slurm-preempted",
    ),
    # Parsl/parsl issue 3858 (Frontier): both ROCR_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES set, no GPU left.
    (
        "https://github.com/Parsl/parsl/issues/3858",
        "0\n    torch._C._cuda_init()\nRuntimeError: No HIP GPUs are available",
        "system_software",
        True,
        "rocm-no-device",
    ),
    # NVIDIA-NeMo/Run issue 266: NCCL finds no NET device in its topology and fails internally.
    (
        "https://github.com/NVIDIA-NeMo/Run/issues/266",
        "graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order\n"
        "graph/topo.h:230 NCCL WARN Could not find NET with id 0\n"
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3376, internal error - please report this issue to the NCCL developers, NCCL version 2.25.1",
        "system_software",
        True,
        "nccl-internal-error",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_hpc_site_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_cray_mpich_header_names_the_node_of_the_failing_frame() -> None:
    # ofiwg/libfabric issue 11307: the frame says what failed, the header above it where.
    found = diagnose(FAILURES[0][1])
    assert (found.implicated.nodes, found.implicated.ranks) == (["nid006700"], [11122])


def test_pals_names_the_rank_that_died_first() -> None:
    # pmodels/mpich issue 7569: rank 256 died of SIGSEGV; rank 0's SIGTERM is PALS ending the rest.
    found = diagnose(FAILURES[3][1])
    assert (found.implicated.nodes, found.implicated.ranks) == (["x4006c0s6b0n0"], [256])


HEALTHY = [
    # pmodels/mpich issue 6687 (Perlmutter): PMI2's barrier fetches a key that is meant to be missing.
    "PMI2_KVS_Get:_pmi2_kvs_get failed\n_pmi2_kvs_get:key [-NONEXIST-KEY] was not found.",
    # fractal-analytics-platform/fractal-server issue 2835: srun retries step creation, then creates the steps.
    "srun: Job 23547409 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
    "srun: Job 23547409 step creation still disabled, retrying (Requested nodes are busy)\n"
    "srun: Step created for StepId=23547409.1\n"
    "srun: Step created for StepId=23547409.2",
    # NVIDIA/deepops issue 1179: slurmstepd falls back to /tmp and the NCCL test starts.
    "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n"
    "pyxis: importing docker image ...\n"
    "#\n"
    "# Using devices\n"
    "#   Rank  0 Pid 131398 on    mlperf1 device  0 [0xaf] NVIDIA A100-PCIE-40GB",
    # ornladios/ADIOS2 pull 3672: srun lowers the node count; ADIOS2 skips CXI domains it does not support.
    "srun: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    "Writer 0 (0x3078d0): Sst set to use sockets as a Control Transport\n"
    "Provider: 'cxi', domain: 'cxi0'\n"
    "DP Writer 0 (0x3078d0): ignoring fabric cxi because it's not of a supported type. It may work to force this fabric to be used by setting FABRIC_IFACE to cxi0, but it may not be stable or performant.",
    # ComputationalRadiationPhysics/picongpu pull 3492 (Summit): Lmod swaps modules.
    "\n"
    'Lmod is automatically replacing "xl/16.1.1-5" with "gcc/8.1.1".\n'
    "\n"
    "\n"
    "Due to MODULEPATH changes, the following have been reloaded:\n"
    "  1) spectrum-mpi/10.3.1.2-20200121",
    # ComputationalRadiationPhysics/picongpu issue 3483 (hemera): libibverbs skips a provider it cannot load.
    "libibverbs: Warning: couldn't load driver 'librxe-rdmav25.so': librxe-rdmav25.so: cannot open shared object file: No such file or directory",
    # galaxyproject/galaxy issue 2359: the step was not killed; Slurm recorded the job COMPLETED.
    "slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially swapped out to disk.",
    # ROCm/MIOpen issue 1709: MIOpen's missing kernel database slows the run down, no more.
    "Fusing layers... \n"
    "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_36.kdb Performance may degrade. Please follow instructions to install: https://github.com/ROCmSoftwarePlatform/MIOpen#installing-miopen-kernels-package",
    # ROCm/rocm-libraries issue 780 (MI100): PyTorch falls back from hipBLASLt to hipBLAS.
    "UserWarning: Attempting to use hipBLASLt on an unsupported architecture! Overriding blas backend to hipblas",
    # MLI-lab/DeepDeWedge issue 25: more DataLoader workers than the CPUs Slurm gave the task.
    "UserWarning: This DataLoader will create 10 worker processes in total. Our suggested max number of worker in current system is 1, which is smaller than what this DataLoader is going to create.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_hpc_site_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
