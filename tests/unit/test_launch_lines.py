"""Real lines of a launch that does not fit the program and of a store host lost mid-request,
with their sources."""

from __future__ import annotations

from tests.unit.real_lines import verdict


def test_a_command_line_the_script_refuses_is_the_programs() -> None:
    # babylm/baseline-pretraining#2: torch.distributed.launch passes --local-rank, the script
    # parses --local_rank; argparse prints its usage and refuses, torchelastic sees exit 2
    log = (
        "usage: general_train.py\n       [-h]\n       [--setting SETTING]\n       [--local_rank LOCAL_RANK]\n"
        "general_train.py: error: unrecognized arguments: --local-rank=0\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 3049) of"
        " binary: /usr/bin/python3"
    )
    assert verdict(log) == ("argparse-bad-arguments", "application", False)


def test_a_store_wait_without_its_reply_is_the_network() -> None:
    # the message of c10d's TCPStore::wait (torch/csrc/distributed/c10d/TCPStore.cpp), raised as
    # DistStoreError by PyTorch >= 2.2
    line = "torch.distributed.DistStoreError: Stop_waiting response is expected"
    assert verdict(line) == ("c10d-store-wait-reply-lost", "network", True)
