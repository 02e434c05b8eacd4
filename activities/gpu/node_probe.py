"""The GPU probe that runs on the node: what NVML knows about this machine's GPUs.

`probe_gpus()` reads the GPUs through NVML (the `pynvml` module of `nvidia-ml-py`): uncorrected
ECC counts, pending page retirement and row remapping, remap failures, the recovery action NVML
asks for, clock throttling, Xid events, and whether a GPU is lost. It never raises for NVML's
sake: no library, driver or GPU gives `available=False` with the reason; a field one GPU does not
support is recorded in that GPU's `errors` and the probe carries on.

It runs on compute nodes (`python -m recovery.activities.gpu`, see `__main__`), so it imports
the standard library and `pynvml` only. Limits worth knowing when reading a probe:

- Xid events come from an NVML event set registered by the probe itself, and NVML delivers only
  events raised after registration: a probe sees Xids raised while it runs, not the one that
  crashed the job minutes ago (the kernel log, scanned by the signatures, has those).
- Where the scheduler confines devices (Slurm's ConstrainDevices), a step that asked for no GPUs
  sees none, and the probe says "no GPU": give `srun_args` such as `--gres=gpu:8`.
- A GPU that fell off the bus can vanish from NVML's count entirely instead of being "lost";
  the probe cannot tell a missing GPU from one that was never there.
"""

from __future__ import annotations

import importlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from recovery.activities.gpu.readings import GpuHealth, GpuReading

log = logging.getLogger("recovery.gpu")

_MAX_XID_EVENTS = 64  # a GPU in an Xid storm must not keep the probe polling

# NVML's enum values (nvml.h): a fixed ABI, so they are spelled out rather than looked up in
# whichever pynvml version is installed.
_RECOVERY_ACTIONS = {
    0: "none",
    1: "gpu_reset",
    2: "node_reboot",
    3: "drain_p2p",
    4: "drain_and_reset",
    5: "recover_imex_domain",
    6: "bus_reset",
    7: "system_reboot",
}
# nvmlValueType_t -> the member of the nvmlValue_t union that holds the value.
_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
_RESET_ACTIONS = frozenset({"gpu_reset", "drain_and_reset", "bus_reset", "node_reboot", "system_reboot"})
_THROTTLE_BITS = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
    0x200: "board_limit",
    0x400: "reliability",
}
_XID_CRITICAL_ERROR = 0x8  # nvmlEventTypeXidCriticalError


# --- probing this machine --------------------------------------------------------------------


def probe_gpus(nvml: ModuleType | None = None, *, node: str | None = None) -> GpuHealth:
    """What NVML says about this machine's GPUs. Never raises for NVML's sake.

    `nvml` is the NVML binding (default: the `pynvml` module). Tests pass a stand-in module, as
    no GPU is available to them; where such a stand-in falls short of the real library:

    - It raises the real `pynvml.NVMLError` classes, but only where a test says so; the real
      library decides per GPU, driver and permission, and may fail calls a test never thought of.
    - It returns the values a test chose, in the types pynvml documents (a `c_nvmlPciInfo_t`-like
      object, tuples, ints); a real driver may return values no test covers (an unknown recovery
      action or throttle bit is reported by number for that reason).
    - Its event set delivers the events a test queued; the real one only delivers events raised
      after registration, and its timing is not simulated.
    - Calls return at once; on a GPU that fell off the bus real calls can take seconds each,
      which `probe_node`'s timeout bounds.

    `node` names the result (default: this host's name).
    """
    host = socket.gethostname()
    name = node or host
    module = nvml if nvml is not None else _load_pynvml()
    if module is None:
        return GpuHealth(node=name, host=host, available=False, reason="nvidia-ml-py (pynvml) is not installed")
    try:
        module.nvmlInit()
    except module.NVMLError as err:
        return GpuHealth(node=name, host=host, available=False, reason=_init_failure(module, err))
    try:
        return _read_all(module, name, host)
    finally:
        _shutdown(module)


def _load_pynvml() -> ModuleType | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


