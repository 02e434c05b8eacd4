"""Whole excerpts of real logs where a process died and the program itself printed no error:
the C library's abort messages (its stack protector, `Fatal glibc error:`, nptl's unrethrown
cancellation), the shells' and wrappers' reports of the death (fish's job line, make's recipe
status and missing rule, coreutils timeout), each with where it was printed; and the alarming
but harmless lines the same tools print (nohup's notice, make's up-to-date target and `make
clean`, a shell's notice that a helper it started was terminated), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # colesbury/nogil issue 43: glibc's stack protector alone, with no shell line after it.
    (
        "https://github.com/colesbury/nogil/issues/43",
        "*** stack smashing detected ***: <unknown> terminated",
        "unknown",
        True,
        "glibc-fortify-abort",
    ),
    # fhs/pyhdf issue 5: glibc before 2.32 names the program and prints a backtrace.
    (
        "https://github.com/fhs/pyhdf/issues/5",
        "In [3]: sd.datasets()\n"
        "*** stack smashing detected ***: /export/data/home/user/venv/user/bin/python3.4 terminated\n"
        "======= Backtrace: =========\n"
        "/lib64/libc.so.6(__fortify_fail+0x37)[0x348b302697]",
        "unknown",
        True,
        "glibc-fortify-abort",
    ),
    # tizonia/tizonia-openmax-il issue 808: glibc 2.37's malloc assertion, then fish's job line.
    (
        "https://github.com/tizonia/tizonia-openmax-il/issues/808",
        "Fatal glibc error: malloc.c:2607 (sysmalloc): assertion failed: (old_top == initial_top (av)"
        " && old_size == 0) || ((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top) &&"
        " ((unsigned long) old_end & (pagesize - 1)) == 0)\n"
        "fish: Job 1, 'tizonia --soundcloud-user-likes' terminated by signal SIGABRT (Abort)",
        "unknown",
        True,
        "glibc-fatal-error",
    ),
    # pyocd/pyOCD issue 1647: the same assertion alone.
    (
        "https://github.com/pyocd/pyOCD/issues/1647",
        "Fatal glibc error: malloc.c:2594 (sysmalloc): assertion failed: (old_top == initial_top (av)"
        " && old_size == 0) || ((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top) &&"
        " ((unsigned long) old_end & (pagesize - 1)) == 0)",
        "unknown",
        True,
        "glibc-fatal-error",
    ),
    # RI-SE/ATOS pull 557: a ROS node's process ends on nptl's unrethrown forced unwind.
    (
        "https://github.com/RI-SE/ATOS/pull/557",
        "1649083846.0016840 [object_control-3] failed to take global rclcpp logging mutex\n"
        "1649083846.0018322 [object_control-3] FATAL: exception not rethrown",
        "unknown",
        True,
        "glibc-fatal-error",
    ),
    # fish-shell/fish-shell issue 10265: fish's own line is the only report (SIGSEGV: segfault).
    (
        "https://github.com/fish-shell/fish-shell/issues/10265",
        "fish: Job 1, './a.out' terminated by signal SIGSEGV (Address boundary error)",
        "unknown",
        True,
        "segfault",
    ),
    # VowpalWabbit/vowpal_wabbit issue 744: make's status 139 (a SIGSEGV) ends the training recipe.
    (
        "https://github.com/VowpalWabbit/vowpal_wabbit/issues/744",
        "make mnist8m.test.confusion\n"
        "./do-mnist8m-train\n"
        "final_regressor = mnist8m.model\n"
        "0.240234 0.173828         1024         1024.0        8        8       97\n"
        "make: *** [mnist8m.model] Error 139",
        "unknown",
        True,
        "make-recipe-failed",
    ),
    # facebookresearch/faiss issue 3779: sub-make recipes killed (137) and the shell's Killed.
    (
        "https://github.com/facebookresearch/faiss/issues/3779",
        "make[3]: *** [faiss/gpu/CMakeFiles/faiss_gpu.dir/build.make:105:"
        " faiss/gpu/CMakeFiles/faiss_gpu.dir/GpuDistance.cu.o] Error 137\n"
        "Killed",
        "unknown",
        True,
        "make-recipe-failed",
    ),
    # jcwang-gh/classifier-free-diffusion-guidance-Pytorch issue 6: no such target.
    (
        "https://github.com/jcwang-gh/classifier-free-diffusion-guidance-Pytorch/issues/6",
        "make: *** No rule to make target 'train'.  Stop.",
        "application",
        False,
        "make-no-rule",
    ),
    # tesseract-ocr/tesstrain issue 412: a prerequisite of training (an input file) is missing.
    (
        "https://github.com/tesseract-ocr/tesstrain/issues/412",
        "make training MODEL_NAME=my_model_name START_MODEL=fra TESSDATA=../tessdata/\n"
        "make: *** No rule to make target 'data/my_model_name-ground-truth/704801.lstmf', needed by"
        " 'data/my_model_name/all-lstmf'.  Stop.",
        "application",
        False,
        "make-no-rule",
    ),
    # dongyi-kim/10weeks-codingtest issue 14: timeout's notice, run into a localized make line.
    (
        "https://github.com/dongyi-kim/10weeks-codingtest/issues/14",
        "timeout: the monitored command dumped core make: *** [cmd] 오류 139",
        "unknown",
        True,
        "timeout-command-dumped-core",
    ),
    # xjasonlyu/98tang-daysign issue 22: the shell's line says which signal (SIGILL), and it wins.
    (
        "https://github.com/xjasonlyu/98tang-daysign/issues/22",
        "timeout: the monitored command dumped core\n"
        '/ql/shell/otask.sh: line 95:  2367 Illegal instruction     $timeoutCmd $which_program $file_param "${script_params[@]}"',
        "system_software",
        True,
        "shell-illegal-instruction",
    ),
    # meshtastic/web issue 148: a container's glibc needs a newer x86-64 level than the VM's CPU.
    (
        "https://github.com/meshtastic/web/issues/148",
        "Attaching to mesh_meshtastic_1\nmeshtastic_1  | Fatal glibc error: CPU does not support x86-64-v2",
        "system_software",
        True,
        "glibc-cpu-isa-level",
    ),
    # qastack.jp, unix 116959 (a translated Unix & Linux answer): bash's job-control report of a
    # job killed from another shell.
    (
        "https://qastack.jp/unix/116959/there-are-stopped-jobs-on-bash-exit",
        "user@mysystem:~$ kill 17781\n[1]+ Killed python",
        "unknown",
        True,
        "bash-job-status",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_process_deaths(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_c_library_abort_keeps_the_node_srun_names() -> None:
    # bahlolab/superSTR issue 21: the stack protector's line names no host; srun's line after it
    # says on which node the task aborted.
    found = diagnose(
        "*** stack smashing detected ***: <unknown> terminated\nsrun: error: mforge157: task 0: Aborted (core dumped)"
    )
    assert (found.evidence[0].signature, found.implicated.nodes) == ("glibc-fortify-abort", ["mforge157"])


def test_malloc_corruption_wins_over_the_glog_and_fish_reports() -> None:
    # MaybeShewill-CV/sky-detector issue 9: glibc's message is the cause; glog's SIGABRT dump and
    # fish's job line report the abort it caused.
    found = diagnose(
        "malloc(): corrupted top size\n"
        '*** Aborted at 1597966163 (unix time) try "date -d @1597966163" if you are using GNU date ***\n'
        "*** SIGABRT (@0x3e80007dfb9) received by PID 516025 (TID 0x7f445ff2da40) from PID 516025; stack trace: ***\n"
        "fish: Job 2, “./sky-detector ../data/ ./” terminated by signal SIGABRT (Abort)"
    )
    assert (found.evidence[0].signature, found.category) == ("heap-corruption", "unknown")


def test_program_error_under_nohup_wins() -> None:
    # philarkwright/DGA-Detection issue 4: nohup's notice is no failure; python's missing file is.
    found = diagnose(
        "nohup: ignoring input and appending output to 'nohup.out'\n"
        "python: can't open file 'dga-detection.py': [Errno 2] No such file or directory"
    )
    assert (found.category, found.retryable) == ("application", False)


HEALTHY = [
    # orobix/retina-unet issue 32: the training script starts itself under nohup.
    "2. Run the training on GPU with nohup\nnohup: ignoring input and redirecting stderr to stdout",
    # TsingZ0/PFLlib issue 195: nohup's notice alone.
    "nohup: ignoring input",
    # SydCaption/SAAT issue 3: the train target is up to date (its checkpoint exists).
    "make: Nothing to be done for 'train'.",
    # tesseract-ocr/tesstrain issue 58: make clean's recipe lines, then the next command.
    "root@CUDA1:/home/ocrd-train# make clean\n"
    "find data/ground-truth -name '*.box' -delete\n"
    "rm -rf data/checkpoints\n"
    "root@CUDA1:/home/ocrd-train# make training",
    # johanhaleby/kubetail pull 50: zsh's notice that a helper the script started was terminated.
    "[1]    12991 terminated  ./kubetail service -c container",
    # Cinnamon/kotaemon issue 412: bash's job-control line for a job started in the background.
    "(kotaemon) root@host:~/miniconda3/envs/kotaemon# nohup python3 app.py > screen.txt 2>&1 &\n[3] 148451",
    # zhou13/lcnn issue 29: the TensorBoard helper is stopped when training reaches max_epoch.
    "TensorBoard caught SIGTERM; exiting...",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_wrapper_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
