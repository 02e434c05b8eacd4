"""Whole excerpts of real logs that stop while a program keeps reporting that it waits for its peers,
with no error line: SGLang's scheduler watchdog, which shuts the server down when one batch has not
finished for --watchdog-timeout; vLLM's message queue between the engine and its workers (`No
available shared memory broadcast block found in 60 seconds`), TensorFlow 1.x's master creating a
session (`CreateSession still waiting for response from worker`) and a non-chief worker waiting for
the chief (`Waiting for model to be ready`). The wait notices have no closer: a compilation or a slow
start prints them too and then goes on, so only a log that ends on them is stuck; the same notices
followed by the program's next output, and the serving engines' busy but healthy batch and metrics
lines, must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, signature of the first evidence line); every one is a hang, cause unknown, retried.
FAILURES = [
    # sgl-project/sglang issue 3752: every TP scheduler's watchdog fires, then the server's SIGQUIT handler kills it.
    (
        "https://github.com/sgl-project/sglang/issues/3752",
        "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:15 TP6] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:15 TP1] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:15 TP2] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:15 TP5] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:15 TP7] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:16 TP3] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\n"
        "Killed",
        "sglang-watchdog-timeout",
    ),
    # sgl-project/sglang issue 7553: the older wording, py-spy missing.
    (
        "https://github.com/sgl-project/sglang/issues/7553",
        "self.grammar=None, self.sampling_params=<sglang.srt.sampling.sampling_params.SamplingParams object at 0x7f6caf503050>)], self.token_to_kv_pool_allocator.available_size()=798917, self.tree_cache.evictable_size()=0, \n"
        "[2025-06-26 07:25:31 DP4 TP4] Pyspy failed to dump PID 113688. Error: /bin/bash: line 1: py-spy: command not found\n"
        "\n"
        "[2025-06-26 07:25:31 DP4 TP4] Watchdog timeout (self.watchdog_timeout=300)",
        "sglang-watchdog-timeout",
    ),
    # sgl-project/sglang issue 17941: ProcessWatchdog's wording (`Scheduler watchdog timeout (..., self.soft=False)`) inside py-spy dumps.
    (
        "https://github.com/sgl-project/sglang/issues/17941",
        "    0x7f259f401d71 (libc.so.6)\n"
        "    0x7f259f40d2be (libc.so.6)\n"
        "    PyThread_acquire_lock_timed (python3.12)\n"
        "    wait (threading.py:359)\n"
        "    wait (threading.py:655)\n"
        "    run (tqdm/_monitor.py:60)\n"
        "    _bootstrap_inner (threading.py:1073)\n"
        "    _bootstrap (threading.py:1030)\n"
        "    0x7f259f405aa4 (libc.so.6)\n"
        "    0x7f259f492c6c (libc.so.6)\n"
        'Thread 90522 (idle): "Thread-2 (_watchdog_thread)"\n'
        "    poll (libc.so.6)\n"
        "    select (selectors.py:415)\n"
        "    _communicate (subprocess.py:2115)\n"
        "    communicate (subprocess.py:1209)\n"
        "    run (subprocess.py:550)\n"
        "    pyspy_dump_schedulers (utils/common.py:2317)\n"
        "    _watchdog_once (utils/watchdog.py:150)\n"
        "    _watchdog_thread (utils/watchdog.py:125)\n"
        "    run (threading.py:1010)\n"
        "    _bootstrap_inner (threading.py:1073)\n"
        "    _bootstrap (threading.py:1030)\n"
        "    0x7f259f405aa4 (libc.so.6)\n"
        "    0x7f259f492c6c (libc.so.6)\n"
        "\n"
        "[2026-01-29 13:12:37 PP1 TP1] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n"
        "\n"
        "\n"
        "[2026-01-29 13:12:37 PP2 TP1] Pyspy dump for PID 88693:\n"
        "Process 88693: sglang::scheduler_PP2_TP1\n"
        "Python v3.12.3 (/usr/bin/python3.12)\n"
        "\n"
        'Thread 88693 (idle): "MainThread"\n'
        "    0x7fa2d1487d71 (libc.so.6)\n"
        "    pthread_cond_timedwait (libc.so.6)\n"
        "    gloo::transport::tcp::UnboundBuffer::waitRecv (libtorch_cpu.so)\n"
        "    c10d::ProcessGroupGloo::RecvWork::wait (libtorch_cpu.so)",
        "sglang-watchdog-timeout",
    ),
    # sgl-project/sglang issue 12076: docker compose's prefix; the dump of a scheduler busy in speculative verify follows.
    (
        "https://github.com/sgl-project/sglang/issues/12076",
        "sglang-1  |     _bootstrap_inner (threading.py:1075)\n"
        "sglang-1  |     _bootstrap (threading.py:1032)\n"
        'sglang-1  | Thread 12816 (idle): "Thread-10 (watchdog_thread)"\n'
        "sglang-1  |     select (selectors.py:415)\n"
        "sglang-1  |     _communicate (subprocess.py:2115)\n"
        "sglang-1  |     communicate (subprocess.py:1209)\n"
        "sglang-1  |     run (subprocess.py:550)\n"
        "sglang-1  |     pyspy_dump_schedulers (utils/common.py:2218)\n"
        "sglang-1  |     watchdog_thread (scheduler.py:2257)\n"
        "sglang-1  |     run (threading.py:1012)\n"
        "sglang-1  |     _bootstrap_inner (threading.py:1075)\n"
        "sglang-1  |     _bootstrap (threading.py:1032)\n"
        "sglang-1  | \n"
        "sglang-1  | [2025-10-29 11:25:58 TP3] Watchdog timeout (self.watchdog_timeout=300)\n"
        "sglang-1  | \n"
        "sglang-1  | [2025-10-29 11:25:58 TP6] Pyspy dump for PID 309:\n"
        "sglang-1  | Process 309: sglang::scheduler_TP6\n"
        "sglang-1  | Python v3.12.12 (/usr/bin/python3.12)\n"
        "sglang-1  | \n"
        'sglang-1  | Thread 309 (active): "MainThread"\n'
        "sglang-1  |     _apply (penaltylib/min_new_tokens.py:78)\n"
        "sglang-1  |     apply (penaltylib/orchestrator.py:150)\n"
        "sglang-1  |     apply (penaltylib/orchestrator.py:67)\n"
        "sglang-1  |     apply_logits_bias (sampling_batch_info.py:226)\n"
        "sglang-1  |     verify (eagle_info.py:259)\n"
        "sglang-1  | \n"
        "sglang-1  |     verify (eagle_worker.py:674)\n"
        "sglang-1  |     forward_batch_generation (eagle_worker.py:268)",
        "sglang-watchdog-timeout",
    ),
    # vllm-project/vllm-ascend issue 3717: generation at 0 %, then the engine core's wait notice every minute to the log's end.
    (
        "https://github.com/vllm-project/vllm-ascend/issues/3717",
        "Processed prompts:   0%|                                                         | 0/4 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s][rank0]:[W1209 11:24:53.753104426 compiler_depend.ts:117] Warning: Driver Version:  is invalid or not supported yet. (function operator())\n"
        "(EngineCore_DP0 pid=323240) INFO 12-09 11:25:53 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).\n"
        "(EngineCore_DP0 pid=323240) INFO 12-09 11:26:53 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).\n"
        "(EngineCore_DP0 pid=323240) INFO 12-09 11:27:53 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).\n"
        "(EngineCore_DP0 pid=323240) INFO 12-09 11:28:53 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).",
        "phase:open",
    ),
    # vllm-project/vllm issue 51986: the newer hint (`weight/kv cache quantization`), five minutes of it.
    (
        "https://github.com/vllm-project/vllm/issues/51986",
        "(EngineCore pid=2025) INFO 08-13 11:27:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=2025) INFO 08-13 11:28:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=2025) INFO 08-13 11:29:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=2025) INFO 08-13 11:30:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=2025) INFO 08-13 11:31:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
        "phase:open",
    ),
    # vllm-project/vllm-ascend issue 12725: several data-parallel engine cores wait at once under load.
    (
        "https://github.com/vllm-project/vllm-ascend/issues/12725",
        "(EngineCore_DP4 pid=3431) INFO 07-21 21:17:22 [shm_broadcast.py:705] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore_DP7 pid=3526) INFO 07-21 21:17:22 [shm_broadcast.py:705] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore_DP0 pid=4318) INFO 07-21 21:18:22 [shm_broadcast.py:705] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore_DP12 pid=3518) INFO 07-21 21:18:22 [shm_broadcast.py:705] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
        "phase:open",
    ),
    # yahoo/TensorFlowOnSpark issue 240: a worker's master waits for the parameter server every 10 s.
    (
        "https://github.com/yahoo/TensorFlowOnSpark/issues/240",
        "2018-03-02 08:50:57.918293: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:07.918467: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:17.918643: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:27.918862: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:37.919076: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:47.919242: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:51:57.919383: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "2018-03-02 08:52:07.919559: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:ps/replica:0/task:0",
        "phase:open",
    ),
    # tensorflow/tensorflow issue 12745: the master waits for two worker tasks (TensorFlow 1.3's line number).
    (
        "https://github.com/tensorflow/tensorflow/issues/12745",
        "I tensor flow/core/distributed_runtime/master.cc:193] CreateSession still waiting for response from worker: /job:worker/replica:0/task:12\n"
        "I tensor flow/core/distributed_runtime/master.cc:193] CreateSession still waiting for response from worker: /job:worker/replica:0/task:17",
        "phase:open",
    ),
    # yahoo/TensorFlowOnSpark issue 244: a worker still not ready, then CreateSession waits for worker task 0.
    (
        "https://github.com/yahoo/TensorFlowOnSpark/issues/244",
        "2018-03-12 13:18:34,672 INFO (MainThread-75449) Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: Variables not initialized: hid_w, hid_b, sm_w, sm_b, Variable, hid_w/Adagrad, hid_b/Adagrad, sm_w/Adagrad, sm_b/Adagrad\n"
        "2018-03-12 13:19:14.748934: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0\n"
        "2018-03-12 13:19:24.749101: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0\n"
        "2018-03-12 13:19:34.749245: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0\n"
        "2018-03-12 13:19:44.749423: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0\n"
        "2018-03-12 13:19:54.749576: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0\n"
        "2018-03-12 13:20:04.749778: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:0",
        "phase:open",
    ),
    # yahoo/TensorFlowOnSpark issue 206: a non-chief worker loops on the uninitialised variables, a new master session every 30 s.
    (
        "https://github.com/yahoo/TensorFlowOnSpark/issues/206",
        "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: Variables not initialized: hid_w, hid_b, sm_w, sm_b, Variable, hid_w/Adagrad, hid_b/Adagrad, sm_w/Adagrad, sm_b/Adagrad\n"
        "2018-01-16 00:11:03,996 INFO (MainThread-110524) Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: Variables not initialized: hid_w, hid_b, sm_w, sm_b, Variable, hid_w/Adagrad, hid_b/Adagrad, sm_w/Adagrad, sm_b/Adagrad\n"
        "18/01/16 00:11:04 INFO PythonRunner: Times: total = 2052, boot = -4195, init = 4244, finish = 2003\n"
        "18/01/16 00:11:04 INFO PythonRunner: Times: total = 93, boot = 3, init = 38, finish = 52\n"
        "2018-01-16 00:11:34.029776: I tensorflow/core/distributed_runtime/master_session.cc:999] Start master session f213c988ef700adb with config: \n"
        "\n"
        "INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: Variables not initialized: hid_w, hid_b, sm_w, sm_b, Variable, hid_w/Adagrad, hid_b/Adagrad, sm_w/Adagrad, sm_b/Adagrad\n"
        "2018-01-16 00:11:34,049 INFO (MainThread-110524) Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: Variables not initialized: hid_w, hid_b, sm_w, sm_b, Variable, hid_w/Adagrad, hid_b/Adagrad, sm_w/Adagrad, sm_b/Adagrad",
        "phase:open",
    ),
    # eugr/spark-vllm-docker issue 379: generation falls to 0 tokens/s, then one notice ends the log.
    (
        "https://github.com/eugr/spark-vllm-docker/issues/379",
        "(APIServer pid=48) INFO 09-07 11:19:27 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.9%, Prefix cache hit rate: 90.7%\n"
        "(APIServer pid=48) INFO 09-07 11:19:27 [metrics.py:125] SpecDecoding metrics: Mean acceptance length: 2.25, Current speculative depth: 5, Accepted throughput: 0.50 tokens/s, Drafted throughput: 2.00 tokens/s, Accepted: 5 tokens, Drafted: 20 tokens, Per-position acceptance rate: 0.750, 0.500, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 25.0%\n"
        "(APIServer pid=48) INFO 09-07 11:19:37 [loggers.py:310] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.9%, Prefix cache hit rate: 90.7%\n"
        "(EngineCore pid=166) INFO 09-07 11:20:19 [shm_broadcast.py:801] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
        "phase:open",
    ),
]


@pytest.mark.parametrize(("source", "text", "signature"), FAILURES)
def test_stuck_waiting(source: str, text: str, signature: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("hang", "unknown", True), source
    assert found.evidence[0].signature == signature, source


def test_the_watchdog_speaks_before_the_child_failed_notice() -> None:
    # sgl-project/sglang issue 3752: the launcher's SIGQUIT notice is what the watchdog caused.
    found = diagnose(
        "[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)\n"
        "[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\n"
        "Killed"
    )
    assert (found.symptom, found.evidence[0].signature) == ("hang", "sglang-watchdog-timeout")


# (source, excerpt)
HEALTHY = [
    # noonghunna/club-3090 issue 295: one wait notice while the workers warm up, then their warm-up and compile lines.
    (
        "https://github.com/noonghunna/club-3090/issues/295",
        "(EngineCore pid=120) INFO 06-01 09:22:18 [shm_broadcast.py:698] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(Worker_TP0 pid=130) INFO 06-01 09:22:26 [monitor.py:81] Initial profiling/warmup run took 57.52 s\n"
        "(Worker_TP0 pid=130) INFO 06-01 09:22:26 [backends.py:1089] Using cache directory: ~/.cache/vllm/torch_compile_cache/041fa74042/rank_0_0/eagle_head for vLLM's torch.compile\n"
        "(Worker_TP0 pid=130) INFO 06-01 09:22:26 [backends.py:1148] Dynamo bytecode transform time: 0.10 s\n"
        "(Worker_TP0 pid=130) INFO 06-01 09:22:26 [backends.py:292] Directly load the compiled graph(s) for compile range (1, 8192) from the cache, took 0.109 s",
    ),
    # noonghunna/club-3090 issue 137: three minutes of notices during the first profiling run, which then finishes.
    (
        "https://github.com/noonghunna/club-3090/issues/137",
        "(EngineCore pid=65) INFO 05-19 14:00:17 [shm_broadcast.py:698] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=65) INFO 05-19 14:01:17 [shm_broadcast.py:698] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=65) INFO 05-19 14:02:17 [shm_broadcast.py:698] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(Worker_TP0 pid=74) INFO 05-19 14:02:20 [monitor.py:81] Initial profiling/warmup run took 144.27 s\n"
        "(Worker_TP0 pid=74) INFO 05-19 14:02:22 [backends.py:1089] Using cache directory: ~/.cache/vllm/torch_compile_cache/b912b9593a/rank_0_0/eagle_head for vLLM's torch.compile\n"
        "(Worker_TP0 pid=74) INFO 05-19 14:02:22 [backends.py:1148] Dynamo bytecode transform time: 1.50 s\n"
        "(Worker_TP0 pid=74) INFO 05-19 14:02:42 [backends.py:393] Compiling a graph for compile range (1, 8192) takes 19.81 s",
    ),
    # noonghunna/club-3090 issue 20: a notice in the middle of CUDA graph memory profiling.
    (
        "https://github.com/noonghunna/club-3090/issues/20",
        "(Worker_TP0 pid=82) INFO 05-01 11:07:21 [gpu_model_runner.py:5938] Profiling CUDA graph memory: PIECEWISE=5 (largest=16)\n"
        "(Worker_TP1 pid=83) INFO 05-01 11:07:21 [gpu_model_runner.py:5938] Profiling CUDA graph memory: PIECEWISE=5 (largest=16)\n"
        "(EngineCore pid=73) INFO 05-01 11:07:22 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(Worker_TP1 pid=83) INFO 05-01 11:07:22 [gpu_model_runner.py:6017] Estimated CUDA graph memory: 0.13 GiB total\n"
        "(Worker_TP0 pid=82) INFO 05-01 11:07:22 [gpu_model_runner.py:6017] Estimated CUDA graph memory: 0.13 GiB total\n"
        "(Worker_TP1 pid=83) INFO 05-01 11:07:23 [gpu_worker.py:455] CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9145 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9255. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.\n"
        "(Worker_TP0 pid=82) INFO 05-01 11:07:23 [gpu_worker.py:440] Available KV cache memory: 11.48 GiB",
    ),
    # vllm-project/vllm pull 37307: vLLM's metrics with requests waiting, draining as they run.
    (
        "https://github.com/vllm-project/vllm/pull/37307",
        "(APIServer pid=11574) INFO 03-17 15:38:10 [loggers.py:259] Engine 000: Avg prompt throughput: 23998.2 tokens/s, Avg generation throughput: 18.1 tokens/s, Running: 10 reqs, Waiting: 90 reqs, GPU KV cache usage: 19.3%, Prefix cache hit rate: 0.0%\n"
        "(APIServer pid=11574) INFO 03-17 15:38:20 [loggers.py:259] Engine 000: Avg prompt throughput: 23999.9 tokens/s, Avg generation throughput: 35.4 tokens/s, Running: 16 reqs, Waiting: 84 reqs, GPU KV cache usage: 30.9%, Prefix cache hit rate: 0.0%\n"
        "(APIServer pid=11574) INFO 03-17 15:38:30 [loggers.py:259] Engine 000: Avg prompt throughput: 23999.8 tokens/s, Avg generation throughput: 52.6 tokens/s, Running: 22 reqs, Waiting: 78 reqs, GPU KV cache usage: 42.5%, Prefix cache hit rate: 0.0%\n"
        "(APIServer pid=11574) INFO 03-17 15:38:40 [loggers.py:259] Engine 000: Avg prompt throughput: 23998.3 tokens/s, Avg generation throughput: 69.6 tokens/s, Running: 28 reqs, Waiting: 72 reqs, GPU KV cache usage: 54.2%, Prefix cache hit rate: 0.0%\n"
        "(APIServer pid=11574) INFO 03-17 15:38:50 [loggers.py:259] Engine 000: Avg prompt throughput: 24000.7 tokens/s, Avg generation throughput: 83.7 tokens/s, Running: 34 reqs, Waiting: 66 reqs, GPU KV cache usage: 65.4%, Prefix cache hit rate: 0.0%",
    ),
    # sgl-project/sglang issue 4759: SGLang's batch lines with a queue.
    (
        "https://github.com/sgl-project/sglang/issues/4759",
        "[2025-03-24 02:56:20 TP0] Prefill batch. #new-seq: 1, #new-token: 128, #cached-token: 1, token usage: 0.00, #running-req: 0, #queue-req: 0, \n"
        "[2025-03-24 02:56:25 TP0] Prefill batch. #new-seq: 2, #new-token: 258, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, \n"
        "[2025-03-24 02:56:26 TP0] Prefill batch. #new-seq: 30, #new-token: 3810, #cached-token: 60, token usage: 0.00, #running-req: 2, #queue-req: 68, \n"
        "[2025-03-24 02:56:41 TP0] Decode batch. #running-req: 32, #token: 7352, token usage: 0.01, accept len: 2.54, gen throughput (token/s): 39.33, largest-len: 0, #queue-req: 68, \n"
        "[2025-03-24 02:56:43 TP0] Prefill batch. #new-seq: 2, #new-token: 253, #cached-token: 5, token usage: 0.01, #running-req: 30, #queue-req: 66, \n"
        "[2025-03-24 02:56:45 TP0] Prefill batch. #new-seq: 3, #new-token: 378, #cached-token: 9, token usage: 0.01, #running-req: 29, #queue-req: 63, \n"
        "[2025-03-24 02:56:46 TP0] Prefill batch. #new-seq: 2, #new-token: 254, #cached-token: 4, token usage: 0.01, #running-req: 30, #queue-req: 61, \n"
        "[2025-03-24 02:56:47 TP0] Prefill batch. #new-seq: 5, #new-token: 632, #cached-token: 13, token usage: 0.01, #running-req: 27, #queue-req: 56, \n"
        "[2025-03-24 02:56:47 TP0] Prefill batch. #new-seq: 2, #new-token: 254, #cached-token: 4, token usage: 0.01, #running-req: 30, #queue-req: 54, ",
    ),
    # sgl-project/sglang issue 2746: SGLang retracts a request when decode runs out of KV space (its scheduling back-off).
    (
        "https://github.com/sgl-project/sglang/issues/2746",
        "[2025-01-06 02:58:11 TP0] Decode batch. #running-req: 2, #token: 307481, token usage: 1.00, gen throughput (token/s): 10.92, #queue-req: 0\n"
        "[2025-01-06 02:58:19 TP0] Decode batch. #running-req: 2, #token: 307561, token usage: 1.00, gen throughput (token/s): 10.92, #queue-req: 0\n"
        "[2025-01-06 02:58:26 TP0] Decode batch. #running-req: 2, #token: 307641, token usage: 1.00, gen throughput (token/s): 10.92, #queue-req: 0\n"
        "[2025-01-06 02:58:33 TP0] Decode batch. #running-req: 2, #token: 307721, token usage: 1.00, gen throughput (token/s): 10.94, #queue-req: 0\n"
        "[2025-01-06 02:58:41 TP0] Decode batch. #running-req: 2, #token: 307801, token usage: 1.00, gen throughput (token/s): 10.93, #queue-req: 0\n"
        "[2025-01-06 02:58:44 TP0] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446\n"
        "[2025-01-06 02:58:44 TP5] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446\n"
        "[2025-01-06 02:58:44 TP7] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446\n"
        "[2025-01-06 02:58:44 TP2] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446\n"
        "[2025-01-06 02:58:44 TP6] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.9446",
    ),
    # vllm-project/vllm pull 39910: two notices while a CPU worker compiles, then its warm-up ends.
    (
        "https://github.com/vllm-project/vllm/pull/39910",
        "(Worker pid=185) INFO 04-15 13:41:17 [default_loader.py:384] Loading weights took 11.18 seconds\n"
        "(EngineCore pid=127) INFO 04-15 13:41:18 [kv_cache_utils.py:1319] GPU KV cache size: 1,126,400 tokens\n"
        "(EngineCore pid=127) INFO 04-15 13:41:18 [kv_cache_utils.py:1324] Maximum concurrency for 2,048 tokens per request: 550.00x\n"
        "(Worker pid=185) INFO 04-15 13:41:24 [cpu_model_runner.py:116] Warming up model for the compilation...\n"
        "(Worker pid=185) INFO 04-15 13:41:54 [decorators.py:655] saved AOT compiled function to /home/vllm/.cache/vllm/torch_compile_cache/torch_aot_compile/4fd77dd9f24b824c6b5eb723c73309f4ef5fdf7ffca46d4d5f07d28e7acf6a6b/rank_0_0/model\n"
        "(EngineCore pid=127) INFO 04-15 13:42:25 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(EngineCore pid=127) INFO 04-15 13:43:25 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
        "(Worker pid=185) INFO 04-15 13:43:42 [monitor.py:76] Initial profiling/warmup run took 107.62 s",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY)
def test_waits_that_went_on_stay_healthy(source: str, text: str) -> None:
    assert diagnose(text).symptom == "none", source
