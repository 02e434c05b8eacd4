"""Whole excerpts of real logs where a process died and the only report is the shell's, printed
in a translated locale (glibc's strsignal() text and bash's "(core dumped)" in the machine's
language: a zh_CN `段错误 (核心已转储)`, a Russian `Ошибка сегментирования`), or a launcher's line  # noqa: RUF001 (the real text)
about the rank a signal or an exit status ended (mpirun's SIGILL and SIGFPE, horovodrun's
"Process N exit with status code"), each with where it was printed; and the alarming but harmless
lines around them (a sentence that names the error, teardown warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # MVIG-SJTU/AlphaPose issue 702: a zh_CN bash running the training script (bash before 4.4
    # translated "(core dumped)" as 吐核; the status text is padded to 24 bytes, so the command
    # follows the note directly).
    (
        "https://github.com/MVIG-SJTU/AlphaPose/issues/702",
        "./scripts/train.sh: 行 8: 32488 段错误 (吐核)python ./scripts/train.py --exp-id ${EXPID} --cfg ${CONFIG}",
        "unknown",
        True,
        "shell-signal-l10n-zh-cn-sigsegv",
    ),
    # luhaofang/tripletloss issue 33: Caffe sets up its layers, then the zh_CN shell's report.
    (
        "https://github.com/luhaofang/tripletloss/issues/33",
        "I0817 04:13:15.164782  3010 net.cpp:120] Setting up conv1_1\n"
        "I0817 04:13:15.213511  3010 net.cpp:127] Top shape: 30 64 224 224 (96337920)\n"
        "段错误 (核心已转储)",
        "unknown",
        True,
        "shell-signal-l10n-zh-cn-sigsegv",
    ),
    # Jittor/jittor issue 444: the compiler's start-up lines, then glibc's zh_CN "Aborted" (the
    # catalogue's text before 2024) with bash's core note.
    (
        "https://github.com/Jittor/jittor/issues/444",
        "[i 0525 13:49:44.560204 08 __init__.py:227] Total mem: 251.78GB, using 16 procs for compiling.\n"
        "[i 0525 13:49:44.690975 08 jit_compiler.cc:28] Load cc_path: /usr/bin/g++\n"
        "已放弃 (核心已转储)",
        "unknown",
        True,
        "shell-signal-l10n-zh-cn-sigabrt-1",
    ),
    # Bafomet666/OSINT-SAN issue 18: a Russian shell's report alone on its line, no core dumped.
    (
        "https://github.com/Bafomet666/OSINT-SAN/issues/18",
        "python osintsan.py \nОшибка сегментирования",  # noqa: RUF001 (the real text)
        "unknown",
        True,
        "shell-signal-l10n-ru-sigsegv",
    ),
    # open-simulation-platform/demo-cases issue 59: a German shell's report with its core note.
    (
        "https://github.com/open-simulation-platform/demo-cases/issues/59",
        "Speicherzugriffsfehler (Speicherabzug geschrieben)",
        "unknown",
        True,
        "shell-signal-l10n-de-sigsegv",
    ),
    # 2014gaokao/pedestrian-attribute-recognition-with-GCN issue 10: SIGILL in zh_CN is the
    # node's CPU (tables/signals.yaml), as the English `Illegal instruction (core dumped)` is.
    (
        "https://github.com/2014gaokao/pedestrian-attribute-recognition-with-GCN/issues/10",
        "非法指令 (核心已转储)",
        "system_software",
        True,
        "shell-signal-l10n-zh-cn-sigill",
    ),
    # horovod/horovod issue 298: Open MPI's launcher names the rank SIGILL ended (macOS's
    # strsignal() adds the number).
    (
        "https://github.com/horovod/horovod/issues/298",
        "-------------------------------------------------------\n"
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "-------------------------------------------------------\n"
        "--------------------------------------------------------------------------\n"
        "mpirun noticed that process rank 1 with PID 0 on node tw-mbp-gbai exited on signal 4 (Illegal instruction: 4).\n"
        "--------------------------------------------------------------------------",
        "system_software",
        True,
        "mpi-rank-illegal-instruction",
    ),
    # opendatalab/MinerU issue 1628: PyCharm's run console names the signal; SIGILL is the CPU.
    (
        "https://github.com/opendatalab/MinerU/issues/1628",
        "Process finished with exit code 132 (interrupted by signal 4:SIGILL)",
        "system_software",
        True,
        "shell-illegal-instruction",
    ),
    # davisking/dlib issue 2146: the same console before the colon lost its space.
    (
        "https://github.com/davisking/dlib/issues/2146",
        "DlibError: Process finished with exit code 132 (interrupted by signal 4: SIGILL)",
        "system_software",
        True,
        "shell-illegal-instruction",
    ),
    # horovod/horovod issue 3472: horovodrun's report of rank 0's exit status (137, SIGKILL) before
    # its own traceback.
    (
        "https://github.com/horovod/horovod/issues/3472",
        "Process 0 exit with status code 137.\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/virtualenv/torch/bin/horovodrun", line 8, in <module>\n'
        "    sys.exit(run_commandline())",
        "unknown",
        True,
        "horovod-rank-exit-status",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_translated_and_launcher_reports(
    source: str, text: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_mpirun_sigill_names_rank_and_node() -> None:
    # horovod/horovod issue 298: the launcher's line says which rank died and where.
    found = diagnose(
        "mpirun noticed that process rank 1 with PID 0 on node tw-mbp-gbai exited on signal 4 (Illegal instruction: 4)."
    )
    assert (found.implicated.ranks, found.implicated.nodes) == ([1], ["tw-mbp-gbai"])


def test_horovodrun_exit_status_names_the_rank() -> None:
    # horovod/horovod issue 3472: the number in horovodrun's line is the worker's rank.
    found = diagnose("Process 0 exit with status code 137.")
    assert found.implicated.ranks == [0]


def test_mpirun_sigfpe_is_the_program() -> None:
    # A twoPhaseEulerFoam solver under mpirun, as a user's OpenFOAM troubleshooting notes in a
    # public repository quote it: the rank divided by zero, which a rerun meets again.
    found = diagnose(
        "mpirun noticed that process rank 5 with PID 2679 on node emps-andrew exited on signal 8 (Floating point exception)."
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "mpi-rank-floating-point-exception",
        "application",
        False,
    )


HEALTHY = [
    # hit-computer/SC-LSTM issue 9: a sentence that names the error is no report of it.
    "您好，感谢您的代码。我在运行train.py程序时，程序突然中断，并提示：段错误。",  # noqa: RUF001 (the real text)
    # 2014gaokao/pedestrian-attribute-recognition-with-GCN issue 10: the same in prose.
    "运行到该文件的line204时一直出现错误：非法指令",  # noqa: RUF001 (the real text)
    # Bafomet666/OSINT-SAN issue 18: the text inside a sentence.
    "Ошибка сегментирования возникает при импорте core.core:",
    # zju3dv/Vox-Fusion issue 6: helper processes end and PyTorch warns about shared tensors.
    "tracking frame: 100%|███████████████████████████████████████| 99/99 [01:41<00:00,  1.02s/it]\n"
    "========== stop_mapping set ==========\n"
    "******* tracking process died *******\n"
    "[W CudaIPCTypes.cpp:15] Producer process has been terminated before all shared CUDA tensors released."
    " See Note [Sharing CUDA tensors]\n"
    "******* mapping process died *******",
    # horovod/gloo_run.py: a worker that ended well is not reported; this is its format with code 0.
    "Process 0 exit with status code 0.",
    # The JetBrains run console after a clean exit.
    "Process finished with exit code 0",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_sentences_and_teardown_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
