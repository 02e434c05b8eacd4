"""Whole excerpts of what collective-communication benchmarks print when they fail, as users
paste them beside a failed training job or run them as a cluster's acceptance check: nccl-tests'
and rccl-tests' own checks ("<host>: Test CUDA failure ...", "Test NCCL failure ...", RCCL's unit
tests' result code), RCCL's P2P transport unable to export GPU memory, and nvbandwidth's data check
finding a wrong value; and complete or low-bandwidth benchmark tables and waived tests, which must
stay healthy. The benchmarks' other verdicts (out-of-bounds values, wrong elements per rank, the
bandwidth minimum, the test timeout) are checked by tables/collective_tests.yaml's examples."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # aws-samples/aws-efa-nccl-baseami-pipeline issue 7: nccl-tests' first CUDA call fails in a container; the
    # test's unwinding line after it is a follow-on.
    (
        "https://github.com/aws-samples/aws-efa-nccl-baseami-pipeline/issues/7",
        "all_reduce_perf -b 1M -e 512M -f 2 -g 1\n"
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 536870912 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "#\n"
        "# Using devices\n"
        "compute-od-gpu-dy-p4d-24xlarge-1: Test CUDA failure common.cu:1046 'unknown error'\n"
        " .. compute-od-gpu-dy-p4d-24xlarge-1 pid 41757: Test failure common.cu:1008",
        "unknown",
        True,
        "cuda-unknown",
    ),
    # mxxm-t/mx-llama.cpp issue 7: rccl-tests' first AllReduce returns ncclUnhandledCudaError (the paste cuts
    # the line short).
    (
        "https://github.com/mxxm-t/mx-llama.cpp/issues/7",
        "# rccl-tests version 2.18.3-HEAD:418cd5f rccl-headers=23004 rccl-library=23004\n"
        "#  Rank  0 Group  0 Pid      1 on e20a3f6a8c03 device  0 [0000:03:00] AMD Radeon Graphics\n"
        "#  Rank  1 Group  0 Pid      1 on e20a3f6a8c03 device  1 [0000:09:00] AMD Radeon Graphics\n"
        "NCCL INFO Channel 00/0 : 0[3000] -> 1[9000] via P2P/direct pointer comm 0x5a3ea68dbe40 nRanks 02\n"
        "NCCL INFO Channel 01/0 : 1[9000] -> 0[3000] via P2P/direct pointer comm 0x5a3ea69f50d0 nRanks 02\n"
        "NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
        "NCCL INFO Connected all trees\n"
        "NCCL INFO ncclCommInitRankConfig_impl comm 0x5a3ea68dbe40 rank 0 nranks 2 cudaDev 0 busId 3000 - Init COMPLETE\n"
        "NCCL INFO AllReduce: opCount 0 sendbuff 0x7cb27a400000 recvbuff 0x7cb23a200000 count 2 datatype 7 op 0 root 0 comm 0x5a3ea68dbe40 [nranks=2]\n"
        "e20a3f6a8c03: Test NCCL failure .../rccl-tests/build/src/hipify/common.cu.cpp:775 'unhandled cuda error (run with NCCL_",
        "unknown",
        True,
        "nccl-unhandled-cuda-error",
    ),
    # ROCm/rccl issue 1370: RCCL's unit tests report the result code of the NCCL call that failed.
    (
        "https://github.com/ROCm/rccl/issues/1370",
        "[----------] 8 tests from AllReduce\n"
        "[ RUN      ] AllReduce.OutOfPlace\n"
        "[ ERROR    ] Child 0 reports failure\n"
        "/home/cc/rccl/test/common/TestBed.cpp:183: Failure\n"
        "Expected equality of these values:\n"
        "  response\n"
        "    Which is: 1\n"
        "  TEST_SUCCESS\n"
        "    Which is: 0\n"
        "[ ERROR    ] Child process 0 fails NCCL call ncclGroupEnd with code 1\n"
        "[ ERROR    ] Child 0 failed on command [INIT_COMMS]:\n"
        "[  FAILED  ] AllReduce.OutOfPlace (1511 ms)\n"
        "[ RUN      ] AllReduce.OutOfPlaceGraph\n"
        "[ ERROR    ] Child 0 reports failure\n"
        "/home/cc/rccl/test/common/TestBed.cpp:183: Failure\n"
        "Expected equality of these values:\n"
        "  response\n"
        "    Which is: 1\n"
        "  TEST_SUCCESS\n"
        "    Which is: 0\n"
        "[ ERROR    ] Child process 0 fails NCCL call ncclGroupEnd with code 1\n"
        "[ ERROR    ] Child 0 failed on command [INIT_COMMS]:\n"
        "[  FAILED  ] AllReduce.OutOfPlaceGraph (1504 ms)\n"
        "[ RUN      ] AllReduce.InPlace\n"
        "[ ERROR    ] Child 0 reports failure\n"
        "/home/cc/rccl/test/common/TestBed.cpp:183: Failure\n"
        "Expected equality of these values:\n"
        "  response\n"
        "    Which is: 1\n"
        "  TEST_SUCCESS\n"
        "    Which is: 0\n"
        "[ ERROR    ] Child process 0 fails NCCL call ncclGroupEnd with code 1\n"
        "[ ERROR    ] Child 0 failed on command [INIT_COMMS]:\n"
        "[  FAILED  ] AllReduce.InPlace (1499 ms)",
        "unknown",
        True,
        "nccl-unhandled-cuda-error",
    ),
    # ROCm/rccl issue 908: the P2P transport cannot export GPU memory to the peer process, under
    # RCCL's warnings about the kernel command line.
    (
        "https://github.com/ROCm/rccl/issues/908",
        "[==========] Running 7 tests from 1 test suite.\n"
        "[----------] Global test environment set-up.\n"
        "[----------] 7 tests from AllReduce\n"
        "[ RUN      ] AllReduce.OutOfPlace\n"
        "[ INFO     ] Calling PIPE_READ to Child 0\n"
        "\n"
        'sharbox-ultra:204802:204802 [0] /home/user/rccl/build/release/hipify/src/init.cc:125 NCCL WARN Missing "amd_iommu=on" from kernel command line which can lead to system instablity or hang!\n'
        "\n"
        'sharbox-ultra:204802:204802 [0] /home/user/rccl/build/release/hipify/src/init.cc:127 NCCL WARN Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!\n'
        "\n"
        'sharbox-ultra:204802:204802 [0] /home/user/rccl/build/release/hipify/src/init.cc:132 NCCL WARN Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead to low RCCL performance, system instablity or hang!\n'
        "[ INFO     ] Got PIPE_READ 128 from Child 0\n"
        "[ INFO     ] Calling PIPE_READ to Child 0\n"
        "[ INFO     ] Got PIPE_READ 4 from Child 0\n"
        "[ INFO     ] Calling PIPE_READ to Child 0\n"
        "RCCL version 2.18.3+hip5.5 develop:6ecf771+\n"
        "\n"
        "sharbox-ultra:204802:204836 [1] /home/user/rccl/build/release/hipify/src/transport/p2p.cc:220 NCCL WARN hipIpcGetMemHandle failed : invalid argument",
        "system_software",
        True,
        "nccl-p2p-ipc-failed",
    ),
    # NVIDIA/nvbandwidth issue 34: the copy engine's data check finds a wrong value and asserts.
    (
        "https://github.com/NVIDIA/nvbandwidth/issues/34",
        "nvbandwidth Version: v0.7\n"
        "Built from Git version: v0.7\n"
        "\n"
        "CUDA Runtime Version: 12040\n"
        "CUDA Driver Version: 12040\n"
        "Driver Version: 550.127.08\n"
        "\n"
        "Device 0: NVIDIA A100-SXM4-80GB (00000000:34:00)\n"
        "Device 1: NVIDIA A100-SXM4-80GB (00000000:35:00)\n"
        "Device 2: NVIDIA A100-SXM4-80GB (00000000:36:00)\n"
        "Device 3: NVIDIA A100-SXM4-80GB (00000000:37:00)\n"
        "Device 4: NVIDIA A100-SXM4-80GB (00000000:9b:00)\n"
        "Device 5: NVIDIA A100-SXM4-80GB (00000000:9c:00)\n"
        "Device 6: NVIDIA A100-SXM4-80GB (00000000:9d:00)\n"
        "Device 7: NVIDIA A100-SXM4-80GB (00000000:9e:00)\n"
        "\n"
        "Running device_to_device_memcpy_read_ce.\n"
        " Invalid value when checking the pattern at 0x70a640000000\n"
        " Current offset : 11136 \n"
        "ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(CUstream, CUdeviceptr, long long unsigned int, unsigned int, CompareKernelFunc, std::shared_ptr<NodeHelper>)() : /mnt/project/cuda_related/nvbandwidth/memcpy.cpp:165",
        "hardware",
        True,
        "nvbandwidth-data-mismatch",
    ),
    # NVIDIA/nvbandwidth issue 19: the SM copy's data check fails and the process aborts.
    (
        "https://github.com/NVIDIA/nvbandwidth/issues/19",
        "$ nvbandwidth -t  one_to_all_read_sm.\n"
        "nvbandwidth Version: v0.4\n"
        "Built from Git version: v0.4\n"
        "\n"
        "NOTE: This tool reports current measured bandwidth on your system.\n"
        "Additional system-specific tuning may be required to achieve maximal peak bandwidth.\n"
        "\n"
        "CUDA Runtime Version: 12020\n"
        "CUDA Driver Version: 12020\n"
        "Driver Version: 535.154.05\n"
        "\n"
        "Device 0: NVIDIA L40S\n"
        "Device 1: NVIDIA L40S\n"
        "Device 2: NVIDIA L40S\n"
        "Device 3: NVIDIA L40S\n"
        "Device 4: NVIDIA L40S\n"
        "Device 5: NVIDIA L40S\n"
        "Device 6: NVIDIA L40S\n"
        "Device 7: NVIDIA L40S\n"
        "\n"
        "Running one_to_all_read_sm.\n"
        " Invalid value when checking the pattern at <0x7fac6200e480>\n"
        " Current offset [ 58496/66306048]\n"
        "Aborted (core dumped)",
        "hardware",
        True,
        "nvbandwidth-data-mismatch",
    ),
    # tinygrad/open-gpu-kernel-modules issue 29: the cuda-samples' simpleP2P cannot enable peer
    # access between two RTX 5090s; the driver cannot map the peer's memory.
    (
        "https://github.com/tinygrad/open-gpu-kernel-modules/issues/29",
        "pancho@fedora:~/cuda-samples/build/Samples/0_Introduction/simpleP2P$ ./simpleP2P \n"
        "[./simpleP2P] - Starting...\n"
        "Checking for multiple GPUs...\n"
        "CUDA-capable device count: 2\n"
        "\n"
        "Checking GPU(s) for support of peer to peer memory access...\n"
        "> Peer access from NVIDIA GeForce RTX 5090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU1) : Yes\n"
        "> Peer access from NVIDIA GeForce RTX 5090 (GPU1) -> NVIDIA GeForce RTX 5090 (GPU0) : Yes\n"
        "Enabling peer access between GPU0 and GPU1...\n"
        'CUDA error at /home/user/cuda-samples/Samples/0_Introduction/simpleP2P/simpleP2P.cu:130 code=205(cudaErrorMapBufferObjectFailed) "cudaDeviceEnablePeerAccess(gpuid[1], 0)" ',
        "system_software",
        True,
        "cuda-map-buffer-object-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_benchmark_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_the_test_names_the_host_whose_cuda_call_failed() -> None:
    # aws-samples/aws-efa-nccl-baseami-pipeline issue 7: CUDACHECK prints the host before the call.
    found = diagnose(
        "compute-od-gpu-dy-p4d-24xlarge-1: Test CUDA failure common.cu:1046 'unknown error'\n"
        " .. compute-od-gpu-dy-p4d-24xlarge-1 pid 41757: Test failure common.cu:1008"
    )
    assert found.implicated.nodes == ["compute-od-gpu-dy-p4d-24xlarge-1"]


def test_the_unwinding_alone_is_a_failure_of_unknown_cause() -> None:
    # NVIDIA/nccl-tests' TESTCHECK lines without the check that failed before them (first form
    # without the pid, as the 2017 tests printed it).
    found = diagnose(" .. pkb-aa8dbd1b-1: Test failure common.cu:393\n .. pkb-aa8dbd1b-1: Test failure common.cu:492")
    assert (found.symptom, found.evidence[0].signature, found.category) == (
        "crash",
        "collective-test-failure-trace",
        "unknown",
    )


def test_rccl_tests_failure_after_its_proxy_error_keeps_the_node() -> None:
    # ROCm/rccl issue 1454: the proxy's failed receive and NCCL's unwinding come first; the
    # test's own line reports the result that reached it.
    text = (
        "UVOSLinux:31965:31971 [0] /usr/src/debug/rccl/build/hipify/src/proxy.cc:1190 NCCL WARN Socket recv failed while polling for opId=0x7d9e780c40c0\n"
        "UVOSLinux:31965:31971 [0] NCCL INFO /usr/src/debug/rccl/build/hipify/src/transport/p2p.cc:473 -> 3\n"
        "UVOSLinux:31965:31965 [1] NCCL INFO /usr/src/debug/rccl/build/hipify/src/group.cc:107 -> 1\n"
        "UVOSLinux: Test NCCL failure /home/user/Programming/rccl-tests/build/hipify/common.cu.cpp:1291 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n"
        " .. UVOSLinux pid 31965: Test failure /home/user/Programming/rccl-tests/build/hipify/common.cu.cpp:1165"
    )
    found = diagnose(text)
    assert (found.category, found.implicated.nodes) == ("system_software", ["UVOSLinux"])


HEALTHY = [
    # coreweave/nccl-tests pull 43: a complete NVL72 table.
    (
        "#  Rank 71 Group  0 Pid  14840 on slurm-gb200-207-171 device  3 [0x01] NVIDIA Graphics Device\n"
        "#\n"
        "#                                                              out-of-place                       in-place          \n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
        "   536870912     134217728     float     sum      -1   1806.7  297.16  586.06      0   1835.9  292.43  576.74      0\n"
        "  1073741824     268435456     float     sum      -1   3108.8  345.38  681.17      0   2924.7  367.13  724.06      0\n"
        "  2147483648     536870912     float     sum      -1   5589.1  384.22  757.78      0   5474.6  392.26  773.62      0\n"
        "  4294967296    1073741824     float     sum      -1    10094  425.49  839.16      0    10141  423.54  835.32      0\n"
        "  8589934592    2147483648     float     sum      -1    20299  423.16  834.57      0    20006  429.37  846.82      0\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 745.53 "
    ),
    # Azure/azurehpc-health-checks issue 142: a complete 16G all_reduce_perf table on H200.
    (
        "root@vm:/azure-nhc# /opt/nccl-tests/build/all_reduce_perf -b 16G -f 2 -g 8 -e 16G -c 1\n"
        "# nThread 1 nGpus 8 minBytes 17179869184 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
        "#\n"
        "# Using devices\n"
        "#  Rank  0 Group  0 Pid   5026 on         vm device  0 [0x00] NVIDIA H200\n"
        "#  Rank  1 Group  0 Pid   5026 on         vm device  1 [0x00] NVIDIA H200\n"
        "#  Rank  2 Group  0 Pid   5026 on         vm device  2 [0x00] NVIDIA H200\n"
        "#  Rank  3 Group  0 Pid   5026 on         vm device  3 [0x00] NVIDIA H200\n"
        "#  Rank  4 Group  0 Pid   5026 on         vm device  4 [0x00] NVIDIA H200\n"
        "#  Rank  5 Group  0 Pid   5026 on         vm device  5 [0x00] NVIDIA H200\n"
        "#  Rank  6 Group  0 Pid   5026 on         vm device  6 [0x00] NVIDIA H200\n"
        "#  Rank  7 Group  0 Pid   5026 on         vm device  7 [0x00] NVIDIA H200\n"
        "#\n"
        "#                                                              out-of-place                       in-place\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        " 17179869184    4294967296     float     sum      -1    62639  274.27  479.97      0    62601  274.44  480.26      0\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 480.11"
    ),
    # awslabs/awsome-distributed-ai pull 1255: the summary lines of a completed run.
    (
        "NCCL version 2.31.2+cuda13.1\n"
        "NET/OFI Initializing aws-ofi-nccl 1.21.1\n"
        "NET/OFI Using Libfabric version 2.6\n"
        "Using network Libfabric\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 9.78732\n"
        "# Collective test concluded: all_reduce_perf"
    ),
    # ROCm/rccl issue 1490: all_gather_perf rows with low bandwidth and no wrong elements.
    (
        "srun --nodes=4 --ntasks-per-node=8 --cpus-per-task=8 --threads-per-core=1 --label \\\n"
        "    -- all_gather_perf -b 64K -e 4G -f 2 -g 1\n"
        " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        " 0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        " 0:        65536           512     float    none      -1    107.5    0.61    0.59      0    105.6    0.62    0.60      0\n"
        " 0:       131072          1024     float    none      -1    210.0    0.62    0.60      0    202.6    0.65    0.63      0\n"
        " 0:       262144          2048     float    none      -1    211.1    1.24    1.20      0    200.9    1.30    1.26      0\n"
        " 0:       524288          4096     float    none      -1    692.3    0.76    0.73      0    678.9    0.77    0.75      0\n"
        " 0:      1048576          8192     float    none      -1   1456.6    0.72    0.70      0   1304.0    0.80    0.78      0"
    ),
    # NVIDIA/nvbandwidth issue 13: a test waived because peer mapping is unavailable.
    (
        "$ ./nvbandwidth -t device_to_device_memcpy_write_ce\n"
        "nvbandwidth Version: v0.2\n"
        "Built from Git version: 6cefdda\n"
        "\n"
        "NOTE: This tool reports current measured bandwidth on your system.\n"
        "Additional system-specific tuning may be required to achieve maximal peak bandwidth.\n"
        "\n"
        "CUDA Runtime Version: 12010\n"
        "CUDA Driver Version: 12000\n"
        "Driver Version: 525.125.06\n"
        "\n"
        "Device 0: NVIDIA GeForce RTX 2080 Ti\n"
        "Device 1: NVIDIA GeForce RTX 2080 Ti\n"
        "\n"
        "Waiving device_to_device_memcpy_write_ce."
    ),
    # microsoft/superbenchmark pull 669: nvbandwidth matrices and several waived tests.
    (
        "nvbandwidth Version: v0.6\n"
        "Built from Git version:\n"
        "\n"
        "CUDA Runtime Version: 12040\n"
        "CUDA Driver Version: 12040\n"
        "Driver Version: 550.54.15\n"
        "\n"
        "Device 0: NVIDIA XXXXXX\n"
        "\n"
        "Running host_to_device_memcpy_ce.\n"
        "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        "        0         1\n"
        "0    337.55    2142.4\n"
        "1    2142.4    337.55\n"
        "\n"
        "SUM host_to_device_memcpy_ce 337.55\n"
        "\n"
        "Running device_to_host_memcpy_ce.\n"
        "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
        "        0         1        2\n"
        "0    295.23     241.2    254.0\n"
        "1    241.2      295.2    254.0\n"
        "\n"
        "SUM device_to_host_memcpy_ce 295.23\n"
        "\n"
        "Waived:\n"
        "Waived:\n"
        "Waived:\n"
        "Running host_to_device_bidirectional_memcpy_ce.\n"
        "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)\n"
        "        0\n"
        "0    160.02\n"
        "Waived:"
    ),
    # tinygrad/open-gpu-kernel-modules issue 44: p2pBandwidthLatencyTest on two RTX 4090s, low PCIe numbers.
    (
        "pancho@fedora:~/cuda-samples/build/Samples/5_Domain_Specific/p2pBandwidthLatencyTest$ export CUDA_VISIBLE_DEVICES=0,1\n"
        "pancho@fedora:~/cuda-samples/build/Samples/5_Domain_Specific/p2pBandwidthLatencyTest$ ./p2pBandwidthLatencyTest \n"
        "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
        "Device: 0, NVIDIA GeForce RTX 4090, pciBusID: 2, pciDeviceID: 0, pciDomainID:0\n"
        "Device: 1, NVIDIA GeForce RTX 4090, pciBusID: 17, pciDeviceID: 0, pciDomainID:0\n"
        "Device=0 CAN Access Peer Device=1\n"
        "Device=1 CAN Access Peer Device=0\n"
        "\n"
        "***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.\n"
        "So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n"
        "\n"
        "P2P Connectivity Matrix\n"
        "     D\\D     0     1\n"
        "     0       1     1\n"
        "     1       1     1\n"
        "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
        "   D\\D     0      1 \n"
        "     0 1008.06   6.34 \n"
        "     1   6.34 926.75 \n"
        "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
        "   D\\D     0      1 \n"
        "     0 1015.27   6.60 \n"
        "     1   6.60 945.63 \n"
        "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
        "   D\\D     0      1 \n"
        "     0 1018.92   8.66 \n"
        "     1   8.67 926.39 "
    ),
]


@pytest.mark.parametrize("text", HEALTHY)
def test_completed_benchmarks_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
