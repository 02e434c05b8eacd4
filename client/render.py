"""Readable text for people: the run timeline of `recovery status` and the table of `list`."""

from __future__ import annotations

from datetime import UTC, datetime

from recovery.workflows.models import FINAL_MILESTONE, Evidence, MilestoneName, RunStatus, RunSummary

# The milestones the timeline lists by themselves (the rest are in its latency lines).
_SHOWN: tuple[MilestoneName, ...] = ("progress_started", "progress_restored", *FINAL_MILESTONE.values())
STACK_SOURCE = "py-spy"  # a hung attempt's rank stacks (activities/hangstacks), shown beside the log's


def _t(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S") if at else "-"


def _utc(at: datetime | None) -> str:
    """A time with its zone (UTC), as `sacct` users read start times."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ") if at else "-"


def _secs(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return "-"
    return f"{(end - start).total_seconds():.1f}s"


def run_table(runs: list[RunSummary]) -> str:
    rows = [("RUN", "NAME", "STATE", "STARTED", "ATTEMPTS", "JOB", "LAST SYMPTOM", "OWNER")]
    rows += [
        (
            r.id,
            r.name,
            r.state.value,
            _utc(r.created_at),
            str(r.attempts),
            r.job_id or "-",
            r.last_symptom or "-",
            r.owner,
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def timeline(status: RunStatus, ui_url: str | None = None) -> str:
    run = status.run
    paused = " (paused)" if run.paused and run.state.value != "paused" else ""
    lines = [
        f"run {run.id}  {run.name}  state {run.state.value}{paused}",
        f"  scheduler {run.scheduler}  policy {run.policy}  owner {run.owner}",
        "",
        "attempts:",
    ]
    for a in status.attempts:
        code = "" if a.exit_code is None else f" exit {a.exit_code}"
        excl = f" excluding {','.join(a.excluded_nodes)}" if a.excluded_nodes else ""
        lines.append(
            f"  #{a.index} job {a.job_id}.{a.restart_count}  {a.state.value}{code}"
            f"  nodes {','.join(a.nodes) or '-'}{excl}"
            f"  started {_t(a.started_at)}  ran {_secs(a.started_at, a.ended_at)}"
        )
    for s in status.symptoms:
        lines.append(f"symptom  attempt #{s.attempt_index}: {s.kind} at {_t(s.detected_at)}")
        lines += _evidence(s.evidence)
    for adv in status.advice:
        acted = "" if adv.acted else " (not acted)"
        lines.append(f"advice {adv.generation}  {adv.operation} -> {adv.status}{acted}: {adv.explanation}")
        if adv.status_reason:
            lines.append(f"    {adv.status_reason}")
    for act in status.actions:
        done = "done" if act.changed else "already done"
        lines.append(f"action  {act.kind} job {act.job_id}: {done} ({act.detail}) at {_t(act.at)}")
    for m in status.milestones:
        if m.name in _SHOWN:
            attempt = "" if m.attempt_index is None else f" attempt #{m.attempt_index}"
            lines.append(f"milestone  {m.name.replace('_', ' ')}{attempt} at {_t(m.at)} {m.detail}".rstrip())
    lines += _latencies(status)
    g = status.goodput
    if g.ettr is not None:
        lines.append(f"goodput  ETTR {g.ettr:.2f}  productive {g.productive_seconds:.0f}s of {g.elapsed_seconds:.0f}s")
        if g.failures:
            lines.append(
                f"    lost {g.lost_seconds:.0f}s to {g.failures} failure{'s' if g.failures > 1 else ''}:"
                f" detection {g.lost_detection_seconds:.0f}s, restart {g.lost_restart_seconds:.0f}s,"
                f" recompute {g.lost_recompute_seconds:.0f}s ({g.recomputed_steps} steps since the last checkpoint)"
            )
    if ui_url:
        lines.append(f"Temporal UI: {ui_url}")
    return "\n".join(lines)


def _evidence(evidence: list[Evidence]) -> list[str]:
    """The first few log and scheduler lines, then what the ranks' stacks showed, one frame a
    line (innermost first), so that where a hung rank is stuck reads at a glance."""
    lines = [f"    {e.text}" for e in evidence if e.source != STACK_SOURCE][:5]
    for e in (e for e in evidence if e.source == STACK_SOURCE):
        first, *rest = e.text.split(" < ")
        lines.append(f"    {first}")
        lines += [f"        < {frame}" for frame in rest]
    return lines


def _latencies(status: RunStatus) -> list[str]:
    by_attempt: dict[int | None, dict[str, datetime]] = {}
    for m in status.milestones:
        by_attempt.setdefault(m.attempt_index, {}).setdefault(m.name, m.at)
    lines = []
    for index, marks in by_attempt.items():
        failed = marks.get("failure_observed")
        if failed is None:
            continue
        lines.append(
            f"recovery of attempt #{index}: advice after {_secs(failed, marks.get('advice_recorded'))},"
            f" successor running after {_secs(failed, marks.get('successor_running'))}"
        )
    return lines
