"""The GPU health probe, without a GPU.

The real probe runs on this machine (no NVIDIA driver: it must say so and not raise) and as
`python -m recovery.activities.gpu`. NVML's behaviour on GPUs is played by a stand-in module built from
the real `pynvml` (its constants and its own NVMLError classes) with the device calls replaced;
`recovery.activities.gpu.node_probe.probe_gpus` lists where that stand-in falls short of the real library.
"""

from __future__ import annotations

import ctypes.util
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pynvml
import pytest

from recovery.activities.gpu.evidence import health_evidence, implicates
from recovery.activities.gpu.node_probe import probe_gpus, throttle_names
from recovery.activities.gpu.readings import GpuHealth, GpuReading
from recovery.activities.gpu.remote import parse_probe_output, probe_argv, probe_node, read_health
from recovery.activities.schedulers.base import SchedulerUnavailable
from recovery.activities.schedulers.slurm_commands import Completed

REPO = Path(__file__).resolve().parents[2]
HAS_NVML = ctypes.util.find_library("nvidia-ml") is not None

NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED
NO_PERMISSION = pynvml.NVML_ERROR_NO_PERMISSION
GPU_IS_LOST = pynvml.NVML_ERROR_GPU_IS_LOST


# --- a stand-in for pynvml ---------------------------------------------------------------------


@dataclass
class FakeGpu:
    """One GPU's answers. `fail` maps a pynvml function name to the NVML error code it raises."""

    bus: int = 0x3B
    name: str = "NVIDIA H100 80GB HBM3"
    ecc_volatile: int = 0
    ecc_aggregate: int = 0
    retired_pending: int = pynvml.NVML_FEATURE_DISABLED
    remapped: tuple[int, int, int, int] = (0, 0, 0, 0)  # corrected, uncorrected, pending, failure
    recovery_action: int = pynvml.NVML_GPU_RECOVERY_ACTION_NONE
    recovery_return: int = pynvml.NVML_SUCCESS  # the field value's own return code
    throttle: int = 0
    xids: list[int] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)
    lost: bool = False  # every call after the handle says "GPU is lost"


@dataclass
class FakeEvents:
    queue: list[Any] = field(default_factory=list)
    freed: bool = False


