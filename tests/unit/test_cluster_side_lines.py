"""Real excerpts of what the cluster's side prints around a training job: MPICH's error stacks
(Intel MPI, MVAPICH), UCX before 1.6, enroot under pyxis, libibverbs loading its providers.
Each is read as the system's own source says it means, with the public thread it comes from;
warnings of jobs that went on must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

FAILURES = [
    # github.com/JCSDA-internal/soca/issues/682: Intel MPI under srun (ctest's `3: ` label) finds no
    # libfabric provider at MPI_Init (MPICH ch4/netmod/ofi "**ofid_addrinfo", fi_getinfo)
    (
        "3: OOPS Starting 2021-11-16 15:34:27 (UTC+0000)\n"
        "3: Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
        "3: MPIR_Init_thread(136)........:\n"
        "3: MPID_Init(1138)..............:\n"
        "3: MPIDI_OFI_mpi_init_hook(1061): OFI addrinfo() failed (ofi_init.c:1061:MPIDI_OFI_mpi_init_hook:No data"
        " available)\n"
        "3: In: PMI_Abort(1091215, Fatal error in PMPI_Init: Other MPI error, error stack:\n"
        "3: MPIR_Init_thread(136)........:",
        "mpich-stack-ofi-addrinfo-failed",
        "system_software",
        True,
    ),
    # github.com/aws/aws-parallelcluster/issues/1695: Intel MPI on EFA could not insert its peers'
    # addresses (MPICH "**ofid_avmap", fi_av_insert) at 185 ranks and more
    (
        "Abort(1091471) on node 185 (rank 185 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
        "MPIR_Init_thread(703)........: \n"
        "MPID_Init(958)...............: \n"
        "MPIDI_OFI_mpi_init_hook(1382): OFI get address vector map failed\n"
        "Abort(1091471) on node 192 (rank 192 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
        "MPIR_Init_thread(703)........: \n"
        "MPID_Init(958)...............: ",
        "mpich-stack-ofi-get-address-vector-map-failed",
        "network",
        True,
    ),
    # github.com/JCSDA/spack-stack/issues/1356: the same, four frames down, after UCX's own error
    (
        "[1729541309.956681] [s4-204-c2:1760273:0]          select.c:630  UCX  ERROR   no active messages transport"
        " to <no debug data>: self/memory - Destination is unreachable\n"
        "Abort(1615247) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
        "MPIR_Init_thread(176)............:\n"
        "MPID_Init(1548)..................:\n"
        "MPIDI_OFI_mpi_init_hook(1682)....:\n"
        "insert_addr_table_roots_only(462): OFI get address vector map failed",
        "mpich-stack-ofi-get-address-vector-map-failed",
        "network",
        True,
    ),
    # github.com/jtriley/StarCluster/issues/406: MPICH built with BLCR on a node without its module
    (
        "Fatal error in MPI_Init: Other MPI error, error stack:\n"
        "MPIR_Init_thread(392)...:\n"
        "MPID_Init(139)..........: channel initialization failed\n"
        "MPIDI_CH3_Init(38)......:\n"
        "MPID_nem_init(322)......:\n"
        "MPIDI_nem_ckpt_init(149): BLCR kernel module not present",
        "mpich-stack-blcr-kernel-module-not-present",
        "system_software",
        True,
    ),
    # github.com/nest/nest-simulator/issues/376: MVAPICH2 splits the header over two lines
    (
        "[cli_71]: aborting job:\nFatal error in PMPI_Init_thread:\nOther MPI error",
        "mpich-fatal-error-split",
        "unknown",
        True,
    ),
    # github.com/openucx/ucx/issues/2973: UCX 1.5's completion error (ib_mlx5_log.c at v1.5.0)
    (
        "[ast1815:6807 :0:6807] ib_mlx5_log.c:115  FATAL: Error on mlx5_3:1 QP 0xe6d7 wqe[7821]: Transport retry"
        " count exceeded (synd 0x15 vend 0x81) opcode SEND\n"
        "==== backtrace ====\n"
        "0 0x000000000002cf1c uct_ib_mlx5_completion_with_err()  /home/abuild/rpmbuild/BUILD/ucx-1.5.20181220/src/"
        "uct/ib/mlx5/ib_mlx5_log.c:112",
        "ucx-transport-error",
        "network",
        True,
    ),
    # github.com/NVIDIA/pyxis/issues/61: the image has no /bin/bash (enroot-switchroot.c execv)
    (
        "pyxis: importing docker image ...\n"
        "slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "slurmstepd: error: pyxis: printing contents of log file ...\n"
        "slurmstepd: error: pyxis:     enroot-switchroot: failed to execute: /bin/bash: No such file or directory\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
        "slurmstepd: error: pyxis: if the image has an unusual entrypoint, try using --no-container-entrypoint\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "slurmstepd: error: Failed to invoke spank plugin stack\n"
        "srun: error: hpc-pg0-2: task 1: Exited with exit code 1",
        "container-enroot-shell-missing",
        "application",
        False,
    ),
]


@pytest.mark.parametrize(("text", "signature", "category", "retryable"), FAILURES)
def test_cluster_side_failures(text: str, signature: str, category: str, retryable: bool) -> None:
    assert verdict(text) == (signature, category, retryable)


def test_ucx_padded_pid_names_the_node() -> None:
    # github.com/openucx/ucx/issues/2973: UCX pads the pid ("[%s:%-5d:%d:%d] ", ucs/debug/log.c)
    text = (
        "[ast1815:6807 :0:6807] ib_mlx5_log.c:115  FATAL: Error on mlx5_3:1 QP 0xe6d7 wqe[7821]: Transport retry"
        " count exceeded (synd 0x15 vend 0x81) opcode SEND"
    )
    assert diagnose(text).implicated.nodes == ["ast1815"]


def test_mpich_stack_without_a_message_stays_the_class() -> None:
    # github.com/mpi4py/mpi4py/issues/281: no frame says what failed; the class (Other MPI error) speaks
    text = (
        "Abort(1090959) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:\n"
        "MPIR_Init_thread(176)........:\n"
        "MPID_Init(1538)..............:\n"
        "MPIDI_OFI_mpi_init_hook(1473):\n"
        "(unknown)(): Other MPI error\n"
        "[unset]: write_line error; fd=-1 buf=:cmd=abort exitcode=1090959\n"
        "Segmentation fault (core dumped)"
    )
    assert verdict(text) == ("mpi-errors-mpi-err-other", "unknown", True)


HEALTHY = [
    # github.com/bytedance/byteps/issues/313: libibverbs skips providers it cannot load (rdma-core
    # libibverbs/dynamic_driver.c, "Warning: couldn't load driver"); the loader's text it quotes is no failure
    "libibverbs: Warning: couldn't load driver 'vmw_pvrdma': /usr/local/nvidia/cpu_lib/libibverbs.so.1: version"
    " `IBVERBS_PRIVATE_22' not found (required by /usr/lib64/libibverbs/libvmw_pvrdma-rdmav2.so)\n"
    "libibverbs: Warning: couldn't load driver 'mlx4': /usr/local/nvidia/cpu_lib/libibverbs.so.1: version"
    " `IBVERBS_PRIVATE_22' not found (required by /usr/lib64/libibverbs/libmlx4-rdmav2.so)",
    # github.com/NVIDIA/nccl/issues/1044
    "libibverbs: Warning: couldn't load driver 'libipathverbs-rdmav25.so': libipathverbs-rdmav25.so: cannot open"
    " shared object file: No such file or directory",
    # github.com/open-mpi/ompi/issues/10693: Open MPI 4's openib BTL declines the port; UCX carries the job
    "--------------------------------------------------------------------------\n"
    "WARNING: There was an error initializing an OpenFabrics device.\n\n"
    "  Local host:   lxbk1039\n"
    "  Local device: mlx5_0\n"
    "--------------------------------------------------------------------------\n"
    "[lxbk1039:106838] 11 more processes have sent help message help-mpi-btl-openib.txt / ib port not selected",
    # github.com/chaos/slurm/issues/54: Slurm's cgroup saw the page cache reach the limit; the job completed
    "52428800 bytes (52 MB) copied, 0.459204 s, 114 MB/s\nslurmstepd: Exceeded step memory limit at some point.",
    # github.com/lyulyul/shine-cluster/issues/29: task/cgroup's affinity complaint; the job ran
    "slurmstepd-eureka: error: task/cgroup: hwloc_get_obj_below_by_type() failing, task/affinity plugin may be"
    " required to address bug fixed in HWLOC version 1.11.5\n"
    "slurmstepd-eureka: error: task/cgroup: task[0] unable to set taskset '0x0'",
    # github.com/neurodesk/neurodesktop/issues/102: Apptainer's underlay notice
    "WARNING: underlay of /etc/localtime required more than 50 (69) bind mounts",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_cluster_side_warnings_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
