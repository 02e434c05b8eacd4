"""Whole excerpts of real logs where NCCL fails for the node's setup: its P2P transport cannot map
a peer GPU's memory (CUDA IPC or peer access between the GPUs refused), nccl-tests' own CUDA
check fails, and result codes (an exception's `unhandled cuda error`, the `init.cc:867 -> 2`
frames of the unwinding) are printed before or beside the NCCL WARN line that says what failed;
and the alarming but harmless notices the same runs print (P2P disabled or not enabled, a net
plugin not found, a warning from libfabric), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # horovod/horovod issue 148: NCCL 2.2 (no "NCCL" before WARN) cannot open the ring's IPC handle.
    (
        "https://github.com/horovod/horovod/issues/148",
        "node1:22670:22794 [0] INFO [0] Ring 0 :    0   1   2   3\n"
        "node1:22671:22795 [1] INFO 1 -> 0 via P2P/IPC\n"
        "node1:18225:18239 [0] INFO 2 -> 1 via P2P/IPC\n"
        "node1:22671:22795 [1] transport/p2p.cu:431 WARN failed to open CUDA IPC handle : 30 unknown error",
        "system_software",
        True,
        "nccl-p2p-ipc-failed",
    ),
    # horovod/horovod issue 785: the WARN, then its frames; the other rank's WARN follows.
    (
        "https://github.com/horovod/horovod/issues/785",
        "HOSTNAME:2753:2762 [0] transport/p2p.cu:548 NCCL WARN failed to open CUDA IPC handle : 64 peer access is"
        " not supported between these two devices\n"
        "HOSTNAME:2753:2762 [0] NCCL INFO init.cu:568 -> 1\n"
        "HOSTNAME:2753:2762 [0] NCCL INFO init.cu:642 -> 1\n"
        "HOSTNAME:4974:4981 [0] NCCL INFO Ring 00 : 0[0] -> 1[0] via P2P/IPC\n"
        "\n"
        "HOSTNAME:4974:4981 [0] transport/p2p.cu:548 NCCL WARN failed to open CUDA IPC handle : 11 invalid argument",
        "system_software",
        True,
        "nccl-p2p-ipc-failed",
    ),
    # ray-project/ray issue 16979: PyTorch's exception (the result code only) is printed first; the
    # WARN under Ray's prefix says the GPUs cannot reach each other.
    (
        "https://github.com/ray-project/ray/issues/16979",
        "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1607370116979/work/torch/lib/c10d/"
        "ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8\n"
        "(pid=34272) dev-node-ap0:34272:34565 [0] NCCL INFO Channel 00 : 3[b0] -> 0[80] via P2P/IPC\n"
        "(pid=34272) \n"
        "(pid=34272) dev-node-ap0:34272:34565 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle :"
        " 217 peer access is not supported between these two devices\n"
        "(pid=34272) dev-node-ap0:34272:34565 [0] NCCL INFO transport.cc:68 -> 1\n"
        "(pid=34272) dev-node-ap0:34272:34565 [0] NCCL INFO init.cc:766 -> 1",
        "system_software",
        True,
        "nccl-p2p-ipc-failed",
    ),
    # ROCm/vllm issue 390: RCCL's hipified source names the HIP call.
    (
        "https://github.com/ROCm/vllm/issues/390",
        "supllm:461:502 [1] /longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/"
        "src/out/ubuntu-22.04/22.04/build/rccl/hipify/src/transport/p2p.cc:239 NCCL WARN hipIpcGetMemHandle failed :"
        " invalid argument",
        "system_software",
        True,
        "nccl-p2p-ipc-failed",
    ),
    # horovod/horovod issue 3871: a WSL2 container; the excerpt starts with one process's frames
    # (`-> 2`, a system error), and that process's own WARN comes later: the WARN tells what failed.
    (
        "https://github.com/horovod/horovod/issues/3871",
        "[1,1]<stdout>:ce1a35ee222c:688:745 [1] NCCL INFO graph/xml.cc:469 -> 2\n"
        "[1,1]<stdout>:ce1a35ee222c:688:745 [1] NCCL INFO graph/xml.cc:682 -> 2\n"
        "[1,1]<stdout>:ce1a35ee222c:688:745 [1] NCCL INFO init.cc:916 -> 2\n"
        "[1,0]<stdout>:\n"
        "[1,0]<stdout>:ce1a35ee222c:687:748 [0] graph/xml.cc:332 NCCL WARN Could not find real path of"
        " /sys/class/pci_bus/0000:03/../../0000:03:00.0\n"
        "[1,0]<stdout>:ce1a35ee222c:687:748 [0] NCCL INFO graph/xml.cc:469 -> 2\n"
        "[1,1]<stdout>:\n"
        "[1,1]<stdout>:ce1a35ee222c:688:745 [1] graph/xml.cc:332 NCCL WARN Could not find real path of"
        " /sys/class/pci_bus/0000:03/../../0000:03:00.0",
        "system_software",
        True,
        "nccl-gpu-pci-path-missing",
    ),
    # tinygrad/open-gpu-kernel-modules issue 35: all_reduce_perf over P2P/direct pointer; the test's
    # own CUDA check reports the illegal address (nccl-tests' "Test CUDA failure" line).
    (
        "https://github.com/tinygrad/open-gpu-kernel-modules/issues/35",
        "lam-MU72-SU0-00:28273:28361 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
        "lam-MU72-SU0-00:28273:28360 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
        "lam-MU72-SU0-00: Test CUDA failure common.cu:297 'an illegal memory access was encountered'\n"
        " .. lam-MU72-SU0-00 pid 28273: Test failure common.cu:407\n"
        " .. lam-MU72-SU0-00 pid 28273: Test failure common.cu:594",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
    # vllm-project/vllm issue 18831: a late rank cannot attach to the segment its peer made (the
    # report's title quotes the WARN).
    (
        "https://github.com/vllm-project/vllm/issues/18831",
        "NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 192814336), error: No such"
        " file or directory (2)",
        "system_software",
        True,
        "nccl-shm-attach-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_node_setup_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_the_warn_names_the_node_of_its_process() -> None:
    # ray-project/ray issue 16979: the WARN's prefix names the node; the exception line names none.
    found = diagnose(FAILURES[2][1])
    assert found.implicated.nodes == ["dev-node-ap0"]


def test_unwinding_frames_alone_still_read_the_result_code() -> None:
    # transport/shm frames with no WARN in the excerpt: the code is all the log says.
    found = diagnose(
        "node1:97:183 [0] NCCL INFO transport/shm.cc:101 -> 2\n"
        "node1:97:183 [0] NCCL INFO transport.cc:30 -> 2\n"
        "node1:97:183 [0] NCCL INFO init.cc:766 -> 2"
    )
    assert (found.evidence[0].signature, found.category) == ("nccl-system-error", "network")


def test_another_process_warn_does_not_explain_a_process_frames() -> None:
    # The frames of process 11 and a WARN of process 22 on another node: each process's frames give
    # way only to its own WARN, so the earliest line still speaks.
    found = diagnose(
        "nodeA1:11:12 [0] NCCL INFO init.cc:766 -> 2\n"
        "nodeB2:22:23 [0] graph/xml.cc:332 NCCL WARN Could not find real path of"
        " /sys/class/pci_bus/0000:03/../../0000:03:00.0"
    )
    assert found.evidence[0].signature == "nccl-system-error"


HEALTHY = [
    # pytorch/pytorch issue 73775: NCCL notes it could not enable P2P and falls back (INFO).
    "198b6766dc7e:305:395 [0] NCCL INFO Could not enable P2P between dev 1(=1b000) and dev 0(=1a000)\n"
    "198b6766dc7e:305:395 [0] NCCL INFO Could not enable P2P between dev 0(=1a000) and dev 1(=1b000)",
    # vllm-project/vllm issue 11139: P2P disabled between connected GPUs, a repressible notice.
    "vllm-0:936:936 [0] NCCL INFO P2P is disabled between connected GPUs 2 and 3. You can repress this message"
    " with NCCL_IGNORE_DISABLED_P2P=1.",
    # vllm-project/vllm issue 22304: vLLM turns its custom allreduce off for lack of P2P.
    "(VllmWorker rank=0 pid=2057) WARNING 08-06 03:26:00 [custom_all_reduce.py:147] Custom allreduce is disabled"
    " because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify"
    " disable_custom_all_reduce=True explicitly.",
    # aws/aws-k8s-tester pull 464: libfabric's warnings before nccl-tests starts.
    "        [1,1]<stderr>:libfabric:21:1722447956::core:core:cuda_hmem_dl_init():499<warn> Failed to dlopen"
    " libnvidia-ml.so.  Trying libnvidia-ml.so.1\n"
    "        [1,1]<stderr>:libfabric:21:1722447956::core:core:cuda_gdrcopy_hmem_init():192<warn>"
    " gdrcopy_dl_hmem_init failed!\n"
    "        [1,0]<stdout>:multi-node-nccl-test-worker-0:22:22 [0] NCCL INFO NET/Plugin: Failed to find"
    " ncclCollNetPlugin_v6 symbol.",
    # kyuz0/amd-strix-halo-vllm-toolboxes issue 80: RCCL falls back from peermem to DMA-BUF.
    "(EngineCore pid=6685) (RayWorkerProc pid=4775, ip=192.168.100.2) [2026-08-13 19:37:02] toolbox:4775:4876 [0]"
    " /__w/rockrel/rockrel/build/comm-libs/rccl/build/hipify/src/transport/net_ib/connect_tmp.cc:1370 NCCL WARN"
    " NET/IB: Peermem not available, falling back to GPU Direct RDMA (DMAbuf) for device 0\n"
    "(EngineCore pid=6685) (RayWorkerProc pid=4775, ip=192.168.100.2) toolbox:4775:4876 [0] NCCL INFO NET/IB:"
    " ncclIbConnect isP2p=0",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_p2p_and_plugin_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