def _init_failure(nvml: ModuleType, err: Any) -> str:
    """Why NVML would not start, in an operator's words."""
    reasons = {
        nvml.NVML_ERROR_LIBRARY_NOT_FOUND: "no NVIDIA driver here: NVML's library (libnvidia-ml.so.1) is not found",
        nvml.NVML_ERROR_DRIVER_NOT_LOADED: "the NVIDIA kernel driver is not loaded",
        nvml.NVML_ERROR_NO_PERMISSION: "no permission to use NVML (the GPU device files)",
        nvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH: "NVML's library and the loaded kernel driver differ in version",
    }
    return reasons.get(_code(err), f"NVML did not start: {_describe(err)}")


def _shutdown(nvml: ModuleType) -> None:
    try:
        nvml.nvmlShutdown()
    except nvml.NVMLError as err:
        # The readings are taken and the process is about to end: nothing to undo, only to note.
        log.warning("nvmlShutdown failed: %s", _describe(err))


def _read_all(nvml: ModuleType, node: str, host: str) -> GpuHealth:
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except nvml.NVMLError as err:
        return GpuHealth(node=node, host=host, available=False, reason=f"NVML cannot count GPUs: {_describe(err)}")
    if count == 0:
        reason = "NVML sees no GPU (none here, or the scheduler gave this step none)"
        return GpuHealth(node=node, host=host, available=False, reason=reason)
    return GpuHealth(node=node, host=host, available=True, gpus=[read_gpu(nvml, i) for i in range(count)])


# --- one GPU ---------------------------------------------------------------------------------


Reader = Callable[[ModuleType, Any], dict[str, Any]]


@dataclass
class _Tally:
    """What went wrong while reading one GPU."""

    errors: list[str]
    lost: bool = False
    reset_required: bool = False


def read_gpu(nvml: ModuleType, index: int) -> GpuReading:
    """Every field NVML will give for GPU `index`. A refused field is noted and skipped; a lost
    GPU ends the reading, since every further call would fail the same way (slowly)."""
    tally = _Tally(errors=[])
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except nvml.NVMLError as err:
        # NVML starts and counts GPUs even when one is in a bad state; that GPU's handle fails,
        # with "GPU is lost" or, from a GPU that fell off the bus, often just "Unknown Error"
        # (nvidia-smi's "Unable to determine the device handle for GPU ...: Unknown Error").
        _note(nvml, tally, "handle", err)
        lost = tally.lost or _code(err) == nvml.NVML_ERROR_UNKNOWN
        return GpuReading(index=index, lost=lost, errors=tally.errors)
    values: dict[str, Any] = {}
    for field, read in _READERS:
        try:
            values.update(read(nvml, handle))
        except nvml.NVMLError as err:
            _note(nvml, tally, field, err)
            if tally.lost:
                break
    pending = _pending_reset(values, tally.reset_required)
    return GpuReading(index=index, lost=tally.lost, pending_reset=pending, errors=tally.errors, **values)


def _note(nvml: ModuleType, tally: _Tally, field: str, err: Any) -> None:
    tally.errors.append(f"{field}: {_describe(err)}")
    tally.lost = tally.lost or _code(err) == nvml.NVML_ERROR_GPU_IS_LOST
    tally.reset_required = tally.reset_required or _code(err) == nvml.NVML_ERROR_RESET_REQUIRED


def _pending_reset(values: dict[str, Any], reset_required: bool) -> bool | None:
    """True when something waits for a reset; None when nothing that could say so was read."""
    action = values.get("recovery_action")
    signs = [
        values.get("retired_pages_pending"),
        values.get("remapped_rows_pending"),
        None if action is None else action in _RESET_ACTIONS,
    ]
    if reset_required:
        return True
    known = [s for s in signs if s is not None]
    return any(known) if known else None


