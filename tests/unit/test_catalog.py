"""The signature catalog: every entry's own test lines, the families it must cover, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from recovery.activities.signatures import dialect
from recovery.activities.signatures.catalog import CatalogError, builtin_catalog, load_catalog
from recovery.activities.signatures.scanner import LogScanner, PatternSet

CATALOG = builtin_catalog()


@pytest.mark.parametrize("sig", CATALOG.signatures, ids=lambda s: s.id)
def test_examples_match_and_counterexamples_do_not(sig: object) -> None:
    from recovery.activities.signatures.catalog import Signature

    assert isinstance(sig, Signature)
    compiled = dialect.compile_line_pattern(sig.pattern)
    for line in sig.examples:
        assert dialect.matches(compiled, line), f"{sig.id}: {line!r}"
    for line in sig.counterexamples:
        assert not dialect.matches(compiled, line), f"{sig.id}: {line!r}"


def test_every_example_is_found_by_the_scanner_through_the_whole_catalog() -> None:
    """The same lines, fed as one log through the multi-pattern engine, find their signature."""
    lines = [(sig.id, line) for sig in CATALOG for line in sig.examples]
    log = "\n".join(line for _, line in lines).encode() + b"\n"
    scanner = LogScanner(PatternSet.from_catalog(CATALOG, engine="re2"))
    found = {(m.line, m.pattern) for m in scanner.feed(log)}
    missing = [(i + 1, sid) for i, (sid, _) in enumerate(lines) if (i + 1, sid) not in found]
    assert missing == []


REQUIRED = {
    # PyTorch / NCCL
    "nccl-watchdog-timeout",
    "nccl-heartbeat-monitor",
    "nccl-system-error",
    "nccl-remote-error",
    "nccl-internal-error",
    "ib-completion-error",
    "ib-async-event",
    "nccl-socket-peer-closed",
    # CUDA
    "cuda-illegal-address",
    "cuda-ecc-uncorrectable",
    "cuda-launch-failure",
    "cuda-device-assert",
    "cuda-driver-mismatch",
    "cuda-no-device",
    "cuda-out-of-memory",
    # Xid, by code, and the fallback
    "xid-48",
    "xid-63",
    "xid-64",
    "xid-74",
    "xid-79",
    "xid-92",
    "xid-94",
    "xid-95",
    "xid-119",
    "xid-120",
    "xid-144",
    "xid-149",
    "xid",
    "gpu-fallen-off-bus",
    # processes and memory
    "torchelastic-child-failed",
    "host-oom-killer",
    "segfault",
    "bus-error",
    # Slurm
    "slurm-time-limit",
    "slurm-preempted",
    "slurm-node-failure",
    "slurm-requeue",
    "slurm-job-not-ending",
    # filesystems
    "fs-io-error",
    "fs-no-space",
    "fs-stale-handle",
    "fs-read-only",
    # the program's own bugs
    "py-import-error",
    "py-syntax-error",
    "py-name-error",
    "py-key-error",
    "py-attribute-error",
    "py-type-error",
    "shape-mismatch",
    "device-mismatch",
    "py-assertion-error",
    # JAX/XLA and DeepSpeed
    "xla-out-of-memory",
    "jax-peer-heartbeat",
    "deepspeed-launcher-exit",
}


def test_the_catalog_covers_every_family() -> None:
    assert REQUIRED - {s.id for s in CATALOG} == set()


def test_user_code_errors_are_application_and_not_retried() -> None:
    for sid in ("py-import-error", "py-key-error", "shape-mismatch", "device-mismatch", "py-assertion-error"):
        assert CATALOG[sid].category == "application"
        assert CATALOG[sid].retryable is False


def test_cascades_are_marked() -> None:
    assert CATALOG["nccl-watchdog-timeout"].cascade
    assert CATALOG["nccl-watchdog-timeout"].symptom == "hang"
    assert not CATALOG["xid-79"].cascade
    assert CATALOG["xid-79"].groups == ["pci"]


def test_summary_has_the_contract_keys() -> None:
    entry = CATALOG["xid-79"].summary()
    assert {"id", "pattern", "symptom", "category", "retryable", "cascade"} <= set(entry)
    assert entry["category"] == "hardware"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return path


def test_override_changes_only_the_keys_given_adds_and_disables(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
signatures:
  - id: xid-79
    retryable: false
  - id: segfault
    disabled: true
  - id: my-loader-error
    description: our data loader gave up
    pattern: 'ShardLoaderError: (?P<host>[\\w-]+) unreachable'
    symptom: crash
    category: system_software
    retryable: true
    examples: ['ShardLoaderError: store-3 unreachable']
""",
    )
    catalog = load_catalog(path)
    assert catalog["xid-79"].retryable is False
    assert catalog["xid-79"].pattern == CATALOG["xid-79"].pattern
    assert "segfault" not in catalog
    assert catalog["my-loader-error"].groups == ["host"]
    assert len(catalog) == len(CATALOG)  # one added, one removed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("signatures:\n  - id: xid-79\n    retryable: maybe\n", ":3: signature 'xid-79': key 'retryable'"),
        ("signatures:\n  - id: xid-79\n    colour: red\n", ":3: signature 'xid-79': unknown key 'colour'"),
        (
            "signatures:\n  - id: new-one\n    pattern: 'x'\n",
            ":2: signature 'new-one': missing key 'description'",
        ),
        (
            "signatures:\n  - id: xid-79\n    pattern: 'a(?=b)'\n",
            ":3: signature 'xid-79': key 'pattern': not a valid",
        ),
        ("signatures:\n  - id: xid-79\n    pattern: '(?P<who>x)'\n", "unknown group 'who'"),
        ("signatures:\n  - id: xid-79\n    pattern: 'x*'\n", "matches an empty line"),
        (
            "signatures:\n  - id: xid-79\n    pattern: '[Xx]id'\n    counterexamples:\n      - ok\n      - an Xid line\n",
            ":6: signature 'xid-79': counterexample matches the pattern",
        ),
        (
            "signatures:\n  - id: xid-79\n    retryable: false\n  - id: xid-79\n",
            ":4: signature 'xid-79' appears twice",
        ),
        ("signatures:\n  - id: nope\n    disabled: true\n", ":2: cannot disable unknown signature 'nope'"),
        ("signatures: [\n", "not valid YAML"),
        ("- just a list\n", ":1: expected a mapping"),
    ],
)
def test_errors_are_one_line_with_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as err:
        load_catalog(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert expected in message


def test_an_example_that_does_not_match_is_pointed_at(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "signatures:\n  - id: xid-79\n    examples:\n      - 'NVRM: Xid (PCI:0000:3b:00): 79'\n      - nope\n",
    )
    with pytest.raises(CatalogError, match=r"mine.yaml:5: signature 'xid-79': example does not match"):
        load_catalog(path)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read signature file"):
        load_catalog(tmp_path / "absent.yaml")
