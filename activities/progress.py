"""Training progress read from log lines: which step, how fast, whether a checkpoint is saving.

One structured line works from any script with no import (see `docs/signatures.md`):

    recovery-progress step=120 total=5000 rank=0 throughput=812.5 step_time=0.41 loss=2.31

`step` is required; `total`, `rank`, `throughput` (samples/s or tokens/s: one unit per run),
`step_time` (seconds), `compute_time` (seconds of the rank's own work, without waiting in
collectives), `loss`, `epoch` and `checkpoint=saving|saved` are optional, in any order,
and unknown keys are ignored. `recovery.report_progress` prints it for you.

Common formats are understood too: Megatron-LM and NeMo iteration lines, PyTorch Lightning and
tqdm progress bars, Hugging Face Trainer log dicts, torchtitan, JSON lines, `step=N ...`
key/value lines, and hand-written loops' `step N/M ... loss X` or `iter N: loss X, time T ms`
(nanoGPT, llm.c); lines that give the pace in a trainer's own unit (MMEngine, Detectron2,
Keras, TF1/Estimator, PaddlePaddle, fairseq, DeepSpeed, YOLOX: see `_TIMINGS`); hand-written
loops' epoch durations (`Epoch Time: 0m 7s`: see `_EPOCH_DURATION`); and user patterns (RE2
syntax) with named groups among `FIELDS`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from recovery.activities.signatures import dialect

FIELDS = frozenset({"step", "total", "rank", "loss", "throughput", "step_time", "compute_time", "checkpoint", "epoch"})
MAX_TEXT = 4096  # progress lines are short; a longer line is cut before parsing


@dataclass(frozen=True, slots=True)
class ProgressRecord:
    step: int | None = None
    total: int | None = None
    rank: int | None = None
    loss: float | None = None
    throughput: float | None = None  # higher is faster, in the run's own unit
    step_time: float | None = None  # seconds per step
    # This rank's own work in the step, without waiting for the others in collectives: in
    # synchronous training every rank's step takes as long as the slowest one's, so only this
    # tells the slow rank apart.
    compute_time: float | None = None
    checkpoint: str | None = None  # "saving" or "saved"
    epoch: float | None = None
    format: str = ""
    line: int | None = None
    text: str = ""

    @property
    def rate(self) -> float | None:
        """How fast the run goes (higher is faster): throughput, else steps per second."""
        if self.throughput is not None and self.throughput > 0:
            return self.throughput
        if self.step_time is not None and self.step_time > 0:
            return 1.0 / self.step_time
        return None


# Gates: patterns (in the scanner's dialect) that a line of each format always matches. The
# scanner finds candidate lines with them; `ProgressParser.parse` then reads the fields.
GATES: dict[str, str] = {
    "structured": r"recovery-progress\s",
    "json": r'"(?:step|global_step|iteration|iter|train/global_step)"\s*:\s*\d',
    "hf": r"\{'(?:loss|train_loss|eval_loss|train_runtime|learning_rate|grad_norm|epoch)': ",
    "megatron": r"iteration\s+\d+\s*/\s*\d+\s*\|",
    "torchtitan": r"step:\s*\d+\s+(?:\x1b\[[0-9;]*m)?loss:",
    "tqdm": r"\d+/\d+ \[[0-9:]+<[0-9:?]+",
    "kv": r"(?i)(?:global_step|step|iteration|iter)\s*[=:]\s*\d",
    # `iteration` is left to Megatron's gate: a second gate on its lines doubled their cost.
    "loop": r"(?i)(?:^|[^\w])(?:step|iter|batch)\s+\d+(?:\s*/\s*\d+)?[^\n]*loss",
    # A line that says how fast the run goes in a unit of its own (see `_timing`): MMEngine's and
    # Detectron2's `time: 0.59`, Keras's `45ms/step`, TF's `sec/batch`, `examples/sec` and
    # `global_step/sec:`, Paddle's `batch_cost:`/`ips:`, fairseq's `ups=`, DeepSpeed's
    # `SamplesPerSec=`, YOLOX's `iter_time:`.
    "pace": (
        r"(?i)(?:(?:^|[^\w])(?:iter_time|batch_cost|batch_time|time)\s*[:=]\s*\d"
        r"|\d\s*(?:ms|us|s|sec)/(?:step|it|iter|batch)\b"
        r"|\d\s*(?:examples|samples|images|imgs|sequences|seqs|tokens|ins|instances)/s"
        r"|[^\w]ups=\d|samplespersec=\d|global_step/sec:\s*\d|examples/sec:\s*\d|[^\w]ips:\s*\d"
        r"|[^\w]Time\s+\d[\d.]*\s*\(\s*\d|[^\w]time\(s\):\s*\d"
        r"|time (?:this|per|of|for) (?:the )?epoch\s*[:=]|end of epoch \d+ / \d+\s+time taken:\s*\d)"
    ),
}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# A value ends at a separator: `0.224s` is a number with a unit (read by `_timing`), not `0.`.
_PAIR = re.compile(r"([A-Za-z_][\w/.-]{0,40})\s*[=:]\s*(" + _NUM + r"|nan|inf|saving|saved)(?![\w.])")
_GATES = {name: re.compile(pattern) for name, pattern in GATES.items()}

_LOSS_KEYS = ("loss", "train_loss", "lm_loss", "train/loss", "reduced_train_loss", "lm loss")
_THROUGHPUT_KEYS = (
    "throughput",
    "samples_per_second",
    "samples_per_sec",
    "samples/s",
    "tokens_per_second",
    "tokens_per_sec",
    "tokens/s",
    "tok/s",
    "tps",
    "it/s",
)
_STEP_TIME_KEYS = ("step_time", "time_per_step", "iter_time", "step_time_s", "train_step_timing in s")
_STEP_KEYS = ("step", "global_step", "iteration", "iter", "train/global_step")


def _int(value: Any) -> int | None:
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def _float(value: Any) -> float | None:
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _first(fields: Mapping[str, Any], keys: Sequence[str], convert: Callable[[Any], Any]) -> Any:
    for key in keys:
        if key in fields and (value := convert(fields[key])) is not None:
            return value
    return None


def _record(fields: Mapping[str, Any], fmt: str) -> ProgressRecord:
    """A record from loosely named fields (the keys of key/value lines and JSON objects)."""
    checkpoint = fields.get("checkpoint")
    return ProgressRecord(
        step=_first(fields, _STEP_KEYS, _int),
        total=_first(fields, ("total", "total_steps", "max_steps", "train_iters"), _int),
        rank=_first(fields, ("rank", "global_rank"), _int),
        loss=_first(fields, _LOSS_KEYS, _float),
        throughput=_first(fields, _THROUGHPUT_KEYS, _float),
        step_time=_first(fields, _STEP_TIME_KEYS, _float),
        compute_time=_first(fields, ("compute_time",), _float),
        checkpoint=checkpoint if checkpoint in ("saving", "saved") else None,
        epoch=_first(fields, ("epoch",), _float),
        format=fmt,
    )


def _pairs(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in _PAIR.finditer(text)}


def _structured(text: str) -> ProgressRecord | None:
    _, _, rest = text.partition("recovery-progress")
    fields = dict(token.split("=", 1) for token in rest.split() if "=" in token)
    record = _record(fields, "structured")
    return record if _int(fields.get("step")) is not None else None


def _json(text: str) -> ProgressRecord | None:
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fields = {str(k).lower(): v for k, v in data.items()}
    record = _record(fields, "json")
    if record.step is None:
        return None
    # MMCV's TextLoggerHook (its `<timestamp>.log.json`) and MMEngine's LoggerHook (`scalars.json`)
    # write each logging window as a JSON object whose `time` is the window's mean seconds per
    # iteration, loading included, beside `data_time`, the loading's share: `time` beside a
    # `data_time` is the pace, not a clock. Their lines of another `mode` (`val`) are another series.
    seconds = _float(fields.get("time")) if _float(fields.get("data_time")) is not None else None
    if record.rate is None and seconds is not None and seconds > 0:
        record = replace(record, step_time=seconds)
    mode = str(fields.get("mode") or "").lower()
    return record if mode in ("", "train") else replace(record, format=f"json-{mode}")


def _hf(text: str) -> ProgressRecord | None:
    fields = {m.group(1).lower(): m.group(2) for m in re.finditer(r"'(\w+)': (" + _NUM + ")", text)}
    if "loss" not in fields and "train_loss" not in fields:
        return None  # an evaluation or summary dict, not a training step
    return _record(fields, "hf")


_MEGATRON = re.compile(r"iteration\s+(\d+)\s*/\s*(\d+)")
# The few Megatron/NeMo fields used, each found directly: cheaper than splitting the whole line.
_MEGATRON_FIELDS = {
    "step_ms": re.compile(r"elapsed time per iteration \(ms\):\s*(" + _NUM + ")"),
    "step_s": re.compile(r"train_step_timing in s:\s*(" + _NUM + ")"),
    "batch": re.compile(r"global[ _]batch[ _]size:\s*(\d+)"),
    "loss": re.compile(r"loss:\s*(" + _NUM + ")"),  # `lm loss:` or `reduced_train_loss:`
    "global_step": re.compile(r"global_step:\s*(\d+)"),
}
_NEMO_EPOCH = re.compile(r"[Tt]raining epoch (\d+)")


def _megatron(text: str) -> ProgressRecord | None:
    m = _MEGATRON.search(text)
    if m is None:
        return None
    fields = {name: f.group(1) for name, rx in _MEGATRON_FIELDS.items() if (f := rx.search(text))}
    epoch = _NEMO_EPOCH.search(text) if "epoch" in text else None
    step_ms = _float(fields.get("step_ms"))
    step_time = step_ms / 1000 if step_ms else _float(fields.get("step_s"))
    batch = _float(fields.get("batch"))
    return ProgressRecord(
        step=_int(fields.get("global_step", m.group(1))),
        total=_int(m.group(2)),
        loss=_float(fields.get("loss")),
        throughput=batch / step_time if batch and step_time else None,
        step_time=step_time,
        epoch=_float(epoch.group(1)) if epoch else None,
        format="megatron",
    )


def _torchtitan(text: str) -> ProgressRecord | None:
    fields = _pairs(text)
    tps = re.search(r"\btps:\s*(\d[\d,]*)", text)  # printed with thousands separators
    if tps is not None:
        fields["tps"] = tps.group(1)
    return _record(fields, "torchtitan") if "step" in fields else None


_TQDM = re.compile(
    r"(?:Epoch (\d+):\s*)?(?:\d+%\|[^|]{0,200}\|\s*)?(\d+)/(\d+) \[[0-9:]+<[0-9:?]+"
    r"(?:,\s*(" + _NUM + r")(it/s|s/it))?"
)


def _tqdm(text: str) -> ProgressRecord | None:
    m = _TQDM.search(text)
    if m is None:
        return None
    epoch, done, total = m.group(1), int(m.group(2)), int(m.group(3))
    rate, unit = _float(m.group(4)), m.group(5)
    fields = _pairs(text[m.end() :])
    step = done + int(epoch) * total if epoch is not None else done
    per_step = (rate if unit == "s/it" else 1 / rate) if rate else None
    return ProgressRecord(
        step=_int(fields["global_step"]) if "global_step" in fields else step,
        total=total if epoch is None else None,
        loss=_first(fields, _LOSS_KEYS, _float),
        throughput=1 / per_step if per_step else None,
        step_time=_first(fields, _STEP_TIME_KEYS, _float) or per_step,
        epoch=_float(epoch),
        format="lightning" if epoch is not None else "tqdm",
    )


# A step may be printed with thousands separators: BasicSR's MessageLogger (basicsr/utils/logger.py,
# used by Real-ESRGAN, GFPGAN, SwinIR, ...) formats `iter:{current_iter:8,d}`, `iter:  20,100`.
_KV_STEP = re.compile(
    r"(?i)\b(?:global_step|step|iteration|iter)\s*[=:]\s*(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\s*/\s*(\d+))?"
)


def _kv(text: str) -> ProgressRecord | None:
    m = _KV_STEP.search(text)
    if m is None:
        return None
    record = _record(_pairs(text), "kv")
    return replace(record, step=int(m.group(1).replace(",", "")), total=record.total or _int(m.group(2)))


# A training loop's own print: `iter 100: loss 4.12, time 123.45ms` (nanoGPT), `step 1/74 |
# train loss 10.98 | ... (1234.56 ms | 12345 tok/s)` (llm.c), `TRAIN Batch 100/7507 loss 232.58
# ...` (WeNet's executor, wenet/utils/executor.py). A loss on the line is required: "step 2 of
# the setup" is no progress.
_LOOP_STEP = re.compile(r"(?i)(?:^|[^\w])(?:step|iter|batch)\s+(\d+)(?:\s*/\s*(\d+))?")
_LOOP_LOSS = re.compile(r"(?i)loss\s*[:=]?\s*(" + _NUM + ")")
_LOOP_MS = re.compile(r"(" + _NUM + r")\s*ms\b")
_LOOP_S = re.compile(r"(" + _NUM + r")\s*s/(?:step|it)\b")
_LOOP_TOKENS = re.compile(r"(" + _NUM + r")\s*(?:tok/s|tokens/s|samples/s)")


def _loop(text: str) -> ProgressRecord | None:
    m = _LOOP_STEP.search(text)
    loss = _LOOP_LOSS.search(text, m.end()) if m is not None else None
    if m is None or loss is None:
        return None
    ms, seconds, rate = (rx.search(text, m.end()) for rx in (_LOOP_MS, _LOOP_S, _LOOP_TOKENS))
    step_ms = _float(ms.group(1)) if ms else None
    step_time = step_ms / 1000 if step_ms is not None else (_float(seconds.group(1)) if seconds else None)
    return ProgressRecord(
        step=int(m.group(1)),
        total=_int(m.group(2)) if m.group(2) else None,
        loss=_float(loss.group(1)),
        throughput=_float(rate.group(1)) if rate else None,
        step_time=step_time,
        format="loop",
    )


# --- how fast, in the units trainers print ------------------------------------------------------
# Each reading is (kind, value): "step_time" seconds per step; "steps/s"; a throughput in the
# run's own unit; "interval" seconds since the previous line (several steps at once, e.g. TF's
# `step = 30 (0.877 sec)` every 100 steps, NiftyNet's `(3.15s)` every iteration). A line's
# readings are searched in this order, the first found wins: a per-step time or a step rate is
# the cleanest measure; a throughput's unit (words, images) may vary with the batch.
_UNIT = r"\s*(?P<unit>ms|us|s|sec|secs|seconds)?"
_TIMINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Keras `45ms/step`, TF slim `(21.366 sec/step)`, TF1 `0.015 sec/batch`, tqdm-like `1.2 s/it`.
    ("step_time", re.compile(r"(?P<value>" + _NUM + r")\s*(?P<unit>ms|us|s|sec)/(?:step|it|iter|batch)\b")),
    # MMEngine/MMCV and Detectron2 `time: 0.593` (seconds per iteration over the logging window),
    # YOLOX `iter_time: 0.224s`, Paddle `batch_cost: 0.4953` / `avg_batch_cost: 0.05536 sec`.
    # `data_time`, `train_wall` and `eta` are other keys: the key must stand alone.
    (
        "step_time",
        re.compile(
            r"(?i)(?:^|[\s,|(\[])(?:iter_time|avg_batch_cost|batch_cost|batch_time|time(?:\(s\))?)\s*[:=]\s*(?P<value>"
            + _NUM
            + r")"
            + _UNIT
            + r"(?![\w.:/-])"
        ),
    ),
    # BasicSR's MessageLogger `time (data): 0.365 (0.002)`: seconds per iteration, then the data
    # loading's share of it.
    ("step_time", re.compile(r"(?:^|[\s,\[])time \(data\):\s*(?P<value>" + _NUM + r")\s*\(")),
    # The PyTorch ImageNet example's AverageMeter, copied by many trainers: `Time 0.470 (1.206)`,
    # this batch's seconds and (in parentheses) the running mean; the first is the pace now.
    ("step_time", re.compile(r"(?:^|[^\w])Time\s+(?P<value>" + _NUM + r")\s*\(\s*" + _NUM + r"\s*\)")),
    # fairseq `ups=1.19` (updates per second), TF Estimator `global_step/sec: 5.3`.
    ("steps/s", re.compile(r"(?i)(?:[^\w]ups=|global_step/sec:\s*)(?P<value>" + _NUM + r")(?![\w.])")),
    # DeepSpeed's ThroughputTimer: the current rate, not the running average (which lags).
    ("throughput", re.compile(r"(?i)CurrSamplesPerSec=(?P<value>" + _NUM + r")")),
    # `8468.2 examples/sec`, Paddle `ips: 16.15 images/s`, `1156.1 images/sec`, fairseq `wps=`.
    (
        "throughput",
        re.compile(
            r"(?i)(?P<value>" + _NUM + r")\s*(?:examples|samples|images|imgs|sequences|seqs|tokens|ins|instances)"
            r"/s(?:ec)?\b"
        ),
    ),
    ("throughput", re.compile(r"(?i)(?:examples/sec:|[^\w]wps=|SamplesPerSec=)\s*(?P<value>" + _NUM + r")(?![\w.])")),
    # PyTorch/XLA's training update (torch_xla test_utils.print_training_update, copied by its
    # examples): `Rate=1760.91` examples/s for the current batch; `GlobalRate=` is the average
    # since training began, which lags.
    ("throughput", re.compile(r"(?:^|\s)Rate=(?P<value>" + _NUM + r") GlobalRate=" + _NUM)),
    # A duration in parentheses after the step: the time since the previous line.
    ("interval", re.compile(r"\(\s*(?P<value>" + _NUM + r")\s*(?P<unit>s|sec|secs|seconds)\s*\)")),
)
_SECONDS = {None: 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "ms": 1e-3, "us": 1e-6}
# Readings that say how fast the run goes even on a line with no step counter: TF Estimator's
# `global_step/sec:` and TPUEstimator's `examples/sec:` lines, DeepSpeed's timer. A bare
# `tokens/s` (an inference server's load) or `time: 3` on its own is no training pace.
# An epoch's duration, printed by a hand-written loop once an epoch: `Epoch Time: 0m 7s` (a
# tutorial's format, copied into many scripts), `Epoch time: 0:01:23.4` (a timedelta), `Time
# per epoch: 12.3 seconds`, `Epoch time:  12.3`, TF1 scripts' `time this epoch= 1.75`. One
# line is one epoch; the unit may be minutes, which only scales the series. An "epoch time"
# beyond a month is a Unix timestamp, not a duration. pytorch-CycleGAN-and-pix2pix's train.py ends
# each epoch with `End of epoch 52 / 200 \t Time Taken: 88 sec`, and the GAN and super-resolution
# trainers built from it keep the line (traiNNer's train.py: `Time Taken: 5.0500 sec`, an epoch's
# seconds from its epoch timer).
_EPOCH_DURATION = re.compile(
    r"(?i)(?:epoch[ _]time|time (?:this|per|of|for) (?:the )?epoch|end of epoch \d+ / \d+\s+time taken)\s*[:=]\s*"
    r"(?:(?P<h>\d+):(?P<m>[0-5]\d):(?P<s>\d+(?:\.\d+)?)|(?P<min>\d+)m\s*(?P<sec>\d+(?:\.\d+)?)s?"
    r"|(?P<value>" + _NUM + r")" + _UNIT + r")(?![\w.:])"
)
MAX_EPOCH_SECONDS = 30 * 86400
_ALONE = re.compile(
    r"(?i)global_step/sec:|examples/sec|SamplesPerSec=|sec/batch|[^\w]ups=|epoch[ _]time\s*[:=]"
    r"|time (?:this|per|of|for) (?:the )?epoch\s*[:=]|end of epoch \d+ / \d+\s+time taken:"
)


def _epoch_seconds(m: re.Match[str]) -> float | None:
    if m.group("h") is not None:
        seconds = int(m.group("h")) * 3600 + int(m.group("m")) * 60 + float(m.group("s"))
    elif m.group("min") is not None:
        seconds = int(m.group("min")) * 60 + float(m.group("sec"))
    else:
        value = _float(m.group("value"))
        unit = m.group("unit")
        seconds = value * _SECONDS[unit.lower() if unit else None] if value is not None else 0.0
    return seconds if 0 < seconds <= MAX_EPOCH_SECONDS else None


def _timing(text: str) -> tuple[str, float] | None:
    """How fast the line says the run goes: (kind, value) as in `_TIMINGS`, values in seconds."""
    if (epoch := _EPOCH_DURATION.search(text)) is not None:
        seconds = _epoch_seconds(epoch)
        return ("epoch_time", seconds) if seconds is not None else None
    for kind, rx in _TIMINGS:
        m = rx.search(text)
        if m is None:
            continue
        value = _float(m.group("value"))
        if value is None or value <= 0:
            continue
        unit = m.groupdict().get("unit")
        return kind, value * _SECONDS[unit.lower() if unit else None] if kind in ("step_time", "interval") else value
    return None


def _with_timing(record: ProgressRecord, text: str) -> ProgressRecord:
    """The record with the pace its line shows in a trainer's own unit, when it has none yet.
    The unit joins the format name: a run whose lines show two units (TF Estimator's loss line
    and its `global_step/sec:` line) makes two series, never one of mixed units."""
    if record.rate is not None:
        return record
    found = _timing(text)
    if found is None:
        return record
    kind, value = found
    fmt = f"{record.format}:{kind}"
    if kind == "step_time":
        return replace(record, step_time=value, format=fmt)
    if kind == "steps/s":
        return replace(record, step_time=1.0 / value, format=fmt)
    # A throughput, or lines per second when each line covers the same number of steps.
    return replace(record, throughput=value if kind == "throughput" else 1.0 / value, format=fmt)


# Counters trainers print without a `step` key: MMEngine/MMCV `Epoch(train) [1][20/1563]` and
# `Iter(train) [  50/1000]`, Paddle `Epoch: [0] [  20/1000]`, fairseq `epoch 001:    100 / 1557`,
# Keras `1875/1875 [=====...]` or `782/782 ━━━━ 35s 45ms/step`, a bare `Epoch 3 ...`.
_EPOCH_COUNTER = re.compile(
    r"(?i)\bepoch(?:\((?P<mode>\w+)\))?\s*:?\s*\[?\s*(?P<epoch>\d+)(?!\.?\d)\s*\]?\s*(?::|,)?\s*"
    r"(?:\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\]|(?P<i2>\d+)\s*/\s*(?P<n2>\d+)(?!\d))?"
)
_ITER_COUNTER = re.compile(r"(?i)\biter\((?P<mode>\w+)\)\s*\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\]")
_BAR_COUNTER = re.compile(r"^\s*(?P<i>\d+)/(?P<n>\d+)\s+(?:\[[=>.]*\]|\S*\u2501)")
_BRACKET_COUNTER = re.compile(r"^\s*\[\s*(?P<i>\d+)\s*/\s*(?P<n>\d+)\s*\]")


def _counter(text: str) -> ProgressRecord | None:
    """Which step a line without a step key reports, from its counter's structure."""
    m = _ITER_COUNTER.search(text)
    if m is not None:
        mode = m.group("mode").lower()
        return ProgressRecord(step=int(m.group("i")), total=int(m.group("n")), format=_mode("iter", mode))
    m = _EPOCH_COUNTER.search(text)
    if m is not None:
        epoch = int(m.group("epoch"))
        mode = (m.group("mode") or "").lower()
        done, per = m.group("i") or m.group("i2"), m.group("n") or m.group("n2")
        if done is None or per is None:
            return ProgressRecord(step=epoch, epoch=float(epoch), format=_mode("epoch", mode))
        # A step count that restarts each epoch: numbered across epochs, so that steps only
        # go forward (epochs may count from 0 or 1: either way they are in order).
        step = epoch * int(per) + int(done)
        return ProgressRecord(step=step, epoch=float(epoch), format=_mode("epoch-iter", mode))
    m = _BAR_COUNTER.search(text) or _BRACKET_COUNTER.search(text)
    if m is not None:
        return ProgressRecord(step=int(m.group("i")), total=int(m.group("n")), format="bar")
    return None


