"""`recovery logs RUN [-f] [--attempt N]`: an attempt's output, and following it across restarts.

The scheduler writes a job's output to one file (Slurm's StdOut; the local scheduler's
`slurm-JOB.out`); a requeued job appends to the same file, and each attempt records where its
part starts (`Attempt.log_offset`). An attempt's output is therefore its file from its own
offset to its successor's, or to the end of the file when no successor writes there (the last
attempt, or one followed by a resubmitted job with a file of its own). The file is read
directly: like `sacct`'s StdOut, it is a path on the cluster's shared file system.

Headers (`==> attempt #1 ... <==`) and notes go to stderr, so stdout is the output itself.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import BinaryIO, TextIO

from pydantic import BaseModel, ConfigDict
from temporalio.client import Client

from recovery.client import pipelines
from recovery.client.cli_options import whole_number
from recovery.client.run_watch import RunPoller
from recovery.client.runs import RunError, poll_status
from recovery.client.temporal_client import connect
from recovery.workflows.models import Attempt, RunState, RunStatus

_CHUNK = 1 << 20


class Segment(BaseModel):
    """Where one attempt's output lies: `path` from byte `start` to `end` (None: to the file's end)."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    path: str
    start: int
    end: int | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="the run id (as `submit` printed it, or from `list`)")
    parser.add_argument(
        "-f", "--follow", action="store_true", help="keep printing as it grows, into each restart, until the run ends"
    )
    parser.add_argument("--attempt", metavar="N", help="the attempt (#N in `status`; default: the latest)")


def attempt_number(value: str | None) -> int | None:
    """`--attempt`'s value, or OptionError (one line)."""
    if value is None:
        return None
    return whole_number("--attempt", value, 0, "an attempt number (#N in `recovery status`)")


def segments(attempts: list[Attempt]) -> dict[int, Segment]:
    """Each attempt's output whose file is known, by attempt index."""
    found = {}
    for i, attempt in enumerate(attempts):
        if attempt.output_path is None:
            continue
        successor = attempts[i + 1] if i + 1 < len(attempts) else None
        shares_file = (
            successor is not None
            and successor.output_path == attempt.output_path
            and successor.log_offset >= attempt.log_offset
        )
        end = successor.log_offset if successor is not None and shares_file else None
        found[attempt.index] = Segment(
            attempt=attempt.index, path=attempt.output_path, start=attempt.log_offset, end=end
        )
    return found


def pick_attempt(run_id: str, attempts: list[Attempt], wanted: int | None) -> Attempt:
    if not attempts:
        raise RunError(f"run {run_id!r} has no attempt yet")
    if wanted is None:
        return attempts[-1]
    for attempt in attempts:
        if attempt.index == wanted:
            return attempt
    raise RunError(f"run {run_id!r} has no attempt #{wanted} (it has #{attempts[0].index} to #{attempts[-1].index})")


def header(attempt: Attempt) -> str:
    where = f" on {','.join(attempt.nodes)}" if attempt.nodes else ""
    return f"==> attempt #{attempt.index}: job {attempt.job_id} (restart {attempt.restart_count}){where} <=="


async def print_attempt(client: Client, run_id: str, wanted: int | None, out: BinaryIO, note: TextIO) -> None:
    """Print one attempt's output as it is now."""
    status = (await poll_status(client, run_id)).status
    attempt = pick_attempt(run_id, status.attempts, wanted)
    segment = segments(status.attempts).get(attempt.index)
    if segment is None or (attempt.started_at is None and not Path(segment.path).exists()):
        print(f"attempt #{attempt.index} has not written any output yet ({attempt.state.value.lower()})", file=note)
        return
    reader = SegmentReader(segment, note)
    reader.copy(out, must_exist=True)


