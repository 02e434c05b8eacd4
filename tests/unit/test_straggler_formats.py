"""Stragglers at 10 %, through the whole `LogDiagnoser`, in every progress format it reads.

Each test writes a realistic log: a training run's pace (step-time jitter with heavy tails, a
slow warm-up, periodic checkpoint and evaluation spikes, short dips), printed the way the
trainer prints it (a line per step or every N steps, rates averaged over the interval or
smoothed like tqdm's, colour codes, rank prefixes, other chatter in between). A sustained drop
of 10 % or more must be found, and named where it began; a healthy run must never be.

The generators are shared with `benchmarks/straggler_quality.py`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from recovery.activities.progress import ProgressParser
from recovery.activities.signatures.diagnosis import LogDiagnoser
from recovery.activities.signatures.result import LogDiagnosis
from recovery.activities.straggler import StragglerConfig

SUSTAIN = 600.0  # the policy's default 10m
USER_PATTERN = r"it (?P<step>\d+) of (?P<total>\d+), (?P<throughput>[\d.]+) img/s"


# --- a run's pace ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pace:
    """A generated run: the seconds each step took, and what happened where."""

    times: list[float]  # times[i] is step i+1's
    base: float  # the healthy seconds per step
    drop: float = 0.0
    drop_at: int | None = None  # the first slow step of a sustained drop
    checkpoints: frozenset[int] = frozenset()  # steps that saved a checkpoint
    evals: frozenset[int] = frozenset()  # steps after which the run evaluated

    @property
    def steps(self) -> int:
        return len(self.times)


def jitter(rnd: random.Random, noise: float) -> float:
    """A step-time factor with relative spread `noise` and heavy tails (Student's t, 3 degrees
    of freedom, scaled to that standard deviation), now and then a hiccup."""
    t3 = rnd.gauss(0, 1) / math.sqrt(sum(rnd.gauss(0, 1) ** 2 for _ in range(3)) / 3)
    factor = 1.0 + noise * t3 / math.sqrt(3)
    if rnd.random() < 0.005:
        factor *= rnd.uniform(1.2, 1.8)  # a data-loader stall, a noisy neighbour
    return min(max(factor, 0.75), 4.0)


def warmup(rnd: random.Random) -> Callable[[int], float]:
    """Slow first steps: compiling, then warming caches and allocators."""
    first = rnd.uniform(10, 40)
    extra, scale = rnd.uniform(0.5, 2.0), rnd.uniform(2.0, 8.0)
    return lambda step: first if step == 1 else 1.0 + extra * math.exp(-(step - 2) / scale)


def make_pace(
    seed: int,
    *,
    drop: float = 0.0,
    noise: float = 0.04,
    healthy_steps: int | None = None,
    slow_units: float = 0.0,
    unit: str = "seconds",
    every: int = 1,
    dips: bool = True,
) -> Pace:
    """A run of `healthy_steps` steps, then (with `drop`) a throughput drop of that share that
    lasts `slow_units` of the detector's clock: seconds, steps, or progress lines (`unit`; a line
    every `every` steps). Healthy runs get 1-3 short dips (10-30 steps, 10-50 % slower)."""
    rnd = random.Random(seed)
    base = rnd.uniform(0.3, 2.0)  # seconds per step
    healthy = healthy_steps if healthy_steps is not None else rnd.randint(400, 900)
    slow_step = base / (1 - drop) if drop else base
    per_unit = {"seconds": slow_step, "steps": 1.0, "lines": 1.0 / every}[unit]  # of the clock, per step
    slow = math.ceil(slow_units / per_unit) if drop else 0
    total = healthy + slow
    ckpt_every, eval_every = rnd.choice([100, 200, 250, 500]), rnd.choice([200, 300, 500, 1000])
    checkpoints = frozenset(range(ckpt_every, total + 1, ckpt_every))
    evals = frozenset(range(eval_every, total + 1, eval_every))
    slow_dips = _dips(rnd, healthy) if dips else {}
    warm = warmup(rnd)
    times = []
    for step in range(1, total + 1):
        seconds = base * warm(step) * jitter(rnd, noise) * slow_dips.get(step, 1.0)
        if drop and step > healthy:
            seconds /= 1 - drop
        if step in checkpoints:
            seconds *= rnd.uniform(2, 10)  # the step that saved
        if step - 1 in evals or (step - 2 in evals and rnd.random() < 0.5):
            seconds *= rnd.uniform(2, 5)  # the step(s) after an evaluation pass
        times.append(seconds)
    return Pace(times, base, drop, healthy + 1 if drop else None, checkpoints, evals)


def _dips(rnd: random.Random, healthy: int) -> dict[int, float]:
    """Short dips: 10-30 steps, 10-50 % slower, then back to pace for at least 150 steps (dips
    closer together are one longer slowdown with a gap)."""
    slow: dict[int, float] = {}
    starts: list[int] = []
    for _ in range(rnd.randint(1, 3) * max(1, healthy // 1000)):
        length, depth = rnd.randint(10, 30), rnd.uniform(0.10, 0.50)
        start = rnd.randint(60, max(61, healthy - length - 1))
        if any(abs(start - other) < 180 for other in starts):
            continue
        starts.append(start)
        slow.update(dict.fromkeys(range(start, start + length), 1 / (1 - depth)))
    return slow


# --- the log, in each format -----------------------------------------------------------------

# (text, line end, the step the line reports or None): "\r" where a progress bar redraws.
Line = tuple[str, str, int | None]
CHATTER = [
    "NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
    "NCCL INFO comm 0x5581e8a0 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE",
    "INFO:root:Reducer buckets have been rebuilt in this iteration.",
    "Token indices sequence length is longer than the specified maximum sequence length for this model",
    "[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP constructor",
]


@dataclass
class Printer:
    """Renders a pace as one trainer's output."""

    pace: Pace
    rnd: random.Random
    every: int = 1
    total: int = 0
    tokens: int = field(default=0)

    def __post_init__(self) -> None:
        self.total = max(self.pace.steps, 1000)
        self.tokens = self.rnd.choice([131072, 524288, 1048576])

    def loss(self, step: int) -> float:
        return 2.0 + 8.0 / math.sqrt(step) + 0.05 * self.rnd.gauss(0, 1)

    def intervals(self) -> Iterator[tuple[int, float]]:
        """(step, mean seconds per step since the previous printed step), every `every` steps."""
        times = self.pace.times
        for step in range(self.every, self.pace.steps + 1, self.every):
            yield step, sum(times[step - self.every : step]) / self.every

    def elapsed(self, step: int) -> str:
        seconds = int(sum(self.pace.times[:step]))
        return f"{seconds // 60:02d}:{seconds % 60:02d}"


