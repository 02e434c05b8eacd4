"""Named points where a test can make the worker die, to prove recovery survives a crash there.

`RECOVERY_FAILPOINTS=after:requeue_hold,after:release` makes the worker SIGKILL itself right
after that step's side effect and before Temporal hears the activity finished: the hardest
moment, because the retry must find the work done and not do it again. Unset in production.
"""

from __future__ import annotations

import os
import signal


def hit(name: str) -> None:
    armed = os.environ.get("RECOVERY_FAILPOINTS", "")
    if armed and name in armed.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
