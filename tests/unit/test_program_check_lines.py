"""Real lines of PyTorch's checks of the program's own calls and of a training run stopping on a
non-finite loss, each with the public thread that printed it: the program's, not retried."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, verdict

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


def test_a_bus_error_alone_does_not_say_its_cause() -> None:
    # deepspeedai/DeepSpeed#2638 (the dev corpus's excerpt): UCX's handler right after NCCL set up
    line = "[cf0b62962198:378934:0:382579] Caught signal 7 (Bus error: nonexistent physical address)"
    assert verdict(line) == ("bus-error", "unknown", True)


def test_a_bus_error_that_names_shared_memory_is_the_nodes_setting() -> None:
    # hkchengrex/STCN#132: PyTorch's DataLoader (torch/csrc/DataLoader.cpp) says which
    line = (
        "RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that"
        " dataloader's workers are out of shared memory. Please try to raise your shared memory limit."
    )
    assert verdict(line)[1:] == ("system_software", False)


def test_zeros_rejection_of_the_setup_is_the_programs() -> None:
    # OptimalScale/LMFlow#470: DeepSpeed's engine raises it for ZeRO-Offload with transformers' AdamW
    log = (
        '  File "/home/mahongli/anaconda3/envs/lmflow/lib/python3.9/site-packages/deepspeed/runtime/engine.py",'
        " line 1281, in _configure_optimizer\n    raise ZeRORuntimeException(msg)\n"
        "deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided"
        " optimizer (<class 'transformers.optimization.AdamW'>) which in most cases will yield poor performance."
    )
    assert verdict(TRACEBACK + log)[1:] == ("application", False)
