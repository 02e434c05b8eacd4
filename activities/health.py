"""GPU health probe: what NVML knows about a node's GPUs, as evidence for attribution.

`probe_gpus()` reads this machine's GPUs through NVML (the `pynvml` module of `nvidia-ml-py`):
uncorrected ECC counts, pending page retirement and row remapping, remap failures, the recovery
action NVML asks for, clock throttling, Xid events, and whether a GPU is lost. It never raises
for NVML's sake: no library, driver or GPU gives `available=False` with the reason; a field one
GPU does not support is recorded in that GPU's `errors` and the probe carries on.

`python -m recovery.activities.health [--node NAME]` prints that as one line of JSON and exits 0, so it
runs on a node as a scheduler step; `probe_node()` runs it there (`srun -w NODE ... --overlap`
on Slurm, directly for the local scheduler, whose nodes are all this machine) and never raises
either. `HealthActivities.probe_node_health` is the Temporal activity around it;
`health_evidence()` and `implicates()` turn a probe into evidence and a reason to implicate the
node.

Limits worth knowing when reading a probe:

- Xid events come from an NVML event set registered by the probe itself, and NVML delivers only
  events raised after registration: a probe sees Xids raised while it runs, not the one that
  crashed the job minutes ago (the kernel log, scanned by the signatures, has those).
- Where the scheduler confines devices (Slurm's ConstrainDevices), a step that asked for no GPUs
  sees none, and the probe says "no GPU": give `srun_args` such as `--gres=gpu:8`.
- A GPU that fell off the bus can vanish from NVML's count entirely instead of being "lost";
  the probe cannot tell a missing GPU from one that was never there.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import structlog
from pydantic import ValidationError
from temporalio import activity

from recovery.activities.schedulers.base import SchedulerError
from recovery.activities.schedulers.slurm_commands import Runner, message, run_process, slurm_env
from recovery.workflows.models import Evidence, GpuHealth, GpuReading, HealthProbeInput

log = structlog.get_logger("recovery.health")

PROBE_TIMEOUT_SECONDS = 60.0
_MAX_XID_EVENTS = 64  # a GPU in an Xid storm must not keep the probe polling
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")  # one node: no hostlist brackets

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
# Throttling that says something about the hardware (evidence for a straggler), unlike idling or
# a clock setting somebody chose.
_HARDWARE_THROTTLE = frozenset(
    {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown", "reliability"}
)
# Xids NVIDIA documents as usually the program's own fault (13, 31, 43) or a consequence of an
# earlier error (45), as the signature catalog classifies them: evidence, but no reason to
# blame the node.
_PROGRAM_XIDS = frozenset({13, 31, 43, 45})

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
        log.warning("nvmlShutdown failed", error=_describe(err))


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


# --- probing a node through the scheduler ------------------------------------------------------


def probe_argv(
    node: str,
    scheduler_name: str,
    python: str,
    *,
    job_id: str | None = None,
    srun_args: Sequence[str] = (),
    immediate: int | None = None,
) -> list[str]:
    """The command that probes `node`: an argument list, never a shell string.

    Slurm: `srun -w NODE -N1 -n1 --overlap [--jobid=JOB | --immediate=S] [srun_args] PYTHON -m
    recovery.activities.health --node=NODE`. With `job_id` the probe is a step of that job, sharing its
    allocation (`--overlap`); without, srun asks for a new one, and `--immediate` makes it give
    up rather than queue behind the job holding the node. Local: the same Python command, run
    here. Raises ValueError for a name that is not one node, or an unknown scheduler."""
    if not _NODE_NAME.match(node):
        raise ValueError(f"{node!r} is not a node name")
    command = [python, "-m", "recovery.activities.health", f"--node={node}"]
    if scheduler_name == "local":
        return command
    if scheduler_name != "slurm":
        raise ValueError(f"no way to run a probe on scheduler {scheduler_name!r}")
    argv = ["srun", "-w", node, "-N1", "-n1", "--overlap"]
    if job_id is not None:
        argv.append(f"--jobid={job_id}")
    elif immediate is not None:
        argv.append(f"--immediate={immediate}")
    return [*argv, *srun_args, *command]


async def probe_node(
    node: str,
    scheduler_name: str,
    python: str,
    *,
    job_id: str | None = None,
    srun_args: Sequence[str] = (),
    timeout: float = PROBE_TIMEOUT_SECONDS,
    env: Mapping[str, str] | None = None,
    runner: Runner = run_process,
) -> GpuHealth:
    """Probe `node`'s GPUs by running `python -m recovery.activities.health` there. Never raises: a probe
    that cannot run, times out or prints nonsense is `available=False` with the reason, because
    attribution must carry on without it."""
    immediate = max(1, int(timeout / 2))  # srun gives up on an allocation before we give up on srun
    try:
        argv = probe_argv(node, scheduler_name, python, job_id=job_id, srun_args=srun_args, immediate=immediate)
    except ValueError as err:
        return _unprobed(node, str(err))
    run_env = env if env is not None else (slurm_env() if scheduler_name == "slurm" else dict(os.environ))
    try:
        result = await runner(argv, input=None, env=run_env, timeout=timeout)
    except SchedulerError as err:  # could not start it, or it timed out (and was killed)
        return _unprobed(node, f"the probe did not run: {err}")
    if result.returncode != 0:
        return _unprobed(node, f"the probe failed ({argv[0]} exit status {result.returncode}): {message(result)}")
    return parse_probe_output(node, result.stdout)


def parse_probe_output(node: str, stdout: str) -> GpuHealth:
    """The probe's JSON is its last line: a site's task prolog may print lines before it."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return _unprobed(node, "the probe printed nothing")
    try:
        health = GpuHealth.model_validate_json(lines[-1])
    except ValidationError as err:
        seen = lines[-1][:200]
        return _unprobed(node, f"the probe printed something unreadable: {seen!r} ({err.error_count()} errors)")
    return health.model_copy(update={"node": node})


