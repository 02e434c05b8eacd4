"""The worker's config file (`--config FILE` or RECOVERY_CONFIG): YAML, validated, one-line errors.

Command-line flags override the file; the file overrides the defaults here.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from recovery.workflows.policy import Duration
from recovery.workflows.yaml_models import YamlModelError, parse_model, read_text

Mode = Literal["act", "observe"]


class ConfigError(YamlModelError):
    pass


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SlurmConfig(_Section):
    # auto: pyslurm where it imports and matches the controller's release, else rest when
    # restd_socket or restd_url is set, else commands (docs/slurm.md)
    backend: Literal["auto", "pyslurm", "rest", "commands"] = "auto"
    conf: str | None = None  # SLURM_CONF for the commands; default: Slurm's own lookup
    cluster: str | None = None  # the name in run ids; default: ClusterName from Slurm
    restd_socket: str | None = None  # slurmrestd on a unix socket (rest_auth/local)
    restd_url: str | None = None  # or over HTTP, with a JWT read from token_file
    token_file: str | None = None


class AttributionConfig(_Section):
    provider: Literal["off", "rules", "http"] = "rules"
    url: str | None = None  # for `http`: the service that answers with a diagnosis
    timeout: Duration = timedelta(seconds=5)

    @model_validator(mode="after")
    def _http_needs_url(self) -> AttributionConfig:
        if self.provider == "http" and not self.url:
            raise ValueError("the http provider needs a url")
        return self


class HealthConfig(_Section):
    """Probe implicated nodes' GPUs with NVML before deciding (an srun step on Slurm)."""

    probe: bool = False
    max_nodes: int = Field(default=4, ge=1)
    timeout: Duration = timedelta(seconds=30)
    srun_args: list[str] = Field(default_factory=list)  # e.g. [--gres=gpu:8] where devices are confined


class HangStacksConfig(_Section):
    """Before a hung attempt is stopped, read its ranks' Python stacks with py-spy on each node
    (an `srun --overlap` step into the job on Slurm) and name the rank that is not waiting in a
    collective (docs/operations.md, "Hangs: which rank")."""

    enabled: bool = True
    timeout: Duration = timedelta(seconds=60)  # the whole collection, every node
    samples: int = Field(default=2, ge=1, le=5)  # dumps per rank: a stuck rank looks the same in each
    interval: Duration = timedelta(seconds=1)
    native: bool = True  # C/C++ frames too: where DDP's all-reduce waits under loss.backward()
    parallel: int = Field(default=16, ge=1)  # nodes read at once
    py_spy: str | None = None  # py-spy on the nodes; default: beside the worker's Python, else PATH
    srun_args: list[str] = Field(default_factory=list)


class DiscoveryConfig(_Section):
    enabled: bool = True
    interval: Duration = timedelta(seconds=30)


class TlsConfig(_Section):
    """TLS to the Temporal frontend; with `cert` and `key`, mutual TLS. Paths of PEM files."""

    ca: str | None = None  # the CA that signed the server's certificate; default: the system's roots
    cert: str | None = None  # this client's certificate, for mTLS
    key: str | None = None  # its private key
    server_name: str | None = None  # the name in the server's certificate, if not the address's host

    @model_validator(mode="after")
    def _cert_and_key(self) -> TlsConfig:
        if bool(self.cert) != bool(self.key):
            raise ValueError("tls needs both cert and key for mTLS, or neither")
        return self


class TemporalConfig(_Section):
    """Where Temporal is and how to authenticate; environment variables override these
    (`connection`). Secrets stay in files or the environment, never in this file."""

    address: str | None = None  # default: RECOVERY_TEMPORAL_ADDRESS, else 127.0.0.1:7233
    namespace: str | None = None  # default: RECOVERY_NAMESPACE, else default
    tls: TlsConfig | None = None  # present (even `tls: {}`): connect over TLS
    api_key_file: str | None = None  # a file holding the API key (sent as a bearer token, over TLS)
    payload_codec: str | None = None  # "module:attr", a PayloadCodec (or a factory) to encrypt payloads


class WorkerConfig(_Section):
    scheduler: Literal["local", "slurm"] = "local"
    mode: Mode | None = None  # default: act on the local scheduler, observe on Slurm
    partitions: list[str] | None = None  # manage opted-in jobs in these partitions only
    observe_partitions: list[str] = Field(default_factory=list)  # narrow `act` to observe here
    metrics: str | None = None  # HOST:PORT for Prometheus
    metrics_interval: Duration = timedelta(seconds=30)  # how often `recovery_runs` is counted
    signatures: list[str] = Field(default_factory=list)  # YAML files that add or override signatures by id
    progress_patterns: list[str] = Field(default_factory=list)  # regexes with a named group `step`
    slurm: SlurmConfig = SlurmConfig()
    discovery: DiscoveryConfig = DiscoveryConfig()
    attribution: AttributionConfig = AttributionConfig()
    health: HealthConfig = HealthConfig()
    hang_stacks: HangStacksConfig = HangStacksConfig()
    temporal: TemporalConfig = TemporalConfig()
    # The operator's consent for policies' `suspect_nodes.drain`: draining takes a node away from
    # every user of the cluster, so a job's own policy alone must not be able to do it.
    drain_suspect_nodes: bool = False
    # Attempts this worker watches at once: each holds one activity slot for its whole life, so
    # runs beyond this wait, unwatched, for a slot here or on another worker.
    max_runs: int = Field(default=1000, ge=1)
    # Runs whose workflow this worker keeps in memory between their wakes (None: all it watches).
    # An idle run's workflow has nothing to do until its watch returns, so the cache need only
    # hold the runs being recovered at once, not every run watched. Each costs about 160 KB
    # (half of it in the SDK's Rust core); a run let go of is replayed from its history when next
    # woken (its news, its hourly re-arm): about 20 ms of CPU and one history read.
    cached_runs: int | None = Field(default=1000, ge=1)
    # Run workflow code in Temporal's sandbox, which stops a non-deterministic call (the clock,
    # I/O) as it happens. Off by default: the sandbox re-imports the workflow modules for every
    # run a worker holds (~140 KB each, and twice the CPU to replay one), and the test suite
    # replays every recorded history in the full sandbox instead. Turn it on to find such a call.
    workflow_sandbox: bool = False
    # After a garbage collection of the whole heap that stalled the worker (0.5 s or more), stop
    # walking what survived it (cached runs and watches stay alive), and give it back every 5
    # minutes, or once the worker grew by 128 MiB, at a quiet moment, so runs let go of from the
    # cache are freed and their pages returned (worker/gc_pauses.py). Off: every full
    # collection walks everything, about every 40 s at 5,000 runs a worker.
    gc_freeze: bool = True

    @property
    def effective_mode(self) -> Mode:
        return self.mode or ("act" if self.scheduler == "local" else "observe")

    def mode_for(self, partition: str | None) -> Mode:
        """A worker in act mode may be narrowed to observe per partition, never the reverse."""
        if partition is not None and partition in self.observe_partitions:
            return "observe"
        return self.effective_mode

    def manages(self, partition: str | None) -> bool:
        return self.partitions is None or partition in self.partitions


def load_config(path: str | None) -> WorkerConfig:
    if path is None:
        return WorkerConfig()
    return parse_model(read_text(path, "config", ConfigError), path, WorkerConfig, "config", ConfigError)