def fake_nvml(gpus: list[FakeGpu], *, init_error: int | None = None, count_error: int | None = None) -> ModuleType:
    """A module that answers like pynvml would for these GPUs; `calls` records what was called."""
    nvml = ModuleType("fake_pynvml")
    for name in dir(pynvml):
        if name.startswith(("NVML_", "NVMLError", "nvmlEventType")):
            setattr(nvml, name, getattr(pynvml, name))
    calls: list[str] = []
    events_made: list[FakeEvents] = []
    nvml.calls = calls  # type: ignore[attr-defined]
    nvml.event_sets = events_made  # type: ignore[attr-defined]

    def check(fn: str, gpu: FakeGpu | None = None) -> None:
        calls.append(fn)
        if gpu is not None and gpu.lost:
            raise pynvml.NVMLError(GPU_IS_LOST)
        if gpu is not None and fn in gpu.fail:
            raise pynvml.NVMLError(gpu.fail[fn])

    def init() -> None:
        check("nvmlInit")
        if init_error is not None:
            raise pynvml.NVMLError(init_error)

    def count() -> int:
        check("nvmlDeviceGetCount")
        if count_error is not None:
            raise pynvml.NVMLError(count_error)
        return len(gpus)

    def handle(index: int) -> FakeGpu:
        calls.append("nvmlDeviceGetHandleByIndex")
        if "nvmlDeviceGetHandleByIndex" in gpus[index].fail:
            raise pynvml.NVMLError(gpus[index].fail["nvmlDeviceGetHandleByIndex"])
        return gpus[index]

    def pci(gpu: FakeGpu) -> SimpleNamespace:
        check("nvmlDeviceGetPciInfo", gpu)
        return SimpleNamespace(domain=0, bus=gpu.bus, device=0, busId=f"00000000:{gpu.bus:02X}:00.0")

    def name(gpu: FakeGpu) -> str:
        check("nvmlDeviceGetName", gpu)
        return gpu.name

    def ecc(gpu: FakeGpu, error_type: int, counter: int) -> int:
        check("nvmlDeviceGetTotalEccErrors", gpu)
        assert error_type == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        return gpu.ecc_volatile if counter == pynvml.NVML_VOLATILE_ECC else gpu.ecc_aggregate

    def retired(gpu: FakeGpu) -> int:
        check("nvmlDeviceGetRetiredPagesPendingStatus", gpu)
        return gpu.retired_pending

    def remapped(gpu: FakeGpu) -> tuple[int, int, int, int]:
        check("nvmlDeviceGetRemappedRows", gpu)
        return gpu.remapped

    def field_values(gpu: FakeGpu, ids: list[int]) -> list[SimpleNamespace]:
        check("nvmlDeviceGetFieldValues", gpu)
        assert ids == [pynvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION]
        value = SimpleNamespace(uiVal=gpu.recovery_action, ullVal=None)
        kind = pynvml.NVML_VALUE_TYPE_UNSIGNED_INT
        return [SimpleNamespace(fieldId=ids[0], nvmlReturn=gpu.recovery_return, valueType=kind, value=value)]

    def clocks_event(gpu: FakeGpu) -> int:
        check("nvmlDeviceGetCurrentClocksEventReasons", gpu)
        return gpu.throttle

    def clocks_throttle(gpu: FakeGpu) -> int:
        check("nvmlDeviceGetCurrentClocksThrottleReasons", gpu)
        return gpu.throttle

    def event_set() -> FakeEvents:
        calls.append("nvmlEventSetCreate")
        made = FakeEvents()
        events_made.append(made)
        return made

    def register(gpu: FakeGpu, types: int, events: FakeEvents) -> None:
        check("nvmlDeviceRegisterEvents", gpu)
        assert types == pynvml.nvmlEventTypeXidCriticalError
        events.queue = [SimpleNamespace(eventType=types, eventData=x) for x in gpu.xids]

    def wait(events: FakeEvents, timeout_ms: int) -> Any:
        calls.append("nvmlEventSetWait")
        assert timeout_ms == 0, "the probe must never block on events"
        if not events.queue:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_TIMEOUT)
        return events.queue.pop(0)

    def free(events: FakeEvents) -> None:
        calls.append("nvmlEventSetFree")
        events.freed = True

    for attr, fn in {
        "nvmlInit": init,
        "nvmlShutdown": lambda: calls.append("nvmlShutdown"),
        "nvmlDeviceGetCount": count,
        "nvmlDeviceGetHandleByIndex": handle,
        "nvmlDeviceGetPciInfo": pci,
        "nvmlDeviceGetName": name,
        "nvmlDeviceGetTotalEccErrors": ecc,
        "nvmlDeviceGetRetiredPagesPendingStatus": retired,
        "nvmlDeviceGetRemappedRows": remapped,
        "nvmlDeviceGetFieldValues": field_values,
        "nvmlDeviceGetCurrentClocksEventReasons": clocks_event,
        "nvmlDeviceGetCurrentClocksThrottleReasons": clocks_throttle,
        "nvmlEventSetCreate": event_set,
        "nvmlDeviceRegisterEvents": register,
        "nvmlEventSetWait": wait,
        "nvmlEventSetFree": free,
    }.items():
        setattr(nvml, attr, fn)
    return nvml


def ampere(fail: dict[str, int] | None = None, **kw: Any) -> FakeGpu:
    """An Ampere-or-later GPU: rows are remapped, so page retirement is not supported."""
    return FakeGpu(fail={"nvmlDeviceGetRetiredPagesPendingStatus": NOT_SUPPORTED, **(fail or {})}, **kw)


# --- (a) the real probe on this machine --------------------------------------------------------


@pytest.mark.skipif(HAS_NVML, reason="this machine has NVML; the GPU test below runs instead")
def test_real_probe_without_a_gpu_says_why() -> None:
    health = probe_gpus(node="n1")
    assert health.available is False
    assert "libnvidia-ml" in health.reason and "no NVIDIA driver" in health.reason
    assert health.node == "n1" and health.host == socket.gethostname() and health.gpus == []
    assert implicates(health) is None and health_evidence(health) == []


