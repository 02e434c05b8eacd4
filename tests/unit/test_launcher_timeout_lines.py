"""Timeouts of the launchers and of frameworks' own collectives, in the forms their sources print:
Horovod's launcher and elastic driver, Horovod's Gloo rendezvous store, Ray Train's worker-group
collectives, TensorFlow's collective timeout. Whole excerpts of healthy-but-alarming runs (a slow
first step, a spike at evaluation or checkpoint time, a progress bar's rate after a pause) stay
healthy."""

from __future__ import annotations

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

STALLED = ("hang", "unknown", True)  # waited for others that never came; the log says not why


def _read(text: str) -> tuple[str, str, bool | None]:
    found = diagnose(text)
    return found.symptom, found.category, found.retryable


# --- Horovod's launcher (horovod/runner at 2626dc87) ---------------------------------------------


def test_horovodrun_start_timeout_is_a_network_failure() -> None:
    # horovod/horovod#1338 (horovodrun -np 2 -H localhost:1,<remote>:1 times out, mpirun works)
    line = (
        "Exception: Timed out waiting for tasks to start. Please check connectivity between servers. "
        "You may need to increase the --start-timeout parameter if you have too many servers."
    )
    assert verdict(line) == ("horovod-start-timeout", "network", True)
    assert _read(line)[0] == "crash"


def test_horovodrun_start_timeout_under_ray_hard_wrapped() -> None:
    # ray-project/ray#15300 (Horovod on Ray: the probe's traceback, the message wrapped by the terminal)
    log = (
        '(pid=23323, ip=172.31.19.90)   File "/home/ubuntu/anaconda3/lib/python3.7/site-packages/horovod/'
        'runner/common/util/timeout.py", line 37, in check_time_out_for\n'
        "(pid=23323, ip=172.31.19.90)     self._timeout\n"
        "(pid=23323, ip=172.31.19.90) Exception: Timed out waiting for tasks to start. Please check "
        "connectivity between servers. You may need to increase the --start-timeout parameter if\n"
        " you have too many servers. Timeout after 30 seconds.\n"
    )
    assert verdict(log) == ("horovod-start-timeout", "network", True)


def test_horovod_elastic_and_gloo_store_timeouts() -> None:
    # horovod/runner/elastic/driver.py and horovod/common/gloo/http_store.cc (the messages as built there)
    slots = (
        "horovod.runner.common.util.timeout.TimeoutException: Timed out waiting for minimum number of slots "
        "to become available. Please check that you have enough resources to run at least 2 Horovod "
        "processes. Timeout after 600 seconds."
    )
    assert verdict(slots) == ("horovod-elastic-slots-timeout", "unknown", True)
    store = (
        "RuntimeError: [/tmp/pip-req-build/horovod/common/gloo/http_store.cc:54] Wait timeout after 30 "
        "seconds for key(s): [global:1]. You may want to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS"
    )
    assert verdict(store) == ("horovod-gloo-store-timeout", "network", True)


def test_horovodrun_verbose_start_lines_stay_healthy() -> None:
    # horovod/horovod#1338 (the same run with --verbose, before its task function failed)
    log = (
        "Filtering local host names.\n"
        "Remote host found: 10.0.7.54\n"
        "Checking ssh on all remote hosts.\n"
        "SSH was successful into all the remote hosts.\n"
        "Testing interfaces on all the hosts.\n"
        "Launched horovodrun server.\n"
        "Attempted to launch horovod task servers.\n"
        "Waiting for the hosts to acknowledge.\n"
    )
    assert verdict(log) == (None, "none", None)


# --- Ray Train's collectives (python/ray/train/v2/_internal/exceptions.py) ------------------------


def test_ray_train_broadcast_timeout_is_a_hang() -> None:
    # ray-project/ray python/ray/train/v2/_internal/exceptions.py at 38dc9fc4 (first wording) and 0397e410
    first = (
        "ray.train.v2._internal.exceptions.BroadcastCollectiveTimeoutError: The broadcast operation timed "
        "out after 1800.00 seconds. Please make sure all worker ranks call `ray.train.report`. "
    )
    later = (
        "ray.train.v2._internal.exceptions.BroadcastCollectiveTimeoutError: The checkpoint broadcast timed "
        "out after 1800.0 seconds. It may be caused by slow workers or not all workers calling "
        "`ray.train.report`. Please make sure all workers called `ray.train.report`"
    )
    for line in (first, later):
        assert verdict(TRACEBACK + line) == ("ray-train-collective-timeout", "unknown", True)
        assert _read(TRACEBACK + line) == STALLED