def _read_pci(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    info = nvml.nvmlDeviceGetPciInfo(handle)
    return {"pci_bus_id": f"{info.domain:04x}:{info.bus:02x}:{info.device:02x}"}


def _read_name(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    name = nvml.nvmlDeviceGetName(handle)
    return {"name": name.decode(errors="replace") if isinstance(name, bytes) else str(name)}


def _read_ecc_volatile(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    count = nvml.nvmlDeviceGetTotalEccErrors(handle, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)
    return {"ecc_uncorrected_volatile": int(count)}


def _read_ecc_aggregate(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    count = nvml.nvmlDeviceGetTotalEccErrors(handle, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_AGGREGATE_ECC)
    return {"ecc_uncorrected_aggregate": int(count)}


def _read_retired_pages(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    return {"retired_pages_pending": bool(nvml.nvmlDeviceGetRetiredPagesPendingStatus(handle))}


def _read_remapped_rows(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    _corrected, _uncorrected, pending, failure = nvml.nvmlDeviceGetRemappedRows(handle)
    return {"remapped_rows_pending": bool(pending), "remapped_rows_failure": bool(failure)}


def _read_recovery_action(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    """NVML publishes the recovery action as a field value (no getter function of its own)."""
    field = getattr(nvml, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", None)
    if field is None:  # an nvidia-ml-py older than the field: same meaning as the driver lacking it
        raise nvml.NVMLError(nvml.NVML_ERROR_NOT_SUPPORTED)
    (value,) = nvml.nvmlDeviceGetFieldValues(handle, [field])
    if value.nvmlReturn != nvml.NVML_SUCCESS:
        raise nvml.NVMLError(value.nvmlReturn)
    number = int(getattr(value.value, _VALUE_MEMBERS.get(value.valueType, "uiVal")))
    return {"recovery_action": _RECOVERY_ACTIONS.get(number, f"unknown_{number}")}


def _read_throttle(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    try:
        mask = nvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
    except nvml.NVMLError as err:
        # Drivers before R535 have only the older name for the same bit mask.
        if _code(err) != nvml.NVML_ERROR_FUNCTION_NOT_FOUND:
            raise
        mask = nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
    return {"throttle_reasons": throttle_names(int(mask))}


def throttle_names(mask: int) -> list[str]:
    """NVML's throttle bit mask as names; an unknown bit by its value, so nothing is hidden."""
    names = [name for bit, name in _THROTTLE_BITS.items() if mask & bit]
    unknown = mask & ~sum(_THROTTLE_BITS)
    names += [f"0x{1 << b:x}" for b in range(64) if unknown & (1 << b)]
    return names


def _read_xids(nvml: ModuleType, handle: Any) -> dict[str, Any]:
    """Xid events, polled without waiting (see the module's note on what that can see)."""
    events = nvml.nvmlEventSetCreate()
    try:
        nvml.nvmlDeviceRegisterEvents(handle, _XID_CRITICAL_ERROR, events)
        return {"xid_events": _drain_xids(nvml, events)}
    finally:
        nvml.nvmlEventSetFree(events)


def _drain_xids(nvml: ModuleType, events: Any) -> list[int]:
    xids: list[int] = []
    for _ in range(_MAX_XID_EVENTS):
        try:
            data = nvml.nvmlEventSetWait(events, 0)
        except nvml.NVMLError as err:
            if _code(err) == nvml.NVML_ERROR_TIMEOUT:  # no (more) events: the normal end
                break
            raise
        if data.eventType & _XID_CRITICAL_ERROR:
            xids.append(int(data.eventData))
    return xids


_READERS: tuple[tuple[str, Reader], ...] = (
    ("pci_bus_id", _read_pci),
    ("name", _read_name),
    ("ecc_uncorrected_volatile", _read_ecc_volatile),
    ("ecc_uncorrected_aggregate", _read_ecc_aggregate),
    ("retired_pages_pending", _read_retired_pages),
    ("remapped_rows", _read_remapped_rows),
    ("recovery_action", _read_recovery_action),
    ("throttle_reasons", _read_throttle),
    ("xid_events", _read_xids),
)


def _code(err: Any) -> int | None:
    value = getattr(err, "value", None)
    return value if isinstance(value, int) else None


def _describe(err: Any) -> str:
    return str(err) or type(err).__name__
