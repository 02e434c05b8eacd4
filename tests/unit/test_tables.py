"""Knowledge tables: every built-in table loads and is checked, and the template rules hold."""

from __future__ import annotations

import pytest

from recovery.activities.signatures import dialect
from recovery.activities.signatures.catalog import builtin_catalog
from recovery.activities.signatures.diagnosis import LogDiagnoser, LogDiagnosis
from recovery.activities.signatures.structure import errno_fact
from recovery.activities.signatures.tables import (
    Lookup,
    TableError,
    builtin_tables,
    escape,
    fill,
    lookup,
    read_table,
    signature_entries,
)

FAMILIES = {
    "xid",
    "cuda",
    "nccl",
    "kernel",
    "signals",
    "exceptions",
    "scheduler",
    "container",
    "rocm",
    "mpi",
    "slurm-errors",
    "status-codes",
    "exception-words",
    "errno",
    "runner",
    "gpu-health",
}


def test_every_family_is_built_in_and_names_its_source() -> None:
    tables = dict((t.family, t) for _, t in builtin_tables())
    assert set(tables) >= FAMILIES
    for table in tables.values():
        assert len(table.source.split()) >= 5, f"{table.family}: say where the facts come from"


def test_every_signature_table_entry_is_in_the_catalog_with_its_examples_checked() -> None:
    catalog = builtin_catalog()
    for name, table in builtin_tables():
        if table.kind != "signatures":
            continue
        assert table.counterexamples, f"{name}: a family has healthy lines it must not match"
        for data in signature_entries(table, name):
            sig = catalog[data["id"]]
            assert sig.examples, f"{sig.id}: every generated signature carries test lines"
            compiled = dialect.compile_line_pattern(sig.pattern)
            assert all(dialect.matches(compiled, line) for line in sig.examples)
            assert not any(dialect.matches(compiled, line) for line in table.counterexamples)


def test_the_xid_table_covers_the_catalog_and_says_what_to_do_with_the_node() -> None:
    xid = next(t for _, t in builtin_tables() if t.family == "xid")
    codes = {int(e["code"]) for e in xid.entries}
    assert {13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 154} <= codes
    by_code = {int(e["code"]): e for e in xid.entries}
    assert by_code[79]["exclude"] is True and by_code[79]["category"] == "hardware"
    assert by_code[13].get("exclude") is False  # the program's fault on a healthy GPU


def test_cuda_errors_are_read_by_message_name_and_number() -> None:
    cuda = next(t for _, t in builtin_tables() if t.family == "cuda")
    names = {e["name"] for e in cuda.entries}
    assert {"cudaErrorIllegalAddress", "cudaErrorMemoryAllocation", "cudaErrorECCUncorrectable"} <= names
    assert len(cuda.entries) >= 90  # every cudaError_t of the runtime, not a hand-picked few


def _diagnosis(log: str) -> LogDiagnosis:
    diagnoser = LogDiagnoser()
    diagnoser.feed(log.encode())
    diagnoser.finish()
    return diagnoser.diagnosis()


def _read(line: str) -> tuple[str, str] | None:
    """The signature that speaks for one line, and its category (None when nothing matches)."""
    result = _diagnosis(line + "\n")
    return (result.evidence[0].signature or "", result.category) if result.evidence else None


# Real lines from public threads (ROCm, GPTQModel, Kaldi and LLaMA-Factory issues).
@pytest.mark.parametrize(
    ("line", "signature", "category"),
    [
        (
            "HW Exception by GPU node-9 (Agent handle: 0x631351bb5a20) reason :GPU Hang",
            "rocm-hw-exception-gpu-hang",
            "hardware",
        ),
        (
            "Memory access fault by GPU node-1 (Agent handle: 0x556e9b7e3360) on address 0x7f52c3f5f000."
            " Reason: Page not present or supervisor privilege.",
            "rocm-memory-access-fault",
            "unknown",
        ),
        ("RuntimeError: HIP error: an illegal memory access was encountered", "cuda-illegal-address", "unknown"),
        (
            "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
            "cuda-no-kernel-image-for-device",
            "system_software",
        ),
        (
            'ERROR (nnet3-train[5.4]:CopyToVec():cu-vector.cc:899) cudaError_t 4 : "unspecified launch failure"'
            " returned from 'cudaMemcpy(dst->Data(), this->data_, sizeof(Real) * dim_, cudaMemcpyDeviceToHost)'",
            "cuda-launch-failure",
            "unknown",
        ),
        ("[rank0]: Cuda failure 802 'system not yet initialized'", "cuda-system-not-ready", "system_software"),
    ],
)
def test_rocm_hip_and_older_cuda_print_formats_are_read(line: str, signature: str, category: str) -> None:
    assert _read(line) == (signature, category)


