"""Whole excerpts of real logs where the thing that runs or feeds a training job says how it
ended: a spot controller that found its cluster preempted (SkyPilot), a Kubernetes batch
scheduler's job controller acting on an evicted pod (Volcano), a framework refusing to start
without what its install lacks (Apex's fused optimizers without their CUDA extensions), a data
pipeline failing on an image its decoder calls bad (DALI with nvJPEG), and a program whose own
excepthook logs the uncaught exception at critical level (OLMo), each with where it was printed;
and the alarming but harmless lines the same tools print (a controller polling a running job,
its ssh session closing, a controller's routine request, Apex falling back to Python kernels),
which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # skypilot-org/skypilot pull 804: the managed-spot controller finds the cluster preempted and
    # recovers; cancelling the jobs of the vanished cluster fails on the way.
    (
        "https://github.com/skypilot-org/skypilot/pull/804",
        "(bert-qa pid=920210) I 05-04 00:52:46 controller.py:100] The cluster is preempted.\n"
        "(bert-qa pid=920210) I 05-04 00:52:46 spot_state.py:99] === Recovering... ===\n"
        "(bert-qa pid=920210) E 05-04 00:53:16 backend_utils.py:993]\n"
        "(bert-qa pid=920210) E 05-04 00:53:16 backend_utils.py:998] Command failed with code 255: python3 -u"
        " -c 'from sky.skylet import job_lib, log_lib;job_lib.cancel_jobs(None)'\n"
        "(bert-qa pid=920210) E 05-04 00:53:16 backend_utils.py:999] Failed to cancel jobs on cluster bert-qa-39.",
        "scheduler",
        True,
        "runner-skypilot-cluster-preempted",
    ),
    # volcano-sh/volcano issue 4814: the job controller handles a PodEvicted event and restarts
    # the task (its RestartTask policy).
    (
        "https://github.com/volcano-sh/volcano/issues/4814",
        "I1215 12:28:18.432174       1 job_controller.go:356] Try to handle request <Queue: , Job:"
        " default/vjtest, Task:task0, Pod:vjtest-task0-1, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 0>\n"
        "I1215 12:28:18.432203       1 job_controller.go:385] Execute <RestartTask> on Job <default/vjtest>"
        " in <Running> by <*state.runningState>.\n"
        "I1215 12:28:18.432265       1 job_controller_actions.go:69] Killing task <task0> of Job"
        " <default/vjtest>, current version 0",
        "scheduler",
        True,
        "scheduler-volcano-pod-evicted",
    ),
    # NVIDIA/apex issue 1193: FusedAdam refuses to start in an apex built without --cuda_ext.
    (
        "https://github.com/NVIDIA/apex/issues/1193",
        "net_D parameter count: 32,322,498\n"
        "Traceback (most recent call last):\n"
        '  File "H:\\user\\imaginaire-master\\train.py", line 100, in <module>\n'
        "    main()\n"
        '  File "G:\\Anaconda3\\envs\\im\\lib\\site-packages\\apex\\optimizers\\fused_adam.py", line 80, in __init__\n'
        "    raise RuntimeError('apex.optimizers.FusedAdam requires cuda extensions')\n"
        "RuntimeError: apex.optimizers.FusedAdam requires cuda extensions",
        "application",
        False,
        "apex-cuda-extensions-missing",
    ),
    # NVIDIA/DALI issue 211: DALI 0.3's pipeline fails on a corrupt JPEG of OpenImages (status 3).
    (
        "https://github.com/NVIDIA/DALI/issues/211",
        "InternalError (see above for traceback): DALI daliOutput(&pipe_handle_) failed: Critical error in"
        " pipeline: Error in thread 0: [/opt/dali/dali/pipeline/operators/decoder/nvjpeg_decoder.h:331]"
        ' NVJPEG error "3"\n'
        "Current pipeline object is no longer valid.",
        "application",
        False,
        "dali-nvjpeg-bad-image",
    ),
    # allenai/OLMo issue 552: OLMo's excepthook logs the uncaught exception of its data thread.
    (
        "https://github.com/allenai/OLMo/issues/552",
        "[2024-04-18 19:06:17] INFO     [olmo.train:816, rank=0] [step=75/739328]\n"
        "    train/CrossEntropyLoss=7.417\n"
        "    throughput/device/tokens_per_second=9,407\n"
        "[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread"
        " data thread 3 failed",
        "unknown",
        True,
        "uncaught-exception",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_job_ends(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # skypilot-org/skypilot issue 825: the controller launches the cluster and polls a running job.
    "(sky-f50c-user pid=2400) I 05-11 07:49:32 recovery_strategy.py:73] Spot cluster launched.\n"
    "(sky-f50c-user pid=2400) I 05-11 07:49:35 spot_state.py:89] Job started.\n"
    "(sky-f50c-user pid=2400) I 05-11 07:50:35 controller.py:131] === Checking the job status... ===\n"
    "(sky-f50c-user pid=2400) I 05-11 07:50:37 controller.py:133] Job status: JobStatus.RUNNING",
    # skypilot-org/skypilot issue 3300: the controller's checks, then its ssh session closes.
    "(small-yt, pid=45563) I 03-12 15:33:46 spot_utils.py:83] === Checking the job status... ===\n"
    "(small-yt, pid=45563) I 03-12 15:33:49 spot_utils.py:89] Job status: JobStatus.RUNNING\n"
    "Shared connection to 10.20.42.245 closed",
    # volcano-sh/volcano pkg/controllers/apis/request.go: a routine resync request of a running job.
    "I1215 12:28:18.478284       1 job_controller.go:356] Try to handle request <Queue: , Job: default/vjtest,"
    " Task:task0, Pod:vjtest-task0-0, Event:OutOfSync, ExitCode:0, Action:, JobVersion: 1>",
    # NVIDIA/apex issue 529: amp without its compiled kernels falls back to Python and goes on.
    "Warning:  multi_tensor_applier fused unscale kernel is unavailable, possibly because apex was installed"
    " without --cuda_ext --cpp_ext. Using Python fallback.  Original ImportError was:"
    " ModuleNotFoundError(\"No module named 'amp_C'\")",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_controller_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
