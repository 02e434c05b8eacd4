"""`recovery status PIPELINE`: the pipeline's own status joined with each started stage's run
status, as a timeline (each stage's start and end, its attempts and recoveries) and the
pipeline's goodput. Pure: the statuses come in, the view and its text go out.

The pipeline's goodput is the runs' own (`workflows/status.py`), added up over its stages: its
elapsed time is the sum of the stages' elapsed times (two stages in parallel both count), its
productive time the sum of theirs, and ETTR the one over the other. The time a stage waits for
what it needs is not in it; the wall-clock span from the first stage's start is shown beside it.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from recovery.client.console import paint
from recovery.client.format import between, duration, when
from recovery.client.render import STATE_STYLES, attempt_line, goodput_lines
from recovery.workflows.models import FINAL_MILESTONE, Advice, Attempt, Goodput, Model, RunStatus
from recovery.workflows.pipeline_models import PipelineStatus, StageStatus


class StageTimeline(StageStatus):
    """A stage in `status PIPELINE --json`: its status in the pipeline, and from its run: when it
    was released, when its first attempt started and when the run ended, every attempt (job id,
    nodes, ...), every advice (the recoveries), and its goodput."""

    released_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    advice: list[Advice] = Field(default_factory=list)
    goodput: Goodput = Field(default_factory=Goodput)


class PipelineView(PipelineStatus):
    """`status PIPELINE --json`: every key of the pipeline's status, its stages as timelines, the
    wall-clock span (first stage's start to the last one's end, or now) and the goodput."""

    stages: list[StageTimeline]  # type: ignore[assignment]  # the stages' status, and more
    started_at: datetime | None = None
    ended_at: datetime | None = None
    span_seconds: float | None = None
    goodput: Goodput = Field(default_factory=Goodput)


class _Span(Model):
    started_at: datetime | None = None
    ended_at: datetime | None = None


def build_view(status: PipelineStatus, runs: dict[str, RunStatus], now: datetime) -> PipelineView:
    """`runs` holds the run status of each started stage, by stage name."""
    released = {a.stage: a.at for a in status.actions if a.kind == "dag_release"}
    stages = [_stage(s, runs.get(s.name), released.get(s.name)) for s in status.stages]
    starts = [s.started_at for s in stages if s.started_at is not None]
    started = min(starts) if starts else None
    finished = all(s.state.finished for s in status.stages)
    ends = [s.ended_at for s in stages if s.ended_at is not None]
    ended = max(ends) if finished and ends else None
    return PipelineView(
        pipeline=status.pipeline,
        stages=stages,
        actions=status.actions,
        after=status.after,
        started_at=started,
        ended_at=ended,
        span_seconds=(min(now, ended or now) - started).total_seconds() if started else None,
        goodput=added_up([s.goodput for s in stages]),
    )


def _stage(stage: StageStatus, run: RunStatus | None, released_at: datetime | None) -> StageTimeline:
    base = stage.model_dump()
    if run is None:
        return StageTimeline(**base, released_at=released_at)
    span = _run_span(run)
    return StageTimeline(
        **base,
        released_at=released_at,
        started_at=span.started_at,
        ended_at=span.ended_at,
        attempts=run.attempts,
        advice=run.advice,
        goodput=run.goodput,
    )


def _run_span(run: RunStatus) -> _Span:
    """From the first attempt's start to the run's end (its final milestone), each when known."""
    started = next((a.started_at for a in run.attempts if a.started_at), None)
    ended = next((m.at for m in run.milestones if m.name in FINAL_MILESTONE.values()), None)
    return _Span(started_at=started, ended_at=ended)


def added_up(goodputs: list[Goodput]) -> Goodput:
    """The stages' goodput as one: each amount summed; ETTR is productive over elapsed."""
    elapsed = sum(g.elapsed_seconds for g in goodputs)
    productive = sum(g.productive_seconds for g in goodputs)
    return Goodput(
        elapsed_seconds=elapsed,
        productive_seconds=productive,
        lost_seconds=sum(g.lost_seconds for g in goodputs),
        lost_detection_seconds=sum(g.lost_detection_seconds for g in goodputs),
        lost_restart_seconds=sum(g.lost_restart_seconds for g in goodputs),
        lost_recompute_seconds=sum(g.lost_recompute_seconds for g in goodputs),
        recomputed_steps=sum(g.recomputed_steps for g in goodputs),
        failures=sum(g.failures for g in goodputs),
        ettr=productive / elapsed if elapsed > 0 else None,
    )


def pipeline_timeline(view: PipelineView) -> str:
    """The text of `status PIPELINE`: the pipeline, then each stage with its attempts and
    recoveries, what the pipeline did, and its goodput."""
    p = view.pipeline
    paused = " (paused)" if p.paused and p.state.value != "paused" else ""
    state = paint(p.state.value, STATE_STYLES.get(p.state.value, ""))
    lines = [f"pipeline {p.id}  {p.name}  state {state}{paused}", f"  scheduler {p.scheduler}  owner {p.owner}"]
    if view.after:
        lines.append(f"  after {', '.join(view.after)} (runs it follows)")
    lines += ["", "stages:"]
    for s in view.stages:
        lines += _stage_lines(s)
    lines += ["", "actions:"]
    lines += [f"  {when(a.at)}  {a.kind:<11} {a.stage}  {a.detail}".rstrip() for a in view.actions]
    lines.append("")
    span = f"  from {when(view.started_at)}" if view.started_at else ""
    lines.append(f"wall clock {duration(view.span_seconds)}{span}")
    lines += goodput_lines(view.goodput)
    if view.goodput.ettr is not None:
        lines.append("    (the stages' own goodput added up: stages in parallel both count)")
    lines.append("each stage's whole story: recovery status RUN")
    return "\n".join(lines)


def _stage_lines(s: StageTimeline) -> list[str]:
    needs = f"  needs {', '.join(s.needs)}" if s.needs else ""
    detail = f"  ({s.detail})" if s.detail else ""
    state = paint(s.state.value, STATE_STYLES.get(s.state.value, ""))
    lines = [f"  {s.name}  {state}  run {s.run}{needs}{detail}"]
    if s.released_at is not None:
        ran = f"  ended {when(s.ended_at)} (ran {between(s.started_at, s.ended_at)})" if s.ended_at else ""
        lines.append(f"    released {when(s.released_at)}  started {when(s.started_at)}{ran}")
    for a in s.attempts:
        lines.append(f"    {attempt_line(a)}  ran {between(a.started_at, a.ended_at)}")
        for adv in (adv for adv in s.advice if adv.attempt_index == a.index):
            acted = "" if adv.acted else " (not acted)"
            lines.append(f"       advice {adv.operation} -> {adv.status}{acted}: {adv.explanation}")
    lines += goodput_lines(s.goodput, indent="    ")
    return lines
