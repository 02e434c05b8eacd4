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
    # github.com/aws/aws-ofi-nccl/issues/1020: the EFA devices were not exposed to the container
    (
        "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI"
        " fi_getinfo() call failed: No data available",
        "nccl-ofi-ofi-fi-getinfo-call-failed",
        "system_software",
        True,
    ),
    # github.com/awslabs/awsome-distributed-ai/issues/203: libfabric refused the GPU buffer's registration
    (
        "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22,"
        " Error: Invalid argument",
        "nccl-ofi-unable-to-register-memory",
        "system_software",
        True,
    ),
    # github.com/aws/aws-ofi-nccl/issues/156: a send completed with an error (a security group between nodes)
    (
        "[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8"
        " completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev:"
        " 1, size: 0, state: CREATED, direction: SEND }\n"
        "[1,13]<stderr>:libfabric:35:1668017255::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error:"
        " err: 20, prov_err: Not a directory (20)",
        "nccl-ofi-completed-with-error",
        "network",
        True,
    ),
    # github.com/facebookresearch/moco/issues/25: an uncaught std::system_error from the process group's
    # socket (libstdc++'s terminate handler prints its what(), the errno's text: ENOTCONN); the
    # DataLoader workers' unpickling errors after it are the cascade
    (
        "terminate called after throwing an instance of 'std::system_error'\n"
        "  what():  Transport endpoint is not connected\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.6/multiprocessing/spawn.py", line 115, in _main\n'
        "    self = reduction.pickle.load(from_parent)\n"
        "_pickle.UnpicklingError: pickle data was truncated",
        "uncaught-exception",
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


def test_open_mpi_names_the_lost_daemons_node() -> None:
    # github.com/open-mpi/ompi/issues/11830: help-errmgr-base.txt's "Remote daemon: ... on node X"
    text = (
        "ORTE has lost communication with a remote daemon.\n\n"
        "  HNP daemon   : [[32679,0],0] on node ip-172-31-45-184\n"
        "  Remote daemon: [[32679,0],1] on node queue-g4dn12xlarge-st-g4dn12xlarge-1\n\n"
        "This is usually due to either a failure of the TCP network\n"
        "connection to the node"
    )
    found = diagnose(text)
    assert (found.category, found.implicated.nodes) == ("network", ["queue-g4dn12xlarge-st-g4dn12xlarge-1"])


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
    # github.com/aws/aws-ofi-nccl/issues/161: libfabric's own <warn> and the plugin's INFO at start-up
    "algo-1:462:462 [0] NCCL INFO NET/OFI Setting FI_EFA_FORK_SAFE environment variable to 1\n"
    "libfabric:462:1673041636:efa:core:rxr_info_to_rxr():506<warn> FI_HMEM capability requires RDMA, which this"
    " device does not support.\n"
    "algo-1:462:462 [0] NCCL INFO NET/OFI Selected Provider is efa\n"
    "algo-1:462:462 [0] NCCL INFO Using network AWS Libfabric",
    # github.com/openucx/ucx/issues/2654: UCX warns that a device UCX_NET_DEVICES lists is absent here
    "Sun May 27 12:24:33 2018[1,61]<stdout>:[1527413073.646167] [hpc-arm-hwi02:6875 :0]    ucp_context.c:586  UCX"
    "  WARN  device 'mlx5_3:1' is not available",
    # github.com/neurodesk/neurodesktop/issues/102: Apptainer's underlay notice
    "WARNING: underlay of /etc/localtime required more than 50 (69) bind mounts",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_cluster_side_warnings_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
