"""A run's pace in two families' own lines: MMCV's and MMEngine's JSON logs, and the epoch-end
line of pytorch-CycleGAN-and-pix2pix's train.py, which the GAN and super-resolution trainers
built from it keep (traiNNer).

MMCV's TextLoggerHook (mmcv/runner/hooks/logger/text.py) dumps each logging window to
`<timestamp>.log.json` as an object whose `time` is the window's mean seconds per iteration and
`data_time` the data loading's share; MMEngine's LoggerHook writes the same pair to
`vis_data/scalars.json`. `time` beside `data_time` is the pace (alone, `time` may be a clock).
The epoch-end line gives an epoch's seconds: `End of epoch 52 / 500000 \t Time Taken: 5.0500 sec`.

Real lines are quoted from public threads (named above each, with the file that prints them);
their healthy excerpts must stay healthy; and a run generated in each shape (the generators of
`test_straggler_formats`) with a sustained 10 % drop is a straggler, while a healthy one is not.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from recovery.activities.progress import ProgressParser
from recovery.activities.signatures.diagnosis import LogDiagnoser
from tests.unit.real_lines import diagnose, verdict
from tests.unit.test_straggler_formats import SUSTAIN, Line, Printer, _with_chatter, make_pace

# https://github.com/open-mmlab/mmdetection/issues/6093: MMDetection's `.log.json`, the first
# window of epoch 2 slow while its data workers start again.
MMDET_JSON = [
    '{"mode": "train", "epoch": 1, "iter": 1800, "lr": 0.00038, "memory": 3446, "data_time": 0.04779,'
    ' "loss_cls": 2.66138, "loss_bbox": 3.53173, "loss_obj": 5.41322, "loss": 11.60633, "time": 0.53712}',
    '{"mode": "train", "epoch": 2, "iter": 50, "lr": 0.00042, "memory": 3446, "data_time": 1.94365,'
    ' "loss_cls": 2.60153, "loss_bbox": 3.59438, "loss_obj": 4.99105, "loss": 11.18696, "time": 2.48093}',
    '{"mode": "train", "epoch": 2, "iter": 100, "lr": 0.00044, "memory": 3446, "data_time": 0.02042,'
    ' "loss_cls": 2.60903, "loss_bbox": 3.56643, "loss_obj": 4.95299, "loss": 11.12845, "time": 0.55071}',
]
# https://github.com/open-mmlab/mmengine/issues/963: MMEngine's LocalVisBackend scalars.json, a
# slow first window (warm-up), then a steady pace.
MMENGINE_JSON = [
    '{"lr": 0.001, "data_time": 0.008973455429077149, "loss": 5.027596592903137, "time": 0.2356168508529663,'
    ' "epoch": 1, "step": 10}',
    '{"lr": 0.001, "data_time": 0.007732248306274414, "loss": 2.66796715259552, "time": 0.032484245300292966,'
    ' "epoch": 1, "step": 20}',
    '{"lr": 0.001, "data_time": 0.007663464546203614, "loss": 2.699092149734497, "time": 0.03233048915863037,'
    ' "epoch": 1, "step": 30}',
    '{"lr": 0.001, "data_time": 0.007588768005371093, "loss": 2.6876137018203736, "time": 0.032196879386901855,'
    ' "epoch": 1, "step": 40}',
    '{"lr": 0.001, "data_time": 0.007547187805175781, "loss": 2.4950002908706663, "time": 0.032173895835876466,'
    ' "epoch": 1, "step": 50}',
    '{"lr": 0.001, "data_time": 0.0075434684753417965, "loss": 2.529031848907471, "time": 0.03212928771972656,'
    ' "epoch": 1, "step": 60}',
    '{"lr": 0.001, "data_time": 0.007540845870971679, "loss": 2.5454934000968934, "time": 0.03212835788726807,'
    ' "epoch": 1, "step": 70}',
    '{"lr": 0.001, "data_time": 0.007552504539489746, "loss": 2.627494549751282, "time": 0.03256125450134277,'
    ' "epoch": 1, "step": 80}',
]
# https://github.com/victorca25/traiNNer/issues/72: traiNNer's epoch-end lines (its train.py logs
# `End of epoch {} / {} \t Time Taken: {:.4f} sec`), seventeen steady epochs.
TRAINNER_EPOCHS = [
    f"22-12-06 08:{clock} - INFO: End of epoch {epoch} / 500000 \t Time Taken: {seconds} sec"
    for epoch, clock, seconds in [
        (52, "40:17.728", "5.0500"),
        (53, "40:22.805", "5.0766"),
        (54, "40:27.833", "5.0280"),
        (55, "40:32.881", "5.0482"),
        (56, "40:37.907", "5.0258"),
        (57, "40:42.958", "5.0508"),
        (58, "40:48.140", "5.1826"),
        (59, "40:53.405", "5.2650"),
        (60, "40:58.533", "5.1280"),
        (61, "41:03.814", "5.2806"),
        (62, "41:08.958", "5.1443"),
        (63, "41:14.064", "5.1060"),
        (64, "41:19.218", "5.1534"),
        (65, "41:24.318", "5.1004"),
        (66, "41:29.413", "5.0947"),
        (67, "41:34.539", "5.1265"),
        (68, "41:39.631", "5.0919"),
    ]
]


@pytest.mark.parametrize(
    ("line", "step", "seconds"),
    [(MMDET_JSON[0], 1800, 0.53712), (MMDET_JSON[1], 50, 2.48093), (MMENGINE_JSON[3], 40, 0.032196879386901855)],
)
def test_json_time_beside_data_time_is_the_pace(line: str, step: int, seconds: float) -> None:
    record = ProgressParser().parse(line, 1)
    assert record is not None and record.format == "json"
    assert (record.step, record.step_time) == (step, pytest.approx(seconds))
    assert verdict(line)[0] is None


def test_a_json_time_without_data_time_is_no_pace() -> None:
    # A structured logger's record whose `time` is when it was written (the epoch seconds of
    # python-json-logger's records): no data loading share beside it, so no pace.
    record = ProgressParser().parse('{"time": 1670315017.728, "step": 52, "loss": 0.41}', 1)
    assert record is not None and record.rate is None


def test_json_lines_of_another_mode_are_another_series() -> None:
    # MMCV's TextLoggerHook writes its validation windows with `"mode": "val"` (its `_dump_log`
    # writes the log dict as built in `log`: mode, epoch, iter, then the buffer's output).
    line = '{"mode": "val", "epoch": 2, "iter": 500, "lr": 0.00044, "data_time": 0.0031, "time": 0.1372}'
    record = ProgressParser().parse(line, 1)
    assert record is not None and record.format == "json-val"


@pytest.mark.parametrize(
    ("line", "epoch", "seconds"),
    [
        (TRAINNER_EPOCHS[0], 52, 5.05),
        # pytorch-CycleGAN-and-pix2pix's print, `'End of epoch %d / %d \t Time Taken: %d sec'`, as
        # a copy of its train.py in the code index prints it (id 37924884197)
        ("End of epoch 3 / 200 \t Time Taken: 88 sec", 3, 88.0),
    ],
)
def test_the_epoch_end_line_gives_the_epochs_seconds(line: str, epoch: int, seconds: float) -> None:
    record = ProgressParser().parse(line, 1)
    assert record is not None and record.step == epoch
    assert record.rate == pytest.approx(1 / seconds)
    assert verdict(line)[0] is None


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("https://github.com/open-mmlab/mmdetection/issues/6093", MMDET_JSON),
        ("https://github.com/open-mmlab/mmengine/issues/963", MMENGINE_JSON),
        ("https://github.com/victorca25/traiNNer/issues/72", TRAINNER_EPOCHS),
    ],
)
def test_healthy_excerpts_stay_healthy(source: str, lines: list[str]) -> None:
    assert diagnose("\n".join(lines)).symptom == "none", source


# --- generated runs in each shape ---------------------------------------------------------------


def mmcv_json(p: Printer) -> Iterator[Line]:
    """MMCV's `.log.json`: `iter` counts within the epoch; a validation object between epochs."""
    per_epoch = 500
    for step, seconds in p.intervals():
        epoch, done = 1 + (step - 1) // per_epoch, (step - 1) % per_epoch + 1
        yield (
            f'{{"mode": "train", "epoch": {epoch}, "iter": {done}, "lr": 0.02, "memory": 3946,'
            f' "data_time": {0.05 * seconds:.5f}, "loss": {p.loss(step):.5f}, "time": {seconds:.5f}}}',
            "\n",
            step,
        )
        if done == per_epoch:
            yield f'{{"mode": "val", "epoch": {epoch}, "iter": 625, "lr": 0.02, "bbox_mAP": 0.371}}', "\n", None