def _mode(name: str, mode: str) -> str:
    """Training lines and evaluation lines (MMEngine's `Epoch(val)`) are different series."""
    return name if mode in ("", "train") else f"{name}-{mode}"


def _pace(text: str) -> ProgressRecord | None:
    """A line whose pace is in a trainer's own unit, with or without a step counter."""
    m = _KV_STEP.search(text)
    if m is not None:
        record = _record(_pairs(text), "kv")
        record = replace(record, step=int(m.group(1)), total=record.total or _int(m.group(2)), format="pace")
    else:
        counted = _counter(text) or (ProgressRecord(format="pace") if _ALONE.search(text) else None)
        if counted is None:
            return None
        record = replace(counted, loss=_first(_pairs(text), _LOSS_KEYS, _float))
    record = _with_timing(record, text)
    return record if record.rate is not None else None


_PARSERS: dict[str, Callable[[str], ProgressRecord | None]] = {
    "structured": _structured,
    "json": _json,
    "hf": _hf,
    "megatron": _megatron,
    "torchtitan": _torchtitan,
    "tqdm": _tqdm,
    "kv": _kv,
    "loop": _loop,
    "pace": _pace,
}


class ProgressError(ValueError):
    """A user progress pattern that cannot be used."""


class ProgressParser:
    """Reads a progress record from one log line, or None if the line reports no progress."""

    def __init__(self, user_patterns: Sequence[str] = ()) -> None:
        self._user: list[Any] = []
        for index, pattern in enumerate(user_patterns):
            try:
                dialect.check_pattern(pattern, groups=FIELDS)
            except ValueError as e:
                raise ProgressError(f"progress pattern {index + 1}: {e}") from None
            self._user.append(dialect.compile_line_pattern(pattern))
        self.user_patterns = list(user_patterns)

    @property
    def gates(self) -> list[tuple[str, str]]:
        """(name, pattern) pairs for the scanner: every progress line matches one of them."""
        user = [(f"progress:user{i}", p) for i, p in enumerate(self.user_patterns)]
        return user + [(f"progress:{name}", pattern) for name, pattern in GATES.items()]

    def parse(
        self,
        line: str,
        line_no: int | None = None,
        *,
        formats: Sequence[str] | None = None,
        rank: int | None = None,
    ) -> ProgressRecord | None:
        """The record on `line`, if any. `formats`: the gates the scanner already saw match
        (their names in GATES), so only those formats are tried. `rank`: the rank to assume
        when the line itself does not say (from its prefix)."""
        text = _ANSI.sub("", line[:MAX_TEXT]) if "\x1b" in line else line[:MAX_TEXT]
        record = self._parse_user(text) or self._parse_builtin(line[:MAX_TEXT], text, formats)
        if record is None:
            return None
        rank = rank if record.rank is None else record.rank
        return replace(record, line=line_no, text=text.strip(), rank=rank)

    def _parse_user(self, text: str) -> ProgressRecord | None:
        for compiled in self._user:
            m = compiled.search(text.encode("utf-8", "surrogateescape"))
            if m is not None:
                fields = {k.decode(): v.decode("utf-8", "replace") for k, v in m.groupdict().items() if v}
                return _record(fields, "user")
        return None

    def _parse_builtin(self, raw: str, text: str, formats: Sequence[str] | None) -> ProgressRecord | None:
        for name, parse in _PARSERS.items():
            # Gates are checked on the raw line, the fields on the line without colour codes.
            gated = name in formats if formats is not None else _GATES[name].search(raw)
            if gated and (record := parse(text)) is not None:
                # A step line whose pace is in the trainer's own unit (Detectron2's `time:`,
                # TF's `examples/sec`): kv and loop lines read the step, this the pace.
                return _with_timing(record, text) if name in ("kv", "loop") else record
        return None
