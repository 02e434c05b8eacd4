"""Which host a line names: prefixes that look like a host but are not one (pdsh hosts that are
hosts: tests/unit/test_diagnosis.py)."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.prefixes import line_context
from tests.unit.real_lines import diagnose


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


def test_horovods_stalled_ranks_are_where_the_job_is_stuck() -> None:
    # github.com/horovod/horovod/issues/1442 as the thread shows it (the console wrapped the first
    # line): mpirun's rank-0 prefix is the reporter; the line under "Stalled ranks:" names rank 6
    # (horovod/common/stall_inspector.cc's format).
    log = (
        "[1,0]<stderr>:[2019-10-09 15:36:43.594972: W horovod/common/stall_inspector.cc:105] One or more tensors"
        " were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remaind\n"
        "er of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit"
        " different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.\n"
        "[1,0]<stderr>:Stalled ranks:\n"
        "[1,0]<stderr>:6: [horovod_allreduce.0, horovod_allreduce.1, horovod_allreduce.10, horovod_allreduce.100,"
        " horovod_allreduce.101, horovod_allreduce.102 ...]\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.implicated.ranks) == ("hang", [6])


PBS_MAIL = (
    # github.com/cBio/cbio-cluster/issues/187: PBS's mail about a job on one node that failed.
    "PBS Job Id: 2600365.mskcc-fe1.local\n"
    "Job Name:   STDIN\n"
    "Exec host:  gpu-2-17/5\n"
    "job deleted\n"
    "Job deleted at request of root@mskcc-fe1.local\n"
    "job preempted (node failure)\n"
)


def test_a_node_failure_that_names_no_node_is_the_jobs_one_exec_host() -> None:
    result = diagnose(PBS_MAIL)
    assert (result.category, result.implicated.nodes, result.exclude) == ("hardware", ["gpu-2-17"], True)
