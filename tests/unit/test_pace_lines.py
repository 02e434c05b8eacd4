"""Real progress lines that show a run's pace in the trainer's own unit, and real excerpts.

Each line is quoted from a public source (named above it: an issue thread, or a public file in
the code index by its id, with the framework file that prints the format). A careful operator
reads every one as a healthy step line that says how fast the run goes: it must be read as
progress with a rate (so the straggler detector can judge the series), and never as a failure.
"""

from __future__ import annotations

import pytest

from recovery.activities.progress import ProgressParser
from tests.unit.real_lines import diagnose, verdict

# (source, line)
PACE_LINES: list[tuple[str, str]] = [
    # MMEngine (mmengine/runner/log_processor.py), public README (code index id 3469427149)
    (
        "mmengine",
        "2022/08/22 15:51:56 - mmengine - INFO - Epoch(train) [1][20/1563]  lr: 1.0000e-03  eta: 0:11:29"
        "  time: 0.0354  data_time: 0.0077  memory: 392  loss: 2.7734",
    ),
    # MMEngine, a public docs page (code index id 22119322055): the last iteration of an epoch
    (
        "mmengine",
        "12/13 08:03:57 - mmengine - INFO - Epoch(train) [100][60/60]  base_lr: 3.2500e-05 lr: 3.2500e-05"
        "  eta: 0:00:00  time: 0.0855  data_time: 0.0015  memory: 625  loss: 0.7791  loss_cls: 0.4587"
        "  loss_bbox: 0.3204",
    ),
    # MMEngine validation loop (code index id 1232026023)
    (
        "mmengine",
        "08/26 14:29:05 - mmengine - INFO - Epoch(val)  [2][  50/1843]    eta: 0:01:45  time: 0.0588"
        "  data_time: 0.0022  memory: 4022  ",
    ),
    # MMEngine iteration-based loop, quoted without its prefix (code index id 11241698358)
    ("mmengine", "            [   100/160000] eta: 1 day, 2:16:24  time: 0.5474  data_time: 0.0084"),
    # MMCV 1.x TextLoggerHook (mmcv/runner/hooks/logger/text.py), tests/corpus-independent public
    # README line of mmdetection 2.x training
    (
        "mmcv",
        "2020-05-08 18:44:53,197 - mmdet - INFO - Epoch [1][1250/7517]\tlr: 0.00125, eta: 4:43:39, time: 0.594,"
        " data_time: 0.031, memory: 6836, loss_rpn_cls: 0.1082, loss_rpn_bbox: 0.0504, loss_cls: 0.2261,"
        " acc: 93.0137, loss_bbox: 0.1602, loss: 0.5449",
    ),
    # Detectron2 CommonMetricPrinter (detectron2/utils/events.py), public README (code index id 2461939383)
    (
        "detectron2",
        "[11/14 20:41:39 d2.utils.events]:  eta: 0:01:51  iter: 19  total_loss: 1.589  loss_cls: 1.439"
        "  loss_box_reg: 0.1429  loss_rpn_cls: 0.004999 loss_rpn_loc: 0.004084  time: 0.1136  data_time: 0.0048"
        "  lr: 4.9953e-06  max_mem: 2030M",
    ),
    (
        "detectron2",
        "[11/14 20:41:49 d2.utils.events]:  eta: 0:01:43  iter: 99  total_loss: 0.7066  loss_cls: 0.5575"
        "  loss_box_reg: 0.1449  loss_rpn_cls: 0.003264  loss_rpn_loc: 0.004681  time: 0.1136  data_time: 0.0018"
        "  lr: 2.4975e-05  max_mem: 2030M",
    ),
    # YOLOX trainer (yolox/core/trainer.py), public notes (code index id 1368123393)
    (
        "yolox",
        "2022-08-07 20:23:28 | INFO     | yolox.core.trainer:261 - epoch: 1/300, iter: 10/14786, mem: 584Mb,"
        " iter_time: 0.224s, data_time: 0.002s, total_loss: 14.6, iou_loss: 4.6, l1_loss: 0.0, conf_loss: 7.8,"
        " cls_loss: 2.1, lr: 2.287e-11, size: 416, ETA: 11 days, 11:38:15",
    ),
    # TF1 cifar10_train.py's line (tensorflow/models tutorials/image/cifar10)
    ("tf1", "2020-06-11 04:29:57.313210: step 8910, loss = 0.86 (8468.2 examples/sec; 0.015 sec/batch)"),
    # TF-slim learning.py's train_step log, public log (code index id 46222264368)
    ("tf-slim", "INFO:tensorflow:global step 1: loss = 18.2354 (21.366 sec/step)"),
    # TF Estimator StepCounterHook / LoggingTensorHook (tensorflow_estimator basic_session_run_hooks),
    # public README (code index id 12100416140)
    ("tf-estimator", "INFO:tensorflow:global_step/sec: 11.4237"),
    ("tf-estimator", "INFO:tensorflow:loss = 0.35228056, step = 40 (0.875 sec)"),
    # TPUEstimator (tpu_estimator.py), public script comment (code index id 26424452000)
    ("tpu-estimator", "I0319 15:02:38.951204 46912496437696 tpu_estimator.py:2307] global_step/sec: 2.15557"),
    ("tpu-estimator", "INFO:tensorflow:examples/sec: 68.9783"),
    # Keras 2 progress bar at an epoch's end: https://github.com/tensorflow/tensorflow/issues/40042
    ("keras", "1875/1875 [==============================] - 3s 2ms/step - loss: 0.0668 - accuracy: 0.9785"),
    # https://github.com/tensorflow/tensorflow/issues/60425
    (
        "keras",
        "732/732 [==============================] - 252s 345ms/step - loss: 3.0003 - accuracy: 0.2320"
        " - val_loss: 3.0518 - val_accuracy: 0.2332",
    ),
    # https://github.com/keras-team/keras/issues/13710 (seconds per step)
    ("keras", "1/1 [==============================] - 233s 233s/step - loss: 0.1518"),
    # Keras 3's bar (keras/src/utils/progbar.py), public notes (code index id 9350264241)
    (
        "keras3",
        "1875/1875 ━━━━━━━━━━━━━━━━━━━━ 86s 46ms/step - loss: 0.1261 - mae: 0.2761 - rmse: 0.3551"
        " - val_loss: 1.4836 - val_mae: 1.0078 - val_rmse: 1.2180 - learning_rate: 5.0000e-04",
    ),
    # PaddleClas-style dygraph loop, public README (code index id 18000894553)
    (
        "paddle",
        "[Epoch 1, iter: 4780] top1: 0.10312, top5: 0.27344, lr: 0.01000, loss: 5.34719, avg_reader_cost: 0.03644"
        " sec, avg_batch_cost: 0.05536 sec, avg_samples: 64.0, avg_ips: 1156.08863 images/sec.",
    ),
    # PaddleDetection LogPrinter (ppdet/engine/callbacks.py)
    (
        "paddledet",
        "[05/24 10:00:00] ppdet.engine INFO: Epoch: [0] [  20/1000] learning_rate: 0.000100 loss: 2.3"
        " eta: 1:02:03 batch_cost: 0.4953 data_cost: 0.0005 ips: 16.1525 images/s",
    ),
    # PaddleOCR train loop (tools/program.py)
    (
        "paddleocr",
        "[2021/05/24 10:00:00] ppocr INFO: epoch: [1/500], global_step: 10, lr: 0.001000, loss: 1.2,"
        " avg_reader_cost: 0.05000 s, avg_batch_cost: 0.20000 s, avg_samples: 8.0, ips: 40.00000 samples/s,"
        " eta: 1:00:00",
    ),
    # fairseq train_inner, old simple format: https://github.com/facebookresearch/fairseq/issues/2424
    (
        "fairseq",
        "| epoch 001:    100 / 12603 loss=14.481, nll_loss=14.336, ppl=20679.11, wps=9357, ups=0,"
        " wpb=82837.531, bsz=4065.306, num_updates=98, lr=1.23476e-05, gnorm=2.761, clip=0.000, oom=0.000,"
        " loss_scale=16.000, wall=868, train_wall=101",
    ),
    # fairseq train_inner (fairseq_cli/train.py, logging/progress_bar.py JsonProgressBar's simple form)
    (
        "fairseq",
        "2021-01-01 10:00:00 | INFO | train_inner | epoch 001:    100 / 1557 loss=12.2, nll_loss=12.0,"
        " ppl=4096, wps=39071.3, ups=1.19, wpb=32768, bsz=64, num_updates=100, lr=1.25e-05, gnorm=2.1,"
        " train_wall=84, wall=88",
    ),
    # DeepSpeed ThroughputTimer (deepspeed/utils/timer.py)
    (
        "deepspeed",
        "[2023-01-01 10:00:00,000] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10,"
        " RunningAvgSamplesPerSec=25.8, CurrSamplesPerSec=26.1, MemAllocated=1.2GB, MaxMemAllocated=3.4GB",
    ),
    # The PyTorch ImageNet example's AverageMeter line, as deepspeech.pytorch prints it:
    # https://github.com/SeanNaren/deepspeech.pytorch/issues/127
    ("imagenet-example", "Epoch: [11][1/48]\tTime 0.470 (1.206)\tData 0.076 (0.004)\tLoss 3.2168 (37.0903)\t"),
    # https://github.com/facebookresearch/mmf/issues/27 (seconds per 100 iterations)
    (
        "mmf",
        "iter: 100 train_loss: 3.6883  train_score: 0.2910  avg_train_score: 0.1358 val_score: 0.2867"
        " val_loss: 3.3840 time(s): 307.7 s",
    ),
]