@pytest.mark.skipif(not HAS_NVML, reason="no NVIDIA driver (libnvidia-ml) on this machine")
def test_real_probe_on_a_gpu_machine() -> None:
    health = probe_gpus()
    assert health.available, health.reason
    for gpu in health.gpus:
        assert gpu.lost or (gpu.pci_bus_id is not None and gpu.name)


# --- (b) NVML's errors and readings, through the stand-in ------------------------------------


def test_healthy_gpus_read_fully_and_shut_down() -> None:
    nvml = fake_nvml([ampere(bus=0x3B), ampere(bus=0xDB, throttle=0x1)])
    health = probe_gpus(nvml, node="gpu01")
    assert health.available and health.reason == ""
    first, second = health.gpus
    assert first.pci_bus_id == "0000:3b:00" and second.pci_bus_id == "0000:db:00"
    assert first.name == "NVIDIA H100 80GB HBM3"
    assert (first.ecc_uncorrected_volatile, first.ecc_uncorrected_aggregate) == (0, 0)
    assert (first.remapped_rows_pending, first.remapped_rows_failure) == (False, False)
    assert first.recovery_action == "none" and first.pending_reset is False
    assert second.throttle_reasons == ["gpu_idle"] and first.xid_events == []
    assert first.errors == ["retired_pages_pending: Not Supported"]
    assert nvml.calls[0] == "nvmlInit" and nvml.calls[-1] == "nvmlShutdown"
    assert all(s.freed for s in nvml.event_sets) and len(nvml.event_sets) == 2
    assert implicates(health) is None and health_evidence(health) == []


def test_a_field_not_supported_is_recorded_and_the_rest_still_read() -> None:
    gpu = ampere(fail={"nvmlDeviceGetTotalEccErrors": NOT_SUPPORTED}, remapped=(0, 0, 1, 0))
    reading = probe_gpus(fake_nvml([gpu])).gpus[0]
    assert reading.ecc_uncorrected_volatile is None and reading.ecc_uncorrected_aggregate is None
    assert reading.errors == [
        "ecc_uncorrected_volatile: Not Supported",
        "ecc_uncorrected_aggregate: Not Supported",
        "retired_pages_pending: Not Supported",
    ]
    assert reading.remapped_rows_pending is True and reading.recovery_action == "none"
    assert reading.pci_bus_id == "0000:3b:00" and reading.lost is False


def test_no_permission_on_a_field_is_recorded() -> None:
    gpu = ampere(fail={"nvmlDeviceRegisterEvents": NO_PERMISSION})
    reading = probe_gpus(fake_nvml([gpu])).gpus[0]
    assert "xid_events: Insufficient Permissions" in reading.errors
    assert reading.xid_events == [] and reading.recovery_action == "none"


def test_a_lost_gpu_is_marked_and_the_others_still_read() -> None:
    nvml = fake_nvml([ampere(bus=0x3B), ampere(bus=0x5E, lost=True), ampere(bus=0xDB)])
    health = probe_gpus(nvml, node="gpu07")
    ok, lost, last = health.gpus
    assert lost.lost is True and lost.errors == ["pci_bus_id: GPU is lost"]  # stops at the first
    assert ok.lost is False and last.lost is False and last.pci_bus_id == "0000:db:00"
    assert nvml.calls[-1] == "nvmlShutdown"
    reason = implicates(health)
    assert reason is not None and "GPU 1 is lost" in reason
    (evidence,) = health_evidence(health)
    assert evidence.node == "gpu07" and evidence.source == "nvml" and evidence.signature == "nvml_gpu_lost"


@pytest.mark.parametrize(
    ("code", "lost"),
    [(GPU_IS_LOST, True), (pynvml.NVML_ERROR_UNKNOWN, True), (NO_PERMISSION, False)],
)
def test_a_gpu_without_a_handle(code: int, lost: bool) -> None:
    gpu = ampere(fail={"nvmlDeviceGetHandleByIndex": code})
    reading = probe_gpus(fake_nvml([ampere(), gpu])).gpus[1]
    assert reading.lost is lost and reading.errors == [f"handle: {pynvml.NVMLError(code)}"]
    assert reading.pci_bus_id is None


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1) is not found"),
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver is not loaded"),
        (NO_PERMISSION, "no permission"),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "differ in version"),
        (pynvml.NVML_ERROR_UNKNOWN, "NVML did not start: Unknown Error"),
    ],
)
def test_init_failing_means_unavailable_without_shutdown(code: int, words: str) -> None:
    nvml = fake_nvml([ampere()], init_error=code)
    health = probe_gpus(nvml, node="n1")
    assert health.available is False and words in health.reason and health.gpus == []
    assert nvml.calls == ["nvmlInit"]  # nothing started, so nothing to shut down


