"""Whole excerpts of real logs where a node health checker took a node out (LBNL Node Health
Check's verdicts, tables/gpu_health.yaml) or a GPU node daemon reported an Xid (gpud's event,
tables/xid.yaml), and a GPU's own page fault naming the device (tables/rocm.yaml), each with where it was printed; and the alarming but harmless health-tool
output (a diagnostic whose checks pass or skip, a monitor reading N/A, corrected PCIe errors, a
port coming up), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # NVIDIA/deepops pull 660: NHC's GPU-count check fails and Slurm drains the node.
    (
        "https://github.com/NVIDIA/deepops/pull/660",
        "root@virtual-gpu01:~# nhc -v\n"
        "ERROR:  nhc:  Health check failed:  Check check_nv_gpu_count 2 returned 1\n"
        "root@virtual-gpu01:~# sinfo -Ra\n"
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "NHC: Check check_nv_ vagrant   2020-09-24T18:0",
        "hardware",
        True,
        "nhc-hardware-check-failed",
    ),
    # mej/nhc issue 147: a site's Xid check fails the node, again and again.
    (
        "https://github.com/mej/nhc/issues/147",
        "Found XID errors: 63\n"
        "Node Health Check failed.  Check check_xid_errors returned 1\n"
        "ERROR:  nhc:  Health check failed:  Check check_xid_errors returned 1\n"
        "Found XID errors: 63\n"
        "Node Health Check failed.  Check check_xid_errors returned 1\n"
        "ERROR:  nhc:  Health check failed:  Check check_xid_errors returned 1",
        "hardware",
        True,
        "nhc-hardware-check-failed",
    ),
    # mej/nhc issue 161: NHC's own watchdog times it out; slurmd kills the health check.
    (
        "https://github.com/mej/nhc/issues/161",
        "2025-06-11T19:12:23.050922+00:00 cpu001 nhc[1013622]: Health check failed:  Script timed out.\n"
        "2025-06-11T19:12:24.052725+00:00 cpu001 nhc[1013628]: Health check failed:  Terminated by signal SIGTERM.\n"
        "[2025-06-11T19:12:28.063] error: health_check killed by signal 9 output:",
        "system_software",
        True,
        "nhc-software-check-failed",
    ),
    # leptonai/gpud pull 192: the GPU node daemon's event for an Xid it read from dmesg.
    (
        "https://github.com/leptonai/gpud/pull/192",
        '    "events": [\n'
        "      {\n"
        '        "time": "2024-11-20T04:10:23Z",\n'
        '        "name": "error_xid",\n'
        '        "message": "xid 119 detected by dmesg (47 minutes ago)",',
        "hardware",
        True,
        "xid-119",
    ),
    # ROCm/legacy-rocm-build issue 5051: the runtime's memory access fault, then the driver's
    # page fault naming the GPU, and systemd's core dump of the aborted process.
    (
        "https://github.com/ROCm/legacy-rocm-build/issues/5051",
        "Memory access fault by GPU node-1 (Agent handle: 0x55f8b54eec30) on address 0x7f2a53193000. "
        "Reason: Page not present or supervisor privilege.\n"
        "Jan 09 18:55:45 desktop kernel: gmc_v11_0_process_interrupt: 632 callbacks suppressed\n"
        "Jan 09 18:55:45 desktop kernel: amdgpu 0000:0b:00.0: amdgpu: [gfxhub] page fault "
        "(src_id:0 ring:24 vmid:8 pasid:32792)\n"
        "Jan 09 18:55:45 desktop systemd-coredump[134090]: Process 91762 (python) of user 60105 "
        "terminated abnormally with signal 6/ABRT, processing...",
        "unknown",
        True,
        "rocm-memory-access-fault",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_node_health_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_nhc_syslog_line_names_its_node() -> None:
    # mej/nhc issue 161: syslog's host field says which node failed its check.
    found = diagnose("2025-06-11T19:12:23.050922+00:00 cpu001 nhc[1013622]: Health check failed:  Script timed out.")
    assert found.implicated.nodes == ["cpu001"]


def test_amdgpu_page_fault_names_the_gpu() -> None:
    # ROCm/legacy-rocm-build issue 5051: the runtime's line names only a KFD node; the driver's
    # page fault that follows names the device.
    found = diagnose(FAILURES[4][1])
    assert "0000:0b:00" in found.implicated.gpus


HEALTHY = [
    # NVIDIA/DCGM issue 55: dcgmi diag's deployment checks all pass.
    "$ dcgmi diag -r 3\n"
    "Successfully ran diagnostic for group.\n"
    "|-----  Deployment  --------+------------------------------------------------|\n"
    "| Denylist                  | Pass                                           |\n"
    "| NVML Library              | Pass                                           |\n"
    "| Page Retirement/Row Remap | Pass                                           |\n"
    "| Inforom                   | Pass                                           |",
    # NVIDIA/DCGM issue 272: the diagnostic's WARN lines skip the page-retirement check.
    "2026-01-16 09:50:03.010 WARN  [3279516:3279516] gpuId 2 returned status 0, value 9223372036854775794for "
    "DCGM_FI_DEV_RETIRED_DBE. Skipping this check. [/builds/dcgm/dcgm/nvvs/src/Software.cpp:729] "
    "[Software::checkPageRetirement]",
    # NVIDIA/DCGM issue 265: dcgmi dmon reads N/A for the ECC and NVLink counters.
    "#Entity    ESVTL        NLXMITP                     NLXMITB\n"
    "ID\n"
    "GPU 0      N/A          N/A                         N/A\n"
    "GPU 1      N/A          N/A                         N/A",
    # IBM/autopilot pull 22: the health checker's PCIe bandwidth test completes normally.
    "I0423 20:14:20.778418       9 healthchecks.go:74] Running health check: pciebw\n"
    "I0423 20:14:46.690881       9 healthchecks.go:203] GPU PCIe BW test completed:\n"
    "I0423 20:14:46.690934       9 healthchecks.go:226] Observation: node-b1 0 55.2",
    # lwfinger/rtlwifi_new issue 28: a flood of corrected PCIe errors (survivable).
    "Apr 18 13:51:11 laptop kernel: [ 1650.647219] pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5\n"
    "Apr 18 13:51:11 laptop kernel: [ 1650.680159] pcieport 0000:00:1c.5: AER: Multiple Corrected error received: id=00e5",
    # leptonai/gpud pull 1209: a ConnectX port goes INIT and then ACTIVE at boot.
    "Feb 14 05:03:41 gpu-node-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT\n"
    "Feb 14 05:03:41 gpu-node-1 kernel: workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 times, "
    "consider switching to WQ_UNBOUND\n"
    "Feb 14 05:03:41 gpu-node-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_health_tool_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