@pytest.mark.parametrize(("source", "line"), PACE_LINES)
def test_pace_lines_are_read_with_their_rate(source: str, line: str) -> None:
    record = ProgressParser().parse(line)
    assert record is not None and record.rate is not None, source
    assert verdict(line)[0] is None, source  # a step line is never a failure


def test_a_running_mean_or_data_time_is_not_the_pace() -> None:
    parser = ProgressParser()
    # Detectron2's `data_time` and the ImageNet example's running mean in parentheses are not
    # the step's time: the step time is read from `time:` / the first number.
    d2 = parser.parse(PACE_LINES[5][1])
    assert d2 is not None and d2.step_time == pytest.approx(0.1136)
    meter = parser.parse(PACE_LINES[-2][1])
    assert meter is not None and meter.step_time == pytest.approx(0.470)
    yolox = parser.parse(PACE_LINES[7][1])
    assert yolox is not None and yolox.step_time == pytest.approx(0.224)


# An epoch's duration, printed once an epoch by hand-written loops: (source, line, seconds).
# The first three are rendered from the print calls of public files in the code index.
EPOCH_LINES: list[tuple[str, str, float]] = [
    # print(f'Epoch: {epoch+1:02} | Epoch Time: {epoch_mins}m {epoch_secs}s'), a sentiment-analysis
    # tutorial's loop copied into many scripts (code index id 1494871760)
    ("code index 1494871760", "Epoch: 01 | Epoch Time: 1m 7s", 67.0),
    # print(f'Epoch time: {timedelta(seconds=epoch_time)}') (code index id 71346109173)
    ("code index 71346109173", "Epoch time: 0:01:23.456789", 83.456789),
    # print(f"Time per epoch: {(time.time() - start):.3f} seconds") (code index id 142533427)
    ("code index 142533427", "Time per epoch: 12.345 seconds", 12.345),
    # https://github.com/tensorflow/tensorflow/issues/198, a TF1 script's own print
    ("https://github.com/tensorflow/tensorflow/issues/198", "time this epoch= 1.749361", 1.749361),
]


