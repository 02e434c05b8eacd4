"""Whole excerpts of real logs where a node's hardware, fabric or storage failed under a job
(RDMA completions in libibverbs' words, a GPU NVML cannot open, Paddle's CUDA errors, UCX's and
Open MPI's prefixes that name the node), each with where it was printed, and the alarming but
harmless lines nodes print (corrected ECC and PCIe errors, ibstat), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # openucx/ucx issue 844: UCX's rc_verbs transport prints the failed completion's status as
    # libibverbs words it (ibv_wc_status_str: IBV_WC_RETRY_EXC_ERR).
    (
        "https://github.com/openucx/ucx/issues/844",
        "Wed Jun 22 15:48:08 2016[1,43]<stdout>:[1466599688.714393] [vegas30:25196:0] rc_verbs_iface.c:47"
        "   UCX  ERROR Send completion with error: transport retry counter exceeded\n"
        "Wed Jun 22 15:48:08 2016[1,67]<stdout>:[1466599688.714248] [vegas30:25199:0] rc_verbs_iface.c:47"
        "   UCX  ERROR Send completion with error: transport retry counter exceeded",
        "network",
        True,
        "ucx-transport-error",
    ),
    # openucx/ucx issue 1880: the dc_verbs form names the queue pair and the vendor syndrome.
    (
        "https://github.com/openucx/ucx/issues/1880",
        "Sun Oct  1 17:01:10 2017[1,30]<stdout>:[1506866470.744682] [clx-hercules-065:1411 :0]"
        "       dc_verbs.c:633  UCX  ERROR Send completion with error on qp 0x10e55: transport retry"
        " counter exceeded syndrome 0x81\n"
        "Sun Oct  1 17:01:10 2017[1,30]<stdout>:[1506866470.744722] [clx-hercules-065:1411 :0]"
        "     ucp_worker.c:373  UCX  ERROR Error Endpoint timeout was not handled for ep 0x9ce460",
        "network",
        True,
        "ucx-transport-error",
    ),
    # PaddlePaddle/Paddle issue 57411: Paddle's enforce wraps the CUDA error in an OSError; the
    # launch failure is the kernel's fault, not the file system's.
    (
        "https://github.com/PaddlePaddle/Paddle/issues/57411",
        "[2023/09/15 19:33:12] ppocr INFO: save model in ./output/det_r50_vd/latest\n"
        "OSError: (External) CUDA error(719), unspecified launch failure.",
        "unknown",
        True,
        "cuda-launch-failure",
    ),
    # NVIDIA/nccl issue 268: NCCL 2.4's socket transport named no peer when a message overran.
    (
        "https://github.com/NVIDIA/nccl/issues/268",
        "hvd1:2918:3332 [0] NCCL INFO Channel 00 :    0   1\n"
        "hvd1:2918:3333 [0] external/nccl_archive/src/transport/net_socket.cc:200 NCCL WARN NET/Socket :"
        " message truncated : receiving 696320 bytes instead of 32768",
        "unknown",
        True,
        "nccl-socket-message-truncated",
    ),
    # The driver's probe-time message (open-gpu-kernel-modules, RmInitAdapter's MMIO check), as
    # NVIDIA/NVSentinel's syslog monitor quotes it from a fleet's dmesg: three lines, no Xid.
    (
        "github.com/NVIDIA/open-gpu-kernel-modules (src/nvidia/arch/nvalloc/unix/src/osinit.c)",
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "               NVRM: fallen off the bus and is not responding to commands.",
        "hardware",
        True,
        "gpu-fallen-off-bus",
    ),
    # NVIDIA Warp's CUDA check (warp/native/warp.cu check_cuda_result), THU-SI/Physics3D issue 2.
    (
        "https://github.com/THU-SI/Physics3D/issues/2",
        "Warp CUDA error 700: an illegal memory access was encountered"
        " (/buildAgent/work/a9ae500d09a78409/warp/native/warp.cu:223)",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
    # xxd3vin/workspace issue 19: nvidia-smi cannot open a GPU the driver enumerated.
    (
        "https://github.com/xxd3vin/workspace/issues/19",
        "[root@bh174 chenyang]# nvidia-smi \nUnable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
        "hardware",
        True,
        "gpu-unreachable",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_node_faults(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_open_mpi_tagged_ucx_line_names_the_node() -> None:
    # openucx/ucx issue 1880: --timestamp-output and --tag-output push UCX's [host:pid:tid] right.
    text = (
        "Sun Oct  1 17:01:10 2017[1,30]<stdout>:[1506866470.744682] [clx-hercules-065:1411 :0]"
        "       dc_verbs.c:633  UCX  ERROR Send completion with error on qp 0x10e55: transport retry"
        " counter exceeded syndrome 0x81"
    )
    assert diagnose(text).implicated.nodes == ["clx-hercules-065"]


def test_container_hostname_in_ucx_prefix_names_the_node() -> None:
    # NVIDIA/Megatron-LM issue 516: UCX's signal handler in a container named by its hex id.
    text = (
        "09677202c889:5283:5699 [7] NCCL INFO 24 coll channels, 0 nvls channels, 32 p2p channels, 32 p2p"
        " channels per peer\n"
        "[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "==== backtrace (tid:   5704) ====\n"
        " 0 0x0000000000043090 killpg()  ???:0\n"
        " 1 0x000000000008170d ncclGroupEnd()  ???:0"
    )
    found = diagnose(text)
    assert (found.category, found.implicated.nodes) == ("unknown", ["09677202c889"])


def test_nvml_eight_digit_domain_names_the_gpu() -> None:
    # NVML's busId is "%08X:%02X:%02X.0" (nvmlPciInfo_t); culprits use the four-digit domain.
    found = diagnose("Unable to determine the device handle for GPU 00000000:41:00.0: Unknown Error")
    assert (found.category, found.implicated.gpus) == ("hardware", ["0000:41:00"])


def test_nvlink5_nonfatal_error_is_no_failure_alone_but_a_fatal_one_is() -> None:
    # The driver prints the NVLink 5 error's severity in the line (leptonai/gpud pull 1174 quotes
    # both kinds from kmsg); NVIDIA's catalog sends only the fatal ones to a GPU reset.
    nonfatal = (
        "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13"
        " (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)"
    )
    fatal = (
        "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1"
        " (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)"
    )
    assert diagnose(nonfatal).symptom == "none"
    found = diagnose(nonfatal + "\n" + fatal)
    assert (found.evidence[0].signature, found.category, found.implicated.gpus) == (
        "xid-149",
        "hardware",
        ["0019:01:00"],
    )


HEALTHY = [
    # illinois-scicomp/machine-shop-maintenance issue 66: corrected DRAM errors (CE), counted.
    "[Mon Oct  3 13:52:42 2022] EDAC sbridge MC1: HANDLING MCE MEMORY ERROR\n"
    "[Mon Oct  3 13:52:42 2022] EDAC sbridge MC1: CPU 0: Machine Check Event: 0 Bank 7: cc00418000010091\n"
    "[Mon Oct  3 13:52:42 2022] EDAC MC1: 262 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0"
    " (channel:1 slot:0 page:0x2031c14 offset:0x940 grain:32 syndrome:0x0 -  OVERFLOW area:DRAM"
    " err_code:0001:0091 socket:0 ha:0 channel_mask:2 rank:1)",
    # openstreetmap/operations issue 300: the MCE notice and the corrected errors EDAC decodes.
    "May  7 06:45:12 errol kernel: [21584690.529862] mce: [Hardware Error]: Machine check events logged\n"
    "May  7 06:45:12 errol kernel: [21584690.529877] EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0"
    " (channel:2 slot:0 page:0x0 offset:0x0 grain:8 syndrome:0x0)",
    # mikeizbicki/ucr-cs100 issue 404: AMD's decoder says the error was corrected.
    "Message from syslogd@hammer at Nov 10 08:58:06 ...\n"
    " kernel:[Hardware Error]: MC4 Error (node 3): DRAM ECC error detected on the NB.\n\n"
    "Message from syslogd@hammer at Nov 10 08:58:06 ...\n"
    " kernel:[Hardware Error]: Error Status: Corrected error, no action required.",
    # pop-os/pop issue 751: PCIe AER corrected physical-layer errors.
    " pcieport 0000:00:1d.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"
    " pcieport 0000:00:1d.0: AER: device [8086:a330] error status/mask=00000001/00002000\n"
    " pcieport 0000:00:1d.0: AER: [ 0] RxErr\n"
    " nvme 0000:03:00.0: AER: Error of this Agent is reported first",
    # NVIDIA/nccl-tests issue 128: ibstat with one port active and one disabled.
    "CA 'mlx5_1'\n        CA type: MT4123\n        Port 1:\n                State: Down\n"
    "                Physical state: Disabled\n                Rate: 10\n                Link layer: InfiniBand",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_node_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
