"""Whole excerpts of real logs from macOS and Apple Silicon runs: the BSD-style reports of a
process a signal ended (Apple's strsignal() text with its number, `Abort trap: 6`, `Illegal
instruction: 4`, `Trace/BPT trap: 5`, in a shell's job report or a crash report), TensorFlow's
stack trace handler (`*** Received signal N ***`), zsh's `trace trap`, libc++abi's terminate
message, Metal Performance Shaders' failed assertions and the Objective-C runtime's fork-safety
crash, each with where it was printed; and the alarming but harmless lines of MPS training
(CPU fallback warnings, a Metal command buffer error the run goes on after), which must stay
healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # iamc/ML-CM-2019 issue 3: two OpenMP runtimes, then the shell's report of the abort.
    (
        "https://github.com/iamc/ML-CM-2019/issues/3",
        "OMP: Error #15: Initializing libiomp5.dylib, but found libiomp5.dylib already initialized.\nAbort trap: 6",
        "unknown",
        True,
        "shell-signal-bsd-sigabrt",
    ),
    # tensorflow/tensorflow issue 25822: the interactive shell's report of SIGILL on import.
    (
        "https://github.com/tensorflow/tensorflow/issues/25822",
        ">>> import tensorflow\nIllegal instruction: 4",
        "system_software",
        True,
        "shell-signal-bsd-sigill",
    ),
    # pypa/pip issue 5131: SIGTRAP as macOS's shell reports it.
    (
        "https://github.com/pypa/pip/issues/5131",
        "$ pip3 install flake8\nCollecting flake8\nTrace/BPT trap: 5\n$ ",
        "unknown",
        True,
        "shell-signal-bsd-sigtrap",
    ),
    # matplotlib/matplotlib issue 23046: macOS's crash report of the python process.
    (
        "https://github.com/matplotlib/matplotlib/issues/23046",
        "Crashed Thread:        0  Dispatch queue: com.apple.main-thread\n\n"
        "Exception Type:        EXC_BREAKPOINT (SIGTRAP)\n"
        "Exception Codes:       0x0000000000000001, 0x00000001c2e25514\n"
        "Exception Note:        EXC_CORPSE_NOTIFY\n\n"
        "Termination Reason:    Namespace SIGNAL, Code 5 Trace/BPT trap: 5\n"
        "Terminating Process:   exc handler [97780]",
        "unknown",
        True,
        "shell-signal-bsd-sigtrap",
    ),
    # DeepLabCut/DeepLabCut pull 1970: TensorFlow's handler on an M1 Mac, inside the Metal plugin.
    (
        "https://github.com/DeepLabCut/DeepLabCut/pull/1970",
        "*** Received signal 11 ***\n"
        "*** BEGIN MANGLED STACK TRACE ***\n"
        "0   libtensorflow_framework.2.dylib     0x000000010ac902fc _ZN10tensorflow7testingL17StacktraceHandlerEiP9__siginfoPv + 160\n"
        "1   libsystem_platform.dylib            0x000000018ef874a4 _sigtramp + 56\n"
        "2   MPSNDArray                          0x000000019969dd38 MPSSetResourcesOnCommandEncoder + 9684",
        "unknown",
        True,
        "fatal-signal-handler",
    ),
    # DeepLabCut/DeepLabCut pull 1519: the same handler after a progress bar, on macOS CI.
    (
        "https://github.com/DeepLabCut/DeepLabCut/pull/1519",
        "244it [00:02, 127.15it/s]\n"
        "256it [00:02, 116.18it/s]*** Received signal 11 ***\n"
        "*** BEGIN MANGLED STACK TRACE ***",
        "unknown",
        True,
        "fatal-signal-handler",
    ),
    # DeepLabCut/DeepLabCut issue 2427: libc++abi's terminate message, then zsh's trace trap.
    (
        "https://github.com/DeepLabCut/DeepLabCut/issues/2427",
        "libc++abi: terminating due to uncaught exception of type std::__1::system_error: recursive_mutex lock"
        " failed: Invalid argument\n"
        "zsh: trace trap  python3 -m deeplabcut",
        "unknown",
        True,
        "cpp-terminate",
    ),
    # kijai/ComfyUI-ADMotionDirector issue 3: MPS's failed assertion at step 0, then bash's job
    # report with the BSD text; the assertion is the cause.
    (
        "https://github.com/kijai/ComfyUI-ADMotionDirector/issues/3",
        "global_step: 0\n"
        "Steps:   0%|          | 0/50 [00:00<?, ?it/s]/AppleInternal/Library/BuildRoots/4e1473ee-9f66-11ee-8daf-"
        "cedaeb4cabe2/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/Types/MPSNDArray.mm:120:"
        " failed assertion `[MPSNDArrayDescriptor sliceDimension:withSubrange:] error: subRange.start (16) is not"
        " less than length of dimension[2] (16)'\n"
        "/Users/user/Desktop/Comfy.command: line 12:  1674 Abort trap: 6           python main.py --force-fp16",
        "application",
        False,
        "mps-failed-assertion",
    ),
    # ultralytics/yolov5 issue 11235: the same assertion, then zsh's job line.
    (
        "https://github.com/ultralytics/yolov5/issues/11235",
        "  0%|          | 0/8 [00:00<?, ?it/s]/AppleInternal/Library/BuildRoots/f0468ab4-4115-11ed-8edc-7ef33c48bc85"
        "/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/Types/MPSNDArray.mm:82: failed"
        " assertion `[MPSNDArrayDescriptor sliceDimension:withSubrange:] error: subRange.start (3) is not less than"
        " length of dimension[1] (3)'\n"
        "[1]    47124 abort      python segment/train.py --img 640 --batch 8 --epochs 3 --data  --weights",
        "application",
        False,
        "mps-failed-assertion",
    ),
    # seuros/action_mcp issue 112: the Objective-C runtime's fork-safety crash in a forked worker.
    (
        "https://github.com/seuros/action_mcp/issues/112",
        "objc[81052]: +[__NSCFConstantString initialize] may have been in progress in another thread when fork()"
        " was called.\n"
        "objc[81052]: +[__NSCFConstantString initialize] may have been in progress in another thread when fork()"
        " was called. We cannot safely call it or ignore it in the fork() child process. Crashing instead. Set a"
        " breakpoint on objc_initializeAfterForkError to debug.",
        "application",
        False,
        "objc-fork-initialize-crash",
    ),
    # lakshayg/tensorflow-build-archived issue 6: TensorFlow's CPU feature check, then the abort;
    # the binary's missing instructions are the cause.
    (
        "https://github.com/lakshayg/tensorflow-build-archived/issues/6",
        "    2017-07-11 22:23:19.310625: F tensorflow/core/platform/cpu_feature_guard.cc:35] The TensorFlow library"
        " was compiled to use FMA instructions, but these aren't available on your machine.\n"
        "    Abort trap: 6",
        "system_software",
        True,
        "tensorflow-cpu-feature-missing",
    ),
    # pytorch/pytorch issue 46648: DataLoader workers under spawn on macOS without the main guard.
    (
        "https://github.com/pytorch/pytorch/issues/46648",
        "...\n"
        "RuntimeError:\n"
        "        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n"
        "...\n"
        "RuntimeError: DataLoader worker (pid 88201) exited unexpectedly with exit code 1. Details are lost due to"
        " multiprocessing. Rerunning with num_workers=0 may give better error trace.",
        "application",
        False,
        "multiprocessing-spawn-main-guard",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_macos_deaths(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


@pytest.mark.parametrize(
    ("line", "signature", "category", "retryable"),
    [
        # The catalog's examples of the forms, one per signal the table keeps.
        ("Killed: 9", "shell-signal-bsd-sigkill", "unknown", True),
        ("Floating point exception: 8", "shell-signal-bsd-sigfpe", "application", False),
        ("Exception Type:        EXC_CRASH (SIGABRT)", "shell-signal-bsd-sigabrt", "unknown", True),
        ("*** Received signal 4 ***", "shell-illegal-instruction", "system_software", True),
        ("*** Received signal 8 ***", "shell-floating-point-exception", "application", False),
    ],
)
def test_each_signal_keeps_its_category(line: str, signature: str, category: str, retryable: bool) -> None:
    found = diagnose("Epoch 1: 10/100 loss=2.3\n" + line)
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # pytorch/pytorch issue 106594: an op falls back to the CPU.
    "UserWarning: The operator 'aten::sgn.out' is not currently supported on the MPS backend and will fall back to"
    " run on the CPU. This may have performance implications. (Triggered internally at /Users/runner/work/_temp/"
    "anaconda/conda-bld/pytorch_1690702789476/work/aten/src/ATen/mps/MPSFallback.mm:13.)\n"
    "  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    # pytorch/pytorch issue 132110: a fallback before macOS 13, then the loss.
    "UserWarning: MPS: nonzero op is supported natively starting from macOS 13.0. Falling back on CPU. This may"
    " have performance implications. (Triggered internally at /Users/runner/work/pytorch/pytorch/pytorch/aten/src/"
    "ATen/native/mps/operations/Indexing.mm:335.)\n"
    "  nonzero_finite_vals = torch.masked_select(\n"
    "tensor(0.0029, device='mps:0', grad_fn=<NllLossBackward0>)",
    # rasbt/machine-learning-notes issue 20: Metal's command buffer error; the training completed.
    "Error: command buffer exited with error status.\n"
    "\tThe Metal Performance Shaders operations encoded on it may not have completed.\n"
    "\tError: \n"
    "\t(null)\n"
    "\tInternal Error (0000000e:Internal Error)\n"
    "\t<AGXG13XFamilyCommandBuffer: 0x3c48bf500>\n"
    "    label = <none> ",
    # Lines that name a BSD signal text without being a shell's report of one.
    'I get "Abort trap: 6" when I run the training script',
    "Tasks Killed: 9",
    "[1]+  Terminated: 15          python train.py",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_mps_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