def test_ray_train_worker_group_startup_timeout() -> None:
    # ray-project/ray python/ray/train/v2/_internal/exceptions.py at 0397e410 (WorkerGroupStartupTimeoutError)
    line = (
        "ray.train.v2._internal.exceptions.WorkerGroupStartupTimeoutError: The worker group startup timed "
        "out after 30.0 seconds waiting for 4 workers. Possible causes include insufficient cluster "
        "resources and transient network issues. Set the RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S "
        "environment variable to increase the timeout."
    )
    assert verdict(TRACEBACK + line) == ("ray-train-startup-timeout", "unknown", True)


# --- TensorFlow (tensorflow/core/common_runtime/base_collective_executor.cc at c117e91a) ----------


def test_tensorflow_collective_timeout_is_a_hang() -> None:
    for line in (
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective has timed out waiting "
        "for other workers.",
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective ops is aborted by: "
        "Collective has timed out waiting for other workers.",
    ):
        assert verdict(TRACEBACK + line) == ("tf-collective-timeout", "unknown", True)
        assert _read(TRACEBACK + line) == STALLED


def test_tensorflow_collective_abort_for_a_connection_is_not_a_timeout() -> None:
    # tensorflow/tensorflow#39122 (the abort wraps a gRPC connection failure, not a timeout)
    line = (
        "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: "
        "failed to connect to all addresses"
    )
    assert verdict(TRACEBACK + line)[0] != "tf-collective-timeout"
    assert _read(TRACEBACK + line)[1] == "network"


# --- fault tolerance's rank monitor (NVIDIA/nvidia-resiliency-ext at d8686d9c) -----------------


