"""`recovery status RUN --watch`: the run's view, drawn again whenever the run changes, until it
ends (or Ctrl-C). On a terminal the screen is redrawn in place; otherwise (a pipe, a file) each
new view is appended after a blank line. With `--json`, one status object per line per change.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import TextIO

from temporalio.client import Client
from temporalio.service import RPCError

from recovery.client.runs import RunError, StatusPoll, poll_status
from recovery.workflows.models import RunStatus

POLL_SECONDS = 0.5
CLEAR = "\x1b[H\x1b[2J"  # cursor home, erase the screen


class RunPoller:
    """A run's status, again and again. While its worker does not answer (one restarting), the
    last status stands and one note says so."""

    def __init__(self, client: Client, run_id: str, note: TextIO, interval: float = POLL_SECONDS) -> None:
        self.client, self.run_id, self.note, self.interval = client, run_id, note, interval
        self.unanswered = False

    async def first(self) -> StatusPoll:
        return await poll_status(self.client, self.run_id)  # an unknown run fails here, in one line

    async def next(self, last: StatusPoll) -> StatusPoll:
        await asyncio.sleep(self.interval)
        try:
            poll = await poll_status(self.client, self.run_id)
        except (RunError, RPCError) as e:
            if not self.unanswered:
                print(f"run {self.run_id} does not answer now ({e}); still trying", file=self.note)
            self.unanswered = True
            return last
        self.unanswered = False
        return poll


def change_key(status: RunStatus) -> str:
    """What makes a new view: everything but the goodput, whose elapsed time grows every second
    while the run goes on (it is redrawn with the next real change)."""
    return status.model_dump_json(exclude={"goodput"})


class StatusWatch:
    """Draws a view of each change: `clear` first (a terminal), or `separator` between views."""

    def __init__(self, render: Callable[[RunStatus], str], out: TextIO, clear: bool, separator: str = "\n") -> None:
        self.render, self.out, self.clear, self.separator = render, out, clear, separator
        self.shown: str | None = None

    async def watch(self, poller: RunPoller) -> RunStatus:
        """Draw every change until the run's workflow is closed; its final status."""
        poll = await poller.first()
        while True:
            self.draw(poll.status)
            if not poll.open:
                return poll.status
            poll = await poller.next(poll)

    def draw(self, status: RunStatus) -> None:
        key = change_key(status)
        if key == self.shown:
            return
        text = self.render(status)
        if self.clear:
            self.out.write(CLEAR + text + "\n")
        else:
            self.out.write(("" if self.shown is None else self.separator) + text + "\n")
        self.out.flush()
        self.shown = key


async def watch_run(client: Client, run_id: str, text: Callable[[RunStatus], str] | None, out: TextIO) -> RunStatus:
    """`status --watch`: views from `text` (redrawn in place on a terminal), or with `text`
    None one JSON object per line; until the run ends. Notes go to stderr."""
    if text is None:
        watch = StatusWatch(lambda s: json.dumps(s.model_dump(mode="json")), out, clear=False, separator="")
    else:
        watch = StatusWatch(text, out, clear=out.isatty())
    return await watch.watch(RunPoller(client, run_id, sys.stderr))
