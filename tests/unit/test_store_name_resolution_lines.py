"""Whole excerpts of real logs where the rendezvous store's host name did not resolve: older
PyTorch's c10d tcputil resolves the master address with getaddrinfo and raises ValueError
("host not found: <gai_strerror>"), a name-resolution failure, not a program's bad value; and
c10d's warning that it could not look up the client's own hostname, which a run survives."""

from __future__ import annotations

from tests.unit.real_lines import diagnose


def test_unresolvable_store_host_is_network() -> None:
    # pytorch/examples issue 540: the env:// rendezvous on PyTorch 1.1 cannot resolve MASTER_ADDR.
    found = diagnose(
        "===\n"
        'File "/apps/pytorch/1.1.0a0-py36/lib/python3.6/site-packages/torch/distributed/rendezvous.py",'
        " line 143, in _env_rendezvous_handler\n"
        "store = TCPStore(master_addr, master_port, world_size, start_daemon)\n"
        "ValueError: host not found: Name or service not known\n"
        "==="
    )
    assert found.symptom == "crash"
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "torch-store-host-not-found-legacy",
        "network",
        True,
    )


def test_client_hostname_lookup_warning_stays_healthy() -> None:
    # pytorch/pytorch issue 154102: rank 0 of 8 waits in init_process_group (the others were never
    # started) and c10d warns it could not look up its own hostname.
    found = diagnose(
        "[W522 06:29:34.248915854 socket.cpp:204] [c10d] The hostname of the client socket cannot be"
        " retrieved. err=-3\n"
        "[W522 06:29:54.269289676 socket.cpp:204] [c10d] The hostname of the client socket cannot be"
        " retrieved. err=-3"
    )
    assert found.symptom == "none"