def _with_chatter(lines: Iterator[Line], rnd: random.Random) -> Iterator[Line]:
    yield "Initializing distributed: world size 8", "\n", None
    for line in lines:
        yield line
        if line[1] == "\n" and rnd.random() < 0.02:
            yield rnd.choice(CHATTER), "\n", None


def structured(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        if step in p.pace.checkpoints:
            yield f"0: recovery-progress step={step} checkpoint=saving", "\n", step
        yield (
            f"0: recovery-progress step={step} total={p.total} rank=0 throughput={p.tokens / seconds:.1f}"
            f" step_time={seconds:.4f} loss={p.loss(step):.4f}",
            "\n",
            step,
        )
        if step in p.pace.checkpoints:
            yield f"0: recovery-progress step={step} checkpoint=saved", "\n", step


def json_lines(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield (
            f'{{"step": {step}, "loss": {p.loss(step):.4f}, "lr": 0.0003, "tokens_per_second": {p.tokens / seconds:.1f}}}',
            "\n",
            step,
        )


def hf_trainer(p: Printer) -> Iterator[Line]:
    """The Trainer's own output: its tqdm bar (the rate) and a log dict every 10 steps (no rate)."""
    yield from _bars(
        p,
        prefix="",
        logged=lambda step: (
            f"{{'loss': {p.loss(step):.4f}, 'grad_norm': 1.23, 'learning_rate': 4.5e-05, 'epoch': {step / p.total:.2f}}}"
        ),
    )


def hf_rate(p: Printer) -> Iterator[Line]:
    """Log dicts with a throughput a callback added, every `every` steps; no step number."""
    for step, seconds in p.intervals():
        yield (
            f"{{'loss': {p.loss(step):.4f}, 'grad_norm': 1.1, 'learning_rate': 3e-05, 'epoch': {step / p.total:.2f},"
            f" 'tokens_per_second': {p.tokens / seconds:.1f}}}",
            "\n",
            step,
        )


def megatron(p: Printer) -> Iterator[Line]:
    batch = 256
    for step, seconds in p.intervals():
        yield (
            f" [2025-01-01 12:00:00] iteration {step:>8d}/{p.total:>8d} | consumed samples: {step * batch:>12d} |"
            f" elapsed time per iteration (ms): {seconds * 1000:.1f} | learning rate: 1.500E-04 |"
            f" global batch size: {batch:>5d} | lm loss: {p.loss(step):.6E} | loss scale: 1.0 | grad norm: 1.234 |"
            " number of skipped iterations:   0 | number of nan iterations:   0 |",
            "\n",
            step,
        )


def nemo(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield (
            f"Training epoch 0, iteration {step - 1}/{p.total - 1} | lr: 1.499e-05 | global_batch_size: 32 |"
            f" global_step: {step} | reduced_train_loss: {p.loss(step):.4f} | train_step_timing in s: {seconds:.3f}",
            "\n",
            step,
        )


def torchtitan(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        tps = round(p.tokens / 8 / seconds)
        yield (
            f"[rank0]:[titan] 2025-01-01 12:00:00,000 - root - INFO - \x1b[31mstep: {step:2d}  "
            f"\x1b[32mloss: {p.loss(step):7.4f}  \x1b[33mmemory: 36.82GiB(38.77%)  \x1b[34mtps: {tps:,}"
            f"  \x1b[35mtflops: 345.32  \x1b[36mmfu: 34.91%\x1b[39m",
            "\n",
            step,
        )


def _bars(p: Printer, prefix: str, logged: Callable[[int], str] | None = None, epoch: int = 0) -> Iterator[Line]:
    """tqdm's bar, redrawn every step with its smoothed rate (an exponential moving average of
    the step time, smoothing 0.3, as tqdm shows it)."""
    smoothed: float | None = None
    per_epoch = p.total if epoch == 0 else epoch
    for step, seconds in p.intervals():
        smoothed = seconds if smoothed is None else 0.3 * seconds + 0.7 * smoothed
        done = step % per_epoch if epoch else step
        rate = f"{1 / smoothed:.2f}it/s" if smoothed < 1 else f"{smoothed:.2f}s/it"
        head = f"Epoch {step // per_epoch}: " if epoch else prefix
        pct = 100 * done // per_epoch
        bar = ("#" * (pct // 10)).ljust(10)
        extra = f", v_num=0, train_loss={p.loss(step):.3f}" if epoch else ""
        yield f"{head}{pct:3d}%|{bar}| {done}/{per_epoch} [{p.elapsed(step)}<00:00, {rate}{extra}]", "\r", step
        if logged is not None and step % 10 == 0:
            yield logged(step), "\n", step
        if epoch and done == per_epoch - 1:
            yield from _validation(p)


def _validation(p: Printer) -> Iterator[Line]:
    """Lightning's validation bar: forward passes only, faster than training steps."""
    for batch in range(1, 21):
        yield (
            f"Validation DataLoader 0: {5 * batch:3d}%|#####     | {batch}/20 [00:01<00:01, {3 / p.pace.base:.2f}it/s]",
            "\r",
            None,
        )
    yield "", "\n", None


def tqdm_bar(p: Printer) -> Iterator[Line]:
    yield from _bars(p, prefix=" ")


def lightning(p: Printer) -> Iterator[Line]:
    yield from _bars(p, prefix="", epoch=500)


def kv(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield (
            f"2025-01-01 12:00:00 INFO Step: {step}/{p.total}, loss: {p.loss(step):.4f}, step_time: {seconds:.3f}",
            "\n",
            step,
        )


def kv_rate(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield f"step={step} loss={p.loss(step):.3f} samples/s={256 / seconds:.1f}", "\n", step


def nanogpt(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield f"iter {step}: loss {p.loss(step):.4f}, time {seconds * 1000:.2f}ms, mfu 30.12%", "\n", step


def llmc(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield (
            f"step {step:4d}/{p.total} | train loss {p.loss(step):.6f} | norm 1.2345 | lr 6.00e-04 |"
            f" ({seconds * 1000:.2f} ms | {p.tokens / seconds:.0f} tok/s)",
            "\n",
            step,
        )


def user(p: Printer) -> Iterator[Line]:
    for step, seconds in p.intervals():
        yield f"[train] it {step} of {p.total}, {64 / seconds:.1f} img/s", "\n", step


# Trainers that print their pace in a unit of their own (the lines' shapes are the sources').


def mmengine(p: Printer) -> Iterator[Line]:
    """MMEngine's LoggerHook (mmengine/runner/log_processor.py): `time` is the mean seconds per
    iteration over the logging window; an evaluation pass between epochs prints `Epoch(val)`."""
    per_epoch = 500
    for step, seconds in p.intervals():
        epoch, done = 1 + (step - 1) // per_epoch, (step - 1) % per_epoch + 1
        yield (
            f"2022/08/22 15:51:56 - mmengine - INFO - Epoch(train) [{epoch}][{done:>3d}/{per_epoch}]  lr: 1.0000e-03"
            f"  eta: 0:11:29  time: {seconds:.4f}  data_time: 0.0077  memory: 392  loss: {p.loss(step):.4f}",
            "\n",
            step,
        )
        if done == per_epoch:
            for batch in range(10, 60, 10):
                yield (
                    f"2022/08/22 15:52:56 - mmengine - INFO - Epoch(val) [{epoch}][{batch:>2d}/50]    eta: 0:00:01"
                    f"  time: {p.pace.base / 4:.4f}  data_time: 0.0022  memory: 532",
                    "\n",
                    None,
                )


def detectron2(p: Printer) -> Iterator[Line]:
    """Detectron2's CommonMetricPrinter (detectron2/utils/events.py): `iter` counts from 0."""
    for step, seconds in p.intervals():
        yield (
            f"[11/14 20:41:39 d2.utils.events]:  eta: 0:01:51  iter: {step - 1}  total_loss: {p.loss(step):.3f}"
            f"  loss_cls: 1.439  loss_box_reg: 0.1429  time: {seconds:.4f}  data_time: 0.0048  lr: 4.9953e-06"
            "  max_mem: 2030M",
            "\n",
            step,
        )


def fairseq(p: Printer) -> Iterator[Line]:
    """fairseq's train_inner line (fairseq/logging/progress_bar.py): `ups` updates per second."""
    per_epoch = 1557
    for step, seconds in p.intervals():
        epoch, done = 1 + (step - 1) // per_epoch, (step - 1) % per_epoch + 1
        yield (
            f"2021-01-01 10:00:00 | INFO | train_inner | epoch {epoch:03d}:  {done:>5d} / {per_epoch}"
            f" loss={p.loss(step):.3f}, nll_loss=12.0, ppl=4096, wps={4096 / seconds:.1f}, ups={1 / seconds:.3g},"
            f" wpb=4096, bsz=64, num_updates={step}, lr=1.25e-05, gnorm=2.1, train_wall=84, wall=88",
            "\n",
            step,
        )


def tf_cifar(p: Printer) -> Iterator[Line]:
    """TF1's cifar10_train.py: `(examples/sec; sec/batch)` of the last step."""
    for step, seconds in p.intervals():
        yield (
            f"2020-06-11 04:29:57.313210: step {step}, loss = {p.loss(step):.2f}"
            f" ({128 / seconds:.1f} examples/sec; {seconds:.3f} sec/batch)",
            "\n",
            step,
        )


def paddle(p: Printer) -> Iterator[Line]:
    """PaddleDetection's LogPrinter (ppdet/engine/callbacks.py): `batch_cost` seconds per batch."""
    per_epoch = 1000
    for step, seconds in p.intervals():
        epoch, done = (step - 1) // per_epoch, (step - 1) % per_epoch + 1
        yield (
            f"[05/24 10:00:00] ppdet.engine INFO: Epoch: [{epoch}] [{done:>4d}/{per_epoch}] learning_rate: 0.000100"
            f" loss: {p.loss(step):.6f} eta: 1:02:03 batch_cost: {seconds:.4f} data_cost: 0.0005"
            f" ips: {8 / seconds:.4f} images/s",
            "\n",
            step,
        )


def deepspeed(p: Printer) -> Iterator[Line]:
    """DeepSpeed's ThroughputTimer (deepspeed/utils/timer.py), every steps_per_print."""
    for step, seconds in p.intervals():
        yield (
            f"[2023-01-01 10:00:00,000] [INFO] [timer.py:199:stop] epoch=0/micro_step={step}/global_step={step},"
            f" RunningAvgSamplesPerSec=25.8, CurrSamplesPerSec={32 / seconds:.2f}, MemAllocated=1.2GB,"
            " MaxMemAllocated=3.4GB",
            "\n",
            step,
        )


def yolox(p: Printer) -> Iterator[Line]:
    """YOLOX's trainer (yolox/core/trainer.py): `iter_time` with its unit."""
    for step, seconds in p.intervals():
        yield (
            f"2022-08-07 20:23:28 | INFO     | yolox.core.trainer:261 - epoch: 1/300, iter: {step}/{p.total},"
            f" mem: 584Mb, iter_time: {seconds:.3f}s, data_time: 0.002s, total_loss: {p.loss(step):.1f},"
            " iou_loss: 4.6, lr: 2.287e-11, size: 416, ETA: 11 days, 11:38:15",
            "\n",
            step,
        )


def tf_estimator(p: Printer) -> Iterator[Line]:
    """TF Estimator's hooks: `global_step/sec` (StepCounterHook) and the loss line with the
    seconds since the last one (LoggingTensorHook), both every N steps; neither names its step
    alongside the rate."""
    for step, seconds in p.intervals():
        yield f"INFO:tensorflow:global_step/sec: {1 / seconds:.6g}", "\n", step
        yield (
            f"INFO:tensorflow:loss = {p.loss(step):.6f}, step = {step} ({seconds * p.every:.3f} sec)",
            "\n",
            step,
        )


@dataclass(frozen=True)
class Format:
    """How a trainer prints: its renderer, how often, and what the detector counts its
    `sustain` in (seconds where lines carry step times, else steps, else lines)."""

    render: Callable[[Printer], Iterator[Line]]
    every: int = 1
    unit: str = "seconds"
    patterns: tuple[str, ...] = ()


FORMATS: dict[str, Format] = {
    "structured": Format(structured),
    "json": Format(json_lines, every=10, unit="steps"),
    "hf": Format(hf_trainer),
    "hf-rate": Format(hf_rate, every=10, unit="lines"),
    "megatron": Format(megatron, every=10),
    "nemo": Format(nemo),
    "torchtitan": Format(torchtitan, every=10, unit="steps"),
    "tqdm": Format(tqdm_bar),
    "lightning": Format(lightning),
    "kv": Format(kv),
    "kv-rate": Format(kv_rate, every=5, unit="steps"),
    "nanogpt": Format(nanogpt),
    "llm.c": Format(llmc),
    "user": Format(user, unit="steps", patterns=(USER_PATTERN,)),
    "mmengine": Format(mmengine, every=10),
    # Detectron2 prints every 20 iterations by default; at 20 the drop is found, but in one seed
    # of six (in any format: Megatron's too) located 300 steps late, a limit of the detector's
    # change-point estimate on coarse lines, not of the parser.
    "detectron2": Format(detectron2, every=10),
    "fairseq": Format(fairseq, every=10),
    "tf-cifar": Format(tf_cifar, every=10),
    "paddle": Format(paddle, every=10),
    "deepspeed": Format(deepspeed, every=10, unit="steps"),
    "yolox": Format(yolox, every=10),
    "tf-estimator": Format(tf_estimator, every=10, unit="lines"),
}


@dataclass(frozen=True)
class Log:
    text: str
    steps: dict[int, int]  # line number -> the step it reports (for progress lines)
    pace: Pace


def generate(
    fmt: str,
    seed: int,
    *,
    drop: float = 0.0,
    noise: float = 0.04,
    sustain: float = SUSTAIN,
    healthy_steps: int | None = None,
) -> Log:
    """A log in format `fmt`; with `drop`, its slowdown lasts exactly `sustain` of the
    detector's clock, so a detection by the end of the log is a detection within the bound."""
    spec = FORMATS[fmt]
    pace = make_pace(
        seed, drop=drop, noise=noise, healthy_steps=healthy_steps, slow_units=sustain, unit=spec.unit, every=spec.every
    )
    printer = Printer(pace, random.Random(seed + 1), every=spec.every)
    parts, steps = [], {}
    for number, (text, end, step) in enumerate(_with_chatter(spec.render(printer), printer.rnd), start=1):
        parts.append(text + end)
        if step is not None:
            steps[number] = step
    return Log("".join(parts), steps, pace)


def diagnose(log: Log, fmt: str, config: StragglerConfig | None = None) -> LogDiagnosis:
    patterns = FORMATS[fmt].patterns
    diagnoser = LogDiagnoser(progress=ProgressParser(patterns) if patterns else None, straggler=config)
    data = log.text.encode()
    for i in range(0, len(data), 1 << 16):  # in pieces, as a growing file is read
        diagnoser.feed(data[i : i + (1 << 16)])
    diagnoser.finish()
    return diagnoser.diagnosis()


# --- the tests -------------------------------------------------------------------------------


def test_every_progress_format_is_generated() -> None:
    """The generators cover each format the parser reads, and each line is read as that format."""
    seen = set()
    for fmt, spec in FORMATS.items():
        parser = ProgressParser(spec.patterns)
        log = generate(fmt, 1)
        lines = log.text.replace("\r", "\n").split("\n")
        records = [parser.parse(lines[number - 1]) for number in list(log.steps)[:50]]
        assert all(r is not None for r in records), fmt
        assert any(r is not None and r.rate is not None for r in records), fmt
        seen |= {r.format for r in records if r is not None}
    assert seen >= {"structured", "json", "hf", "megatron", "torchtitan", "tqdm", "lightning", "kv", "loop", "user"}


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("seed", range(3))
def test_a_10_percent_drop_is_found_in_every_format(fmt: str, seed: int) -> None:
    log = generate(fmt, seed, drop=0.10, noise=0.03 + 0.01 * seed)
    result = diagnose(log, fmt)
    assert (result.symptom, result.retryable) == ("straggler", True), result.explanation
    # named where it began: the evidence line is a progress line near the first slow step
    assert log.pace.drop_at is not None
    assert abs(log.steps[result.evidence[0].line] - log.pace.drop_at) <= 100, result.evidence[0].text


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("drop", [0.15, 0.25, 0.40])
def test_bigger_drops_are_found(fmt: str, drop: float) -> None:
    for seed in range(2):
        log = generate(fmt, 100 + seed, drop=drop, noise=0.05)
        result = diagnose(log, fmt)
        assert result.symptom == "straggler", (seed, result.explanation)
        assert "below the run's recent baseline" in result.explanation


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_healthy_runs_with_spikes_warmup_and_dips_are_never_stragglers(fmt: str) -> None:
    for seed in range(12):
        log = generate(fmt, 1000 + seed, noise=(0.03, 0.04, 0.05)[seed % 3])
        result = diagnose(log, fmt)
        assert result.symptom == "none", (seed, result.explanation)


def test_a_drop_smaller_than_min_drop_is_not_a_straggler() -> None:
    for seed in range(6):
        log = generate("structured", 2000 + seed, drop=0.04, noise=0.03)
        assert diagnose(log, "structured").symptom == "none", seed


def test_a_policy_min_drop_of_25_percent_lets_a_15_percent_drop_pass() -> None:
    log = generate("megatron", 7, drop=0.15, noise=0.03)
    assert diagnose(log, "megatron").symptom == "straggler"
    assert diagnose(log, "megatron", StragglerConfig(min_drop=0.25)).symptom == "none"
