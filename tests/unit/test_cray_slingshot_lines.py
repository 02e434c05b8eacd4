"""Whole excerpts of real logs from HPE Cray EX supercomputers (Frontier, Perlmutter, Polaris,
Aurora, Alps) and the MPI stacks run there: Cray MPICH's GPU transport layer (GTL) failing a GPU
call or missing from the link, MPICH's own abort line naming the failing rank, PALS's mpiexec
rejecting an option, MVAPICH2 on a node without the InfiniBand libraries; and the alarming but
harmless lines the same stacks print (MPICH's OFI retry warning, GASNet's CXI settings warning,
libfabric's info chatter, the SST data plane skipping the CXI fabric), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # BLAST-WarpX/warpx issue 6382 (Perlmutter): GTL cannot open a peer's CUDA IPC handle; the
    # Waitall's "Invalid count" after it is the consequence, not a program error of its own.
    (
        "https://github.com/BLAST-WarpX/warpx/issues/6382",
        "(GTL DEBUG: 1) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 360\n"
        "(GTL DEBUG: 2) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 360\n"
        "MPICH ERROR [Rank 1] [job id 45070892.1] [Mon Nov 10 17:03:48 2025] [nid008237] - Abort(4864002)"
        " (rank 1 in comm 0): Fatal error in PMPI_Waitall: Invalid count, error stack:\n"
        "PMPI_Waitall(378).........................: MPI_Waitall(count=1, req_array=0x2accbaa0,"
        " status_array=0x2acc9160) failed\n"
        "MPIR_Waitall(167).........................:\n"
        "MPIDI_CRAY_Common_lmt_import_mem(218).....:\n"
        "(unknown)(): Invalid count",
        "application",
        False,
        "cray-mpich-gtl-gpu-call-failed",
    ),
    # shankar1729/jdftx issue 252 (Perlmutter): the same GTL failure before a Cray broadcast.
    (
        "https://github.com/shankar1729/jdftx/issues/252",
        "average nbasis = 4337.000 , ideal nbasis = 4272.076\n"
        "(GTL DEBUG: 1) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 272\n"
        "(GTL DEBUG: 2) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 272\n"
        "MPICH ERROR [Rank 1] [job id 3246040.0] [Fri Sep 23 17:26:26 2022] [nid001616] - Abort(475555330)"
        " (rank 1 in comm 0): Fatal error in MPIR_CRAY_Bcast_Tree: Invalid count, error stack:\n"
        "MPIR_CRAY_Bcast_Tree(183).................: message sizes do not match across processes in the"
        " collective routine: Received -32766 but expected 20992",
        "application",
        False,
        "cray-mpich-gtl-gpu-call-failed",
    ),
    # sstsimulator/sst-core issue 895 (Perlmutter): GPU support requested, program built without GTL.
    (
        "https://github.com/sstsimulator/sst-core/issues/895",
        "user@perlmutter:login31:~> sst --version\n"
        "MPICH ERROR [Rank 0] [job id ] [Thu Dec 29 08:08:13 2022] [login31] - Abort(-1) (rank 0 in comm 0):"
        " MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked\n"
        " (Other MPI error)\n"
        "\n"
        "aborting job:\n"
        "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
        "application",
        False,
        "cray-mpich-gtl-not-linked",
    ),
    # Parsl/parsl issue 2446 (Polaris): PALS's mpiexec does not know Open MPI's --bind-to.
    (
        "https://github.com/Parsl/parsl/issues/2446",
        "mpiexec: unrecognized option '--bind-to'\n"
        "Usage: mpiexec [global_options] [command_options] cmd1\n"
        "    [: [command_options] cmd2 [: ...] ]",
        "application",
        False,
        "mpi-launcher-unrecognized-option",
    ),
    # E4S-Project/e4s issue 137 (Polaris): MVAPICH2 on Slingshot nodes finds no InfiniBand libraries.
    (
        "https://github.com/E4S-Project/e4s/issues/137",
        "Error opening libibverbs.so: libibverbs.so: cannot open shared object file: No such file or directory.\n"
        "Please retry with MV2_LIBIBVERBS_PATH=<path/to/libibverbs.so>\n"
        "mv2_ibv_dlopen_init returned -1\n"
        "Error opening libibmad.so: libibmad.so: cannot open shared object file: No such file or directory.\n"
        "Please retry with MV2_LIBIBMAD_PATH=<path/to/libibmad.so>\n"
        "mv2_mad_dlopen_init returned -1",
        "system_software",
        True,
        "mvapich-ib-library-missing",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_cray_stack_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_gtl_failure_keeps_the_rank_and_node_of_the_cray_abort() -> None:
    # BLAST-WarpX/warpx issue 6382: GTL's lines name nobody; Cray MPICH's abort after them does.
    found = diagnose(
        "(GTL DEBUG: 1) cuIpcOpenMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 360\n"
        "MPICH ERROR [Rank 1] [job id 45070892.1] [Mon Nov 10 17:03:48 2025] [nid008237] - Abort(4864002)"
        " (rank 1 in comm 0): Fatal error in PMPI_Waitall: Invalid count, error stack:"
    )
    assert (found.implicated.nodes, found.implicated.ranks) == (["nid008237"], [1])


def test_mpich_abort_names_the_world_rank() -> None:
    # ofiwg/libfabric issue 5648 (Intel MPI): MPID_Abort's "on node 18" is the rank in MPI_COMM_WORLD.
    found = diagnose(
        "Abort(1681039) on node 18 (rank 18 in comm 0): Fatal error in PMPI_Iprobe: Other MPI error, error stack:\n"
        "PMPI_Iprobe(119)...............: MPI_Iprobe(src=39, tag=820, MPI_COMM_WORLD, flag=0x7ffe34a5f8dc,"
        " status=0x7ffe34a5f920) failed\n"
        "MPID_Iprobe(441)...............: \n"
        "MPIDI_Progress_test_impl(195)..: \n"
        "MPIDI_OFI_handle_cq_error(1008): OFI poll failed (ofi_events.h:1008:MPIDI_OFI_handle_cq_error:"
        "Cannot allocate memory)"
    )
    assert (found.category, found.implicated.ranks, found.implicated.nodes) == ("network", [18], [])


HEALTHY = [
    # ofiwg/libfabric issue 9286 (Perlmutter): Cray MPICH retries a receive post and goes on.
    "PE 0: MPICH WARNING: OFI is failing to make progress on posting a receive. MPICH suspects a hang due to"
    " completion queue exhaustion. Setting environment variable FI_CXI_DEFAULT_CQ_SIZE to a higher number"
    " might circumvent this scenario. OFI retry continuing...",
    # StanfordLegion/legion issue 1657 (Frontier): GASNet could not apply its FI_CXI_* settings.
    "*** WARNING: ofi-conduit failed to configure FI_CXI_* environment variables due to prior conflicting"
    " settings. This may lead to unstable behavior and/or degraded performance. If you did not intentionally"
    " set FI_CXI_RX_MATCH_MODE='software', FI_CXI_RDZV_THRESHOLD='16384', or FI_CXI_RDZV_GET_MIN then this"
    " condition may have resulted from initializing MPI prior to initialization of GASNet.",
    # ornladios/ADIOS2 pull 3672 (Frontier): srun adjusts the node count; SST skips the cxi fabrics.
    "srun: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    "Provider: 'cxi', domain: 'cxi0'\n"
    'DP Writer 0 (0x3078d0): Selecting DataPlane "rdma", priority 100 for use\n'
    "DP Writer 0 (0x3078d0): ignoring fabric cxi because it's not of a supported type. It may work to force"
    " this fabric to be used by setting FABRIC_IFACE to cxi0, but it may not be stable or performant.",
    # firemodels/fds issue 7868: libfabric's info-level provider registration.
    "libfabric:sockets:core:fi_param_define_():223<info> registered var keepalive_probes\n"
    "libfabric:core:core:ofi_register_provider():385<info> registering provider: sockets (2.0)",
    # flux-framework/flux-core issue 4141 (Perlmutter): flux-shell's PMI trace at job start.
    "0.082s: flux-shell[0]: DEBUG: output: batch timeout = 0.500s\n"
    "0.196s: flux-shell[0]: TRACE: pmi: 0: C: cmd=init pmi_version=1 pmi_subversion=1\n"
    "0.196s: flux-shell[0]: TRACE: pmi: 0: S: cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_cray_stack_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
