"""Whole excerpts of real logs where a distributed job lost its control plane or could not open
its fabric: a Ray process that gives up reconnecting to the GCS, a gRPC call that failed because
no address of the target accepted a connection (TensorFlow's remote-target error dump), and an
MPI that could not open its Omni-Path (PSM2) endpoint (Open MPI's help text, MVAPICH2's PSM error
handler, Intel MPI's startup without fallback); each with where it was printed. And the alarming
but harmless lines of the same layers (PSM2's warning that no adapter is active while Open MPI
runs over another transport, gRPC's reconnect back-off, an NFS server that stopped answering and
then answered again), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # ray-project/ray issue 23244: a worker's fatal log after its GCS reconnection attempts ran out.
    (
        "https://github.com/ray-project/ray/issues/23244",
        "(PiCalculator pid=9080) [2022-03-14 16:08:17,910 C 9080 9129] gcs_client.cc:348: Couldn't reconnect"
        " to GCS server. The last attempted GCS server address was 172.31.86.167:9031\n"
        "(PiCalculator pid=9080) *** StackTrace Information ***\n"
        "(PiCalculator pid=9080)     ray::SpdLogMessage::Flush()\n"
        "(PiCalculator pid=9080)     ray::RayLog::~RayLog()\n"
        "(PiCalculator pid=9080)     ray::gcs::GcsClient::ReconnectGcsServer()",
        "network",
        True,
        "ray-gcs-reconnect-failed",
    ),
    # tensorflow/tensorflow issue 62880: the remote target's gRPC error, no address connected.
    (
        "https://github.com/tensorflow/tensorflow/issues/62880",
        ':{"created":"@1706768288.511248869","description":"Failed to pick subchannel","file":"external/'
        'com_github_grpc_grpc/src/core/ext/filters/client_channel/client_channel.cc","file_line":3941,'
        '"referenced_errors":[{"created":"@1706768288.511243624","description":"failed to connect to all'
        ' addresses","file":"external/com_github_grpc_grpc/src/core/ext/filters/client_channel/lb_policy/'
        'pick_first/pick_first.cc","file_line":393,"grpc_status":14}]}\n'
        "Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling"
        " /tensorflow.eager.EagerService/Enqueue:",
        "network",
        True,
        "grpc-unavailable-all-addresses",
    ),
    # open-mpi/ompi issue 10601: PSM2 cannot open the adapter, Open MPI's help text follows.
    (
        "https://github.com/open-mpi/ompi/issues/10601",
        "bdw-0214.30734PSM2 can't open hfi unit: -1 (err=23)\n"
        "--------------------------------------------------------------------------\n"
        "PSM2 was unable to open an endpoint. Please make sure that the network link is\n"
        "active on the node and the hardware is functioning.\n"
        "\n"
        "  Error: Failure in initializing endpoint",
        "network",
        True,
        "psm-endpoint-open-failed",
    ),
    # intel/MLSL issue 25: the adapter's context cannot be assigned, Intel MPI has no fallback.
    (
        "https://github.com/intel/MLSL/issues/25",
        "0] [0] MPI startup(): Multi-threaded optimized library\n"
        "[1] node1.329747hfi_userinit: mmap of rcvhdrq at dabbad00040b0000 failed: Resource temporarily unavailable\n"
        "[1] node1.329747hfp_gen1_context_open: hfi_userinit: failed, trying again (1/3)\n"
        "[1] node1.329747hfi_userinit: assign_context command failed: Invalid argument\n"
        "[1] node1.329747PSM2 can't open hfi unit: -1 (err=23)\n"
        "[1] [1] MPI startup(): ofi fabric is not available and fallback fabric is not enabled",
        "network",
        True,
        "psm-endpoint-open-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_control_plane_and_fabric_failures(
    source: str, text: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_gcs_reconnect_names_the_gcs_address() -> None:
    found = diagnose(FAILURES[0][1])
    assert "172.31.86.167" in found.implicated.peers


HEALTHY = [
    # ArjunaCluster/ArjunaUsers issue 216: no Omni-Path adapter is active, Open MPI ignores the
    # openib transport and the job runs.
    "e001.53882PSM2 no hfi units are active (err=23)\n"
    "e001.53883PSM2 no hfi units are active (err=23)\n"
    "--------------------------------------------------------------------------\n"
    "WARNING: There is at least non-excluded one OpenFabrics device found,\n"
    "but there are no active ports detected (or Open MPI was unable to use\n"
    "them).  This is most certainly not what you wanted.  Check your\n"
    "cables, subnet manager configuration, etc.  The openib BTL will be\n"
    "ignored for this job.\n"
    "\n"
    "  Local host: e001\n"
    "--------------------------------------------------------------------------",
    # tensorflow/tensorflow issue 17852: gRPC's subchannel retries a refused connection while the
    # parameter server is still starting.
    "ps 0, running\n"
    "I0320 05:57:29.309786369    3803 subchannel.cc:484]          Retry in 998 milliseconds\n"
    "I0320 05:57:30.307312499    3796 subchannel.cc:437]          Failed to connect to channel, retrying",
    # linux-surface/linux-surface issue 1494: the kernel's NFS client times out on a server, then
    # reports the same server OK again.
    "[32512.456102] nfs: server thinkcentre not responding, timed out\n"
    "[32516.679571] nfs: server thinkcentre not responding, timed out\n"
    "[32956.142249] nfs: server thinkcentre not responding, still trying\n"
    "[32958.266147] nfs: server thinkcentre OK",
    # pytorch/pytorch issue 50700: tensorpipe cannot resolve the host name and uses the loopback.
    "Jan 16 03:14:24 [W tensorpipe_agent.cpp:63] Failed to look up the IP address for the hostname"
    " (EAI_NONAME: unknown node or service), defaulting to 127.0.0.1",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_fabric_and_rpc_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_another_nfs_servers_answer_does_not_end_the_outage() -> None:
    # The OK line of the kernel's NFS client ends only its own server's outage.
    found = diagnose(
        "[32512.456102] nfs: server thinkcentre not responding, timed out\n[32958.266147] nfs: server backup01 OK"
    )
    assert (found.symptom, found.evidence[0].signature) == ("crash", "kernel-nfs-timed-out")