def test_rank_monitor_heartbeat_timeout_is_a_hang_naming_no_node() -> None:
    # NeMo's fault-tolerance docs (what a hang looks like under FaultTolerancePlugin); the
    # `[RankMonitorServer:34]` prefix is the monitor's logger, not a host
    log = (
        "[WARNING] [RankMonitorServer:34] Did not get subsequent heartbeat. Waited 171.92 seconds.\n"
        "[WARNING] [RankMonitorServer:58] Did not get subsequent heartbeat. Waited 171.92 seconds.\n"
        "torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 453152 closing signal SIGTERM\n"
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == STALLED
    assert found.evidence[0].signature == "ft-rank-heartbeat-timeout"
    assert found.implicated.nodes == []


def test_rank_monitor_section_timeouts_are_hangs() -> None:
    # src/nvidia_resiliency_ext/fault_tolerance/rank_monitor_server.py `_is_section_timeout_elapsed`
    for line in (
        "[Cycle 2] Section 'step' has been open for 301.52 seconds. Timeout is 300.00 seconds.",
        "[Cycle 0] Was out of section for 605.10 seconds. Timeout is 600.00 seconds.",
    ):
        assert verdict(line) == ("ft-rank-section-timeout", "unknown", True)


# --- healthy but alarming: pace that dips, spikes or warms up ------------------------------------


def test_checkpoint_pause_then_a_bogus_rate_stays_healthy() -> None:
    # ostris/ai-toolkit#680 (tqdm's rate after a 2-minute sample generation: 2566 it/s)
    log = (
        "Saved checkpoint to /home/user/ai-toolkit/output/same_size_zimage_base_lora_v1_es1/"
        "same_size_zimage_base_lora_v1_es1_000005250.safetensors\n"
        "Saved optimizer to /home/user/ai-toolkit/output/same_size_zimage_base_lora_v1_es1/optimizer.pt\n"
        "Generating Images:   0%|          | 0/1 [00:00<?, ?it/s]\n"
        "Generating Images: 100%|##########| 1/1 [02:07<00:00, 127.18s/it]\n"
        "same_size_zimage_base_lora_v1_es1:  67%|######7   | 5384/8000 [3:41:53<00:01, 2566.52it/s, "
        "lr: 2.0e-04 loss: 3.462e-01]\n"
    )
    assert verdict(log) == (None, "none", None)


def test_one_slow_iteration_that_recovers_stays_healthy() -> None:
    # facebookresearch/mmf#29 (one report interval took 1371 s, the next 205 s again)
    log = (
        "iter: 9200 train_loss: 1.1883  train_score: 0.6186  avg_train_score: 0.6580 val_score: 0.3975 "
        "val_loss: 2.6476 time(s): 195.1 s\n"
        "iter: 9300 train_loss: 1.1513  train_score: 0.6588  avg_train_score: 0.6578 val_score: 0.3871 "
        "val_loss: 2.5129 time(s): 1371.4 s\n"
        "iter: 9400 train_loss: 1.1269  train_score: 0.6826  avg_train_score: 0.6573 val_score: 0.4008 "
        "val_loss: 2.6888 time(s): 205.5 s\n"
    )
    assert verdict(log) == (None, "none", None)


def test_first_step_after_resume_and_slow_warm_up_stay_healthy() -> None:
    # karpathy/llama2.c#461 (the first step after a checkpoint counts the whole save: 3744730 ms)
    resume = (
        "step 1400: train loss 4.7160, val loss 5.1368\n"
        "saving checkpoint to out\n"
        "wrote out/model.bin\n"
        "1400 | loss 4.4253 | lr 4.522542e-05 | 3744730.81ms | mfu -100.00%\n"
        "1410 | loss 5.1437 | lr 4.512234e-05 | 23375.43ms | mfu 0.08%\n"
        "1420 | loss 4.4087 | lr 4.501828e-05 | 23881.84ms | mfu 0.08%\n"
        "1430 | loss 4.7489 | lr 4.491325e-05 | 23615.35ms | mfu 0.08%\n"
    )
    assert verdict(resume) == (None, "none", None)
    # open-mmlab/mmpretrain#408 (the first 100 iterations wait for data: time 6.43 s, then 0.2 s)
    warm = (
        "2021-08-17 16:49:31,759 - mmcls - INFO - workflow: [('train', 1)], max: 100 epochs\n"
        "2021-08-17 17:00:17,073 - mmcls - INFO - Epoch [1][100/5005]    lr: 1.000e-01, eta: 37 days, 5:46:17, "
        "time: 6.430, data_time: 5.762, memory: 3086, loss: 6.8864\n"
        "2021-08-17 17:00:36,627 - mmcls - INFO - Epoch [1][200/5005]    lr: 1.000e-01, eta: 19 days, 4:23:45, "
        "time: 0.196, data_time: 0.008, memory: 3086, loss: 6.5649\n"
        "2021-08-17 17:00:52,606 - mmcls - INFO - Epoch [1][300/5005]    lr: 1.000e-01, eta: 13 days, 2:12:15, "
        "time: 0.158, data_time: 0.023, memory: 3086, loss: 6.4290\n"
        "2021-08-17 17:01:08,931 - mmcls - INFO - Epoch [1][400/5005]    lr: 1.000e-01, eta: 10 days, 1:19:52, "
        "time: 0.165, data_time: 0.005, memory: 3086, loss: 6.3161\n"
        "2021-08-17 17:01:26,525 - mmcls - INFO - Epoch [1][500/5005]    lr: 1.000e-01, eta: 8 days, 5:54:13, "
        "time: 0.176, data_time: 0.001, memory: 3086, loss: 6.2153\n"
    )
    assert verdict(warm) == (None, "none", None)


def test_evaluation_between_epochs_stays_healthy() -> None:
    # facebookresearch/fairseq#301 (words/s steady across the epoch end and its validation)
    log = (
        "| epoch 010  7000 / 8223 loss=0.86 (1.46), wps=961, wpb=906, bsz=32, lr=0.001, clip=100%, gnorm=2.1233\n"
        "| epoch 010  8000 / 8223 loss=1.33 (1.45), wps=961, wpb=905, bsz=32, lr=0.001, clip=100%, gnorm=2.1133\n"
        "| epoch 010 | train loss 1.44 | train ppl 2.72 | s/checkpoint    7747 | words/s    961 | "
        "words/batch    906 | bsz    32 | lr 0.001000 | clip 100% | gnorm 2.1113\n"
        "| epoch 010 | valid on 'valid' subset  1000 / 1311 loss=1.60\n"
        "| epoch 010 | valid on 'valid' subset | valid loss 1.94 | valid ppl 3.83\n"
        "| epoch 011  1000 / 8223 loss=1.89 (1.38), wps=963, wpb=918, bsz=32, lr=0.001, clip=100%, gnorm=2.0860\n"
        "| epoch 011  2000 / 8223 loss=1.37 (1.35), wps=962, wpb=912, bsz=32, lr=0.001, clip=100%, gnorm=2.0606\n"
    )
    assert verdict(log) == (None, "none", None)
