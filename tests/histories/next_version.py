"""Version N+1 of the TrainingRun workflow, made from today's (version N) source for tests.

N+1 really changes the restart path: before requeue_hold it runs one more activity,
`announce_restart`. Made `guarded`, the new step sits behind `workflow.patched`, as
docs/upgrades.md prescribes: runs that already passed that point replay on the old path.
Unguarded, it is the mistake the replay test must catch.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

from recovery.workflows import training_run

PATCH_ID = "announce-restart"
ANCHOR = "        try:\n            requeued = await self._act(ActionActivities.requeue_hold, step)\n"
NEW_STEP = """\
        if {condition}:
            await workflow.execute_activity(
                announce_restart, self.spec.run_id, start_to_close_timeout=self._quick()
            )
"""
ACTIVITY = '''

@activity.defn(name="announce_restart")
async def announce_restart(run_id: str) -> str:
    """N+1's new step: tell the world a restart is coming (here: only say so)."""
    return f"restart of {run_id} announced"
'''


def next_version(where: Path, guarded: bool) -> ModuleType:
    """Write N+1 as a module in `where` (put on sys.path) and import it."""
    source = inspect.getsource(training_run)
    if source.count(ANCHOR) != 1:
        raise AssertionError("today's restart path changed: update ANCHOR in tests/histories/next_version.py")
    condition = f"workflow.patched({PATCH_ID!r})" if guarded else "True"
    source = source.replace(ANCHOR, NEW_STEP.format(condition=condition) + ANCHOR)
    source = source.replace("from temporalio import workflow\n", "from temporalio import activity, workflow\n", 1)
    name = f"training_run_next_{'guarded' if guarded else 'unguarded'}"
    (where / f"{name}.py").write_text(source + ACTIVITY)
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    sys.modules.pop(name, None)
    return importlib.import_module(name)
