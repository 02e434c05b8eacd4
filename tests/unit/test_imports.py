"""Imports run one way: worker -> client -> activities -> workflows' models.

A small `ast` walk over the source (every import, also those inside functions and under
TYPE_CHECKING, since a lazy import is still a dependency):

- `recovery.workflows` splits in two. Workflow code that calls activities (and so imports them
  to name their methods) sits above the activities; everything else there (models, `decide`,
  policies, status, and the NodeHistory entity, which calls no activity) is the shared
  vocabulary below them and imports, directly or not, no activity.
- Activities import that vocabulary, never workflow code above them, the client or the worker.
- The embedded local scheduler (`recovery.activities.schedulers.local`) is an activity-side
  package like the others: nothing from the worker's or the client's packages.
- The client never imports the worker.
- What runs on a compute node (the progress helper, the node probes) imports the standard
  library only (and `pynvml` for the GPU probe), since a node's Python may have nothing else.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = {"workflows": "recovery.workflows", "activities": "recovery.activities", "client": "recovery.client"}
FOLDERS["worker"] = "recovery.worker"

# On the nodes: module -> the non-stdlib top-level names it may import.
NODE_SIDE = {
    "recovery": set(),
    "recovery.activities.report": set(),
    "recovery.activities.gpu.node_probe": {"pynvml"},
    "recovery.activities.gpu.readings": set(),
    "recovery.activities.gpu.__main__": {"pynvml"},
}


@dataclass(frozen=True)
class Module:
    name: str
    imports: frozenset[str]  # every module named by an import, absolute


def parse(name: str, source: str, is_package: bool = False) -> Module:
    tree = ast.parse(source)
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            found.add(base)
            # `from pkg import module` names a module too.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return Module(name, frozenset(found))


def source_modules() -> dict[str, Module]:
    modules: dict[str, Module] = {}
    init = REPO / "recovery" / "__init__.py"
    modules["recovery"] = parse("recovery", init.read_text(), is_package=True)
    for folder, package in FOLDERS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *(parts[:-1] if is_package else parts)))
            modules[name] = parse(name, path.read_text(), is_package)
    return modules


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def reaches_activities(modules: dict[str, Module]) -> set[str]:
    """The modules of `recovery.workflows` that import an activity module, directly or not."""
    reach = {m.name: {i for i in m.imports if i in modules} for m in modules.values()}
    changed = True
    while changed:  # transitive closure; the graph is small
        changed = False
        for seen in reach.values():
            more = set().union(*(reach[i] for i in seen)) - seen
            if more:
                seen |= more
                changed = True
    return {
        name
        for name, seen in reach.items()
        if within(name, "recovery.workflows") and any(within(i, "recovery.activities") for i in seen)
    }


def violations(modules: dict[str, Module]) -> list[str]:
    """Every import against the direction, as `importer -> imported: why`."""
    workflow_code = reaches_activities(modules)
    found = []
    for m in modules.values():
        ours = {i for i in m.imports if i in modules}
        for imported in sorted(ours):
            why = None
            if within(m.name, "recovery.client") and within(imported, "recovery.worker"):
                why = "the client never imports the worker"
            elif within(m.name, "recovery.activities") and within(imported, ("recovery.worker")):
                why = "activities never import the worker"
            elif within(m.name, "recovery.activities") and within(imported, "recovery.client"):
                why = "activities never import the client"
            elif within(m.name, "recovery.activities") and imported in workflow_code:
                why = "activities import the workflows' models, not workflow code"
            elif (
                within(m.name, "recovery.workflows")
                and m.name not in workflow_code
                and not within(imported, "recovery.workflows")
                and imported not in ("recovery", "recovery.settings")
            ):
                why = "the workflows' models import nothing above them"
            elif within(m.name, "recovery.workflows") and within(imported, ("recovery.worker")):
                why = "workflow code never imports the worker"
            elif within(m.name, "recovery.workflows") and within(imported, "recovery.client"):
                why = "workflow code never imports the client"
            if why:
                found.append(f"{m.name} -> {imported}: {why}")
    return found


def test_imports_run_one_way() -> None:
    assert violations(source_modules()) == []


@pytest.mark.parametrize(
    ("importer", "line"),
    [
        ("recovery.activities.discovery", "from recovery.client.runs import start_run"),
        ("recovery.activities.schedulers.local.protocol", "from recovery.worker import run_worker"),
        ("recovery.activities.watch", "from recovery.workflows.training_run import TrainingRun"),
        ("recovery.workflows.models", "from recovery.activities import errors"),
        ("recovery.client.runs", "    from recovery.worker.run_worker import build_worker"),
    ],
)
def test_a_backward_import_is_caught(importer: str, line: str) -> None:
    modules = source_modules()
    source = "def f() -> None:\n" + (line if line.startswith(" ") else "    " + line) + "\n"
    modules[importer] = parse(importer, source)
    assert violations(modules)  # the tree itself has none (test_imports_run_one_way)


def test_the_node_side_imports_only_the_standard_library() -> None:
    modules = source_modules()
    checked = dict(NODE_SIDE)
    for name in NODE_SIDE:  # importing a module runs its packages' __init__ too
        parts = name.split(".")
        checked.update({".".join(parts[:n]): set() for n in range(1, len(parts)) if ".".join(parts[:n]) not in checked})
    for name, allowed in checked.items():
        assert name in modules, f"{name} is gone: keep NODE_SIDE current"
        for imported in modules[name].imports:
            top = imported.split(".")[0]
            if top == "recovery":
                assert imported not in modules or imported in checked, f"{name} imports {imported}"
            else:
                assert top in sys.stdlib_module_names or top in allowed, f"{name} imports {imported}"
