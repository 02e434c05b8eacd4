"""`recovery list` with filters, as `squeue`/`sacct` users expect them: by state, owner, job id
and start time, with a limit. Each filter is a Temporal visibility query on the run's search
attributes, so the server does the finding; only `--since` is refined here (see `find_runs`).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field
from temporalio.client import Client

from recovery.client.cli_options import whole_number
from recovery.client.runs import RunError, iter_runs, visibility_time
from recovery.workflows import search_attributes as sa
from recovery.workflows.models import RunState, RunSummary
from recovery.workflows.policy import parse_duration

STATES = ", ".join(s.value for s in RunState)
# Characters a visibility query's string literal cannot carry safely: values with them are refused.
_UNQUOTABLE = frozenset("\"'\\`")


class ListError(RunError):
    """A filter that cannot be used; the message is one line naming the option."""


class RunFilter(BaseModel):
    """What `list` was asked for; every field narrows the runs (they are ANDed)."""

    model_config = ConfigDict(frozen=True)

    states: tuple[RunState, ...] = ()
    owner: str | None = None
    job_id: str | None = None
    since: timedelta | None = None
    limit: int | None = Field(default=None, ge=1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`list`'s filters. Values are checked by `filter_from`, so that a bad one is one line."""
    parser.add_argument("--state", metavar="S[,S]", help=f"only runs in these states ({STATES})")
    parser.add_argument("--owner", metavar="USER", help="only runs of this user")
    parser.add_argument("--job", metavar="JOBID", help="only the run of this scheduler job id (any attempt)")
    parser.add_argument("--since", metavar="DURATION", help="only runs started within DURATION (30m, 2h, 7d)")
    parser.add_argument("--limit", metavar="N", help="at most N runs (open runs first, then the latest closed)")


def filter_from(args: argparse.Namespace) -> RunFilter:
    return parse_filter(args.state, args.owner, args.job, args.since, args.limit)


def parse_filter(
    state: str | None, owner: str | None, job: str | None, since: str | None, limit: str | None
) -> RunFilter:
    """The filter the options describe, or ListError (one line) for the first bad value."""
    return RunFilter(
        states=_states(state) if state is not None else (),
        owner=_literal("--owner", owner) if owner is not None else None,
        job_id=_literal("--job", job) if job is not None else None,
        since=_since(since) if since is not None else None,
        limit=_limit(limit) if limit is not None else None,
    )


def _states(value: str) -> tuple[RunState, ...]:
    words = [w.strip().lower() for w in value.split(",") if w.strip()]  # squeue users type RUNNING
    if not words:
        raise ListError(f"--state needs a state ({STATES})")
    unknown = [w for w in words if w not in {s.value for s in RunState}]
    if unknown:
        raise ListError(f"unknown state {unknown[0]!r} for --state (one of {STATES})")
    return tuple(dict.fromkeys(RunState(w) for w in words))


def _literal(flag: str, value: str) -> str:
    text = value.strip()
    if not text:
        raise ListError(f"{flag} needs a value")
    if any(c in _UNQUOTABLE or not c.isprintable() for c in text):
        raise ListError(f"{flag} {value!r}: quotes, backslashes and control characters cannot be searched for")
    return text


def _since(value: str) -> timedelta:
    try:
        window = parse_duration(value)
    except ValueError as e:
        raise ListError(f"--since: {e}") from None
    if window <= timedelta(0):
        raise ListError(f"--since {value!r}: the window must be longer than 0s")
    return window


def _limit(value: str) -> int:
    return whole_number("--limit", value, 1, "a whole number of runs")


def visibility_query(run_filter: RunFilter, now: datetime) -> str:
    """The visibility query (without the run-type clause `iter_runs` adds) for the filter."""
    clauses = []
    if len(run_filter.states) == 1:
        clauses.append(f'{sa.STATE.name} = "{run_filter.states[0].value}"')
    elif run_filter.states:
        listed = ", ".join(f'"{s.value}"' for s in run_filter.states)
        clauses.append(f"{sa.STATE.name} IN ({listed})")
    if run_filter.owner is not None:
        clauses.append(f'{sa.OWNER.name} = "{run_filter.owner}"')
    if run_filter.job_id is not None:
        clauses.append(f'{sa.JOB_IDS.name} = "{run_filter.job_id}"')  # a KeywordList matches any member
    if run_filter.since is not None:
        clauses.append(f'StartTime >= "{visibility_time(now - run_filter.since)}"')
    return " AND ".join(clauses)


async def find_runs(client: Client, run_filter: RunFilter, now: datetime) -> list[RunSummary]:
    """The runs the filter selects, in visibility's order, at most `limit`.

    `StartTime` is the latest execution's: a run that continued-as-new within the window but
    began before it also matches the query, so its own start (the memo's) is checked here.
    """
    cutoff = now - run_filter.since if run_filter.since is not None else None
    found: list[RunSummary] = []
    async for run in iter_runs(client, visibility_query(run_filter, now)):
        if cutoff is not None and run.created_at is not None and run.created_at < cutoff:
            continue
        found.append(run)
        if run_filter.limit is not None and len(found) >= run_filter.limit:
            break
    return found
