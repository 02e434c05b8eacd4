"""What a GPU probe means for attribution: findings, evidence lines and a reason to blame a node."""

from __future__ import annotations

from dataclasses import dataclass

from recovery.activities.gpu.readings import GpuHealth, GpuReading
from recovery.workflows.models import Evidence

# Throttling that says something about the hardware (evidence for a straggler), unlike idling or
# a clock setting somebody chose.
_HARDWARE_THROTTLE = frozenset(
    {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown", "reliability"}
)
# Xids NVIDIA documents as usually the program's own fault (13, 31, 43) or a consequence of an
# earlier error (45), as the signature catalog classifies them: evidence, but no reason to
# blame the node.
_PROGRAM_XIDS = frozenset({13, 31, 43, 45})


@dataclass(frozen=True)
class Finding:
    """One thing a probe found. `implicates`: reason enough to blame the node."""

    signature: str
    text: str
    implicates: bool


def findings(health: GpuHealth) -> list[Finding]:
    """What the probe found, GPU by GPU. None when NVML could not be read (`health.reason`)."""
    if not health.available:
        return []
    return [f for gpu in health.gpus for f in gpu_findings(gpu)]


def gpu_findings(gpu: GpuReading) -> list[Finding]:
    label = f"GPU {gpu.index}" + (f" ({gpu.pci_bus_id})" if gpu.pci_bus_id else "")
    found = _fault_findings(gpu, label)
    if gpu.pending_reset and not any(f.implicates for f in found):
        found.append(Finding("nvml_reset_required", f"{label} needs a reset, NVML says", True))
    for xid in gpu.xid_events:
        found.append(Finding("nvml_xid", f"{label} raised Xid {xid}", xid not in _PROGRAM_XIDS))
    slowdowns = [r for r in gpu.throttle_reasons if r in _HARDWARE_THROTTLE]
    if slowdowns:
        found.append(Finding("nvml_throttle", f"{label} is throttled: {', '.join(slowdowns)}", False))
    return found


def _fault_findings(gpu: GpuReading, label: str) -> list[Finding]:
    """The readings NVIDIA says take a GPU out of service until it is reset or replaced."""
    found: list[Finding] = []
    if gpu.lost:
        found.append(Finding("nvml_gpu_lost", f"{label} is lost: NVML cannot reach it (fallen off the bus?)", True))
    if gpu.ecc_uncorrected_volatile:
        text = f"{label} has {gpu.ecc_uncorrected_volatile} uncorrected ECC errors since the driver loaded"
        found.append(Finding("nvml_ecc_uncorrected", text, True))
    elif gpu.ecc_uncorrected_aggregate:
        # Old errors, none since the last reset: the memory they hit has been retired or remapped.
        text = f"{label} has {gpu.ecc_uncorrected_aggregate} uncorrected ECC errors in its lifetime, none recently"
        found.append(Finding("nvml_ecc_uncorrected_lifetime", text, False))
    if gpu.retired_pages_pending:
        found.append(Finding("nvml_pages_pending", f"{label} has pages pending retirement (needs a reset)", True))
    if gpu.remapped_rows_pending:
        found.append(Finding("nvml_row_remap_pending", f"{label} has rows pending remapping (needs a reset)", True))
    if gpu.remapped_rows_failure:
        found.append(Finding("nvml_row_remap_failure", f"{label} failed to remap a row (replace it)", True))
    if gpu.recovery_action not in (None, "none"):
        found.append(Finding("nvml_recovery_action", f"{label}: NVML asks for {gpu.recovery_action}", True))
    return found


def health_evidence(health: GpuHealth) -> list[Evidence]:
    """The probe's findings as evidence lines (source `nvml`, on the probed node)."""
    return [Evidence(source="nvml", text=f.text, node=health.node, signature=f.signature) for f in findings(health)]


def implicates(health: GpuHealth) -> str | None:
    """Why the readings blame the node, in one line, or None when they do not (or were not read)."""
    reasons = [f.text for f in findings(health) if f.implicates]
    return "; ".join(reasons) if reasons else None
