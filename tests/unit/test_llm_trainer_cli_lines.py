"""Whole excerpts of real logs from LLM fine-tuning and evaluation tools with their own command
lines and loggers (XTuner over mmengine, Megatron-Energon under NeMo, LLaMA-Factory, OpenRLHF's
Ray actors, TRL, torchtune, lm-evaluation-harness), each with the public thread that printed it.
XTuner's command line catches any error running its command and logs it as a warning ("WARNING:
command error: ...!", xtuner/entry_point.py) before printing its help: the job never ran.
Megatron-Energon refuses a dataset path without its `.nv-meta` metadata ("Did you forget to
prepare the dataset?"). The healthy excerpts are the warnings, progress and checkpoint lines the
same tools print while they work."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # InternLM/xtuner/issues/902: XTuner's CLI logs the NumPy/ABI error it caught as a warning, then prints its usage text
    (
        "https://github.com/InternLM/xtuner/issues/902",
        "[2024-08-26 19:56:12,341] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n"
        "Warning: The default cache directory for DeepSpeed Triton autotune, /root/.triton/autotune, appears to be on an NFS system. While this is generally acceptable, if you experience slowdowns or hanging when DeepSpeed exits, it is recommended to set the TRITON_CACHE_DIR environment variable to a non-NFS path.\n"
        "08/26 19:56:49 - mmengine - WARNING - WARNING: command error: 'Unable to configure default ndarray.__repr__'!\n"
        "08/26 19:56:49 - mmengine - WARNING - \n"
        "    Arguments received: ['xtuner', 'train', './internlm2_chat_1_8b_qlora_alpaca_e3_copy.py']. xtuner commands use the following syntax:\n"
        "\n"
        "        xtuner MODE MODE_ARGS ARGS\n"
        "\n"
        "        Where   MODE (required) is one of ('list-cfg', 'copy-cfg', 'log-dataset', 'check-custom-dataset', 'train', 'test', 'chat', 'convert', 'preprocess', 'mmbench', 'eval_refcoco')\n"
        "                MODE_ARG (optional) is the argument for specific mode\n"
        "                ARGS (optional) are the arguments for specific command\n"
        "\n"
        "    Some usages for xtuner commands: (See more by using -h for specific command!)\n"
        "\n"
        "        1. List all predefined configs:\n"
        "            xtuner list-cfg\n"
        "        2. Copy a predefined config to a given path:\n"
        "            xtuner copy-cfg $CONFIG $SAVE_FILE",
        "application",
        False,
        "xtuner-command-error",
    ),
    # OpenRLHF/OpenRLHF/issues/1050: vLLM's cumem allocator (an OpenRLHF Ray actor, de-duplicated by Ray) runs out of memory waking up
    (
        "https://github.com/OpenRLHF/OpenRLHF/issues/1050",
        "(LLMRayActor pid=226426) ERROR 06-10 10:55:03 [core.py:459]     allocator.wake_up(tags) [repeated 3x across cluster]\n"
        "(LLMRayActor pid=226426) ERROR 06-10 10:55:03 [core.py:459]     create_and_map(handle) [repeated 3x across cluster]\n"
        '(LLMRayActor pid=226426) ERROR 06-10 10:55:03 [core.py:459]   File "/root/miniconda3/lib/python3.10/site-packages/vllm/device_allocator/cumem.py", line 77, in create_and_map [repeated 3x across cluster]\n'
        "(LLMRayActor pid=226426) ERROR 06-10 10:55:03 [core.py:459]     python_create_and_map(*allocation_handle) [repeated 3x across cluster]\n"
        "(LLMRayActor pid=226426) ERROR 06-10 10:55:03 [core.py:459] RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62 [repeated 3x across cluster]\n"
        "(LLMRayActor pid=226426) CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62 [repeated 3x across cluster]",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # OpenBMB/MiniCPM-V/issues/223: torchrun's root-cause block: rank 0 exited with code 1 and no traceback
    (
        "https://github.com/OpenBMB/MiniCPM-V/issues/223",
        "    return launch_agent(self._config, self._entrypoint, list(args))\n"
        '  File "/home/ubuntu/miniconda3/envs/MiniCPM-V/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 264, in launch_agent\n'
        "    raise ChildFailedError(\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\n"
        "finetune.py FAILED\n"
        "------------------------------------------------------------\n"
        "Failures:\n"
        "  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-06-06_03:48:09\n"
        "  host      : 10-60-22-207\n"
        "  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : 1 (pid: 3339)\n"
        "  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
        "============================================================",
        "unknown",
        True,
        "torchelastic-child-failed",
    ),
    # EleutherAI/lm-evaluation-harness/issues/3119: lm-eval's model registry has no 'hf' (a broken install)
    (
        "https://github.com/EleutherAI/lm-evaluation-harness/issues/3119",
        "Traceback (most recent call last):\n"
        '  File "/mnt/task_runtime/llm_venv/lib/python3.10/site-packages/lm_eval/api/registry.py", line 36, in get_model\n'
        "    return MODEL_REGISTRY[model_name]\n"
        "KeyError: 'hf'\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/mnt/task_runtime/llm_venv/bin/lm_eval", line 8, in <module>\n'
        "    sys.exit(cli_evaluate())\n"
        '  File "/mnt/task_runtime/llm_venv/lib/python3.10/site-packages/lm_eval/__main__.py", line 516, in cli_evaluate\n'
        "    results = evaluator.simple_evaluate(\n"
        '  File "/mnt/task_runtime/llm_venv/lib/python3.10/site-packages/lm_eval/utils.py", line 440, in _wrapper\n'
        "    return fn(*args, **kwargs)\n"
        '  File "/mnt/task_runtime/llm_venv/lib/python3.10/site-packages/lm_eval/evaluator.py", line 226, in simple_evaluate\n'
        "    lm = lm_eval.api.registry.get_model(model).create_from_arg_string(",
        "application",
        False,
        "py-key-error",
    ),
    # THUDM/WebRL/issues/5: an invalid DeepSpeed ZeRO config, rank-prefixed pydantic ValidationError
    (
        "https://github.com/THUDM/WebRL/issues/5",
        '[rank5]:   File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/config.py", line 71, in get_zero_config\n'
        "[rank5]:     return DeepSpeedZeroConfig(**zero_config_dict)\n"
        '[rank5]:   File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/config_utils.py", line 57, in __init__\n'
        "[rank5]:     super().__init__(**data)\n"
        '[rank5]:   File "/usr/local/lib/python3.10/dist-packages/pydantic/main.py", line 164, in __init__\n'
        "[rank5]:     __pydantic_self__.__pydantic_validator__.validate_python(data, self_instance=__pydantic_self__)\n"
        "[rank5]: pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig",
        "application",
        False,
        "uncaught-exception",
    ),
    # hiyouga/LlamaFactory/pull/975: an HCCL AllReduce's Notify wait times out on Ascend
    (
        "https://github.com/hiyouga/LlamaFactory/pull/975",
        "npuSynchronizeDevice:/usr1/02/workspace/j_vqN6BFvg/pytorch/torch_npu/csrc/core/npu/NPUStream.cpp:370 NPU error, error code is 107020.\n"
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [4294967295].base information: [streamID:[1], taskID[39], taskType[Notify Wait], tag[AllReduce_192.168.0.116%enp69s0_60000_0_1694500287022627].] task information: [notify id:[0x0000000500000010], stage:[0], remote rank:[local].]\n"
        "        Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a result, collective communication operation failed.2. The execution speed on some NPU in the cluster is too slow to complete a communication operation within the timeout interval. (default 1800s, You can set the interval by using HCCL_EXEC_TIMEOUT.)3. The number of training samples of each NPU is inconsistent.4. Packet loss or other connectivity problems occur on the communication link.\n"
        "        Solution: 1. If this error is reported on part of these ranks, check other ranks to see whether other errors have been reported earlier.2. If this error is reported for all ranks, check whether the error reporting time is consistent (the maximum difference must not exceed 1800s). If not, locate the cause or a",
        "unknown",
        True,
        "ascend-rt-task-timeout",
    ),
    # OpenRLHF/OpenRLHF/issues/922: an OpenRLHF/vLLM version mismatch inside a Ray actor's unhandled error
    (
        "https://github.com/OpenRLHF/OpenRLHF/issues/922",
        "(ActorModelRayActor pid=700388) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::LLMRayActor.init_process_group() (pid=700386, ip=0.0.0.0, actor_id=fee8a2f8a218213cf461587c02000000, repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at 0x7f614d271790>)\n"
        "(ActorModelRayActor pid=700388) ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "(ActorModelRayActor pid=700388) ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '(ActorModelRayActor pid=700388) File "~/.virtualenvs/xxxxxx/lib/python3.12/site-packages/openrlhf/trainer/ray/vllm_engine.py", line 58, in init_process_group\n'
        "(ActorModelRayActor pid=700388) return self.llm.collective_rpc(\n"
        "(ActorModelRayActor pid=700388) ^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '(ActorModelRayActor pid=700388) File "~/.virtualenvs/xxxxxx/lib/python3.12/site-packages/vllm/entrypoints/llm.py", line 495, in collective_rpc\n'
        "(ActorModelRayActor pid=700388) executor = self.llm_engine.model_executor\n"
        "(ActorModelRayActor pid=700388) ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "(ActorModelRayActor pid=700388) AttributeError: 'LLMEngine' object has no attribute 'model_executor'",
        "application",
        False,
        "py-attribute-error",
    ),
    # OpenRLHF/OpenRLHF/pull/702: a Ray actor's creation task dies of a vLLM API change
    (
        "https://github.com/OpenRLHF/OpenRLHF/pull/702",
        "Exception raised in creation task: The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() (repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at 0x150cf7b4b910>)\n"
        ' File "openrlhf/trainer/ray/vllm_engine.py", line 58, in __init__\n'
        " self.llm = vllm.LLM(*args, **kwargs)\n"
        ' File "vllm/utils.py", line 1039, in inner\n'
        " return fn(*args, **kwargs)\n"
        ' File "vllm/entrypoints/llm.py", line 210, in __init__\n'
        " engine_args = EngineArgs(\n"
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_use_ray'",
        "application",
        False,
        "py-type-error",
    ),
    # ByteDance-Seed/VeOmni/issues/131: NCCL cannot connect during a multi-node FSDP init barrier
    (
        "https://github.com/ByteDance-Seed/VeOmni/issues/131",
        "[rank9]: torch.distributed.DistBackendError: NCCL error in /root/source/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.6\n"
        "[rank9]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "[rank9]: Last error:\n"
        "[rank9]: socketPollConnect poll() returned 1, no POLLOUT events\n"
        "[rank9]: Traceback (most recent call last):\n"
        '[rank9]:   File "VeOmni/tasks/train_torch.py", line 405, in <module>\n'
        "[rank9]:     main()\n"
        '[rank9]:   File "/VeOmni/tasks/train_torch.py", line 165, in main\n'
        "[rank9]:     model = build_parallelize_model(\n"
        '[rank9]:   File "/VeOmni/veomni/distributed/torch_parallelize.py", line 457, in build_parallelize_model\n'
        "[rank9]:     model = parallelize_model_fsdp1(\n"
        '[rank9]:   File "/VeOmni/veomni/distributed/torch_parallelize.py", line 146, in parallelize_model_fsdp1\n'
        "[rank9]:     shard_states = parallel_load_safetensors(weights_path)\n"
        '[rank9]:   File "VeOmni/veomni/distributed/fsdp/initialize.py", line 45, in parallel_load_safetensors\n'
        "[rank9]:     dist.barrier()\n"
        '[rank9]:   File "/opt/conda/envs/torch-base/lib/python3.12/site-packages/torch/distributed/c10d_logger.py", line 81, in wrapper\n'
        "[rank9]:     return func(*args, **kwargs)",
        "network",
        True,
        "nccl-system-error",
    ),
    # huggingface/trl/pull/825: TRL's DPO reference model under ZeRO-2 without an optimizer
    (
        "https://github.com/huggingface/trl/pull/825",
        "AssertionError: zero stage 2 requires an optimizer\n"
        "Traceback (most recent call last):\n"
        '  File "/fsx/user/git/trl/examples/dpo.py", line 154, in <module>\n'
        "    dpo_trainer = DPOTrainer(\n"
        '  File "/fsx/user/git/trl/trl/trainer/dpo_trainer.py", line 248, in __init__\n'
        "    self.ref_model = self.accelerator._prepare_deepspeed(self.ref_model)[0]\n"
        '  File "/fsx/user/miniconda/envs/trl/lib/python3.10/site-packages/accelerate/accelerator.py", line 1600, in _prepare_deepspeed\n'
        "    engine, optimizer, _, lr_scheduler = deepspeed.initialize(**kwargs)\n"
        '  File "/fsx/user/miniconda/envs/trl/lib/python3.10/site-packages/deepspeed/__init__.py", line 165, in initialize\n'
        "    engine = DeepSpeedEngine(args=args,\n"
        '  File "/fsx/user/miniconda/envs/trl/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 314, in __init__\n'
        "    self.optimizer = self._configure_zero_optimizer(optimizer=None)\n"
        '  File "/fsx/user/miniconda/envs/trl/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1404, in _configure_zero_optimizer',
        "application",
        False,
        "py-assertion-error",
    ),
    # NVIDIA-NeMo/Speech#12338: NeMo's DiT training given a webdataset never prepared for Megatron-Energon
    (
        "https://github.com/NVIDIA-NeMo/Speech/issues/12338",
        "torchrun nemo/collections/diffusion/data/prepare_energon_dataset.py -y\n"
        "torchrun scripts/dit/dit_train.py -y --factory pretrain data.path=./butterfly_webdataset\n"
        "\n"
        "0> ****** \n"
        "Unexpected error: Path NeMo/butterfly_webdataset does not contain a .nv-meta/.info.yaml file. Did you forget to prepare the dataset? Please check the documentation for an introduction to dataset preparation.",
        "application",
        False,
        "energon-dataset-not-prepared",
    ),
    # InternLM/xtuner/issues/858: the CLI could not start `python` for its command
    (
        "https://github.com/InternLM/xtuner/issues/858",
        "07/22 03:04:52 - mmengine - WARNING - WARNING: command error: '[Errno 2] No such file or directory: 'python''!",
        "application",
        False,
        "xtuner-command-error",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_trainer_tool_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom in ("crash", "hang"), source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable), source


HEALTHY = [
    # https://github.com/hiyouga/LlamaFactory/issues/7486: LlamaFactory's end of training: 'No metric ... to plot' warnings and the model card note
    "[WARNING|2025-03-26 08:17:49] logging.py:148 >> No metric loss to plot.\n"
    "[WARNING|2025-03-26 08:17:49] logging.py:148 >> No metric eval_loss to plot.\n"
    "[WARNING|2025-03-26 08:17:49] logging.py:148 >> No metric eval_accuracy to plot.\n"
    "[INFO|2025-03-26 08:17:49] modelcard.py:449 >> Dropping the following result as it does not have all the necessary fields: {'task': {'name': 'Causal Language Modeling', 'type': 'text-generation'}}",
    # https://github.com/hiyouga/LlamaFactory/issues/3753: llmtuner INFO lines, shards loaded, trainable params, 'Running training'
    "05/15/2024 11:44:31 - INFO - llmtuner.model.adapter - Fine-tuning method: LoRA\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.utils.misc - Found linear modules: o_proj,k_proj,q_proj,up_proj,down_proj,v_proj,gate_proj\n"
    "Loading checkpoint shards: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████| 4/4 [00:17<00:00,  4.28s/it]\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.utils.checkpointing - Gradient checkpointing enabled.\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.utils.attention - Using torch SDPA for faster training and inference.\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.adapter - Fine-tuning method: LoRA\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.utils.misc - Found linear modules: up_proj,o_proj,down_proj,q_proj,k_proj,gate_proj,v_proj\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.loader - trainable params: 41943040 || all params: 8072204288 || trainable%: 0.5196\n"
    "05/15/2024 11:44:31 - INFO - llmtuner.model.loader - trainable params: 41943040 || all params: 8072204288 || trainable%: 0.5196\n"
    "05/15/2024 11:44:32 - INFO - llmtuner.model.loader - trainable params: 41943040 || all params: 8072204288 || trainable%: 0.5196\n"
    "[INFO|trainer.py:2048] 2024-05-15 11:44:34,096 >> ***** Running training",
    # https://github.com/hiyouga/LlamaFactory/issues/8939: checkpoint-100 saved in shards and training continues to step 103
    " 83%|████████▎ | 100/120 [00:31<00:06,  2.95it/s][INFO|trainer.py:4074] 2025-08-16 18:31:24,349 >> Saving model checkpoint to /root/autodl-tmp/save4/checkpoint-100\n"
    "[INFO|configuration_utils.py:478] 2025-08-16 18:31:24,351 >> Configuration saved in /root/autodl-tmp/save4/checkpoint-100/config.json\n"
    "[INFO|configuration_utils.py:869] 2025-08-16 18:31:24,352 >> Configuration saved in /root/autodl-tmp/save4/checkpoint-100/generation_config.json\n"
    "[INFO|modeling_utils.py:4180] 2025-08-16 18:31:54,166 >> The model is bigger than the maximum size per checkpoint (5GB) and is going to be split in 4 checkpoint shards. You can find where each parameters has been saved in the index located at /root/autodl-tmp/save4/checkpoint-100/model.safetensors.index.json.\n"
    "[INFO|tokenization_utils_base.py:2393] 2025-08-16 18:31:54,167 >> chat template saved in /root/autodl-tmp/save4/checkpoint-100/chat_template.jinja\n"
    "[INFO|tokenization_utils_base.py:2562] 2025-08-16 18:31:54,167 >> tokenizer config file saved in /root/autodl-tmp/save4/checkpoint-100/tokenizer_config.json\n"
    "[INFO|tokenization_utils_base.py:2571] 2025-08-16 18:31:54,167 >> Special tokens file saved in /root/autodl-tmp/save4/checkpoint-100/special_tokens_map.json\n"
    "\n"
    " 84%|████████▍ | 101/120 [01:07<03:28, 10.97s/it]\n"
    " 85%|████████▌ | 102/120 [01:07<02:18,  7.71s/it]\n"
    " 86%|████████▌ | 103/120 [01:08<01:33,  5.50s/it]",
    # https://github.com/huggingface/trl/pull/3317: ProcessGroupNCCL warns the barrier's GPU is guessed ('can potentially cause a hang') between dataset preparation bars
    "Converting train dataset to ChatML: 100%|████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 7169.37 examples/s]\n"
    "Adding EOS to train dataset: 100%|███████████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 9362.94 examples/s]\n"
    "Tokenizing train dataset: 100%|██████████████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 2514.95 examples/s]\n"
    "Truncating train dataset: 100%|█████████████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 13881.24 examples/s]\n"
    "[rank0]:[W501 21:01:27.110829382 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular device, or call init_process_group() with a device_id.\n"
    "Converting train dataset to ChatML: 100%|████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 4829.89 examples/s]\n"
    "Adding EOS to train dataset: 100%|███████████████████████████████████████████████████████████████████████████████████████| 32/32 [00:00<00:00, 4561.20 examples/s]",
    # https://github.com/JIA-Lab-research/LISA/issues/18: 'Token indices sequence length is longer ... indexing errors' warnings, then the first epoch progress line
    "Token indices sequence length is longer than the specified maximum sequence length for this model (564 > 512). Running this sequence through the model will result in indexing errors\n"
    "Token indices sequence length is longer than the specified maximum sequence length for this model (738 > 512). Running this sequence through the model will result in indexing errors\n"
    "Token indices sequence length is longer than the specified maximum sequence length for this model (549 > 512). Running this sequence through the model will result in indexing errors\n"
    "Token indices sequence length is longer than the specified maximum sequence length for this model (781 > 512). Running this sequence through the model will result in indexing errors\n"
    "Epoch: [0][  1/500]     Time 112.567 (124.016)  Loss 3.0156 (6.4026)    CeLoss 3.0156 (6.4026)  MaskLoss 1.4305 (1.5772)        MaskBCELoss 0.9352 (1.1417)",
    # https://github.com/InternLM/xtuner/issues/899: mmengine deprecation warnings and a checkpoint-use_reentrant UserWarning, then Iter(train) progress
    "08/16 11:26:31 - mmengine - WARNING - Dataset Dataset has no metainfo. ``dataset_meta`` in visualizer will be None.\n"
    '08/16 11:26:31 - mmengine - WARNING - "FileClient" will be deprecated in future. Please use io functions in https://mmengine.readthedocs.io/en/latest/api/fileio.html#file-io\n'
    '08/16 11:26:31 - mmengine - WARNING - "HardDiskBackend" is the alias of "LocalBackend" and the former will be deprecated in future.\n'
    "08/16 11:26:31 - mmengine - INFO - Checkpoints will be saved to /juicefs-algorithm/models/nlp/huggingface/internlm/internlm2-chat-1_8b-xxx.\n"
    "/data/user/qx_agent/lib/python3.10/site-packages/torch/utils/checkpoint.py:460: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly. The default value of use_reentrant will be updated to be False in the future. To maintain current behavior, pass use_reentrant=True. It is recommended that you use use_reentrant=False. Refer to docs for more details on the differences between the two variants.\n"
    "  warnings.warn(\n"
    "08/16 11:26:39 - mmengine - INFO - Iter(train) [  10/5705]  lr: 1.0590e-05  eta: 1:20:07  time: 0.8442  data_time: 0.0113  memory: 11785  grad_norm: 0.7445  loss: 2.2287",
    # https://github.com/EleutherAI/lm-evaluation-harness/issues/2414: lm-eval building contexts for tasks with progress bars
    "2024-10-21:10:42:17,661 INFO     [task.py:422] Building contexts for leaderboard_bbh_tracking_shuffled_objects_seven_objects on rank 0...\n"
    "100%|██████████| 250/250 [00:00<00:00, 536.05it/s]\n"
    "2024-10-21:10:42:18,134 INFO     [task.py:422] Building contexts for leaderboard_bbh_tracking_shuffled_objects_three_objects on rank 0...\n"
    "100%|██████████| 250/250 [00:00<00:00, 542.32it/s]\n"
    "2024-10-21:10:42:18,601 INFO     [task.py:422] Building contexts for leaderboard_bbh_web_of_lies on rank 0...\n"
    "100%|██████████| 250/250 [00:00<00:00, 547.28it/s]\n"
    "2024-10-21:10:42:19,064 INFO     [task.py:422] Building contexts for leaderboard_gpqa_diamond on rank 0...\n"
    "100%|██████████| 198/198 [00:00<00:00, 1859.83it/s]\n"
    "2024-10-21:10:42:19,265 INFO     [task.py:422] Building contexts for leaderboard_gpqa_extended on rank 0...\n"
    "100%|██████████| 546/546 [00:00<00:00, 1865.76it/s]\n"
    "2024-10-21:10:42:19,803 INFO     [task.py:422] Building contexts for leaderboard_gpqa_main on rank 0...\n"
    "100%|██████████| 448/448 [00:00<00:00, 1867.20it/s]",
    # https://github.com/EleutherAI/lm-evaluation-harness/pull/1902: lm-eval finishes loglikelihood requests and prints its results table
    "% time lm_eval --model mlx --model_args model=internistai/base-7b-v0.2 \\                                              \n"
    "    --tasks mmlu_professional_medicine \\\n"
    "    --batch_size 64 \n"
    "2024-05-31:15:31:05,832 INFO     [evaluator.py:395] Running loglikelihood requests\n"
    "Running loglikelihood requests (17 batches): 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████| 17/17 [04:55<00:00, 17.36s/it]\n"
    "mlx (model=internistai/base-7b-v0.2), gen_kwargs: (None), limit: None, num_fewshot: None, batch_size: 64\n"
    "|        Tasks        |Version|Filter|n-shot|Metric|Value |   |Stderr|\n"
    "|---------------------|------:|------|-----:|------|-----:|---|-----:|\n"
    "|professional_medicine|      0|none  |     0|acc   |0.7647|±  |0.0258|\n"
    "\n"
    "lm_eval --model mlx --model_args model=internistai/base-7b-v0.2 --tasks   64  7.96s user 35.39s system 13% cpu 5:10.00 total",
    # https://github.com/meta-pytorch/torchtune/pull/640: torchtune step lines with loss and lr
    "Step 0 | loss:1.7535516023635864 lr:2e-05 gpu_resources:13708965376 \n"
    "Step 1 | loss:1.5729001760482788 lr:2e-05 gpu_resources:40627453440 \n"
    "Step 2 | loss:0.9040272831916809 lr:2e-05 gpu_resources:40708667904 \n"
    "Step 3 | loss:0.905918538570404 lr:2e-05 gpu_resources:40627398656 \n"
    "Step 4 | loss:0.7422177195549011 lr:2e-05 gpu_resources:40635295744 \n"
    "Step 5 | loss:0.794807493686676 lr:2e-05 gpu_resources:40609094656 \n"
    "Step 6 | loss:0.9222156405448914 lr:2e-05 gpu_resources:40629516288 \n"
    "Step 7 | loss:0.7954462170600891 lr:2e-05 gpu_resources:40628090368 \n"
    "Step 8 | loss:0.6583808660507202 lr:2e-05 gpu_resources:40729608704 \n"
    "Step 9 | loss:0.9859774112701416 lr:2e-05 gpu_resources:40824099328 \n"
    "Step 10 | loss:0.9678923487663269 lr:2e-05 gpu_resources:40657102848 \n"
    "Step 11 | loss:0.9990934729576111 lr:2e-05 gpu_resources:40675751424 ",
    # https://github.com/NVIDIA/Megatron-Energon/issues/127: `energon prepare` listing the shards and asking for a split
    "Found 9727 tar files in total. The first and last ones are:\n"
    "- job0-f0to7-shard-000000.tar\n"
    "- job99-f792to799-shard-000018.tar\n"
    "If you want to exclude some of them, cancel with ctrl+c and specify an exclude filter in the command line.\n"
    'Please enter a desired train/val/test split like "0.5, 0.2, 0.3" or "8,1,1": 10,0,0',
    # https://github.com/InternLM/xtuner/issues/691: mmengine's registry-scope fallback, a warning
    '07/29 22:44:31 - mmengine - WARNING - Failed to search registry with scope "mmengine" in the "builder"'
    ' registry tree. As a workaround, the current "builder" registry in "xtuner" is used to build instance.'
    ' This may cause unexpected failure when running the built modules. Please check whether "mmengine" is a'
    " correct scope, or whether the registry is initialized.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_trainer_tool_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_parlai_rank_prefix_names_the_rank_that_ran_out_of_memory() -> None:
    # facebookresearch/ParlAI#4452: ParlAI's distributed_context puts `rank:{:3d} |` before a
    # worker's log records; rank 3's CRITICAL record is the traceback that ends in CUDA OOM.
    found = diagnose(
        "rank:  3 | 2022-04-03 18:44:26,615 CRITICAL | Traceback (most recent call last):\n"
        '  File "/mnt/lustre/user/ParlAI/parlai/core/torch_generator_agent.py", line 605, in _fake_forward_backward_pass\n'
        "    self.backward(loss)\n"
        '  File "/mnt/lustre/user/ParlAI/parlai/core/torch_agent.py", line 2314, in backward\n'
        "    self.optimizer.backward(loss, update_main_grads=False)\n"
        '  File "/mnt/lustre/user/ParlAI/parlai/utils/fp16.py", line 194, in backward\n'
        "    loss.backward()\n"
        '  File "/mnt/lustre/user/anaconda3/envs/parlai/lib/python3.9/site-packages/torch/_tensor.py", line 363, in backward\n'
        "    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)\n"
        '  File "/mnt/lustre/user/anaconda3/envs/parlai/lib/python3.9/site-packages/torch/autograd/__init__.py", line 173, in backward\n'
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 21.06 GiB (GPU 3; 79.35 GiB total capacity; 63.19 GiB already allocated; 8.57 GiB free; 68.48 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback"
    )
    assert (found.symptom, found.category, found.retryable) == ("crash", "out_of_memory", False)
    assert found.implicated.ranks == [3]


def test_a_table_row_that_says_rank_is_not_a_rank_prefix() -> None:
    assert diagnose("The rank: 3 | loss 2.1\nRuntimeError: CUDA out of memory.").implicated.ranks == []


def test_a_blocking_wait_timeout_is_the_traceback_cut_below_it() -> None:
    # OpenRLHF/OpenRLHF#1135: c10d logs rank 6's blocking-wait timeout, then raises it; the paste
    # ends inside that traceback. The timeout says what the cut exception was: the run hung.
    found = diagnose(
        "ERROR in gpu6, the other 7 gpu have same error.\n"
        "\n"
        "\n"
        "[rank6]:[E928 16:16:22.196124891 ProcessGroupNCCL.cpp:817] [Rank 6] Work WorkNCCL(SeqNum=43379, OpType=_ALLGATHER_BASE, NumelIn=8069120, NumelOut=64552960, Timeout(ms)=600000) timed out in blocking wait.\n"
        "[rank6]: Traceback (most recent call last):\n"
        '[rank6]:   File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main'
    )
    assert (found.symptom, found.category, found.retryable) == ("hang", "unknown", True)
    assert found.evidence[0].signature == "torch-nccl-blocking-wait-timeout"
