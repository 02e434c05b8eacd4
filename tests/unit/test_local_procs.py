"""Slurm's compressed hostlist, as the local cluster writes it into SLURM_JOB_NODELIST."""

from __future__ import annotations

import pytest

from recovery.activities.schedulers.local.procs import compress_hostlist


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["node3"], "node3"),
        (["node1", "node2"], "node[1-2]"),
        (["node1", "node2", "node4"], "node[1-2,4]"),
        (["node4", "node1", "node2", "node3"], "node[1-4]"),
        (["node1", "node3", "node5"], "node[1,3,5]"),
        (["login", "node1", "gpu2"], "login,node1,gpu2"),
    ],
)
def test_compress_hostlist(names: list[str], expected: str) -> None:
    assert compress_hostlist(names) == expected