# Real MPI endings (a PLUMED CI log; GPUMD and Quantum ESPRESSO users' logs; the Open MPI list).
MPI_ENDINGS = [
    (
        "[fv-az1542-52:07730] *** End of error message ***\n"
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "mpirun noticed that process rank 1 with PID 0 on node fv-az1542-52 exited on signal 6 (Aborted).\n",
        {"ranks": [1], "nodes": ["fv-az1542-52"]},
    ),
    (
        "===================================================================================\n"
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
        "=   RANK 1 PID 65033 RUNNING AT mommint\n"
        "=   KILLED BY SIGNAL: 9 (Killed)\n"
        "===================================================================================\n",
        {"ranks": [1], "nodes": ["mommint"]},
    ),
    (
        "MPI_ABORT was invoked on rank 52 in communicator MPI_COMM_WORLD\n"
        "with errorcode 0.\n"
        "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n",
        {"ranks": [52], "nodes": []},
    ),
    (  # horovod/horovod#1421: only the launcher's notices; the first failed process is rank 0
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        "the job to be terminated. The first process to do so was:\n"
        "\n"
        "  Process name: [[29973,1],0]\n"
        "  Exit code:    1\n",
        {"ranks": [0], "nodes": []},
    ),
]


@pytest.mark.parametrize(("log", "where"), MPI_ENDINGS)
def test_mpi_launchers_name_the_rank_and_node_that_died(log: str, where: dict[str, list[object]]) -> None:
    result = _diagnosis(log)
    assert (result.symptom, result.category, result.retryable) == ("crash", "unknown", True)
    assert result.implicated.ranks == where["ranks"] and result.implicated.nodes == where["nodes"]


def test_a_ranks_own_error_before_the_launchers_summary_speaks() -> None:
    log = "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + MPI_ENDINGS[0][0]
    result = _diagnosis(log)
    assert (result.evidence[0].signature, result.category) == ("cuda-ecc-uncorrectable", "hardware")


def test_ucx_transport_errors_are_the_network_of_the_host_that_logged_them() -> None:
    # openucx/ucx#5199 (UCX 1.8 prints the completion error after file and line only)
    log = (
        "[master:19546:0:19546] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB"
        " (synd 0x15 vend 0x81 hw_synd 0/0)\n"
        "[master:19546:0:19546] ib_mlx5_log.c:139  DCI QP 0xa9f wqe[0]: SEND s-e [rqpn 0xa66 rlid 703] [inl len 18]\n"
    )
    result = _diagnosis(log)
    assert (result.category, result.retryable, result.implicated.nodes) == ("network", True, ["master"])


def test_an_nccl_info_line_quoting_a_cuda_failure_is_not_one() -> None:
    assert _read("gpu3:4242:4242 [0] NCCL INFO Cuda failure 'operation not supported'") is None


def test_lookup_tables_answer_by_name_and_by_other_spellings() -> None:
    exceptions = lookup("exceptions")
    assert exceptions.get("KeyError") is not None and exceptions.get("KeyError").category == "application"  # type: ignore[union-attr]
    oom = exceptions.get("torch.OutOfMemoryError") or exceptions.get("OutOfMemoryError")
    assert oom is not None and oom.category == "out_of_memory"
    signals = lookup("signals")
    assert signals.get("SIGKILL") is not None and signals.get("9") is signals.get("SIGKILL")


def test_fill_escapes_fields_for_patterns_and_skips_templates_an_entry_cannot_fill() -> None:
    entry = {"message": "an illegal memory access (was) encountered", "number": 700}
    pattern = fill("CUDA error: {{message}}", entry, as_pattern=True)
    assert pattern == r"CUDA error: an illegal memory access \(was\) encountered"
    assert fill("error {{number}}: {{name}}", entry, as_pattern=True) is None
    assert fill("CUDA error {{number}}", entry, as_pattern=False) == "CUDA error 700"
    assert escape("a.b[c]{2}") == r"a\.b\[c\]\{2\}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("family: x\nkind: signatures\nsource: somewhere in a manual\nkey: code\nentries: []\n", "entries"),
        ("family: x\nkind: nope\nsource: somewhere in a manual\nkey: code\nentries: [{code: 1}]\n", "kind"),
        ("family: x\nkind: signatures\nsource: short\nkey: code\nentries: [{code: 1}]\n", "source"),
        ("family: [\n", "not valid YAML"),
    ],
)
def test_a_broken_table_is_one_line_naming_file_and_key(text: str, problem: str) -> None:
    with pytest.raises(TableError) as err:
        read_table(text, "tables/x.yaml")
    assert str(err.value).startswith("tables/x.yaml") and problem in str(err.value)
    assert "\n" not in str(err.value)


