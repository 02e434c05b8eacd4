"""Real lines whose exception class says only "the message decides" (OSError, a generic
RuntimeError, urllib's URLError): the errno in the message (tables/errno.yaml) decides the
category and whether to retry, each line with the public thread that printed it."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.structure import errno_fact
from tests.unit.real_lines import TRACEBACK, verdict

LINES = [
    # ruotianluo/self-critical.pytorch#11: DataLoader workers fork on a node out of memory
    ("    self.pid = os.fork()\nOSError: [Errno 12] Cannot allocate memory", "out_of_memory", False),
    # facebookresearch/detectron2#4625: detectron2's launch on an 8-GPU machine
    (TRACEBACK + "OSError: [Errno 113] No route to host", "network", True),
    # pytorch/pytorch#101873: CIFAR10 download on one rank
    (
        TRACEBACK + "urllib.error.URLError: <urlopen error [Errno 110] Connection timed out>",
        "network",
        True,
    ),
    # facebookresearch/PyTorch-BigGraph#99 (pytorch/gloo#219): Gloo raises the system's message
    # as a RuntimeError while creating a TCPStore on a Slurm cluster
    ("Process ParameterServer-3:\n" + TRACEBACK + "RuntimeError: No route to host", "network", True),
    # pytorch/pytorch#87861: share_memory_() of RL buffers; PyTorch's allocator prints strerror (errno)
    (
        '  File "/home/cloudam/miniconda3/lib/python3.9/site-packages/torch/storage.py", line 208, in share_memory_\n'
        "RuntimeError: unable to mmap 29764 bytes from file </torch_10182_3020184674_63991>: Cannot allocate memory (12)",
        "out_of_memory",
        False,
    ),
]


@pytest.mark.parametrize(("text", "category", "retryable"), LINES)
def test_the_errno_of_a_generic_exception_decides(text: str, category: str, retryable: bool) -> None:
    assert verdict(text)[1:] == (category, retryable)


def test_every_form_of_an_errno_reads_the_same_entry() -> None:
    # c10d's socket.cpp prints the errno as "(errno: 110 - Connection timed out)"
    # (jeffffffli/HybrIK#207) and its name as "code: -98, name: EADDRINUSE".
    forms = [
        "[Errno 110] Connection timed out",
        "failed to connect to 192.168.1.219:23456 (errno: 110 - Connection timed out).",
        "RuntimeError: Connection timed out",
    ]
    assert {f.name for form in forms if (f := errno_fact(form))} == {"ETIMEDOUT"}
    assert [f.name for f in [errno_fact("code: -98, name: EADDRINUSE, message: address already in use")] if f] == [
        "EADDRINUSE"
    ]
    # a message that is not an errno's, or a lower-case phrase inside another message, reads none
    assert errno_fact("RuntimeError: something odd happened") is None
    assert errno_fact("RuntimeError: CUDA error: invalid argument") is None
    # a message and a number read together only when they are the same errno's
    assert errno_fact("unable to mmap 8 bytes: Cannot allocate memory (28)") is None
