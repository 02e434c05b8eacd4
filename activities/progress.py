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
(nanoGPT, llm.c); and user patterns (RE2 syntax) with named groups among `FIELDS`.
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
    "loop": r"(?i)(?:^|[^\w])(?:step|iter)\s+\d+(?:\s*/\s*\d+)?[^\n]*loss",
}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR = re.compile(r"([A-Za-z_][\w/.-]{0,40})\s*[=:]\s*(" + _NUM + r"|nan|inf|saving|saved)\b")
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
    record = _record({str(k).lower(): v for k, v in data.items()}, "json")
    return record if record.step is not None else None


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


_KV_STEP = re.compile(r"(?i)\b(?:global_step|step|iteration|iter)\s*[=:]\s*(\d+)(?:\s*/\s*(\d+))?")


def _kv(text: str) -> ProgressRecord | None:
    m = _KV_STEP.search(text)
    if m is None:
        return None
    record = _record(_pairs(text), "kv")
    return replace(record, step=int(m.group(1)), total=record.total or _int(m.group(2)))


# A training loop's own print: `iter 100: loss 4.12, time 123.45ms` (nanoGPT), `step 1/74 |
# train loss 10.98 | ... (1234.56 ms | 12345 tok/s)` (llm.c). A loss on the line is required:
# "step 2 of the setup" is no progress.
_LOOP_STEP = re.compile(r"(?i)(?:^|[^\w])(?:step|iter)\s+(\d+)(?:\s*/\s*(\d+))?")
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


_PARSERS: dict[str, Callable[[str], ProgressRecord | None]] = {
    "structured": _structured,
    "json": _json,
    "hf": _hf,
    "megatron": _megatron,
    "torchtitan": _torchtitan,
    "tqdm": _tqdm,
    "kv": _kv,
    "loop": _loop,
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
                return record
        return None