def _unprobed(node: str, reason: str) -> GpuHealth:
    return GpuHealth(node=node, available=False, reason=reason)


class HealthActivities:
    """The probe as a Temporal activity. `python` must exist at the same path on the nodes (a
    shared virtual environment); `srun_args` are extra options a site needs, such as GPUs to ask
    for where Slurm confines devices. A probe that cannot run is a result, not an activity
    failure, so retries never hold up attribution."""

    def __init__(
        self,
        python: str = sys.executable,
        *,
        timeout: float = PROBE_TIMEOUT_SECONDS,
        srun_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        runner: Runner = run_process,
    ) -> None:
        self.python = python
        self.timeout = timeout
        self.srun_args = list(srun_args)
        self.env = env
        self.runner = runner

    @activity.defn
    async def probe_node_health(self, inp: HealthProbeInput) -> GpuHealth:
        health = await probe_node(
            inp.node,
            inp.scheduler,
            self.python,
            job_id=inp.job_id,
            srun_args=self.srun_args,
            timeout=self.timeout,
            env=self.env,
            runner=self.runner,
        )
        log.info("gpu health", run_id=inp.run_id, node=inp.node, available=health.available, reason=health.reason)
        return health


# --- what a probe means for attribution ----------------------------------------------------------


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


# --- as a scheduler step ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Print this machine's GpuHealth as one JSON line. Exit 0 whatever NVML said: the JSON says it."""
    parser = argparse.ArgumentParser(
        prog="python -m recovery.activities.health", description="Print this machine's GPU health."
    )
    parser.add_argument("--node", help="the node name to report (default: this host's name)")
    args = parser.parse_args(argv)
    # stdout carries the JSON line and nothing else: the caller parses it.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
    print(probe_gpus(node=args.node).model_dump_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