def mmengine_json(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield (
            f'{{"lr": 0.001, "data_time": {0.05 * seconds:.6f}, "loss": {p.loss(step):.6f}, "time": {seconds:.6f},'
            f' "epoch": {1 + step // 500}, "iter": {step}, "memory": 392, "step": {step}}}',
            "\n",
            step,
        )


def epoch_end(p: Printer) -> Iterator[Line]:
    """One line an epoch (each generated step stands for an epoch)."""
    for step, seconds in p.intervals():
        yield f"End of epoch {step} / 2000 \t Time Taken: {seconds * 60:.4f} sec", "\n", step


SHAPES = {
    "mmcv-json": (mmcv_json, 10, "seconds"),
    "mmengine-json": (mmengine_json, 10, "seconds"),
    "epoch-end": (epoch_end, 1, "steps"),
}


def _run(shape: str, seed: int, drop: float = 0.0, noise: float = 0.04) -> str:
    render, every, unit = SHAPES[shape]
    pace = make_pace(seed, drop=drop, noise=noise, slow_units=SUSTAIN, unit=unit, every=every)
    printer = Printer(pace, random.Random(seed + 1), every=every)
    return "".join(text + end for text, end, _ in _with_chatter(render(printer), printer.rnd))


def _diagnosis(text: str) -> tuple[str, str]:
    diagnoser = LogDiagnoser()
    diagnoser.feed(text.encode())
    diagnoser.finish()
    found = diagnoser.diagnosis()
    return found.symptom, found.explanation


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("seed", range(2))
def test_a_10_percent_drop_is_found_in_each_shape(shape: str, seed: int) -> None:
    symptom, explanation = _diagnosis(_run(shape, seed, drop=0.10, noise=0.03 + 0.01 * seed))
    assert symptom == "straggler", explanation


@pytest.mark.parametrize("shape", list(SHAPES))
def test_healthy_runs_in_each_shape_are_never_stragglers(shape: str) -> None:
    for seed in range(6):
        symptom, explanation = _diagnosis(_run(shape, 1000 + seed, noise=(0.03, 0.04, 0.05)[seed % 3]))
        assert symptom == "none", (seed, explanation)


# --- a straggler detector's own verdict -----------------------------------------------------------
# NVIDIA Resiliency Extension's StragglerDetectionCallback (nvidia_resiliency_ext/ptl_resiliency/
# straggler_det_callback.py) logs the ranks it finds slower as a set of its StragglerId dataclass
# (attribution/straggler/reporting.py), then, with stop_if_detected, `Detected stragglers.
# Terminating training...`, saves last.ckpt and exits with code 1; NVRx's functional tests check
# a run's log for exactly that sequence and the launcher's `failed (exitcode: 1)`. The lines below
# are rendered from those format strings, in NeMo's logger prefix and torchelastic's.
NVRX_STOP = [
    "Epoch 0: :  40%|████      | 400/1000 [10:00<15:00, reduced_train_loss=3.210, global_step=399.0,"
    " consumed_samples=102400.0, train_step_timing in s=1.50]",
    "[NeMo W 2024-10-01 12:00:00 nemo_logging:349] STRAGGLER DETECTION WARNING: Some GPUs have worse relative"
    " performance. Affected ranks: {StragglerId(rank=5, node='node-b2')}",
    "[NeMo E 2024-10-01 12:00:00 nemo_logging:349] Detected stragglers. Terminating training...",
    "[NeMo I 2024-10-01 12:00:30 nemo_logging:381] Async checkpoint save for step 400"
    " (/results/checkpoints/last.ckpt) finalized successfully.",
    "E1001 12:00:35.000000 140000000000000 torch/distributed/elastic/multiprocessing/api.py:833] failed"
    " (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python",
]


def test_the_detectors_stop_is_a_straggler_with_the_ranks_it_named() -> None:
    found = diagnose("\n".join(NVRX_STOP))
    assert (found.symptom, found.category, found.retryable) == ("straggler", "unknown", True)
    assert (found.implicated.ranks, found.implicated.nodes) == ([5], ["node-b2"])
    assert [e.signature for e in found.evidence] == ["straggler:named", "straggler:stop"]
    # without the stop the same exit is a worker that failed, cause unknown
    alone = diagnose("\n".join(line for line in NVRX_STOP if "Terminating" not in line))
    assert alone.symptom == "crash"


def test_ranks_whose_own_pace_dropped_are_named_too() -> None:
    named = (
        "[NeMo W 2024-10-01 12:00:00 nemo_logging:349] STRAGGLER DETECTION WARNING: Some GPUs performance dropped."
        " Affected ranks: {StragglerId(rank=3, node='gpu-node-07.cluster'), StragglerId(rank=11, node='gpu-node-09')}"
    )
    found = diagnose("\n".join([NVRX_STOP[0], named, NVRX_STOP[2]]))
    assert found.symptom == "straggler"
    assert (found.implicated.ranks, found.implicated.nodes) == ([3, 11], ["gpu-node-07", "gpu-node-09"])


def test_a_report_that_names_no_straggler_is_no_failure() -> None:
    # https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/2114: the periodic scores, nobody under
    # the threshold, and the run goes on.
    text = "\n".join(
        [
            "megatron.bridge.NVRxStragglerDetection: GPU relative performance:",
            "  Rank=0 Node=22ca9bdcfc9a Score=0.95",
            "  Rank=1 Node=22ca9bdcfc9a Score=1.00",
            "megatron.bridge.NVRxStragglerDetection: gpu_relative_perf scores: {'gpu_relative_perf/min':"
            " 0.9490914940834045, 'gpu_relative_perf/median': 0.9490914940834045, 'gpu_relative_perf/max':"
            " 0.9981126189231873}",
        ]
    )
    assert diagnose(text).symptom == "none"
