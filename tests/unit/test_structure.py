"""Structure beyond single lines: tracebacks and their final exception, console-wrapped lines,
warning-level lines, lines no signature knows. Examples follow the shapes of the corpus's real
logs (tests/corpus/dev)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from recovery.activities.report import format_progress
from recovery.activities.signatures.diagnosis import LogDiagnoser, LogDiagnosis
from recovery.activities.signatures.scanner import LogScanner, PatternSet, Sampler
from recovery.activities.signatures.structure import class_words, exception_fact
from recovery.activities.signatures.unwrap import join, wrap_width


def diagnose(text: str, chunk: int = 997, **kwargs: object) -> LogDiagnosis:
    diagnoser = LogDiagnoser(**kwargs)  # type: ignore[arg-type]
    data = dedent(text).lstrip("\n").encode()
    for i in range(0, len(data), chunk):
        diagnoser.feed(data[i : i + chunk])
    diagnoser.finish()
    return diagnoser.diagnosis()


def progress(first: int, last: int, prefix: str = "") -> str:
    return "".join(f"{prefix}{format_progress(s, total=100, rank=0, loss=1 / s)}\n" for s in range(first, last + 1))


def traceback(exception: str, prefix: str = "") -> str:
    return (
        f"{prefix}Traceback (most recent call last):\n"
        f'{prefix}  File "train.py", line 120, in <module>\n'
        f"{prefix}    main(cfg)\n"
        f'{prefix}  File "train.py", line 88, in main\n'
        f"{prefix}    batch = next(it)\n"
        f"{prefix}{exception}\n"
    )


def test_an_uncaught_exception_no_signature_knows_is_a_crash_of_its_class_category() -> None:
    result = diagnose(progress(1, 10) + traceback("json.decoder.JSONDecodeError: Expecting value: line 1 column 1"))
    assert (result.symptom, result.category, result.retryable) == ("crash", "application", False)
    assert result.evidence[0].signature == "uncaught-exception" and result.evidence[0].line == 16
    assert "JSONDecodeError" in result.explanation and "no signature recognises the cause" in result.explanation
    assert "line 16 made it a failure" in result.explanation


def test_a_class_no_table_knows_is_an_unknown_retryable_crash() -> None:
    result = diagnose(traceback("mylib.errors.ShardServerGoneError: shard 7"))
    assert (result.symptom, result.category, result.retryable) == ("crash", "unknown", True)
    assert "a class no table knows" in result.explanation


def test_interleaved_ranks_each_close_their_own_traceback_and_the_first_root_speaks() -> None:
    log = (
        "[rank1]: Traceback (most recent call last):\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 9, in <module>\n'
        '[rank0]:   File "train.py", line 9, in <module>\n'
        "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-7.bin'\n"
        "[rank0]: torch.distributed.DistBackendError: [Rank 0] Watchdog caught collective operation timeout\n"
    )
    result = diagnose(log)
    assert result.category == "application" and result.implicated.ranks == [1]


def test_a_signature_on_the_final_line_speaks_before_the_fallback() -> None:
    result = diagnose(traceback("RuntimeError: CUDA error: an illegal memory access was encountered", "3: "))
    assert result.evidence[0].signature == "cuda-illegal-address"


def test_a_caught_exception_the_run_got_past_is_not_a_failure() -> None:
    log = progress(1, 5) + traceback("ValueError: bad sample 17, skipped") + progress(6, 12)
    assert diagnose(log).symptom == "none"


def test_a_bare_exception_line_counts_only_when_it_ends_the_log() -> None:
    ending = progress(1, 5) + "shardio.DataServerGoneError: the data server went away\n"
    assert diagnose(ending).symptom == "crash"
    middle = "shardio.DataServerGoneError: the data server went away\n" + "".join(f"chatter {i}\n" for i in range(300))
    assert diagnose(middle).symptom == "none"


def test_a_warning_level_line_alone_is_never_fatal() -> None:
    line = (
        "[W506 00:43:56.240378877 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=3,"
        " addr=[node1]:47466, remote=[node0]:29500): Connection reset by peer\n"
    )
    assert diagnose(line + "all ranks connected, training starts\n").symptom == "none"
    error = line.replace("[W506", "[E506")
    assert diagnose(error).symptom == "crash"


def test_a_root_cause_naming_nobody_borrows_the_rank_of_a_later_line_of_its_kind() -> None:
    log = (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=123.0. Some of the step tasks have been OOM Killed.\n"
        "srun: error: gpu-07: task 4: Out Of Memory\n"
    )
    result = diagnose(log)
    assert result.category == "out_of_memory" and result.implicated.ranks == [4]
    assert result.implicated.nodes == ["gpu-07"] and result.exclude is False


def test_a_peer_named_by_another_signature_on_the_same_line_is_kept() -> None:
    line = (
        "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was"
        " a network error, NCCL version 2.20.5  ncclRemoteError: A call failed possibly due to a network error"
        " or a remote process exiting prematurely.      Last error:      NET/IB : Got completion from peer"
        " 10.0.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249\n"
    )
    assert diagnose(line).implicated.peers == ["10.0.17.89"]


def test_a_gpu_fault_the_program_caused_names_its_node_but_does_not_exclude_it() -> None:
    result = diagnose("Mar  3 12:34:56 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception: ESR 0x\n")
    assert result.implicated.nodes == ["node7"] and result.exclude is False
    fallen = diagnose("Mar  3 12:34:56 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    assert fallen.category == "hardware" and fallen.exclude is True


def console(lines: list[str], width: int) -> list[str]:
    """Rows as a console of `width` columns shows them: long lines broken, short ones padded."""
    rows = []
    for line in lines:
        rows += [line[i : i + width].ljust(width) for i in range(0, max(len(line), 1), width)]
    return rows


WRAPPED_ROWS = console(
    [
        "[2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / actors)"
        " killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 8289f87b,"
        " IP: 10.24.0.226) over the last time period.",
        "(raylet)",
        "(raylet) Refer to the documentation on how to address the out of memory issue. Consider provisioning"
        " more memory on this node or reducing task parallelism by requesting more CPUs per task.",
        "training loop interrupted",
    ],
    110,
)


def test_rows_a_console_wrapped_are_joined_before_matching_and_keep_their_line_numbers() -> None:
    block = ("\n".join(WRAPPED_ROWS) + "\n").encode()
    assert wrap_width(block) == 110
    joined, origin = join(block, 110)
    assert b"killed due to memory pressure (OOM)" in joined.split(b"\n")[0]
    assert b"training loop interrupted" in joined.split(b"\n")[-2]  # padded short lines stay lines
    assert origin[0] == 0 and len(origin) > 2
    result = diagnose("plain line before\n" + "\n".join(WRAPPED_ROWS) + "\n", chunk=1 << 20)
    assert result.category == "out_of_memory" and result.evidence[0].line == 2


def test_an_ordinary_log_is_not_taken_for_a_wrapped_one() -> None:
    log = "".join(f"step {i} loss {1 / i:.4f} some text of varying length {'x' * (i % 7)}\n" for i in range(1, 200))
    assert wrap_width(log.encode()) == 0


def test_the_sampler_keeps_signature_lines_and_the_last_progress_line_of_each_block() -> None:
    patterns = PatternSet([("boom", "FATAL"), ("progress:kv", r"step=\d")])
    scanner = LogScanner(patterns)
    scanner.sampler = Sampler(warm=10, max_stride=8)
    lines = [f"step={i}" for i in range(1, 400)] + ["FATAL here"] + [f"step={i}" for i in range(400, 450)]
    data = ("\n".join(lines) + "\n").encode()
    found = [m for i in range(0, len(data), 64) for m in scanner.feed(data[i : i + 64])]  # a growing log
    progress_lines = [m for m in found if m.pattern == "progress:kv"]
    assert any(m.pattern == "boom" and m.line == 400 for m in found)
    assert 10 < len(progress_lines) < 200  # sampled after the first ten
    assert progress_lines[-1].text == "step=449"  # the newest progress is never dropped
    held = LogScanner(patterns)
    held.sampler = Sampler(warm=10, max_stride=8)
    held.sampler.hold = True
    held_found = [m for i in range(0, len(data), 64) for m in held.feed(data[i : i + 64])]
    assert len([m for m in held_found if m.pattern == "progress:kv"]) == 449


def test_records_of_nearly_equal_length_are_not_taken_for_wrapped_rows() -> None:
    rows = [
        f"{rank}: recovery-progress step={step} total=60 rank={rank} step_time=0.250 compute_time=0.250 loss=0.5"
        for step in range(1, 40)
        for rank in (0, 1)
    ]
    assert wrap_width(("\n".join(rows) + "\n").encode()) == 0
    fixed = [f"record {i:06d} " + "x" * 80 for i in range(50)]  # every row one width, none padded
    assert wrap_width(("\n".join(fixed) + "\n").encode()) == 0


def test_fixed_width_records_interleaved_with_other_lines_are_not_wrapped_rows() -> None:
    megatron = [
        f"0: [rank0]: iteration {s:8d}/ 1000000 | elapsed time per iteration (ms): 812.5 | lm loss: 2.5E+00 |"
        for s in range(1, 40)
    ]
    chatter = [f"{s % 8}: node{s % 4}:40{s:02d}:41{s:02d} [0] NCCL INFO Channel 0{s % 9}/32" for s in range(1, 40)]
    rows = [row for pair in zip(megatron, chatter, strict=True) for row in pair]
    assert wrap_width(("\n".join(rows) + "\n").encode()) == 0


# Real lines: a Jupyter notebook's Trainer failure (huggingface/transformers), a pynvml failure
# before the first step (sehoffmann/dmlcloud), a torchrun agent's traceback cut off by the
# console (meta-pytorch/torchtune), a MongoDB client (pymongo) and TensorFlow's OOM.
NOTEBOOK = """\
You're using a GPT2TokenizerFast tokenizer.
---------------------------------------------------------------------------
IndexError                                Traceback (most recent call last)
<ipython-input-15-856d04b69f6c> in <cell line: 18>()
     16     compute_metrics=compute_metrics,
     17 )
