"""Naming the node behind a hang or a slowdown of a two-node run, from its log alone.

The lines are the PyTorch example's (docs/examples/pytorch-ddp/train.py) under `srun --label`,
with gloo's own monitoredBarrier messages as torch 2.13 prints them.
"""

from __future__ import annotations

from pathlib import Path

from recovery.activities.logwatch import AttemptLog
from recovery.activities.progress import ProgressParser
from recovery.activities.signatures.diagnosis import LogDiagnoser
from recovery.activities.straggler import slow_ranks
from recovery.workflows.policy import Policy

LAYOUT = {0: "node1", 1: "node2"}


def progress(step: int, rank: int, step_time: float, compute: float) -> str:
    return (
        f"{rank}: recovery-progress step={step} total=60 rank={rank} "
        f"step_time={step_time:.3f} compute_time={compute:.3f} loss=0.5"
    )


def test_compute_time_is_read_from_the_structured_line() -> None:
    record = ProgressParser().parse(progress(3, 1, 1.25, 1.24))
    assert record is not None
    assert (record.step, record.rank, record.step_time, record.compute_time) == (3, 1, 1.25, 1.24)


def test_the_slower_of_two_ranks_is_named() -> None:
    found = slow_ranks({0: [0.25, 0.26, 0.25, 0.25], 1: [1.25, 1.26, 1.25, 1.24]})
    assert [s.rank for s in found] == [1]
    assert found[0].excess > 3


def test_two_ranks_close_together_name_nobody() -> None:
    assert slow_ranks({0: [0.25, 0.26, 0.25, 0.25], 1: [0.27, 0.28, 0.27, 0.27]}) == []


def test_a_noisy_pair_needs_a_bigger_gap() -> None:
    noisy = {0: [0.1, 0.4, 0.25, 0.15, 0.35], 1: [0.2, 0.5, 0.35, 0.25, 0.45]}
    assert slow_ranks(noisy) == []


def slow_log(healthy: int = 20, slow: int = 14) -> bytes:
    lines = []
    for step in range(1, healthy + slow + 1):
        extra = 1.0 if step > healthy else 0.0
        wall = 0.25 + extra
        lines.append(progress(step, 0, wall, 0.25))
        lines.append(progress(step, 1, wall, 0.25 + extra))
    return ("\n".join(lines) + "\n").encode()


def test_a_slowdown_judged_by_the_watch_is_explained_with_the_ranks_own_times() -> None:
    diagnoser = LogDiagnoser(layout=LAYOUT)
    diagnoser.feed(slow_log())
    diagnoser.finish()
    # the log's own pace (10-minute default window) has no verdict yet: the watch's does
    assert diagnoser.diagnosis().symptom == "none"
    found = diagnoser.diagnosis(straggling="throughput 80% below the run's recent baseline")
    assert found.symptom == "straggler"
    assert found.implicated.nodes == ["node2"] and found.implicated.ranks == [1]


def test_a_monitored_barrier_timeout_names_the_missing_rank_not_the_reporter() -> None:
    lines = [progress(step, rank, 0.25, 0.25) for step in range(1, 6) for rank in (0, 1)]
    lines += [
        "1: recovery-example: injecting fault hang on node2 at step 6",
        "0: [rank0]:[E1129 13:47:03.171191488 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 1 failed to pass monitoredBarrier in 4000 ms",
        "0: [rank0]:[E1129 13:47:03.171234113 ProcessGroupGloo.cpp:67] [Rank 0]: Ranks 1 failed to pass monitoredBarrier in 4000 ms",
    ]
    diagnoser = LogDiagnoser(layout=LAYOUT)
    diagnoser.feed(("\n".join(lines) + "\n").encode())
    diagnoser.finish()
    found = diagnoser.diagnosis()
    assert found.symptom == "hang"
    assert found.evidence[0].signature == "gloo-monitored-barrier"
    assert found.implicated.nodes == ["node2"] and found.implicated.ranks == [1]


def test_the_attempts_step_time_is_the_median_it_reported(tmp_path: Path) -> None:
    out = tmp_path / "slurm-1.out"
    out.write_bytes(slow_log(healthy=20, slow=6))
    log = AttemptLog(str(out), 0, ["node1", "node2"], Policy(), now=0.0, trained=False)
    log.poll(1.0)
    assert log.last_step == 26
    assert log.step_seconds == 0.25  # rank 0's wall times: 20 healthy, 6 slow


def test_without_step_times_the_pace_between_reads_is_the_step_time(tmp_path: Path) -> None:
    out = tmp_path / "slurm-2.out"
    out.write_text("recovery-progress step=1 total=9\n")
    log = AttemptLog(str(out), 0, ["node1"], Policy(), now=0.0, trained=False)
    log.poll(10.0)
    assert log.step_seconds is None  # one step: no pace yet
    with out.open("a") as f:
        f.write("recovery-progress step=2 total=9\nrecovery-progress step=5 total=9\n")
    log.poll(22.0)
    assert log.step_seconds == 3.0  # 4 steps in 12 s of reading
