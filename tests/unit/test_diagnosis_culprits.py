"""Which host a line names: prefixes that look like a host but are not one (pdsh hosts that are
hosts: tests/unit/test_diagnosis.py)."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.prefixes import line_context


@pytest.mark.parametrize(
    "line",
    [
        # Code index 3651626525: a module-qualified exception class with a digit in its module.
        "boto3.exceptions.S3UploadFailedError: Failed to upload plot_accuracy.png to",
        # PyTorch's C++ extension module, as torch/_C/_distributed_c10d.pyi declares it; the
        # message is github.com/vllm-project/vllm/issues/10523's.
        "torch._C._distributed_c10d.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
    ],
)
def test_an_exception_class_before_its_message_is_not_a_pdsh_host(line: str) -> None:
    assert line_context(line).host is None
