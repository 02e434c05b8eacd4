"""Logs as people paste them into issue threads: cut at the top or bottom, every line prefixed by
a rank or a worker, a timestamp row before each traceback row, Windows paths, repeated reports of
exceptions CPython ignored (real lines, with sources)."""

from __future__ import annotations

from tests.unit.real_lines import diagnose, verdict

# CPython prints "Exception ignored in: <function StorageWeakRef.__del__ ...>" and a traceback for
# every storage torch frees at interpreter exit; the program had finished.
IGNORED_REPORT = (
    "Exception ignored in: <function StorageWeakRef.__del__ at 0x7f3144f34280>\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/anaconda3/lib/python3.8/site-packages/torch/multiprocessing/reductions.py", line 36, in __del__\n'
    '  File "/opt/anaconda3/lib/python3.8/site-packages/torch/storage.py", line 520, in _free_weak_ref\n'
    "AttributeError: 'NoneType' object has no attribute '_free_weak_ref'\n"
)


def test_a_paste_that_starts_inside_a_run_of_ignored_reports_stays_healthy() -> None:
    # https://github.com/LuYang-2023/Insulator-defect-detection/issues/3: the paste begins with the
    # last line of one report (its header and frames cut off), then the same report again.
    text = "AttributeError: 'NoneType' object has no attribute '_free_weak_ref'\n" + IGNORED_REPORT * 2
    assert diagnose(text).symptom == "none"


def test_the_program_s_own_error_before_the_ignored_reports_is_still_the_failure() -> None:
    # https://github.com/ultralytics/yolov5/issues/7127: train.py's own AttributeError, then the
    # ignored reports at exit (Windows paths).
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 360, in train\n'
        "    if callbacks.stop_training:\n"
        "AttributeError: 'Callbacks' object has no attribute 'stop_training'\n"
        "Exception ignored in: <function StorageWeakRef.__del__ at 0x00000196E83EAD30>\n"
        "Traceback (most recent call last):\n"
        '  File "E:\\condaaa\\lib\\site-packages\\torch\\multiprocessing\\reductions.py", line 36, in __del__\n'
        '  File "E:\\condaaa\\lib\\site-packages\\torch\\storage.py", line 520, in _free_weak_ref\n'
        "AttributeError: 'NoneType' object has no attribute '_free_weak_ref'\n"
    )
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "application", False)
    assert "stop_training" in found.evidence[0].text


def test_a_different_bare_error_beside_ignored_reports_still_counts() -> None:
    # The ignored report's own words only: another bare exception line at the end is the program's.
    text = IGNORED_REPORT + "KeyError: 'lr'\n"
    assert diagnose(text).symptom == "crash"


def test_cupy_out_of_memory_as_chainer_prints_it() -> None:
    # https://github.com/Bartzi/see/issues/27: Chainer's trainer prints the CuPy error's message
    # before the traceback, and the paste stops inside the traceback.
    text = (
        "Exception in main training loop: out of memory to allocate 172800000 bytes (total 4223769600 bytes)\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/Projects/see/lib/python3.5/site-packages/chainer/training/trainer.py", line 299, in run\n'
        "    update()\n"
    )
    assert verdict(text) == ("cupy-out-of-memory", "out_of_memory", False)


def test_slowfast_nan_loss_check() -> None:
    # https://github.com/Buzz-Beater/LEMMA/issues/5 (SlowFast's misc.check_nan_losses)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usa/user/LEMMA/utils/model_utils/misc.py", line 27, in check_nan_losses\n'
        '    raise RuntimeError("ERROR: Got NaN losses {}".format(datetime.now()))\n'
        "RuntimeError: ERROR: Got NaN losses 2021-10-28 23:20:46.797813\n"
    )
    assert verdict(text) == ("loss-not-finite", "application", False)


def test_rank_prefixed_traceback_after_nccl_frames() -> None:
    # https://github.com/vllm-project/vllm/issues/10453: NCCL's unwinding INFO lines (host:pid:tid
    # prefix), then rank 1's traceback; the paste cuts rank 2's.
    text = (
        "h100-2:412:433 [0] NCCL INFO init.cc:1548 -> 3\n"
        "h100-2:412:433 [0] NCCL INFO group.cc:64 -> 3 [Async thread]\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/vllm-workspace/test.py", line 8, in <module>\n'
        "[rank1]:     dist.all_reduce(data, op=dist.ReduceOp.SUM)\n"
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317,"
        " internal error - please report this issue to the NCCL developers, NCCL version 2.21.5\n"
        "[rank1]: ncclInternalError: Internal check failed.\n"
        "[rank1]: Last error:\n\n"
        "[rank2]: Traceback (most recen\n"
    )
    found = diagnose(text)
    assert (found.category, found.retryable) == ("system_software", True)
    assert 1 in found.implicated.ranks


def test_a_timestamp_row_before_every_traceback_row() -> None:
    # https://github.com/deepspeedai/DeepSpeed/issues/5799: a log viewer's copy puts each line's
    # time on a row of its own; the paste ends inside the traceback.
    rows = [
        "Traceback (most recent call last):",
        '  File "/mft_peft_hf/src/pefts/mft_accelerate.py", line 506, in <module>',
        "    main()",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1520, in _call_impl',
        "    return forward_call(*args, **kwargs)",
    ]
    text = "".join(f"2024-07-24 08:45:13.616\n{row}\n" for row in rows)
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)


