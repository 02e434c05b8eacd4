"""Real excerpts of fine-tuning and post-training runs (LLaMA-Factory, axolotl, TRL, unsloth, verl,
OpenRLHF, LitGPT-style launchers) and of the data pipeline under them: chat templates, tokenizer
files, Arrow and tar data, the TRL client of a vLLM server. Each with the public thread that
printed it; the healthy ones are warnings those runs print and go on after."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

FAILURES = [
    # FasterDecoding/Medusa#102: the model's chat template refused the conversation (its own
    # raise_exception), through transformers' apply_chat_template
    (
        '  File "/root/Medusa/medusa/train/train_legacy.py", line 183, in preprocess\n'
        "    prompt = tokenizer.apply_chat_template(conversation, tokenize=False)\n"
        '  File "/root/miniconda3/envs/fschat/lib/python3.9/site-packages/jinja2/environment.py", line 939,'
        " in handle_exception\n"
        "    raise rewrite_traceback_stack(source=source)\n"
        '  File "<template>", line 1, in top-level template code\n'
        '  File "/root/miniconda3/envs/fschat/lib/python3.9/site-packages/transformers/tokenization_utils_base.py",'
        " line 1771, in raise_exception\n"
        "    raise TemplateError(message)\n"
        "jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/...",
        ("uncaught-exception", "application", False),
    ),
    # huggingface/alignment-handbook#93: the same refusal, quoted alone
    (
        TRACEBACK
        + "jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/...",
        ("uncaught-exception", "application", False),
    ),
    # PKU-Alignment/align-anything#172: a text-only model's template given multimodal messages
    (
        "[rank1]:     raise rewrite_traceback_stack(source=source)\n"
        '[rank1]:   File "<template>", line 23, in top-level template code\n'
        '[rank1]: TypeError: can only concatenate str (not "list") to str',
        ("py-type-error", "application", False),
    ),
    # ShishirPatil/gorilla#371: load_dataset on a JSON file whose column changes type
    (
        '  File "pyarrow/_json.pyx", line 308, in pyarrow._json.read_json\n'
        '  File "pyarrow/error.pxi", line 154, in pyarrow.lib.pyarrow_internal_check_status\n'
        '  File "pyarrow/error.pxi", line 91, in pyarrow.lib.check_status\n'
        "pyarrow.lib.ArrowInvalid: JSON parse error: Column(/execution_result/[]) changed from number to string in"
        " row 13",
        ("uncaught-exception", "application", False),
    ),
    # hiyouga/LlamaFactory#412: the same, then datasets' fallback fails too and the paste is cut
    # inside the second traceback: the first exception of the chain is the cause
    (
        "Traceback (most recent call last):\n"
        '  File "/data/software/anaconda3/lib/python3.9/site-packages/datasets/packaged_modules/json/json.py",'
        " line 113, in _generate_tables\n"
        "    pa_table = paj.read_json(\n"
        '  File "pyarrow/error.pxi", line 100, in pyarrow.lib.check_status\n'
        "pyarrow.lib.ArrowInvalid: JSON parse error: Column() changed from object to array in row 0\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/data/software/anaconda3/lib/python3.9/site-packages/datasets/builder.py", line 1858, in'
        " _prepare_split_single\n"
        "    for _, table in generator:\n"
        '  File "pyarrow/array.pxi", line 39, in pyarrow.lib._sequence_to_array\n'
        '  File "pyarrow/error.pxi", line 144, in pyarrow.lib.pyarrow_internal_check_status',
        ("uncaught-exception", "application", False),
    ),
    # webdataset/webdataset#142: a truncated shard, each line stamped by the log viewer
    (
        '2022-01-23 02:08:36.029 raise ReadError("unexpected end of data")\n'
        "\n"
        '2022-01-23 02:08:36.029 tarfile.ReadError: ("unexpected end of data @ <_io.BufferedReader'
        " name='train-224-30/00000022.tar'>\", \n"
        "<_io.BufferedReader name='train-224-30/00000022.tar'>, {'__url__': 'train-224-30/00000022.tar',"
        " '__worker__': 'None', \n"
        "'__rank__': '(18, 32)', '__nodeinfo__': \"('worker-1', 276)\"})",
        ("uncaught-exception", "application", False),
    ),
    # huggingface/trl#3587: GRPO's vLLM client asked a `trl vllm-serve` of another release for an
    # endpoint it does not have (trl/extras/vllm_client.py raises a bare Exception with the status)
    (
        "    trainer = GRPOTrainer(\n"
        "              ^^^^^^^^^^^^\n"
        '  File "/home/user/miniconda3/envs/unsloth_new/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py",'
        " line 626, in __init__\n"
        "    self.vllm_client.init_communicator()\n"
        '  File "/home/user/miniconda3/envs/unsloth_new/lib/python3.11/site-packages/trl/extras/vllm_client.py",'
        " line 233, in init_communicator\n"
        '    raise Exception(f"Request failed: {response.status_code}, {response.text}")\n'
        'Exception: Request failed: 404, {"detail":"Not Found"}',
        ("http-status-404", "application", False),
    ),
    # allenai/open-instruct#738: tokenizers 0.19 cannot read Tulu 3.1's tokenizer.json
    (
        "Exception: data did not match any variant of untagged enum ModelWrapper at line 1251012 column 3",
        ("tokenizers-file-too-new", "application", False),
    ),
    # dleemiller/WordLlama#16: the same through the bindings' normalizer wrapper
    (
        "    tokenizer = Tokenizer.from_file(str(tokenizer_path))\n"
        "Exception: data did not match any variant of untagged enum PyNormalizerTypeWrapper at line 49 column 3",
        ("tokenizers-file-too-new", "application", False),
    ),
    # hiyouga/LlamaFactory#4981: the DataLoader worker died of SIGBUS, /dev/shm too small
    (
        '  File "/home/user/.conda/envs/python310/lib/python3.10/site-packages/torch/utils/data/_utils/'
        'signal_handling.py", line 66, in handler\n'
        "    _error_if_any_worker_fails()\n"
        "RuntimeError: DataLoader worker (pid 3919213) is killed by signal: Bus error. It is possible that"
        " dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n"
        "RuntimeError: DataLoader worker (pid(s) 3919213) exited unexpectedly",
        ("torch-dataloader-shm-bus-error", "system_software", False),
    ),
    # verl-project/verl#1759: a colocated worker's process died during rollout; Ray says only
    # what may have killed it
    (
        '  File "/workspace/verl/verl/single_controller/ray/base.py", line 50, in func\n'
        "    output = ray.get(output)\n"
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "        class_name: create_colocated_worker_cls.<locals>.WorkerDict\n"
        "        pid: 108920\n"
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit"
        " detail: Worker unexpectedly exits with a connection error code 2. E",
        ("ray-actor-worker-died", "unknown", True),
    ),
    # huggingface/trl#3408: the vLLM server's NCCL group for weight sync could not be set up
    (
        "INFO 05-02 23:36:34 [pynccl.py:69] vLLM is using nccl==2.21.5\n"
        "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        ("nccl-system-error", "network", True),
    ),
    # bitsandbytes-foundation/bitsandbytes#382: the loaded library has no kernel for this GPU
    (
        "CUDA SETUP: Highest compute capability among GPUs detected: 8.6\n"
        "CUDA SETUP: Detected CUDA version 121\n"
        "CUDA SETUP: Loading binary bitsandbytes/bitsandbytes/libbitsandbytes_cuda121.so...\n"
        "Error named symbol not found at line 116 in file bitsandbytes/csrc/ops.cu",
        ("bitsandbytes-kernel-not-found", "system_software", True),
    ),
    # bitsandbytes-foundation/bitsandbytes#371: the same while a model loads, pyarrow's exit
    # warning after it
    (
        "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]Error named symbol not found at line 528"
        " in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/ops.cu\n"
        "/arrow/cpp/src/arrow/filesystem/s3fs.cc:2598:  arrow::fs::FinalizeS3 was not called even though S3 was"
        " initialized.  This could lead to a segmentation fault at exit",
        ("bitsandbytes-kernel-not-found", "system_software", True),
    ),
    # vllm-project/vllm#13941: an RL loop's vLLM could not take its memory back on wake_up
    (
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/device_allocator/cumem.py", line 75, in'
        " create_and_map\n"
        "    python_create_and_map(*allocation_handle)\n"
        "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62",
        ("cuda-out-of-memory", "out_of_memory", False),
    ),
    # databrickslabs/dolly#11: bf16 asked for on V100s, refused by TrainingArguments
    (
        '  File "/databricks/python/lib/python3.9/site-packages/transformers/training_args.py", line 1098, in'
        " __post_init__\n"
        "    raise ValueError(\n"
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
        ("transformers-bf16-unsupported", "system_software", True),
    ),
    # gensyn-ai/rl-swarm#299: the same through TRL's GRPOConfig, newer wording
    (
        '  File "/root/rl-swarm/.venv/lib/python3.10/site-packages/trl/trainer/grpo_config.py", line 456, in'
        " __post_init__\n"
        "    super().__post_init__()\n"
        '  File "/root/rl-swarm/.venv/lib/python3.10/site-packages/transformers/training_args.py", line 1692, in'
        " __post_init__\n"
        "    raise ValueError(error_message)\n"
        "ValueError: Your setup doesn't support bf16/gpu.",
        ("transformers-bf16-unsupported", "system_software", True),
    ),
    # substratusai/vllm-docker#37: vLLM refused the model's bf16 on a T4
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU"
        " has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for"
        " example: --dtype=half.",
        ("vllm-bf16-gpu-too-old", "system_software", True),
    ),
    # scicode-bench/SciCode#40: one JSONL file lacks a column the others have
    (
        TRACEBACK + "datasets.exceptions.DatasetGenerationCastError: An error occurred while generating the dataset\n"
        "\n"
        "All the data files must have the same columns, but at some point there are 1 missing columns"
        " ({'general_solution'})",
        ("uncaught-exception", "application", False),
    ),
    # bitsandbytes-foundation/bitsandbytes#806: transformers' lazy import wraps bitsandbytes' CUDA
    # setup failure, whose message follows: the setup failure is the cause
    (
        "RuntimeError: Failed to import transformers.modeling_utils because of the following error (look up to see"
        " its traceback):\n"
        "\n"
        "        CUDA Setup failed despite GPU being available. Please run the following command to get more"
        " information:",
        ("bitsandbytes-cuda-setup-failed", "system_software", True),
    ),
    # bitsandbytes-foundation/bitsandbytes#1093: the lazy import's line alone, as the thread quotes it
    (
        TRACEBACK + "RuntimeError: Failed to import transformers.integrations.bitsandbytes because of the following"
        " error (look up to see its traceback):",
        ("transformers-lazy-import-failed", "application", False),
    ),
    # datawhalechina/unlock-deepseek#42: TRL's GRPO got one reward too many for its column
    (
        '[rank3]:   File "/home/user/miniconda/envs/vl_vllm/lib/python3.10/site-packages/trl/trainer/grpo_trainer.py",'
        " line 495, in compute_loss\n"
        "[rank3]:     rewards_per_func[:, i] = torch.tensor(output_reward_func, dtype=torch.float32, device=device)\n"
        "[rank3]: RuntimeError: The expanded size of the tensor (10) must match the existing size (11) at"
        " non-singleton dimension 0.  Target sizes: [10].  Tensor sizes: [11]",
        ("shape-mismatch", "application", False),
    ),
    # shibing624/MedicalGPT#121: the PPO rollout sampled from outputs that were no longer finite
    (
        "probability tensor contains either `inf`, `nan` or element < 0\n"
        '  File "MedicalGPT/rl_training.py", line 432, in main\n'
        "    response_tensor = trainer.generate(\n"
        '  File "MedicalGPT/rl_training.py", line 468, in <module>\n'
        "    main()\n"
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
        ("loss-not-finite", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), FAILURES)
def test_a_toolkit_failure_is_read_for_what_it_is(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


HEALTHY = [
    # JIA-Lab-research/LISA#18: the tokenizer warns about long samples; training steps follow
    "Token indices sequence length is longer than the specified maximum sequence length for this model (564 > 512)."
    " Running this sequence through the model will result in indexing errors\n"
    "Token indices sequence length is longer than the specified maximum sequence length for this model (738 > 512)."
    " Running this sequence through the model will result in indexing errors\n"
    "Epoch: [0][  1/500]     Time 112.567 (124.016)  Loss 3.0156 (6.4026)    CeLoss 3.0156 (6.4026)",
    # unslothai/unsloth#1145: a deprecation notice, then unsloth's banner and steady progress
    "/usr/local/lib/python3.10/dist-packages/unsloth_zoo/training_utils.py:196: FutureWarning:"
    " `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)`"
    " instead.\n"
    "  float16_scaler = torch.cuda.amp.GradScaler()\n"
    "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1\n"
    "  0%|          | 1/312 [00:25<2:13:19, 25.72s/it]0, 2.5521\n"
    "  4%|▎         | 11/312 [02:27<1:00:48, 12.12s/it]10, 2.2398",
    # OpenRLHF/OpenRLHF#209: a reward model's new value head
    "Some weights of LLMForSequenceRegression were not initialized from the model checkpoint at Qwen/Qwen1.5-7B and"
    " are newly initialized: ['value_head.weight']\n"
    "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
    # vllm-project/vllm#11802: vLLM's own wording of the same notice
    "WARNING 01-07 07:39:33 gemma2.py:372] Some weights are not initialized from checkpoints:"
    " {'layers.23.mlp.down_proj.weight', 'layers.23.post_attention_layernorm.weight'}",
    # huggingface/huggingface_hub#3594: a Hub request timed out and is retried
    "'(ReadTimeoutError(\"HTTPSConnectionPool(host='nexus.example', port=443): Read timed out. (read timeout=10)\"),"
    " '(Request ID: efecd15f-6f5b-4016-a43a-6cd94a172a2c)')' thrown while requesting HEAD"
    " https://nexus.example/repository/huggingface-proxy/google/gemma-2b-it/resolve/main/custom_generate/generate.py\n"
    "Retrying in 1s [Retry 1/5].",
    # hiyouga/LlamaFactory#6101: a deprecation warning repeated through evaluation
    "[WARNING|2024-11-21 15:54:20] trainer.py:760 >> Trainer.tokenizer is now deprecated. You should use"
    " Trainer.processing_class instead.",
    # hiyouga/LlamaFactory#381: nothing to plot, and the launcher says the process succeeded
    "work-1: 08/06/2023 05:27:03 - WARNING - llmtuner.extras.ploting - No metric loss to plot.\n"
    "work-1: 08/06/2023 05:27:03 - WARNING - llmtuner.extras.ploting - No metric eval_loss to plot.\n"
    "work-1: [2023-08-06 05:27:07,537] [INFO] [launch.py:347:main] Process 1555224 exits successfully.",
    # huangb23/VTimeLLM#20: ZeRO-3 and PEFT warnings while saving the adapter
    "WARNING:root:base_model.model.model.layers.31.mlp.down_proj.lora_B.default.weight: param.ds_status !="
    " ZeroParamStatus.NOT_AVAILABLE: ZeroParamStatus.NOT_AVAILABLE\n"
    "/root/envs/vtimellm/lib/python3.10/site-packages/peft/utils/save_and_load.py:154: UserWarning: Could not find a"
    " config file in /root/.cache/huggingface/hub/models--lmsys--vicuna-7b-v1.5/snapshots/de56c35b - will assume"
    " that the vocabulary was not modified.",
    # neulab/prompt2model#60: generation without a pad token, warned and defaulted
    "Using pad_token, but it is not set yet.\n"
    "The attention mask and the pad token id were not set. As a consequence, you may observe unexpected behavior."
    " Please pass your input's `attention_mask` to obtain reliable results.\n"
    "Setting `pad_token_id` to `eos_token_id`:50256 for open-end generation.",
    # huggingface/trl#3683: the cache notice gradient checkpointing repeats every layer
    "Caching is incompatible with gradient checkpointing in GptOssDecoderLayer. Setting `past_key_value=None`.\n"
    "Caching is incompatible with gradient checkpointing in GptOssDecoderLayer. Setting `past_key_value=None`.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_a_toolkit_warning_is_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_the_word_exception_alone_is_not_an_exception_line() -> None:
    # A bare `Exception` is read only with its message: the word alone, as a heading or a
    # table's cell prints it, says nothing was raised.
    assert diagnose("Exception\nException:").symptom == "none"