---> 18 trainer.train()

13 frames
/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py in embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
-> 2233     return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
"""


def test_ipythons_traceback_header_names_the_uncaught_class() -> None:
    result = diagnose(NOTEBOOK)
    assert (result.symptom, result.category, result.retryable) == ("crash", "application", False)
    assert result.evidence[0].line == 3 and "IndexError" in result.explanation


def test_a_class_generated_per_error_code_is_read_with_its_code() -> None:
    log = (
        "------- Training failed with an exception -------\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/dmlcloud/dmlcloud/core/pipeline.py", line 282, in run\n'
        "    self._pre_run()\n"
        '  File "/home/user/conda/lib/python3.12/site-packages/pynvml.py", line 1042, in _nvmlCheckReturn\n'
        "    raise NVMLError(ret)\n"
        "pynvml.NVMLError_Unknown: Unknown Error\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category) == ("crash", "hardware")
    assert "NVMLError_Unknown" in result.explanation
    assert (
        diagnose(
            log.replace(
                "NVMLError_Unknown: Unknown Error",
                "NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
            )
        ).category
        == "system_software"
    )


def test_a_log_cut_off_inside_a_traceback_died_of_the_class_its_last_frame_raised() -> None:
    log = (
        '  File "/home/user/venv/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 75\n'
        ", in get_state                    \n"
        '    base64_state: bytes = self._call_store("get", self._key)\n'
        '  File "/home/user/venv/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 11\n'
        "9, in _call_store                 \n"
        "    raise RendezvousConnectionError(\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("crash", "network", True)
    assert result.evidence[0].line == 6
    header_only = progress(1, 5) + "Traceback (most recent call last):\n" + '  File "train.py", line 9, in <module>\n'
    assert diagnose(header_only).symptom == "crash"
    assert "the log ends inside its traceback" in diagnose(header_only).explanation


def test_a_traceback_the_run_got_past_is_not_unfinished() -> None:
    log = "Traceback (most recent call last):\n" + '  File "train.py", line 9, in <module>\n' + progress(1, 12)
    assert diagnose(log).symptom == "none"


@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        ("pymongo.errors.ServerSelectionTimeoutError: localhost:27017: [Errno 61] Connection refused", "unknown", True),
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,160,160,131]",
            "out_of_memory",
            False,
        ),
    ],
)
def test_an_unknown_class_is_read_from_the_words_of_its_name_else_its_library(
    line: str, category: str, retryable: bool
) -> None:
    result = diagnose(traceback(line))
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)


def test_the_words_of_a_class_name() -> None:
    assert class_words("NVMLError_GpuIsLost") == ["nvml", "error", "gpu", "is", "lost"]
    assert class_words("KVCacheOutOfMemoryError") == ["kv", "cache", "out", "of", "memory", "error"]
    assert exception_fact("KVCacheOutOfMemoryError").category == "out_of_memory"  # type: ignore[union-attr]
    assert exception_fact("ShardServerGoneError") is None


def test_an_exception_whose_message_starts_on_the_next_line_is_told_by_that_message() -> None:
    # Lightning under Slurm (ai4d-iasc/trixie): PyTorch's driver check raises AssertionError with a
    # message that begins with a line break.
    log = (
        "Testing: 100% 2/2 [00:00<00:00,  5.64it/s]\n"
        "Traceback (most recent call last):\n"
        '  File "fc_model_additive.py", line 279, in <module>\n'
        "    main()\n"
        "AssertionError: \n"
        "The NVIDIA driver on your system is too old (found version 10010).\n"
        "Please update your GPU driver by downloading and installing a new\n"
    )
    result = diagnose(log)
    assert (result.category, result.retryable) == ("system_software", True)
    assert result.evidence[0].line == 6
    own = diagnose(log.replace("AssertionError: \n", "AssertionError: shapes differ\n"))
    assert own.category == "application"  # with a message of its own, the exception line speaks


@pytest.mark.parametrize(
    ("line", "category", "retryable"),
    [
        (
            "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Buffer has been deleted or donated.",
            "application",
            False,
        ),
        (
            "XlaRuntimeError: UNAVAILABLE: Unable to establish connection to ifrt_proxy server, please check provided address",
            "network",
            True,
        ),
        ("jaxlib.xla_extension.XlaRuntimeError: something without a status code", "unknown", True),
    ],
)
def test_a_class_whose_message_decides_is_read_by_the_status_code_heading_it(
    line: str, category: str, retryable: bool
) -> None:
    # Real JAX errors (a reinforcement-learning run's donated buffer; a GKE IFRT proxy connection)
    result = diagnose(traceback(line))
    assert (result.symptom, result.category, result.retryable) == ("crash", category, retryable)