@pytest.mark.parametrize(("source", "line", "seconds"), EPOCH_LINES)
def test_an_epochs_duration_is_its_pace(source: str, line: str, seconds: float) -> None:
    record = ProgressParser().parse(line)
    assert record is not None and record.rate == pytest.approx(1 / seconds), source
    assert verdict(line)[0] is None, source


@pytest.mark.parametrize(
    "line",
    [
        # An Arduino sketch's clock: Serial.print("Epoch Time: "); Serial.println(time(&now));
        # (code index id 12163395543): a Unix timestamp, not a duration
        "Epoch Time: 1733140800",
        # vLLM's periodic engine stats: a server's load, not a training pace (no step counter)
        "INFO 07-01 10:00:00 metrics.py:341] Avg prompt throughput: 0.0 tokens/s, Avg generation"
        " throughput: 12.3 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs",
        # torchelastic's error summary field (torch/distributed/elastic/multiprocessing/errors)
        "  time      : 2023-01-01_10:00:00",
        # a benchmark's summary, not a step
        "Elapsed time: 3.2s",
    ],
)
def test_lines_with_a_time_but_no_training_pace_are_not_progress(line: str) -> None:
    record = ProgressParser().parse(line)
    assert record is None or record.rate is None


# Excerpts from real threads whose pace varies for benign reasons: the run is healthy.
HEALTHY_EXCERPTS: list[tuple[str, str]] = [
    # Keras: epochs get faster as the input pipeline warms (https://github.com/tensorflow/tensorflow/issues/60425)
    (
        "https://github.com/tensorflow/tensorflow/issues/60425",
        "Epoch 13/1000\n"
        "732/732 [==============================] - 252s 345ms/step - loss: 3.0003 - accuracy: 0.2320"
        " - val_loss: 3.0518 - val_accuracy: 0.2332\n"
        "Epoch 14/1000\n"
        "732/732 [==============================] - 233s 319ms/step - loss: 2.9963 - accuracy: 0.2321"
        " - val_loss: 3.0488 - val_accuracy: 0.2315\n"
        "Epoch 15/1000\n"
        "732/732 [==============================] - 217s 296ms/step - loss: 2.9926 - accuracy: 0.2326"
        " - val_loss: 3.0515 - val_accuracy: 0.2329\n",
    ),
    # fairseq's words per second climbing while its meters warm up
    # (https://github.com/facebookresearch/fairseq/issues/2424)
    (
        "https://github.com/facebookresearch/fairseq/issues/2424",
        "| epoch 001:    100 / 12603 loss=14.481, nll_loss=14.336, ppl=20679.11, wps=9357, ups=0,"
        " wpb=82837.531, bsz=4065.306, num_updates=98, lr=1.23476e-05, gnorm=2.761, clip=0.000, oom=0.000,"
        " loss_scale=16.000, wall=868, train_wall=101\n"
        "| epoch 001:    200 / 12603 loss=13.597, nll_loss=13.348, ppl=10423.42, wps=17272, ups=0,"
        " wpb=82946.934, bsz=4023.030, num_updates=198, lr=2.48451e-05, gnorm=1.896, clip=0.000, oom=0.000,"
        " loss_scale=16.000, wall=951, train_wall=182\n"
        "| epoch 001:    300 / 12603 loss=13.048, nll_loss=12.715, ppl=6722.88, wps=23921, ups=0,"
        " wpb=83024.534, bsz=4012.050, num_updates=298, lr=3.73426e-05, gnorm=1.604, clip=0.000, oom=0.000,"
        " loss_scale=16.000, wall=1034, train_wall=263\n",
    ),
    # Detectron2's first iterations at a steady pace (code index id 2461939383)
    ("detectron2 README", "\n".join(line for source, line in PACE_LINES if source == "detectron2")),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY_EXCERPTS)
