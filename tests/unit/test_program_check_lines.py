"""Real lines of PyTorch's checks of the program's own calls and of a training run stopping on a
non-finite loss, each with the public thread that printed it: the program's, not retried."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.diagnosis import LogDiagnoser

TRACEBACK = 'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n'


def verdict(text: str) -> tuple[str | None, str, bool | None]:
    diagnoser = LogDiagnoser()
    diagnoser.feed((text + "\n").encode())
    diagnoser.finish()
    found = diagnoser.diagnosis()
    return (found.evidence[0].signature if found.evidence else None, found.category, found.retryable)


LINES = [
    # XPixelGroup/BasicSR#541: a buffer DistributedDataParallel broadcast in place between forward and backward
    (
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace"
        " operation: [torch.FloatTensor [1, 32,3,3]] is at version 2; expected version 1 instead. Hint: enable"
        " anomaly detection to find the operation that failed to compute its gradient, with"
        " torch.autograd.set_detect_anomaly(True).",
        "torch-program-check",
    ),
    # tamakoji/pytorch-syncbn#4: the same check in torch 0.4.1, its message alone
    (
        "    allow_unreachable=True)  # allow_unreachable flag\nRuntimeError: one of the variables needed for"
        " gradient computation has been modified by an inplace operation",
        "torch-program-check",
    ),
    # kakaobrain/hotr#33: the trainer stops itself on a NaN loss (DETR's engine)
    ("Loss is nan, stopping training", "loss-not-finite"),
]


@pytest.mark.parametrize(("text", "signature"), LINES)
def test_the_programs_own_failure_is_not_retried(text: str, signature: str) -> None:
    assert verdict(TRACEBACK + text) == (signature, "application", False)
