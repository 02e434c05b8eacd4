"""Readable text for people: the run timeline of `recovery status` and the table of `list`."""

from __future__ import annotations

from datetime import datetime

from recovery.activities.text import clip
from recovery.client.console import SYMPTOM_STYLES, Column, paint, table
from recovery.client.format import between, duration, when
from recovery.workflows.models import FINAL_MILESTONE, Attempt, Evidence, Goodput, MilestoneName, RunStatus, RunSummary

# The milestones the timeline lists by themselves (the rest are in its latency lines).
_SHOWN: tuple[MilestoneName, ...] = ("progress_started", "progress_restored", *FINAL_MILESTONE.values())
EVIDENCE_SHOWN = 200  # characters of an evidence line shown; a longer one ends in an ellipsis
STACK_SOURCE = "py-spy"  # a hung attempt's rank stacks (activities/hangstacks), shown beside the log's


def run_table(runs: list[RunSummary]) -> str:
    rows = [
        [
            f"{STAGE_MARK}{r.id}" if stage else r.id,
            f"{r.name} (pipeline)" if r.kind == "pipeline" else r.name,
            r.state.value,
            when(r.created_at),
            str(r.attempts),
            r.job_id or "-",
            r.last_symptom or "-",
            r.owner,
        ]
        for r, stage in with_stages(runs)
    ]
    return table(RUN_COLUMNS, rows)


STAGE_MARK = "└ "  # a stage's row, under its pipeline's


def with_stages(runs: list[RunSummary]) -> list[tuple[RunSummary, bool]]:
    """The rows in the list's order, each pipeline followed by its stages' runs (marked True);
    a stage whose pipeline is not listed stays where it is, as a run."""
    pipelines = {r.id for r in runs if r.kind == "pipeline"}
    rows: list[tuple[RunSummary, bool]] = []
    for r in runs:
        if r.pipeline in pipelines:
            continue  # shown under its pipeline
        rows.append((r, False))
        if r.kind == "pipeline":
            rows += [(stage, True) for stage in runs if stage.pipeline == r.id]
    return rows


# Trouble red, waiting yellow, fine green (client/console.py).
STATE_STYLES = {
    "running": "green",
    "completed": "green",
    "recovering": "yellow",
    "pending": "yellow",
    "paused": "yellow",
    "gave_up": "bold red",
    "cancelled": "dim",
}
RUN_COLUMNS = (
    Column("RUN"),
    Column("NAME", fit=True),
    Column("STATE", style=STATE_STYLES.get),
    *(Column(h) for h in ("STARTED", "ATTEMPTS", "JOB", "LAST SYMPTOM", "OWNER")),
)


def timeline(status: RunStatus, ui_url: str | None = None) -> str:
    run = status.run
    paused = " (paused)" if run.paused and run.state.value != "paused" else ""
    lines = [
        f"run {run.id}  {run.name}  state {paint(run.state.value, STATE_STYLES.get(run.state.value, ''))}{paused}",
        f"  scheduler {run.scheduler}  policy {run.policy}  owner {run.owner}",
        "",
        "attempts:",
    ]
    for a in status.attempts:
        lines.append(f"  {attempt_line(a)}  started {when(a.started_at)}  ran {between(a.started_at, a.ended_at)}")
    for s in status.symptoms:
        kind = paint(s.kind, SYMPTOM_STYLES.get(s.kind, ""))
        lines.append(f"symptom  attempt #{s.attempt_index}: {kind} at {when(s.detected_at)}")
        lines += _evidence(s.evidence)
    for adv in status.advice:
        acted = "" if adv.acted else " (not acted)"
        lines.append(f"advice {adv.generation}  {adv.operation} -> {adv.status}{acted}: {adv.explanation}")
        if adv.status_reason:
            lines.append(f"    {adv.status_reason}")
    for act in status.actions:
        done = "done" if act.changed else "already done"
        lines.append(f"action  {act.kind} job {act.job_id}: {done} ({act.detail}) at {when(act.at)}")
    for m in status.milestones:
        if m.name in _SHOWN:
            attempt = "" if m.attempt_index is None else f" attempt #{m.attempt_index}"
            lines.append(f"milestone  {m.name.replace('_', ' ')}{attempt} at {when(m.at)} {m.detail}".rstrip())
    lines += outcome(status)
    if ui_url:
        lines.append(f"Temporal UI: {ui_url}")
    return "\n".join(lines)


def outcome(status: RunStatus) -> list[str]:
    """What the recoveries cost: each one's latency and the run's goodput (the end of the
    timeline, and all the demo adds to what it narrated)."""
    return _latencies(status) + goodput_lines(status.goodput)


def attempt_line(a: Attempt) -> str:
    """`#0 job 41.0  failed exit 3  nodes node1,node2 excluding node2`: one attempt, as the run's
    and the pipeline's timelines both show it."""
    code = "" if a.exit_code is None else f" exit {a.exit_code}"
    excl = f" excluding {','.join(a.excluded_nodes)}" if a.excluded_nodes else ""
    return f"#{a.index} job {a.job_id}.{a.restart_count}  {a.state.value}{code}  nodes {','.join(a.nodes) or '-'}{excl}"


def goodput_lines(g: Goodput, indent: str = "") -> list[str]:
    """The goodput line (ETTR, productive of elapsed) and, after failures, where the rest went."""
    if g.ettr is None:
        return []
    productive = f"productive {duration(g.productive_seconds)} of {duration(g.elapsed_seconds)}"
    lines = [f"{indent}goodput  ETTR {g.ettr:.2f}  {productive}"]
    if g.failures:
        lines.append(
            f"{indent}    lost {duration(g.lost_seconds)} to {g.failures} failure{'s' if g.failures > 1 else ''}:"
            f" detection {duration(g.lost_detection_seconds)}, restart {duration(g.lost_restart_seconds)},"
            f" recompute {duration(g.lost_recompute_seconds)}"
            f" ({g.recomputed_steps} steps since the last checkpoint)"
        )
    return lines


def _evidence(evidence: list[Evidence]) -> list[str]:
    """The first few log and scheduler lines, then what the ranks' stacks showed, one frame a
    line (innermost first), so that where a hung rank is stuck reads at a glance."""
    lines = [f"    {clip(e.text, EVIDENCE_SHOWN)}" for e in evidence if e.source != STACK_SOURCE][:5]
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
            f"recovery of attempt #{index}: advice after {between(failed, marks.get('advice_recorded'))},"
            f" successor running after {between(failed, marks.get('successor_running'))}"
        )
    return lines
