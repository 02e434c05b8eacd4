"""What NVML says about a node's GPUs: the readings the probe takes on the node and sends back.

Plain dataclasses, standard library only, because they are built on the node (`node_probe`),
whose Python may have nothing but `pynvml`. The worker reads them back from the probe's JSON
line with pydantic (`remote.read_health`), which validates them as it would a model: an unknown
field is an error (`__pydantic_config__`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(kw_only=True)
class GpuReading:
    """What NVML said about one GPU. A field is None when NVML refused it; `errors` says why.

    `pci_bus_id` is `0000:3b:00`, the form the kernel's `NVRM: Xid (PCI:0000:3b:00)` lines use, so
    a reading and a log line about the same GPU can be matched. `lost`: NVML answered "GPU is lost"
    (typically fallen off the bus). `pending_reset`: the GPU needs a reset before it is whole again
    (rows or pages waiting for one, a recovery action asking for one, or NVML saying so).
    """

    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}

    index: int
    pci_bus_id: str | None = None
    name: str | None = None
    lost: bool = False
    ecc_uncorrected_volatile: int | None = None  # since the driver last loaded
    ecc_uncorrected_aggregate: int | None = None  # over the GPU's lifetime
    retired_pages_pending: bool | None = None  # pre-Ampere GPUs retire pages
    remapped_rows_pending: bool | None = None  # Ampere and later remap rows instead
    remapped_rows_failure: bool | None = None
    pending_reset: bool | None = None
    recovery_action: str | None = None  # NVML's word, lower case: none, gpu_reset, node_reboot, ...
    throttle_reasons: list[str] = field(default_factory=list)
    xid_events: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class GpuHealth:
    """One probe of a node's GPUs. `available` False: no readings, and `reason` says why (no driver,
    no GPU, the probe could not run on the node). `host` is the machine that answered."""

    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}

    node: str
    host: str = ""
    available: bool
    reason: str = ""
    gpus: list[GpuReading] = field(default_factory=list)

    def to_json(self) -> str:
        """One line of JSON: what the probe prints."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))