def test_an_entry_without_a_fitting_template_is_refused() -> None:
    table = read_table(
        "family: x\nkind: signatures\nsource: a manual, chapter 3, 2024\nkey: code\n"
        "patterns: ['code {{code}} at {{where}}']\nentries: [{code: 1, description: d, category: unknown,"
        " retryable: true, symptom: crash}]\n",
        "tables/x.yaml",
    )
    with pytest.raises(TableError, match="no pattern template fits"):
        list(signature_entries(table, "tables/x.yaml"))


def test_a_lookup_entry_needs_its_facts() -> None:
    head = "family: x\nkind: lookup\nsource: a manual, chapter 3, 2024\nkey: name\n"
    table = read_table(head + "entries: [{name: E, category: unknown}]\n", "tables/x.yaml")
    with pytest.raises(TableError, match="description"):
        Lookup(table, "tables/x.yaml")
    table = read_table(head + "entries: [{name: E, category: bad, description: d, retryable: true}]\n", "x")
    with pytest.raises(TableError, match="category must be one of"):
        Lookup(table, "tables/x.yaml")


# Real NCCL failures: a vLLM data-parallel launch (two ranks on one GPU), a container's small
# /dev/shm under torchtitan's CI, and a multi-node NVLink (IMEX) cluster's setup notes.
def test_nccls_own_warn_lines_name_misconfigured_launches_and_fabrics() -> None:
    line = "myhost:2292596:2292596 [0] init.cc:943 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 53000"
    assert _read(line) == ("nccl-duplicate-gpu", "application")


@pytest.mark.parametrize(
    ("detail", "signature", "category"),
    [
        (
            "  Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)",
            "nccl-shm-allocation-failed",
            "system_software",
        ),
        ("MNNVL (cliqueSize 64) is available but not working on this system.", "nccl-nvlink-fabric", "system_software"),
    ],
)
def test_the_detail_under_last_error_says_what_an_nccl_system_error_was(
    detail: str, signature: str, category: str
) -> None:
    log = (
        "  torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
        "  ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "  Last error:\n"
        f"{detail}\n"
    )
    result = _diagnosis(log)
    assert (result.evidence[0].signature, result.category) == (signature, category)
    without = _diagnosis(log.replace("  Last error:\n", "  (no detail)\n"))
    assert without.category == "network"  # only the detail header hands the verdict on


def test_a_task_stuck_in_the_kernel_is_a_hang_and_other_task_states_are_not() -> None:
    # rwth-i6/returnn: a torchrun worker's kernel stack, the task in uninterruptible sleep (state D)
    line = "[  +0.000049] task:python3.11      state:D stack:    0 pid:15277 ppid: 15257 flags:0x00000002"
    result = _diagnosis(line + "\n")
    assert (result.symptom, result.category, result.evidence[0].signature) == ("hang", "unknown", "kernel-task-state-d")
    assert _read(line.replace("state:D", "state:S")) is None


# Real Slurm refusals from users' notes and site guides: the job's request is wrong (not worth a
# retry), or the cluster is busy or unreachable (worth one).
@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        (
            "srun: error: Unable to allocate resources: User's group not permitted to use this partition",
            "application",
            False,
        ),
        ("srun: error: Unable to allocate resources: Node count specification invalid", "application", False),
        (
            "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
            "application",
            False,
        ),
        (
            "srun: error: Unable to allocate resources: Requested node configuration is not available",
            "application",
            False,
        ),
        ("srun: error: Unable to allocate resources: Requested nodes are busy", "system_software", True),
    ],
)
def test_slurms_error_codes_after_its_commands_say_whose_fault_a_refusal_is(
    line: str, category: str, retryable: bool
) -> None:
    result = _diagnosis(line + "\n")
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)


def test_each_rust_error_kind_names_one_errno_of_the_table() -> None:
    errno_table = next(t for _, t in builtin_tables() if t.family == "errno")
    kinds = [k for e in errno_table.entries for k in e.get("rust_kinds", ())]
    assert len(kinds) == len(set(kinds)), "a kind decodes from one errno"
    assert {"StorageFull", "ConnectionReset", "NotConnected", "TimedOut"} <= set(kinds)


@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        # Windows' ERROR_DISK_FULL is 112, Linux's EHOSTDOWN: the kind decides, not the number.
        (
            'Error: IoError(Os { code: 112, kind: StorageFull, message: "There is not enough space on the disk." })',
            "system_software",
            False,
        ),
        (
            'Error: IoError(Os { code: 104, kind: ConnectionReset, message: "Connection reset by peer" })',
            "network",
            True,
        ),
        # A kind the table does not list leaves the number to decide.
        (
            'Error: IoError(Os { code: 28, kind: Uncategorized, message: "No space left on device" })',
            "system_software",
            False,
        ),
    ],
)
def test_a_rust_io_errors_kind_decides_its_errno(line: str, category: str, retryable: bool) -> None:
    fact = errno_fact(line)
    assert fact is not None and (fact.category, fact.retryable) == (category, retryable)
