"""The installed layout: one name in site-packages, `recovery`, and a small public API there.

The repository keeps its top-level folders (`workflows/`, `activities/`, `worker/`); pyproject's
package-dir mapping installs them beneath `recovery`. These tests check that mapping from the
installed environment, run from outside the repository, where the repository root is not on
sys.path.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import recovery

REPO = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("workflows", "activities", "worker", "client")


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_public_names() -> None:
    assert sorted(recovery.__all__) == ["KEYS", "format_progress", "report_progress"]
    for name in recovery.__all__:
        assert getattr(recovery, name) is not None


def test_importing_recovery_loads_only_the_standard_library(tmp_path: Path) -> None:
    # A training script on a compute node imports it; that node's Python may lack the rest.
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import recovery\n"
        "print(sorted({m.split('.')[0] for m in set(sys.modules) - before} - sys.stdlib_module_names))\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['recovery']"]


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_no_generic_top_level_names_installed(tmp_path: Path, name: str) -> None:
    assert _python(f"import recovery.{name}", tmp_path).returncode == 0
    done = _python(f"import {name}", tmp_path)
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr


def test_every_package_folder_is_installed() -> None:
    """setuptools installs only the packages listed: a new subpackage left out of pyproject would
    work from the repository and be missing from a wheel."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for package, folder in config["package-dir"].items():
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            if package == "recovery" and init.parent != root:
                continue  # recovery/'s subfolders are links to the folders mapped on their own
            parts = init.parent.relative_to(root).parts
            found.add(".".join((package, *parts)))
    assert found == set(config["packages"])
