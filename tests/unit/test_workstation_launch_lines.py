"""Whole excerpts of real logs from training launched on a workstation, mostly Windows: a
PyTorch build that lacks what the launch asks for (the libuv TCPStore that torch 2.4+ requests
by default and the Windows wheels do not have, the NCCL backend) stops the job before any
connection is tried, and a rerun repeats it; and the alarming but harmless lines the same
setups print (c10d's Windows connect warning for an unresolvable host name, torchelastic's
redirects note, Triton missing on Windows), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # cocktailpeanut/fluxgym issue 302: torchrun's static rendezvous builds its TCPStore on a
    # Windows wheel of torch 2.5.1, which has no libuv.
    (
        "https://github.com/cocktailpeanut/fluxgym/issues/302",
        '      File "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\torch\\'
        'distributed\\elastic\\rendezvous\\static_tcp_rendezvous.py", line 67, in next_rendezvous\n'
        "        self._store = TCPStore(  # type: ignore[call-arg]\n"
        "                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "application",
        False,
        "torch-tcpstore-libuv-not-built",
    ),
    # cocktailpeanut/fluxgym issue 82: the same under the Pinokio launcher, whose runner then
    # reports the command's exit code: the exit is the error's, not a cause of its own.
    (
        "https://github.com/cocktailpeanut/fluxgym/issues/82",
        "39] [INFO] self._store = TCPStore (# type: ignore [call-arg]\n"
        "39] [INFO] RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n"
        "41] [ERROR] Command exited with code 1\n"
        "41] [INFO] Runner: <LogsViewRunner nb_logs",
        "application",
        False,
        "torch-tcpstore-libuv-not-built",
    ),
    # OFA-Sys/Chinese-CLIP issue 279: a Windows build has no NCCL; torchelastic reports rank 0's
    # exit and the spawned child's EOFError after it.
    (
        "https://github.com/OFA-Sys/Chinese-CLIP/issues/279",
        "RuntimeError: Distributed package doesn't have NCCL built in\n"
        "EOFError: Ran out of input\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27316) "
        "of binary: C:\\anaconda\\envs\\clip\\python.exe",
        "application",
        False,
        "torch-backend-not-built",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_workstation_launch_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_windows_connect_warning_before_a_program_error_is_noise() -> None:
    # voicepaw/so-vits-svc-fork issue 501: c10d's 10049 warning is Windows noise; the spawn
    # failure after it is the program's.
    found = diagnose(
        "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:601] [c10d] The client socket has failed to connect to "
        "[DESKTOP]:50067 (system error: 10049 - The requested address is not valid in its context.).\n"
        "\n"
        "C:\\Users\\user\\.conda\\envs\\svc\\python.exe: Error while finding module specification for "
        "'__main__' (ValueError: __main__.__spec__ is None)"
    )
    assert (found.category, found.retryable) == ("application", False)


HEALTHY = [
    # YYuX-1145/Bert-VITS2-Integration-package issue 80: a single-process run on Windows warns that
    # the store host does not resolve, logs a missing embedding, and goes on loading.
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [www.wondershare.net]:10086 "
    "(system error: 10049 - 在其上下文中，该请求的地址无效。).\n"  # noqa: RUF001
    "05-25 15:21:28 INFO     | data_utils.py:63 | Init dataset...\n"
    "INFO:models:Loaded checkpoint 'Data\\linra\\models\\DUR_0.pth' (iteration 0)\n"
    "ERROR:models:emb_g.weight is not in the checkpoint\n"
    "INFO:models:Loaded checkpoint 'Data\\linra\\models\\G_0.pth' (iteration 0)",
    # bmaltais/kohya_ss issue 2430: Triton is missing on Windows; settings load and training goes on.
    "2024-05-01 22:07:09 WARNING  A matching Triton is not available, some optimizations will not be enabled.  "
    "__init__.py:55                             Error caught was: No module named 'triton'\n"
    "2024-05-01 22:07:14 INFO     Loading settings from ./outputs/config_lora-20240501-220656.toml...      "
    "train_util.py:3744",
    # awslabs/sockeye pull 990 (the maintainers: the note does not affect training).
    "NOTE: Redirects are currently not supported in Windows or MacOs.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_workstation_noise_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
