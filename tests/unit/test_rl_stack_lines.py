"""Real excerpts of reinforcement-learning post-training logs (verl, OpenRLHF, NeMo-RL, TRL with
vLLM, Ray), where a Ray driver, its actors, a rollout engine and a trainer share one log: each
failure read as Ray's and vLLM's own source says it means, with the thread it comes from. The
healthy ones (vLLM's sleep mode and preemption notices, Ray's spilling, progress bars of several
actors, warnings) must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict


def _log(*lines: str) -> str:
    return "\n".join(lines)


FAILURES = [
    # RayActorError's creation-task message (python/ray/exceptions.py), on the actor's own
    # prefixed lines, its constructor's error cut off: a death whose cause the log does not show
    # (github.com/OpenRLHF/OpenRLHF/issues/184).
    (
        _log(
            "(LLMRayActor pid=433508) Exception raised in creation task: The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() (pid=433508, ip=0.0.0.0, actor_id=308f1877a62944c81acf867002000000, repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at 0x7edc5858a7a0>)",
            '(LLMRayActor pid=433508)   File "/usr/local/lib/python3.10/dist-packages/vllm-0.2.2+cu123-py3.10-linux-x86_64.egg/vllm/engine/llm_engine.py", line 109, in __init__ [repeated 3x across cluster]',
            "(LLMRayActor pid=433508)     self.llm = LLM(*args, **kwargs)",
            "(LLMRayActor pid=433508)     self.llm_engine = LLMEngine.from_engine_args(engine_args)",
            "(LLMRayActor pid=433508)     self._init_workers(distributed_init_method)",
            "(LLMRayActor pid=433508)     self._run_workers(",
        ),
        "ray-actor-died",
        "unknown",
        True,
    ),
    # A console that padded its rows joined `raise value` and the exception on one pasted row
    # (github.com/NVIDIA-NeMo/Gym/issues/356): the message still says the actor died.
    (
        _log(
            '  File "/opt/nemo_rl_venv/lib/python3.12/site-packages/ray/_private/worker.py", line 970, in get_objects',
            "    raise value                                                                                                                                                                        ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, ray::lm_policy-0-2:DTensorPolicyWorker.__init__() (pid=2791977, ip=10.65.6.13, actor_id=",
            "79f3b3f4160dc05408ac436e01000000, repr=DTensorPolicyWorker[rank=2])",
            "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        ),
        "ray-actor-died",
        "unknown",
        True,
    ),
    # A verl driver's traceback quoted in a thread, each line behind `> `
    # (github.com/verl-project/verl/issues/1691).
    (
        _log(
            '> File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 919, in get_objects',
            ">     raise value.as_instanceof_cause()",
            "> ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=59411, ip=train-1328222047368962304-a3a7fgd5t0jk-master-0, actor_id=13ac9a317247fe69717aac0d02000000, repr=<main_ppo.TaskRunner object at 0x7f4e6e394ee0>)",
            '> File "/cfs_turbo/user/verl/verl/single_controller/ray/base.py", line 49, in func',
            ">     output = ray.get(output)",
            "> ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
            "> \tclass_name: create_colocated_worker_",
        ),
        "ray-actor-died",
        "unknown",
        True,
    ),
    # The raylet's exit detail lists SIGSEGV among three guesses (src/ray/raylet/node_manager.cc,
    # HandleClientConnectionError); the worker's segfault is not what the log says
    # (github.com/verl-project/verl/issues/4921).
    (
        _log(
            '  File "/usr/local/lib/python3.10/dist-packages/verl/workers/rollout/vllm_rollout/vllm_async_server.py", line 563, in sleep',
            "    await asyncio.gather(*[worker.sleep.remote() for worker in self.workers])",
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
            "        class_name: create_colocated_worker_cls.<locals>.WorkerDict",
            "        name: 07GxnAWorkerDict_0:3",
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. Some common causes include: (1) the process was killed by the OOM killer due to high memory usage, (2) ray stop --force was called, or (3) the worker crashed unexpectedly due to SIGSEGV or another unexpected error.",
            "",
            "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
        ),
        "ray-worker-connection-lost",
        "unknown",
        True,
    ),
    # Ray's core worker aborting on a C++ exception (src/ray/util/logging.cc TerminateHandler:
    # "Unhandled exception: <type>. what(): ...", then the stack and abort()): here it could not
    # start a thread (github.com/verl-project/verl/issues/472).
    (
        _log(
            "(WorkerDict pid=27497) [2025-03-04 19:28:30,014 E 27497 27497] logging.cc:113: Unhandled exception: N5boost10wrapexceptINS_6system12system_errorEEE. what(): thread: Resource temporarily unavailable [system:11] [repeated 2x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)",
            "(WorkerDict pid=27110) [2025-03-04 19:28:30,101 E 27110 27110] logging.cc:120: Stack trace:  [repeated 2x across cluster]",
            "(WorkerDict pid=27497) /fs/archive/share/verl_env/lib/python3.9/site-packages/ray/_raylet.so(+0x74ab81) [0x14dd45489b81] __pyx_pw_3ray_7_raylet_10CoreWorker_5run_task_loop()",
        ),
        "ray-unhandled-cpp-exception",
        "unknown",
        True,
    ),
    # The same handler with NCCL's own error as what(): NCCL's words speak for the line
    # (github.com/vllm-project/vllm/issues/427).
    (
        _log(
            "[2023-07-11 15:20:15,496 W 42067 42248] metric_exporter.cc:209: [1] Export metrics to agent failed: GrpcUnknown: RPC Error message: Method not found!; RPC Error details: . This won't affect Ray, but you can lose metrics from the cluster.",
            "[2023-07-11 15:20:41,680 E 42067 42067] logging.cc:97: Unhandled exception: St13runtime_error. what(): NCCL Error 5: invalid usage",
            "[2023-07-11 15:20:41,788 E 42067 42067] logging.cc:104: Stack trace: ",
        ),
        "nccl-invalid-usage",
        "application",
        False,
    ),
    # vLLM's engine core dumps a failed step's input (vllm/logging_utils/dump_input.py, called by
    # EngineCore.execute_model before it re-raises), here right after sleep mode freed the
    # weights (github.com/vllm-project/vllm/issues/28714); the error itself was cut off.
    (
        _log(
            "(EngineCore_DP0 pid=1778746) INFO 11-14 15:11:23 [device_allocator/cumem.py:239] CuMemAllocator: sleep freed 34.06 GiB memory in total, of which 7.56 GiB is backed up in CPU and the rest 26.51 GiB is discarded directly.",
            "(EngineCore_DP0 pid=1778746) INFO 11-14 15:11:23 [v1/worker/gpu_worker.py:144] Sleep mode freed 35.43 GiB memory, 1.19 GiB memory is still in use.",
            "(EngineCore_DP0 pid=1778746) INFO 11-14 15:11:23 [v1/executor/abstract.py:306] It took 3.152677 seconds to fall asleep.",
            '(APIServer pid=1778096) INFO:     127.0.0.1:50356 - "POST /sleep HTTP/1.1" 200 OK',
            "(EngineCore_DP0 pid=1778746) ERROR 11-14 15:11:23 [logging_utils/dump_input.py:72] Dumping input data for V1 LLM engine (v0.11.1rc7.dev145+gb39a5026e) with config: model='/data/nfs_shared_data/Qwen3-4B', speculative_config=None, tokenizer='/data/nfs_shared_data/Qwen3-4B', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_c",
        ),
        "vllm-engine-step-failed",
        "unknown",
        True,
    ),
    # Ray's memory monitor killed a verl worker (github.com/verl-project/verl/issues/2950).
    (
        _log(
            "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
            "Memory on the node (IP: 10.20.49.141, ID: 4748aa6d1bc114b8bf58822d0b162796a1d36a79dee5c167c9bf91f5) where the task (actor ID: 9e43ace6a1234e13df7b456b01000000, name=8szhVkWorkerDict_0:3:WorkerDict.__init__, pid=4100606, memory used=56.57GB) was running was 246.41GB / 251.54GB (0.979583), which exceeds the memory usage threshold of 0.95.",
            "PID     MEM(GB) COMMAND",
            "4100606 56.57   ray::WorkerDict.actor_rollout_generate_sequences",
        ),
        "ray-oom-kill",
        "out_of_memory",
        False,
    ),
    # A wrapped out-of-memory error of a verl worker group's update
    # (github.com/markingprowlik/EasyR1/issues/9): the wrapper speaks for what it wraps.
    (
        _log(
            "    raise value.as_instanceof_cause()",
            "ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_ref_update_actor() (pid=118848, ip=10.130.71.7, actor_id=b2ba64f62469495ea505301701000000, repr=<verl.single_controller.ray.base.WorkerDict object at 0x7b8aac2e25c0>)",
            '  File "/workspaces/EasyR1/verl/single_controller/ray/base.py", line 432, in func',
            "    return getattr(self.worker_dict[key], name)",
        ),
        "uncaught-exception",
        "out_of_memory",
        False,
    ),
    # vLLM's API server reports the engine core dead (github.com/vllm-project/vllm/issues/42362).
    (
        _log(
            "(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72]     raise self.engine_client.dead_error",
            "(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.",
            '(APIServer pid=1) INFO:     10.1.6.81:16983 - "POST /v1/messages?beta=true HTTP/1.1" 500 Internal Server Error',
            "(APIServer pid=1) INFO:     Shutting down",
        ),
        "vllm-engine-dead",
        "unknown",
        True,
    ),
]


@pytest.mark.parametrize(("text", "signature", "category", "retryable"), FAILURES)
def test_an_rl_stack_failure_reads_as_its_source_means(
    text: str, signature: str, category: str, retryable: bool
) -> None:
    assert verdict(text) == (signature, category, retryable)


def test_the_constructor_error_after_an_actor_death_is_the_cause() -> None:
    # The output Ray's own test expects of a failed constructor (ray-project/ray,
    # python/ray/tests/test_traceback.py test_actor_creation_stacktrace, its placeholders kept):
    # the constructor's exception follows the message, and a known class there says more than
    # the death it caused.
    text = _log(
        "The actor died because of an error raised in its creation task, ray::A.__init__() (pid=XXX, ip=YYY, repr=ZZZ)",
        '  File "FILE", line ZZ, in __init__',
        "    g(3)",
        '  File "FILE", line ZZ, in g',
        "    raise ValueError(a)",
        "ValueError: 3",
    )
    assert verdict(text)[1:] == ("application", False)


HEALTHY = [
    # vLLM's sleep mode between TRL GRPO steps, DeepSpeed's timers and the progress bar
    # (github.com/huggingface/trl/issues/4086).
    _log(
        "INFO 09-15 14:42:36 [gpu_worker.py:115] Sleep mode freed 51.57 GiB memory, 67.88 GiB memory is still in use.",
        "INFO 09-15 14:42:36 [executor_base.py:188] It took 1.503160 seconds to fall asleep.",
        "INFO 09-15 14:42:47 [block_pool.py:280] Successfully reset prefix cache",
        "[2025-09-15 14:48:06,446] [INFO] [logging.py:107:log_dist] [Rank 0] time (ms) | optimizer_allgather: 32.02 | optimizer_gradients: 14.23 | optimizer_step: 45.45",
        "  0%|          | 3/1562 [18:48<164:33:29, 379.99s/it]",
    ),
    # vLLM's preemption notice: a slower step, not a failure (github.com/GAIR-NLP/LIMO/issues/29).
    " Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=101",
    # Ray spilling objects to disk on several nodes (github.com/ray-project/ray/pull/33307).
    _log(
        "(raylet, ip=10.0.33.149) Spilled 34829 MiB, 68 objects, write throughput 712 MiB/s.",
        "(raylet, ip=10.0.58.253) Spilled 66521 MiB, 133 objects, write throughput 618 MiB/s.",
        "(ConsumingActor pid=95002, ip=10.0.58.253) Time to read all data 95.34902910500023 seconds",
        "(ConsumingActor pid=95002, ip=10.0.58.253) Mean throughput 536.97 MiB/s",
    ),
    # OpenRLHF's rollout and training bars from two actors, a weight-sync group, the job's end
    # (github.com/OpenRLHF/OpenRLHF/issues/350).
    _log(
        "(ActorModelRayActor pid=675352)",
        "Episode [1/1]: 100%|██████████| 12/12 [03:51<00:00, 19.18s/it]",
        "(LLMRayActor pid=676133)",
        "Processed prompts: 100%|██████████| 16/16 [00:12<00:00,  1.25it/s]",
        "(RayWorkerWrapper pid=676716) init_process_group: master_address=0.0.0.0, master_port=50949,  rank=2, world_size=5, group_name=openrlhf [repeated 3x across cluster]",
    ),
    # NeMo-RL saving a checkpoint while vLLM sleeps, with a UserWarning and Megatron's warning
    # (github.com/NVIDIA-NeMo/RL/issues/1847).
    _log(
        "/fsx/user/nemo-rl/examples/nemo_gym/run_grpo_nemo_gym.py:280: UserWarning: You asked to save checkpoints based on policy_idea_generator_agent/reward/mean but no val metrics were collected. This checkpoint will not be saved as top-k.",
        "Saving checkpoint for step 2...",
        "(MegatronPolicyWorker[rank=0] pid=1750241) WARNING:megatron.core.utils:utils.py:890: make_tp_sharded_tensor_for_checkpoint received extra kwargs: ['allow_shape_mismatch']",
        "(VllmAsyncGenerationWorker pid=1743926) (EngineCore_DP0 pid=1745720) (RayWorkerWrapper pid=1745909) INFO 01-23 10:15:26 [cumem.py:239] CuMemAllocator: sleep freed 110.62 GiB memory in total, of which 15.49 GiB is backed up in CPU and the rest 95.13 GiB is discarded directly. [repeated 4x across cluster]",
    ),
    # transformers' FlashAttention-2 dtype warnings from verl's workers, folded by Ray's log
    # deduplication (github.com/verl-project/verl/issues/1498, Jiayi-Pan/TinyZero/issues/54).
    _log(
        '(WorkerDict pid=3780641) Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in Qwen3ForCausalLM is torch.float32. You should run training or inference using Automatic Mixed-Precision via the `with torch.autocast(device_type=\'torch_device\'):` decorator, or load the model with the `torch_dtype` argument. Example: `model = AutoModel.from_pretrained("openai/whisper-tiny", attn_implementation="flash_attention_2", torch_dtype=torch.float16)` [repeated 7x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)',
        "(WorkerDict pid=1874660) You are attempting to use Flash Attention 2.0 with a model not initialized on GPU. Make sure to move the model to GPU after initializing it on CPU with `model.to('cuda')`.",
    ),
    # verl's step metrics line, its memory figures included (github.com/verl-project/verl/issues/1458).
    "(TaskRunner pid=4072644) step:4 - global_seqlen/min:210047.000 - actor/pg_loss:0.010 - actor/grad_norm:0.279 - perf/max_memory_allocated_gb:78.829 - perf/max_memory_reserved_gb:106.729 - perf/cpu_memory_used_gb:132.619 - critic/score/mean:-0.643 - timing_s/gen:1400.087",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_a_healthy_rl_stack_log_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