class SegmentReader:
    """Copies a segment's bytes as they arrive; remembers how far it got."""

    def __init__(self, segment: Segment, note: TextIO) -> None:
        self.segment = segment
        self.position = segment.start
        self.note = note
        self.missing_noted = False

    @property
    def done(self) -> bool:
        return self.segment.end is not None and self.position >= self.segment.end

    def copy(self, out: BinaryIO, must_exist: bool = False) -> None:
        """Write what the file holds now from `position` up to the segment's end."""
        path = Path(self.segment.path)
        try:
            with path.open("rb") as f:
                size = path.stat().st_size
                if size < self.position:  # rewritten from the start (sbatch --open-mode=truncate)
                    print(f"{path} was truncated; reading it from the start", file=self.note)
                    self.position = 0
                f.seek(self.position)
                self._pump(f, out)
        except FileNotFoundError:
            what = f"attempt #{self.segment.attempt}'s output {path}"
            if must_exist:
                raise RunError(f"{what} does not exist on this machine") from None
            if not self.missing_noted:  # not written yet, or on another machine's file system
                print(f"{what} is not there yet (is it on this machine?); waiting for it", file=self.note)
            self.missing_noted = True
        except OSError as e:
            raise RunError(f"cannot read attempt #{self.segment.attempt}'s output {path}: {e.strerror or e}") from None

    def _pump(self, f: BinaryIO, out: BinaryIO) -> None:
        while True:
            want = _CHUNK if self.segment.end is None else min(_CHUNK, self.segment.end - self.position)
            data = f.read(want) if want > 0 else b""
            if not data:
                break
            out.write(data)
            self.position += len(data)
        out.flush()


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("logs", help="an attempt's output; -f follows it across restarts")
    add_arguments(parser)
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Exit 0, or with -f: 0 when the run completed, 1 when it gave up or was cancelled."""
    wanted = attempt_number(args.attempt)

    async def go() -> int:
        client = await connect()
        run_id = await pipelines.run_of(client, args.run)  # a chained run's id is its pipeline's
        if not args.follow:
            await print_attempt(client, run_id, wanted, sys.stdout.buffer, sys.stderr)
            return 0
        state = await Follower(RunPoller(client, run_id, sys.stderr), sys.stdout.buffer).follow(wanted)
        print(f"run {args.run} ended: {state.value}", file=sys.stderr)
        return 0 if state is RunState.COMPLETED else 1

    return asyncio.run(go())


class Follower:
    """Prints an attempt and every later one as they write, until the run ends."""

    def __init__(self, poller: RunPoller, out: BinaryIO) -> None:
        self.poller, self.out = poller, out
        self.last: SegmentReader | None = None  # the latest reader: where printing got to

    async def follow(self, wanted: int | None) -> RunState:
        """From attempt `wanted` (default: the latest); the run's final state."""
        poller = self.poller
        poll = await poller.first()
        while not poll.status.attempts and poll.open:
            poll = await poller.next(poll)
        current = pick_attempt(poller.run_id, poll.status.attempts, wanted).index
        reader: SegmentReader | None = None
        while True:
            status = poll.status
            segment = segments(status.attempts).get(current)
            later = [a.index for a in status.attempts if a.index > current]
            if segment is not None:
                reader = reader or self._start(status.attempts, segment)
                reader.segment = segment  # its end is known once a successor writes to the same file
                if later or not poll.open or not _failed(status, current):
                    reader.copy(self.out)
            if later and (reader is None or reader.segment.end is None or reader.done):
                # This attempt is over and its part is read: to where its successor starts, or
                # to the end of a file no one writes any more.
                current, reader = later[0], None
                continue
            if not poll.open:
                return status.run.state
            poll = await poller.next(poll)

    def _start(self, attempts: list[Attempt], segment: Segment) -> SegmentReader:
        print(header(_by_index(attempts, segment.attempt)), file=self.poller.note)
        reader = SegmentReader(segment, self.poller.note)
        if self.last is not None and self.last.segment.path == segment.path:
            reader.position = max(reader.position, self.last.position)  # never print a byte twice
        self.last = reader
        return reader


def _failed(status: RunStatus, index: int) -> bool:
    """Attempt `index` has a symptom: the run is recovering from it. Its successor may soon
    append to the same file, before the run records where it starts: until then, what follows
    in the file cannot be told apart, so it waits (the successor's record says where)."""
    return any(s.attempt_index == index for s in status.symptoms)


def _by_index(attempts: list[Attempt], index: int) -> Attempt:
    return next(a for a in attempts if a.index == index)