def test_no_gpu_or_no_count_means_unavailable_and_nvml_is_shut_down() -> None:
    empty = fake_nvml([])
    assert "NVML sees no GPU" in probe_gpus(empty).reason
    broken = fake_nvml([ampere()], count_error=pynvml.NVML_ERROR_UNKNOWN)
    health = probe_gpus(broken)
    assert health.available is False and health.reason == "NVML cannot count GPUs: Unknown Error"
    assert empty.calls[-1] == "nvmlShutdown" and broken.calls[-1] == "nvmlShutdown"


def test_older_driver_throttle_reasons_and_unknown_bits() -> None:
    gpu = ampere(
        throttle=0x8 | 0x40 | 0x8000,
        fail={"nvmlDeviceGetCurrentClocksEventReasons": pynvml.NVML_ERROR_FUNCTION_NOT_FOUND},
    )
    reading = probe_gpus(fake_nvml([gpu])).gpus[0]
    assert reading.throttle_reasons == ["hw_slowdown", "hw_thermal_slowdown", "0x8000"]
    assert not any(e.startswith("throttle_reasons") for e in reading.errors)
    assert throttle_names(0) == []


def test_recovery_action_refused_by_the_field_itself() -> None:
    gpu = ampere(recovery_return=NOT_SUPPORTED)
    reading = probe_gpus(fake_nvml([gpu])).gpus[0]
    assert reading.recovery_action is None and "recovery_action: Not Supported" in reading.errors


def test_recovery_action_missing_from_an_older_binding() -> None:
    nvml = fake_nvml([ampere()])
    del nvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
    reading = probe_gpus(nvml).gpus[0]
    assert reading.recovery_action is None and "recovery_action: Not Supported" in reading.errors


def test_reset_required_from_any_call_means_pending_reset() -> None:
    gpu = ampere(fail={"nvmlDeviceGetName": pynvml.NVML_ERROR_RESET_REQUIRED})
    health = probe_gpus(fake_nvml([gpu]))
    assert health.gpus[0].pending_reset is True
    assert implicates(health) == "GPU 0 (0000:3b:00) needs a reset, NVML says"


def test_xid_events_polled_without_blocking_and_capped() -> None:
    nvml = fake_nvml([ampere(xids=[79]), ampere(xids=[13] * 500)])
    first, second = probe_gpus(nvml).gpus
    assert first.xid_events == [79] and len(second.xid_events) == 64
    assert all(s.freed for s in nvml.event_sets)


def test_event_set_freed_when_registering_fails() -> None:
    nvml = fake_nvml([ampere(fail={"nvmlDeviceRegisterEvents": NOT_SUPPORTED})])
    probe_gpus(nvml)
    assert [s.freed for s in nvml.event_sets] == [True]


# --- what readings mean ------------------------------------------------------------------------


def health_of(**reading: Any) -> GpuHealth:
    gpu = GpuReading(index=2, pci_bus_id="0000:3b:00", name="H100", **reading)
    return GpuHealth(node="gpu03", available=True, gpus=[gpu])


HEALTHY = {
    "ecc_uncorrected_volatile": 0,
    "ecc_uncorrected_aggregate": 0,
    "remapped_rows_pending": False,
    "remapped_rows_failure": False,
    "pending_reset": False,
    "recovery_action": "none",
    "throttle_reasons": ["gpu_idle", "sw_power_cap"],
}


