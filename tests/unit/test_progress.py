"""Progress lines: the structured line, common trainer formats, user patterns, and the gates."""

from __future__ import annotations

import pytest

from recovery.activities.progress import ProgressError, ProgressParser, ProgressRecord
from recovery.activities.signatures.scanner import LogScanner, PatternSet

PARSER = ProgressParser()

SAMPLES: list[tuple[str, str, dict[str, object]]] = [
    (
        "structured",
        "recovery-progress step=12 total=30 rank=0 loss=0.4123",
        {"step": 12, "total": 30, "rank": 0, "loss": 0.4123},
    ),
    (
        "structured",
        "3: [rank3]: recovery-progress step=100 throughput=812.5 step_time=0.41 checkpoint=saving extra=1",
        {"step": 100, "throughput": 812.5, "step_time": 0.41, "checkpoint": "saving"},
    ),
    (
        "megatron",
        " [2024-05-01 12:00:00] iteration      100/  500000 | consumed samples:         3200 |"
        " elapsed time per iteration (ms): 1250.0 | learning rate: 1.000E-04 | global batch size:    32 |"
        " lm loss: 5.678901E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 |",
        {"step": 100, "total": 500000, "step_time": 1.25, "throughput": 25.6, "loss": 5.678901},
    ),
    (
        "megatron",
        "Training epoch 0, iteration 99/999 | lr: 1.499e-07 | global_batch_size: 32 | global_step: 99 |"
        " reduced_train_loss: 11.03 | train_step_timing in s: 13.2",
        {"step": 99, "total": 999, "step_time": 13.2, "loss": 11.03},
    ),
    (
        "lightning",
        "Epoch 1:  45%|████▌     | 450/1000 [02:15<02:45,  3.33it/s, v_num=0, train_loss=0.123]",
        {"step": 1450, "epoch": 1.0, "throughput": 3.33, "loss": 0.123},
    ),
    (
        "tqdm",
        " 12%|█▏        | 120/1000 [00:30<03:40,  2.00s/it]",
        {"step": 120, "total": 1000, "step_time": 2.0},
    ),
    (
        "hf",
        "{'loss': 2.3456, 'grad_norm': 1.23, 'learning_rate': 4.5e-05, 'epoch': 0.12}",
        {"step": None, "loss": 2.3456, "epoch": 0.12},
    ),
    (
        "torchtitan",
        "[rank0]:[titan] 2025-01-01 12:00:00,000 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  9.1234"
        "  \x1b[33mmemory: 36.82GiB(38.77%)  \x1b[34mtps: 7,436"
        "  \x1b[35mtflops: 345.32  \x1b[36mmfu: 34.91%\x1b[39m",
        {"step": 10, "loss": 9.1234, "throughput": 7436.0},
    ),
    (
        "json",
        '0: {"step": 5, "loss": 1.5, "tokens_per_second": 1000, "rank": 0}',
        {"step": 5, "throughput": 1000.0},
    ),
    ("kv", "step=5 loss=1.2 samples/s=300", {"step": 5, "loss": 1.2, "throughput": 300.0}),
    ("kv", "INFO Step: 7/100, loss: 0.5, step_time: 0.3", {"step": 7, "total": 100, "step_time": 0.3}),
    ("loop", "iter 100: loss 4.1234, time 123.45ms, mfu 30.12%", {"step": 100, "loss": 4.1234, "step_time": 0.12345}),
    (
        "loop",
        "step    7/74 | train loss 10.987 | norm 15.1 | lr 6.00e-06 | (1234.56 ms | 12345 tok/s)",
        {"step": 7, "total": 74, "loss": 10.987, "step_time": 1.23456, "throughput": 12345.0},
    ),
    ("loop", "Step 100 | loss 2.31 | 0.41 s/step", {"step": 100, "loss": 2.31, "step_time": 0.41}),
]


@pytest.mark.parametrize(("fmt", "line", "expected"), SAMPLES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SAMPLES)])
def test_formats(fmt: str, line: str, expected: dict[str, object]) -> None:
    record = PARSER.parse(line, 7)
    assert record is not None
    assert record.format == fmt and record.line == 7
    for key, value in expected.items():
        got = getattr(record, key)
        assert got == pytest.approx(value) if isinstance(value, float) else got == value, key


@pytest.mark.parametrize(
    "line",
    [
        "hello world",
        "{'eval_loss': 2.1, 'epoch': 1.0}",  # evaluation, not a training step
        "recovery-progress total=30",  # the structured line needs its step
        "NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
        "Loading checkpoint shards: 100%|██████████| 4/4",
        "Step 2 of 5: tokenizing the dataset",  # a loop-like line without a loss
        "footstep 12 loss of grip",  # `step` inside another word is no step
    ],
)
def test_lines_without_progress(line: str) -> None:
    assert PARSER.parse(line) is None


def test_every_sample_passes_a_scanner_gate() -> None:
    """The diagnoser only parses lines the scanner flags: each format's gate must let it through."""
    scanner = LogScanner(PatternSet(PARSER.gates, engine="re2"))
    log = "\n".join(line for _, line, _ in SAMPLES).encode() + b"\n"
    flagged = {m.line for m in scanner.feed(log)}
    assert flagged == set(range(1, len(SAMPLES) + 1))


def test_user_patterns_come_first_and_are_checked() -> None:
    parser = ProgressParser([r"it (?P<step>\d+) of (?P<total>\d+), (?P<throughput>[\d.]+) img/s"])
    record = parser.parse("[train] it 40 of 900, 312.5 img/s")
    assert record == ProgressRecord(
        step=40, total=900, throughput=312.5, format="user", text="[train] it 40 of 900, 312.5 img/s"
    )
    assert ("progress:user0", parser.user_patterns[0]) in parser.gates
    with pytest.raises(ProgressError, match="unknown group 'speed'"):
        ProgressParser([r"(?P<speed>\d+)"])
    with pytest.raises(ProgressError, match="not a valid pattern"):
        ProgressParser([r"(a"])


def test_rate_prefers_throughput_then_step_time() -> None:
    assert ProgressRecord(throughput=10.0, step_time=1.0).rate == 10.0
    assert ProgressRecord(step_time=0.5).rate == 2.0
    assert ProgressRecord(step=3).rate is None


def test_a_megabyte_line_is_cut_not_parsed_slowly() -> None:
    record = PARSER.parse("step=1 " + "k=1 " * 300_000)
    assert record is not None and record.step == 1 and len(record.text) <= 4096
