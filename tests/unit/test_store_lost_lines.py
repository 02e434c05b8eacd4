"""Whole excerpts of real logs where ProcessGroupNCCL's heartbeat monitor lost the TCPStore: it
polls the store for another rank's dump flag while the run goes on, and when the store's host
(rank 0 or the launcher) is gone it logs a warning and stops polling. Its process lives on, so the
line is a warning, yet the store host went away under a running rank: a network failure, retried,
and a cascade that the store host's own error outranks when the log shows it. At a normal exit
without destroy_process_group, the exiting program's destructor warns first, and the monitors'
lines are that exit's noise."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

SIGNATURE = "torch-heartbeat-store-lost"

# (source, excerpt)
LOST = [
    # sgl-project/sglang issue 20859: TP ranks of a 16-way server lose the store, the monitor's
    # line and the store read's own warning with its stack.
    (
        "https://github.com/sgl-project/sglang/issues/20859",
        "[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the"
        ' "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection'
        " reset by peer\n"
        "[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135,"
        " addr=[sglang-0-1.sglang.default.svc.transwarp.local]:48750,"
        " remote=[sglang-0.default.pod.transwarp.local]:20000): Connection reset by peer\n"
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:679 (most recent call"
        " first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> >) + 0x80 (0x7f4210b91b80 in /usr/local/lib/python3.12/dist-packages/torch/lib/libc10.so)",
    ),
    # MiniMax-AI/MiniMax-M1 issue 14: the store write breaks (Broken pipe) under rank 7's monitor.
    (
        "https://github.com/MiniMax-AI/MiniMax-M1/issues/14",
        "[rank7]:[W624 12:52:07.296197118 ProcessGroupNCCL.cpp:1659] [PG ID 0 PG GUID 0 Rank 7] Failed to check the"
        ' "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Broken pipe\n'
        "[rank7]:[W624 12:52:08.296327263 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=97,"
        " addr=[serving-58c98cpwxbz]:50828, remote=[serving-58c98cpwxbz]:45903): Broken pipe\n"
        "Exception raised from sendBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:653 (most recent call"
        " first):",
    ),
    # ome-projects/ome issue 312: newer PyTorch words the closed connection in full.
    (
        "https://github.com/ome-projects/ome/issues/312",
        "[rank87]:[W1104 01:29:53.261611977 ProcessGroupNCCL.cpp:1783] [PG ID 0 PG GUID 0 Rank 87] Failed to check"
        ' the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Failed to'
        " recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?\n"
        "[rank82]:[W1104 01:29:53.257494110 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=116,"
        " addr=[decoder-0-10.decoder.ome.svc.cluster.local]:44516, remote=[10-24-8-26.decoder.ome.svc.cluster.local]:5757):"
        " Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
    ),
    # tdrussell/diffusion-pipe (dev corpus): only the store read's stack shows whose read it was.
    (
        "https://github.com/tdrussell/diffusion-pipe/issues/333",
        "frame #4: c10d::TCPStore::check(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>,"
        " std::allocator<char> > > > const&) + 0x2a9 (0x7fee800d92a9 in /env/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so)\n"
        "frame #5: c10d::ProcessGroupNCCL::heartbeatMonitor() + 0x379 (0x7fee3177bad9 in"
        " /env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #6: <unknown function> + 0xd8198 (0x7fef40f1c198 in /env/bin/../lib/libstdc++.so.6)\n"
        "\n"
        "[rank2]:[W729 10:15:17.529377834 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76,"
        " addr=[localhost]:60902, remote=[localhost]:29500): Connection reset by peer\n"
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:675 (most recent call first):",
    ),
]


@pytest.mark.parametrize(("source", "text"), LOST)
def test_a_monitor_that_lost_the_store_is_a_network_failure(source: str, text: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "network", True), source
    assert found.evidence[0].signature == SIGNATURE, source


def test_the_store_hosts_own_error_outranks_the_monitors() -> None:
    # Two real lines put together: rank 0's own NCCL error (from a log the code search found,
    # where the exit warning follows it), then sglang issue 20859's monitor line.
    found = diagnose(
        "[rank0]: RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL developers\n"
        "[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the"
        ' "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection'
        " reset by peer"
    )
    assert found.symptom == "crash"
    assert found.evidence[0].signature != SIGNATURE
    assert found.implicated.ranks == [0]


# The exit warnings are real (NVIDIA/Megatron-LM issue 1541, pytorch/pytorch issue 126275,
# meta-pytorch/tritonbench pull 1067); the monitor's line is sglang issue 20859's. PyTorch prints
# them together when rank 0 leaves first without destroy_process_group (the Chinese-language
# verification note of a project that fixed it counted both kinds of warning going to zero).
EXITS = [
    "[rank0]:[W326 09:37:44.848694228 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not"
    " called before program exit, which can leak resources. For more info, please see"
    " https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "[rank0]:[W515 07:06:42.829549331 ProcessGroupNCCL.cpp:1117] WARNING: process group has NOT been destroyed before"
    " it is being destructed. On normal program exit, the application should call destroy_process_group to ensure"
    " that any pending NCCL data transfers have finished in this process.",
    "Warning: must call destroy_process_group() before process exit",
]
MONITOR = (
    "[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the"
    ' "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset'
    " by peer"
)


@pytest.mark.parametrize("exit_line", EXITS)
@pytest.mark.parametrize("monitor_first", [True, False])
def test_a_normal_exit_makes_the_monitors_lines_noise(exit_line: str, monitor_first: bool) -> None:
    text = f"{MONITOR}\n{exit_line}" if monitor_first else f"{exit_line}\n{MONITOR}"
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("none", "none", None)


def test_an_exit_warning_does_not_hide_a_crash() -> None:
    # The same found log's order: the crash, then the exit warning; a monitor's line after both.
    found = diagnose(
        "[rank0]: RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL developers\n"
        + EXITS[0]
        + "\n"
        + MONITOR
    )
    assert found.symptom == "crash" and found.category != "none"
