"""Whole excerpts of what node and GPU health tools print when a training node is bad (nvidia-smi,
`dcgmi diag`, NVIDIA Fabric Manager, the NVSwitch driver, rocm-smi, amdgpu, gpu-burn), each with
where it was printed (tables/gpu_health.yaml, tables/rocm.yaml, tables/cuda.yaml), and the
alarming but harmless output of the same tools (throttle reasons, ERR! readings, ports Down,
non-fatal SXids, the tools' own warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # leptonai/gpud pull 80: nvidia-smi -q on an A100 whose uncorrectable rows wait for a reset.
    (
        "https://github.com/leptonai/gpud/pull/80",
        "    Remapped Rows\n"
        "        Correctable Error                 : 0\n"
        "        Uncorrectable Error               : 4\n"
        "        Pending                           : Yes",
        "hardware",
        True,
        "nvsmi-memory-repair-pending",
    ),
    # NVIDIA/nvidia-docker issue 933: after a reboot the driver shows nvidia-smi no GPU.
    (
        "https://github.com/NVIDIA/nvidia-docker/issues/933",
        "After a reboot of the server, the nvidia-smi has stopped working with the following error:\n"
        '`"No devices were found"`\n'
        "nvidia-docker-plugin | 2019/03/04 16:56:45 Discovering GPU devices",
        "system_software",
        True,
        "nvidia-smi-no-devices",
    ),
    # NVIDIA/DCGM issue 49: dcgmi diag's PCIe/NVLink integration test fails on every GPU.
    (
        "https://github.com/NVIDIA/DCGM/issues/49",
        "+-----  Integration  -------+------------------------------------------------+\n"
        "| PCIe                      | Fail - All                                     |\n"
        "| Warning                   | GPU 0GPU 0's NvLink link 0 is currently down   |",
        "hardware",
        True,
        "dcgm-diag-hardware-fail",
    ),
    # data-infra/cube-studio issue 29: the fabric manager's start script gives up.
    (
        "https://github.com/data-infra/cube-studio/issues/29",
        "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device"
        " information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
        'Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager -c'
        ' /usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1\n'
        "Sep 18 03:19:01 ubuntu2404 systemd[1]: nvidia-fabricmanager.service: Control process exited,"
        " code=exited, status=1/FAILURE",
        "system_software",
        True,
        "fabric-manager-failed",
    ),
    # siderolabs/extensions issue 511: the fabric manager rejects its own config file, repeatedly.
    (
        "https://github.com/siderolabs/extensions/issues/511",
        "<node ip>: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value\n"
        "<node ip>: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value",
        "system_software",
        True,
        "fabric-manager-failed",
    ),
    # ROCm/ROCm issue 1742: rocm-smi's empty table on a rig whose twelve cards ROCm cannot use.
    (
        "https://github.com/ROCm/ROCm/issues/1742",
        " ======================= ROCm System Management Interface =======================\n"
        "WARNING: No AMD GPUs specified\n"
        "================================= Concise Info =================================\n"
        "GPU  Temp  AvgPwr  SCLK  MCLK  Fan  Perf  PwrCap  VRAM%  GPU%\n"
        "============================= End of ROCm SMI Log ==============================",
        "system_software",
        True,
        "rocm-smi-no-gpus",
    ),
    # ollama/ollama issue 12136: ggml cannot start CUDA on an H100 node without its fabric manager.
    (
        "https://github.com/ollama/ollama/issues/12136",
        "ggml_cuda_init: failed to initialize CUDA: system not yet initialized",
        "system_software",
        True,
        "cuda-system-not-ready",
    ),
    # wilicc/gpu-burn issue 92: the burn-in tool's CUDA check, thrown and uncaught.
    (
        "https://github.com/wilicc/gpu-burn/issues/92",
        "GPU 6: NVIDIA H100 80GB HBM3 ...\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized",
        "system_software",
        True,
        "cuda-system-not-ready",
    ),
    # ROCm/rocDecode issue 429: the amdgpu ring timeout names the GPU in its device prefix.
    (
        "https://github.com/ROCm/rocDecode/issues/429",
        "amdgpu 0000:65:00.0: amdgpu: ring vcn_unified_1 timeout, signaled seq=2, emitted seq=6\n"
        "amdgpu 0000:65:00.0: amdgpu: Process information: process videodecodebatc pid 3795685 thread"
        " videodecod:cs0 pid 3795692\n"
        "amdgpu 0000:65:00.0: amdgpu: GPU reset begin!",
        "unknown",
        True,
        "amdgpu-ring-timeout",
    ),
    # ROCm/legacy-rocm-build issue 4021: an MI300X hive reset under training, its cause not shown
    # (the correctable xGMI errors before it are not one).
    (
        "https://github.com/ROCm/legacy-rocm-build/issues/4021",
        "[76914.190522] amdgpu 0000:9d:00.0: {1}socket: 6, die: 1, 1533 new correctable hardware errors"
        " detected in xgmi_wafl block\n"
        "[76914.214195] amdgpu 0000:dd:00.0: amdgpu: GPU reset begin!\n"
        "[76914.216568] Pid 1230312(python3.12) over core_pipe_limit\n"
        "[76914.238321] amdgpu 0000:dd:00.0: amdgpu: GPU mode1 reset",
        "unknown",
        True,
        "amdgpu-gpu-reset",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_gpu_health_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom != "none", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_ring_timeout_and_reset_name_their_gpu() -> None:
    found = diagnose("amdgpu 0000:65:00.0: amdgpu: ring vcn_unified_1 timeout, signaled seq=2, emitted seq=6")
    assert found.implicated.gpus == ["0000:65:00"]
    assert diagnose("[76914.214195] amdgpu 0000:dd:00.0: amdgpu: GPU reset begin!").implicated.gpus == ["0000:dd:00"]


def test_fabric_manager_failure_names_the_node_of_its_syslog_prefix() -> None:
    found = diagnose(
        'Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager -c'
        ' /usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1'
    )
    assert found.implicated.nodes == ["ubuntu2404"]


def test_a_fatal_sxid_fails_and_a_non_fatal_one_does_not() -> None:
    # The NVSwitch driver's SXid line says its severity (open-gpu-kernel-modules' nvswitch);
    # the data line that accompanies it does not, and stays quiet alone.
    non_fatal = "[   38.178720] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt"
    data = (
        "line kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028,"
        " Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100}"
    )
    fatal = "kernel: [123.456791] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 30 sourcetrack timeout error"
    assert diagnose(non_fatal + "\n" + data).symptom == "none"
    found = diagnose(non_fatal + "\n" + fatal)
    assert (found.evidence[0].signature, found.category) == ("nvswitch-sxid-fatal", "hardware")


HEALTHY = [
    # mlfoundations/open_clip issue 703: the software power cap is active, no hardware slowdown.
    "    Clocks Event Reasons\n"
    "        Idle                              : Not Active\n"
    "        SW Power Cap                      : Active\n"
    "        HW Slowdown                       : Not Active\n"
    "            HW Thermal Slowdown           : Not Active\n"
    "            HW Power Brake Slowdown       : Not Active",
    # NVIDIA/nvidia-docker issue 1090: nvidia-smi -q of a healthy GPU, no PCIe replays.
    "        Replays Since Reset         : 0\n"
    "    Clocks Throttle Reasons\n"
    "        HW Slowdown                 : Not Active\n"
    "            HW Thermal Slowdown     : N/A",
    # Azure/azhpc-diagnostics issue 77: an ERR! power reading, transient (no action, the maintainer).
    "|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |\n"
    "| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |",
    # leptonai/gpud pull 99: ibstat with a port administratively disabled.
    "CA 'mlx5_8'\n\tCA type: MT4125\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled",
    # Oneflow-Inc/oneflow pull 9115: the IB stack stopped on purpose; NCCL uses sockets instead.
    "ibv_devinfo\nFailed to get IB devices list: Function not implemented\nibstatus\nFatal error:  No devices\n"
    "oneflow-15:3907318:3907604 [1] NCCL INFO NET/IB : No device found.\n"
    "oneflow-15:3907318:3907604 [1] NCCL INFO Using network Socket",
    # NVIDIA/DCGM issue 174: nv-hostengine's NvSwitch poller repeats an ERROR and keeps running.
    "2024-05-24 10:22:29.245 ERROR [5231:5273] [[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned Object is"
    " in an undefined state [/workspaces/dcgm-rel_dcgm_2_2-postmerge/modules/nvswitch/DcgmModuleNvSwitch.cpp:388]"
    " [DcgmNs::DcgmModuleNvSwitch::RunOnce]",
    # NVIDIA/DCGM issue 272: nvvs skips checks it cannot read.
    "2026-01-16 09:50:02.437 WARN  [3279516:3279516] Error getting the graphics pids for GPU 0. Status = -32"
    " skipping check. [/builds/dcgm/dcgm/nvvs/src/Software.cpp:598] [Software::checkForGraphicsProcesses]",
    # NVIDIA/DCGM issue 253: a diagnostic that passes (DCGM 4's per-GPU rows).
    "| software                  | Pass                                           |\n"
    "|                           | GPU0: Pass                                     |\n"
    "+-----  Hardware  ----------+------------------------------------------------+\n"
    "| memory                    | Pass",
    # ROCm/legacy-rocm-build issue 1269: rocm-smi's own Python SyntaxWarnings.
    '/opt/rocm/bin/rocm-smi:816: SyntaxWarning: "is" with a literal. Did you mean "=="?\n  if clocktype is \'freq\':',
    # leptonai/gpud pull 1160: an NVLink 5 Xid marked Nonfatal.
    "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000"
    " 0x00000000 0x00000000 0x00000000)",
    # NVIDIA/nvtrust issue 33: the GPU tool wakes a GPU from D3 and reads on.
    "2024-01-04,04:04:24.159 WARNING  GPU 0000:44:00.0 ? 0x2331 BAR0 0x50042000000 not in D0 (current state 3),"
    " forcing it to D0\n"
    "2024-01-04,04:04:24.221 INFO     Selected GPU 0000:44:00.0 H100-PCIE 0x2331 BAR0 0x50042000000",
    # nvidia-smi -q's memory sections of a healthy A100 (the repair fields at No).
    "    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               : 0\n"
    "        Pending                           : No\n        Remapping Failure Occurred        : No",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_gpu_health_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
