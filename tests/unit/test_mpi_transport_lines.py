"""Whole excerpts of real logs where an MPI job lost its transport: UCX's UD transport aborting
on an endpoint timeout, Open MPI's TCP BTL failing to connect to another rank, and Open MPI's
out-of-band TCP channel failing to reach a daemon on another node (which Open MPI blames on a
firewall, before its "unable to start daemons" notice); and the alarming but harmless lines UCX
and Open MPI print while a job runs on, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # openucx/ucx issue 6253: Intel MPI over UCX (libfabric's mlx provider) aborts on the UD
    # transport's endpoint timeout; only the backtrace follows.
    (
        "https://github.com/openucx/ucx/issues/6253",
        "[compute-0-20:9358 :0:9358]    ud_iface.c:737  UCX Fatal: transport error: Endpoint timeout\n"
        "==== backtrace ====\n"
        "    0  /usr/lib64/libucs.so.0(ucs_fatal_error+0xf7) [0x2b6916329d87]\n"
        "    1  /usr/lib64/libuct.so.0(uct_ud_iface_dispatch_async_comps_do+0x128) [0x2b691657b698]\n"
        "    2  /usr/lib64/libuct.so.0(+0x3e6f8) [0x2b691657f6f8]\n"
        "    3  /lib64/libucp.so.0(ucp_worker_progress+0x22) [0x2b6915ec8ee2]\n"
        "    4  /home/user/intel/oneapi/mpi/2021.1.1//libfabric/lib/prov/libmlx-fi.so(+0xa191) [0x2b6915c7c191]",
        "network",
        True,
        "ucx-fatal-transport-error",
    ),
    # openucx/ucx issue 2685: UCX 1.4 printed "Fatal:" without its name, here glued to the
    # test's own progress line by mpirun's --timestamp-output.
    (
        "https://github.com/openucx/ucx/issues/2685",
        "Sat Jun 16 08:52:37 2018[1,0]<stdout>:P2P tests Ring Send Pack (7/44), comm Odd/Even split"
        " MPI_COMM_WORLD (7/14), type MPI_LONG (9/28)\n"
        "Sat Jun 16 08:52:37 2018[1,0]<stdout>:P2P tests Ring Send Pack (7/44), comm Odd/Even split"
        " MPI_COMM_WORLD (7/14), type MPI_UNSIGNED_LONG (10/28)Sat Jun 16 08:57:40 2018[1,3]<stderr>:"
        "[jazz18:59086:0:59086]    ud_iface.c:780  Fatal: transport error: Endpoint timeout\n"
        "Sat Jun 16 08:57:41 2018[1,3]<stderr>:\n"
        "Sat Jun 16 08:57:41 2018[1,3]<stderr>:/hpc/local/benchmarks/hpcx_install_2018-06-15/src/"
        "hpcx-gcc-redhat7.4/ucx-v1.4.x/src/uct/ib/ud/base/ud_iface.c: [ uct_ud_ep_dispatch_err_comp() ]",
        "network",
        True,
        "ucx-fatal-transport-error",
    ),
    # jbornschein/mpi4py-examples issue 11: Open MPI's TCP BTL cannot reach a link-local address.
    (
        "https://github.com/jbornschein/mpi4py-examples/issues/11",
        "--------------------------------------------------------------------------\n"
        "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\n"
        "should not happen.\n"
        "\n"
        "Your Open MPI job may now fail.\n"
        "\n"
        "  Local host: pi02\n"
        "  PID:        24783\n"
        "  Message:    connect() to 169.254.140.13:1026 failed\n"
        "  Error:      Resource temporarily unavailable (11)\n"
        "--------------------------------------------------------------------------\n"
        "[pi01:28731] 3 more processes have sent help message help-mpi-btl-tcp.txt / client connect fail",
        "network",
        True,
        "mpi-btl-tcp-connect-failed",
    ),
    # open-mpi/ompi issue 12103: the daemon's TCP connection fails first; the "unable to start
    # daemons" block after it is the consequence.
    (
        "https://github.com/open-mpi/ompi/issues/12103",
        "mpirun --allow-run-as-root -n 2 --hostfile hostfile ./hello_c\n"
        "------------------------------------------------------------\n"
        "A process or daemon was unable to complete a TCP connection\n"
        "to another process:\n"
        "  Local host:    3eed81735a60\n"
        "  Remote host:   0cdbe1810ec3\n"
        "This is usually caused by a firewall on the remote host. Please\n"
        "check that any firewall (e.g., iptables) has been disabled and\n"
        "try again.\n"
        "------------------------------------------------------------\n"
        "--------------------------------------------------------------------------\n"
        "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:",
        "network",
        True,
        "mpi-oob-tcp-connect-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_transport_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_ucx_fatal_transport_error_does_not_blame_the_ranks_that_report_it() -> None:
    # openucx/ucx issue 3087: two ranks of an MTT run abort on the UD endpoint timeout; they are
    # the ones left waiting, mpirun's tags name them, and the peer that went silent is unnamed.
    found = diagnose(
        "Mon Dec 10 08:18:05 2018[1,8]<stderr>:[hpc-polar-01-vm001:13210:0:13210]    ud_iface.c:732  UCX Fatal:"
        " transport error: Endpoint timeout\n"
        "Mon Dec 10 08:18:05 2018[1,4]<stderr>:[hpc-polar-01-vm001:13209:0:13209]    ud_iface.c:732  UCX Fatal:"
        " transport error: Endpoint timeout"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "ucx-fatal-transport-error",
        "network",
        True,
    )
    assert (found.implicated.nodes, found.implicated.ranks) == ([], [])


def test_btl_connect_failure_names_the_unreachable_peer() -> None:
    found = diagnose(FAILURES[2][1])
    assert found.implicated.peers == ["169.254.140.13"]


def test_oob_connect_failure_names_the_remote_host_not_the_local_one() -> None:
    found = diagnose(FAILURES[3][1])
    assert found.implicated.nodes == ["0cdbe1810ec3"]


HEALTHY = [
    # openucx/ucx issue 2953: UCX's warnings about an unused variable and a device it skipped.
    "export UCX_NET_DEVICES=self,mlx5_0:1,mlx5_3:1\n"
    "...\n"
    "[1539370849.809991] [cn828:74750:0]    ucp_context.c:588  UCX  WARN  device 'self' is not available\n"
    "[1539370849.810202] [cn828:74750:0]         parser.c:1310 UCX  WARN  unused env variable: UCX_NET_DEVICES"
    " (set UCX_WARN_UNUSED_ENV_VARS=n to suppress this warning)",
    # openucx/ucx issue 7613: a GID table change event on RoCE while an OSU benchmark runs on.
    "[root@node181]# ucx_info -v\n"
    "# UCT version=1.11.0 revision 6031c98\n"
    "[1635835013.823013] [node181:6471 :async]       ib_device.c:475  UCX  WARN  IB Async event on mlx5_0:"
    " GID table change on port 1",
    # horovod/horovod issue 3597: Open MPI ignores a connection from a process it does not know.
    "WARNING: Open MPI accepted a TCP connection from what appears to be a\n"
    "another Open MPI process but cannot find a corresponding process\n"
    "entry for that peer.\n"
    "\n"
    "This attempted connection will be ignored; your MPI job may or may not\n"
    "continue properly.\n"
    "\n"
    "  Local host: VM_2_IP\n"
    "  PID:        {4_digit_number}",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_transport_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
