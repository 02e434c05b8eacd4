"""Times and durations as people read them: `10h 0m 12s`, not `36012.3s`; a time with its zone,
in the reader's own (TZ), since an operator compares it with the scheduler's and their clock."""

from __future__ import annotations

from datetime import UTC, datetime

MINUTE, HOUR, DAY = 60, 3600, 86400
NONE = "-"


def duration(seconds: float | None) -> str:
    """`0.4s` and `7.2s` below ten seconds (recovery latencies live there), then whole units:
    `36s`, `1m 38s`, `10h 0m 12s`, `2d 3h 0m`."""
    if seconds is None:
        return NONE
    if seconds < 0:
        return "-" + duration(-seconds)
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    days, rest = divmod(whole, DAY)
    hours, rest = divmod(rest, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m {secs}s"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def between(start: datetime | None, end: datetime | None) -> str:
    """The duration from `start` to `end`, or `-` while either is unknown."""
    if start is None or end is None:
        return NONE
    return duration((end - start).total_seconds())


def when(at: datetime | None) -> str:
    """`2026-12-01 23:30:01 CET`: local time (TZ) with its zone; a naive time is taken as UTC,
    as Temporal and our records keep times."""
    if at is None:
        return NONE
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    local = at.astimezone()
    zone = local.strftime("%Z") or local.strftime("%z")
    return f"{local:%Y-%m-%d %H:%M:%S} {zone}"