@pytest.mark.parametrize(
    ("changes", "reason", "signature"),
    [
        ({}, None, None),
        (
            {"ecc_uncorrected_volatile": 2},
            "GPU 2 (0000:3b:00) has 2 uncorrected ECC errors since the driver loaded",
            "nvml_ecc_uncorrected",
        ),
        ({"ecc_uncorrected_aggregate": 3}, None, "nvml_ecc_uncorrected_lifetime"),
        (
            {"retired_pages_pending": True},
            "GPU 2 (0000:3b:00) has pages pending retirement (needs a reset)",
            "nvml_pages_pending",
        ),
        (
            {"remapped_rows_pending": True},
            "GPU 2 (0000:3b:00) has rows pending remapping (needs a reset)",
            "nvml_row_remap_pending",
        ),
        (
            {"remapped_rows_failure": True},
            "GPU 2 (0000:3b:00) failed to remap a row (replace it)",
            "nvml_row_remap_failure",
        ),
        (
            {"recovery_action": "drain_and_reset"},
            "GPU 2 (0000:3b:00): NVML asks for drain_and_reset",
            "nvml_recovery_action",
        ),
        ({"xid_events": [79]}, "GPU 2 (0000:3b:00) raised Xid 79", "nvml_xid"),
        ({"xid_events": [13]}, None, "nvml_xid"),  # usually the program's own fault
        ({"lost": True}, "GPU 2 (0000:3b:00) is lost: NVML cannot reach it (fallen off the bus?)", "nvml_gpu_lost"),
        ({"throttle_reasons": ["hw_slowdown"]}, None, "nvml_throttle"),
        ({"ecc_uncorrected_volatile": None, "recovery_action": None, "errors": ["x: Not Supported"]}, None, None),
    ],
)
def test_what_readings_implicate(changes: dict[str, Any], reason: str | None, signature: str | None) -> None:
    health = health_of(**{**HEALTHY, **changes})
    assert implicates(health) == reason
    assert [e.signature for e in health_evidence(health)] == ([signature] if signature else [])


def test_several_findings_in_one_line_and_unavailable_implicates_nothing() -> None:
    health = health_of(
        **{**HEALTHY, "ecc_uncorrected_volatile": 1, "remapped_rows_pending": True, "pending_reset": True}
    )
    assert implicates(health) == (
        "GPU 2 (0000:3b:00) has 1 uncorrected ECC errors since the driver loaded; "
        "GPU 2 (0000:3b:00) has rows pending remapping (needs a reset)"
    )
    assert implicates(GpuHealth(node="n", available=False, reason="no driver")) is None


def test_pending_reset_from_readings() -> None:
    assert probe_gpus(fake_nvml([ampere(remapped=(0, 1, 1, 0))])).gpus[0].pending_reset is True
    action = pynvml.NVML_GPU_RECOVERY_ACTION_GPU_RESET
    assert probe_gpus(fake_nvml([ampere(recovery_action=action)])).gpus[0].recovery_action == "gpu_reset"
    assert probe_gpus(fake_nvml([ampere(recovery_action=action)])).gpus[0].pending_reset is True
    assert probe_gpus(fake_nvml([ampere(recovery_action=99)])).gpus[0].recovery_action == "unknown_99"


# --- (c) as a scheduler step ---------------------------------------------------------------------