def test_ray_worker_prefixed_tracebacks_under_the_trainer_s_error() -> None:
    # https://github.com/ray-project/ray/issues/50516
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/ma-user/anaconda3/envs/MindSpore/lib/python3.9/site-packages/ray/train/base_trainer.py",'
        " line 638, in fit\n"
        "    raise TrainingFailedError(\n"
        "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error"
        " messages for a cause.\n"
        "(RayTrainWorker pid=342410) Process ForkServerProcess-3:\n"
        "(RayTrainWorker pid=342410) Traceback (most recent call last):\n"
    )
    found = diagnose(text)
    assert (found.symptom, found.retryable) == ("crash", True)


def test_launcher_info_lines_of_a_healthy_start() -> None:
    # https://github.com/deepspeedai/DeepSpeed/issues/1923 (the successful one-node run)
    text = (
        "[2022-04-28 04:19:02,152] [INFO] [launch.py:96:main] WORLD INFO DICT: {'algo-1': [0, 1, 2, 3, 4, 5, 6, 7]}\n"
        "[2022-04-28 04:19:02,152] [INFO] [launch.py:102:main] nnodes=1, num_local_procs=8, node_rank=0\n"
        "[2022-04-28 04:19:02,153] [INFO] [launch.py:116:main] dist_world_size=8\n"
    )
    assert diagnose(text).symptom == "none"


# Colour left in a log written by a program that coloured its output for a terminal. The lines are
# real ones with the codes their printers add: Ray's print_worker_logs (python/ray/_private/
# worker.py) colours the `(name pid=, ip=)` prefix with colorama (Fore.CYAN ... Style.RESET_ALL);
# IPython's ultratb colours the class name and the rule of its traceback header (`\x1b[0;31m`).
CYAN, RED, RESET = "\x1b[36m", "\x1b[0;31m", "\x1b[0m"


def test_colour_codes_around_a_ray_prefix_leave_the_node_and_the_exception() -> None:
    # https://github.com/ray-project/ray/issues/50516 (the worker lines), coloured as Ray prints them
    prefix = f"{CYAN}(RayTrainWorker pid=342410, ip=10.0.0.1){RESET}"
    text = (
        f"{prefix} Traceback (most recent call last):\n"
        f'{prefix}   File "/home/ma-user/anaconda3/envs/MindSpore/lib/python3.9/multiprocessing/managers.py",'
        " line 802, in _callmethod\n"
        f"{prefix}     conn = self._tls.connection\n"
        f"{prefix} AttributeError: 'ForkAwareLocal' object has no attribute 'connection'\n"
    )
    found = diagnose(text)
    assert (found.symptom, found.category) == ("crash", "application")
    assert "10.0.0.1" in found.implicated.nodes


def test_a_coloured_notebook_traceback_header() -> None:
    # https://github.com/BayraktarLab/cell2location/issues/366, with IPython's colours
    text = (
        f"{RED}---------------------------------------------------------------------------{RESET}\n"
        f"{RED}OutOfMemoryError{RESET}                          Traceback (most recent call last)\n"
        "Cell In[23], line 1\n"
        "----> 1 mod.train(\n"
    )
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "out_of_memory", False)


def test_a_colour_code_split_across_two_reads_of_a_growing_log() -> None:
    # The watch reads a log as it grows: a read may end inside an escape sequence.
    from recovery.activities.signatures.diagnosis import LogDiagnoser

    line = f"{RED}RuntimeError{RESET}: CUDA error: an illegal memory access was encountered\n".encode()
    cut = line.index(b"31m")
    diagnoser = LogDiagnoser(whole=True)
    diagnoser.feed(b"Traceback (most recent call last):\n" + line[:cut])
    diagnoser.feed(line[cut:])
    diagnoser.finish()
    found = diagnoser.diagnosis()
    assert found.symptom == "crash"
    assert found.evidence[0].text.startswith("RuntimeError: CUDA error")


# https://github.com/vllm-project/vllm/issues/4062: Ray's driver folds identical lines from its
# workers into one and appends ` [repeated Nx across cluster]` (python/ray/_private/ray_logging.py,
# log deduplication); the thread's frames, then the exception its title names.
VLLM_FRAMES = (
    "(RayWorkerVllm pid=2190572) ERROR 04-14 06:12:53 ray_utils.py:50]   File"
    ' "/home/data/user/prod/github/vllm-v0.4.0.post1-2024-04-14/vllm/distributed/device_communicators/pynccl.py",'
    " line 249, in __init__ [repeated 6x across cluster]\n"
    "(RayWorkerVllm pid=2190572) ERROR 04-14 06:12:53 ray_utils.py:50]     dist.broadcast(tensor, src=0)"
    " [repeated 6x across cluster]\n"
)


def test_an_exception_line_ray_folded_across_workers() -> None:
    text = (
        "(RayWorkerVllm pid=2190572) ERROR 04-14 06:12:53 ray_utils.py:50] Traceback (most recent call last):\n"
        + VLLM_FRAMES
        + "(RayWorkerVllm pid=2190572) ERROR 04-14 06:12:53 ray_utils.py:50] AttributeError: 'NCCLCommunicator'"
        " object has no attribute 'comm' [repeated 6x across cluster]\n"
    )
    assert diagnose(text).category == "application"


def test_a_bare_class_ray_folded_across_workers() -> None:
    # The same layout with a class that carries no message (an `assert` without one).
    text = (
        "(RayTrainWorker pid=1234, ip=10.0.0.1) Traceback (most recent call last):\n"
        + VLLM_FRAMES
        + "(RayTrainWorker pid=1234, ip=10.0.0.1) AssertionError [repeated 3x across cluster]\n"
    )
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "application", False)