def test_healthy_excerpts_with_varying_pace_stay_healthy(source: str, text: str) -> None:
    assert diagnose(text).symptom == "none", source


# https://github.com/tensorflow/tensorflow/issues/198: fifteen epochs whose time grows from
# 1.75 s to about 2.6 s and stays there, quoted as the thread shows them.
TF_198 = [
    "Epoch: 0001 cost= 29.860479714",
    "time this epoch= 1.749361",
    "Epoch: 0002 cost= 22.108508758",
    "time this epoch= 1.873362",
    "Epoch: 0003 cost= 21.061937475",
    "time this epoch= 2.053877",
    "Epoch: 0004 cost= 20.553687506",
    "time this epoch= 2.401098",
    "Epoch: 0005 cost= 20.262585952",
    "time this epoch= 2.563413",
    "Epoch: 0006 cost= 19.878952036",
    "time this epoch= 2.675142",
    "Epoch: 0007 cost= 19.573502880",
    "time this epoch= 2.638027",
    "Epoch: 0008 cost= 19.433302383",
    "time this epoch= 2.632813",
    "Epoch: 0009 cost= 19.428594169",
    "time this epoch= 2.616152",
    "Epoch: 0010 cost= 19.276754012",
    "time this epoch= 2.553015",
    "Epoch: 0011 cost= 19.082279745",
    "time this epoch= 2.571626",
    "Epoch: 0012 cost= 19.017995413",
    "time this epoch= 2.657914",
    "Epoch: 0013 cost= 18.981637795",
    "time this epoch= 2.684047",
    "Epoch: 0014 cost= 18.957392608",
    "time this epoch= 2.626817",
    "Epoch: 0015 cost= 18.679365802",
    "time this epoch= 2.629546",
]


def test_a_finished_logs_few_epochs_that_slow_down_are_a_straggler() -> None:
    text = "\n".join(TF_198)
    found = diagnose(text)
    assert found.symptom == "straggler" and found.category == "unknown" and found.retryable
    assert found.evidence[0].text == "time this epoch= 2.563413"  # the first epoch of the slower pace
    # A live log's slowdowns are the watch's to judge, with evidence over time: not this one's.
    assert diagnose(text, whole=False).symptom == "none"