def test_module_prints_one_json_line_and_exits_0(tmp_path: Path) -> None:
    # From elsewhere: on a node the step does not start in the repository.
    done = subprocess.run(
        [sys.executable, "-m", "recovery.activities.gpu", "--node=gpu12"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    health = read_health(lines[0])
    assert health.node == "gpu12" and health.host == socket.gethostname()
    assert health.available is HAS_NVML


# --- (d) probing a node through the scheduler ------------------------------------------------------


def test_slurm_argv() -> None:
    assert probe_argv("gpu03", "slurm", "/shared/venv/bin/python", immediate=30) == [
        "srun", "-w", "gpu03", "-N1", "-n1", "--overlap", "--immediate=30",
        "/shared/venv/bin/python", "-m", "recovery.activities.gpu", "--node=gpu03",
    ]  # fmt: skip
    assert probe_argv("gpu03", "slurm", "py", job_id="4242", srun_args=["--gres=gpu:8"], immediate=30) == [
        "srun", "-w", "gpu03", "-N1", "-n1", "--overlap", "--jobid=4242", "--gres=gpu:8",
        "py", "-m", "recovery.activities.gpu", "--node=gpu03",
    ]  # fmt: skip
    assert probe_argv("n1", "local", "py") == ["py", "-m", "recovery.activities.gpu", "--node=n1"]


@pytest.mark.parametrize(
    ("node", "scheduler"), [("-x", "slurm"), ("gpu[01-02]", "slurm"), ("a b", "local"), ("n1", "pbs")]
)
def test_what_cannot_be_probed_is_refused(node: str, scheduler: str) -> None:
    with pytest.raises(ValueError):
        probe_argv(node, scheduler, "py")


@dataclass
class FakeRunner:
    """Stands in for `srun`: records the command, answers as told."""

    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    error: Exception | None = None
    argv: list[str] = field(default_factory=list)
    timeout: float = 0.0

    async def __call__(
        self, argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float
    ) -> Completed:
        self.argv, self.timeout = list(argv), timeout
        if self.error is not None:
            raise self.error
        return Completed(list(argv), self.returncode, self.stdout, self.stderr)


REMOTE = GpuHealth(
    node="gpu03", host="gpu03.cluster", available=True, gpus=[GpuReading(index=0, remapped_rows_failure=True)]
).to_json()


async def test_probe_node_over_slurm() -> None:
    runner = FakeRunner(stdout=f"print from a task prolog\n{REMOTE}\n")
    health = await probe_node("gpu03", "slurm", "/venv/bin/python", timeout=20, runner=runner)
    assert runner.argv[:7] == ["srun", "-w", "gpu03", "-N1", "-n1", "--overlap", "--immediate=10"]
    assert runner.timeout == 20
    assert health.available and health.host == "gpu03.cluster" and health.gpus[0].remapped_rows_failure
    assert implicates(health) == "GPU 0 failed to remap a row (replace it)"


@pytest.mark.parametrize(
    ("runner", "words"),
    [
        (FakeRunner(error=SchedulerUnavailable("srun -w did not answer within 60s")), "did not answer within 60s"),
        (
            FakeRunner(
                returncode=1,
                stderr="srun: error: Unable to allocate resources: Requested node configuration is not available\n",
            ),
            "exit status 1): Unable to allocate resources: Requested node configuration is not available",
        ),
        (FakeRunner(stdout=""), "the probe printed nothing"),
        (FakeRunner(stdout="Traceback (most recent call last):\n"), "the probe printed something unreadable"),
    ],
)
async def test_probe_node_failures_are_results(runner: FakeRunner, words: str) -> None:
    health = await probe_node("gpu03", "slurm", "py", runner=runner)
    assert health.available is False and words in health.reason and health.node == "gpu03"


async def test_probe_node_refuses_a_bad_node_without_running_anything() -> None:
    runner = FakeRunner()
    health = await probe_node("--uid=0", "slurm", "py", runner=runner)
    assert health.available is False and "not a node name" in health.reason and runner.argv == []


async def test_probe_node_local_runs_the_real_probe() -> None:
    health = await probe_node("n2", "local", sys.executable)
    assert health.node == "n2" and health.host == socket.gethostname()
    assert health.available is HAS_NVML and (HAS_NVML or "libnvidia-ml" in health.reason)


async def test_probe_node_times_out_a_stuck_probe(tmp_path: Path) -> None:
    stuck = tmp_path / "python"
    stuck.write_text("#!/bin/sh\nexec sleep 30\n")
    stuck.chmod(0o755)
    health = await probe_node("n1", "local", str(stuck), timeout=0.5)
    assert health.available is False and "did not answer within 0.5s" in health.reason


def test_parse_keeps_the_probed_name() -> None:
    assert parse_probe_output("gpu03-ib", REMOTE).node == "gpu03-ib"


def test_spelled_out_nvml_values_match_pynvml() -> None:
    """The probe spells out NVML's enum values (a fixed ABI); they must agree with the binding."""
    from recovery.activities.gpu import node_probe as health

    for bit, name in health._THROTTLE_BITS.items():
        assert getattr(pynvml, "nvmlClocksThrottleReason" + name.title().replace("_", "")) == bit
    for number, name in health._RECOVERY_ACTIONS.items():
        assert getattr(pynvml, f"NVML_GPU_RECOVERY_ACTION_{name.upper()}") == number
    for kind, member in health._VALUE_MEMBERS.items():
        assert pynvml.c_nvmlValue_t._fields_[kind][0] == member
    assert pynvml.nvmlEventTypeXidCriticalError == health._XID_CRITICAL_ERROR
