"""Real lines of large-model training stacks (Colossal-AI, LLaMA-Factory, DeepSpeed, accelerate,
torchtitan, Lightning, FSDP recipes) whose failure is reported by a launcher or a summary rather
than by a well-known PyTorch or NCCL message, and healthy runs that only look alarming; with their
sources."""

from __future__ import annotations

from recovery.activities.signatures.prefixes import line_context
from tests.unit.real_lines import diagnose, verdict

HEALTHY = (None, "none", None)

# torchelastic's failure summary as a launcher that wraps torchrun prints it, without the
# ChildFailedError line above it.
COLOSSALAI_SUMMARY = """-----------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-02-08_16:36:51
  host      : ecs-06308145
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 2062900)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d \
--rdzv_endpoint=127.0.0.1:29500 --rdzv_id=colossalai-default-job seq2seq_colossalai_PromptCLUE_Finetuning.py \
--config config.py --optimizer lamb on 127.0.0.1, is localhost: True, exception: Encountered a bad command exit code!"""


def test_torchelastics_summary_without_its_exception_line_is_a_failure() -> None:
    # hpcaitech/ColossalAI#2642: `colossalai run` prints the summary of the torchrun it started
    found = diagnose(COLOSSALAI_SUMMARY)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)
    assert found.implicated.ranks == [0]
    assert found.implicated.nodes == ["ecs-06308145"]
    assert "exited with code 1" in found.explanation


def test_llamafactorys_summary_alone_names_its_root_cause() -> None:
    # hiyouga/LlamaFactory#7032: the excerpt starts at the summary's title
    log = """llama_fc/lib/python3.10/site-packages/llamafactory/launcher.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-02-21_20:07:38
  host      : iZl4v544jr5cejwaqci3xvZ
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 14661)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"""
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)
    assert found.implicated.ranks == [0]


def test_colossalai_run_reporting_its_torchrun_failed_is_a_failure() -> None:
    # hpcaitech/ColossalAI#2441: the launcher's line is all the log shows
    # (colossalai/cli/launcher/multinode_runner.py, run_on_host)
    line = (
        "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d"
        " --rdzv_endpoint=127.0.0.1:29500 --rdzv_id=colossalai-default-job train.py --config config.py -s on 127.0.0.1"
    )
    assert verdict(line) == ("colossalai-run-failed", "unknown", True)


def test_the_workers_own_error_comes_before_colossalai_runs_report() -> None:
    # hpcaitech/ColossalAI#5890: the store error of the worker, then the launcher's report
    log = (
        "RuntimeError: Stop_waiting response is expected\n"
        "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --master_addr= --master_port="
        " vit_train_demo.py --model_name_or_path google/vit-base-patch16-224 --output_path"
        " ./home/jovyan/malika/ColossalAI/examples/images/vit --plugin hybrid_parallel --batch_size 8 --tp_size 4"
        " --pp_size 1 --num_epoch 3 --learning_rate 2e-4 --weight_decay 0.05 --warmup_ratio 0.3 on 127.0.0.1,"
        " is localhost: True, exception: Encountered a bad command exit code!"
    )
    assert verdict(log) == ("c10d-store-wait-reply-lost", "network", True)


def test_deepspeeds_launcher_report_broken_across_rows_is_still_read() -> None:
    # haotian-liu/LLaVA#1085: the pasted command line broke inside an argument; the launcher's
    # prefix is on the first row, "exits with return code = -9" on the second
    log = (
        "[2024-02-06 06:23:39,510] [ERROR] [launch.py:321:sigkill_handler] ['/mnt/d/anaconda3/envs/llava2/bin/python',"
        " '-u', '/home/ubuntu/code/LLaVA-main/llava/train/train_mem.py', '--local_rank=7', '--deepspeed',"
        " './scripts/zero2.json', '--model_name_or_path', '/mnt/d/models/vicuna-7b-v1.5', '--version', 'plain',"
        " '--data_path', '/mnt/d/data/LLaVA-CC3M-Pretrain-595K/chat.json', '--image_folder',"
        " '/mnt/d/data/LLaVA-CC3M-Pretrain-595K/images', '--vision_tower', '/mnt/d/models/clip-vit-large-patch14',"
        " '--tune_mm_mlp_adapter', 'True', '--mm_vision_select_layer', '-2', '--mm_use_im_start_end', 'False',"
        " '--mm_use_im_patch_token', 'False', '--bf16', 'False', '--tf32', 'False', '--output_dir',"
        " '/mnt/d/result/exp/exp4.1/checkpoints/llava-vicuna-7b-v1.5-pretrain', '--num_train_epochs', '1',"
        " '--per_device_train_batch_size', '16', '--per_device_eval_batch_size', '4', '--gradient_accumulation_steps',"
        " '1', '--evaluation_strategy', 'no', '--save_strategy', 'steps', '--save_steps', '24000', '--save_total_limi\n"
        "t', '1', '--learning_rate', '2e-3', '--weight_decay', '0.', '--warmup_ratio', '0.03', '--lr_scheduler_type',"
        " 'cosine', '--logging_steps', '1', '--model_max_length', '2048', '--gradient_checkpointing', 'True',"
        " '--dataloader_num_workers', '4', '--lazy_preprocess', 'True', '--report_to', 'wandb'] exits with return code = -9"
    )
    assert verdict(log) == ("deepspeed-launcher-exit", "unknown", True)
    assert "signal 9" in diagnose(log).explanation


def test_a_script_the_interpreter_cannot_open_is_the_programs() -> None:
    # bmaltais/kohya_ss#2310: CPython's own message (Modules/main.c), then accelerate's
    # simple_launcher raises CalledProcessError for the child's exit 2
    log = (
        "The following values were not passed to `accelerate launch` and had defaults used instead:\n"
        "\t`--dynamo_backend` was set to a value of `'no'`\n"
        "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.\n"
        "/usr/bin/python: can't open file '/workspace/all_data/sd-scripts/sdxl_train_network.py': [Errno 2] No such"
        " file or directory\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/accelerate", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 637, in simple_launcher\n'
        "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '/workspace/all_data/sd-scripts/sdxl_train_network.py',"
        " '--bucket_no_upscale', '--bucket_reso_steps=64', '--cache_latents', '--enable_bucket', '--min_bucket_reso=256',"
        " '--max_bucket_reso=2048', '--full_bf16', '--gradient_checkpointing', '--huber_c=0.1', '--huber_schedule=snr',"
        " '--learning_rate=0.0003', '--logging_dir=/workspace/all_data/logs', '--loss_type=l2',"
        " '--lr_scheduler=constant']' returned non-zero exit status 2."
    )
    assert verdict(log) == ("py-file-error", "application", False)


def test_a_child_that_exited_with_no_word_of_why_stays_unknown() -> None:
    # kohya-ss/sd-scripts#1354: accelerate's report of the child's exit is all there is
    log = (
        "Traceback (most recent call last):\n"
        '  File "/Users/user/open/kohya_ss/venv/lib/python3.10/site-packages/accelerate/commands/launch.py", line 637,'
        " in simple_launcher\n"
        "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
        "subprocess.CalledProcessError: Command '['/Users/user/open/kohya_ss/venv/bin/python',"
        " '/Users/user/Documents/open/kohya_ss/sd-scripts/sdxl_train.py', '--config_file',"
        " '/Users/user/Documents/open/kohya_ss/outputs/config_dreambooth-20240531-163416.toml']' returned non-zero"
        " exit status 1."
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)


def test_a_distributed_checkpoint_that_lacks_a_parameter_does_not_fit_the_model() -> None:
    # pytorch/torchtitan#2453 (torch/distributed/checkpoint/default_planner.py, strict loading)
    line = "RuntimeError: Missing key in checkpoint state_dict: layers.0.attention.k_norm.weight."
    assert verdict(line) == ("state-dict-mismatch", "application", False)


def test_lightning_finishing_after_a_performance_warning_is_healthy() -> None:
    # Lightning-AI/pytorch-lightning#14428
    log = (
        "/opt/miniconda3/envs/py3.10/lib/python3.10/site-packages/pytorch_lightning/trainer/connectors/"
        "data_connector.py:225: PossibleUserWarning: The dataloader, train_dataloader, does not have many workers"
        " which may be a bottleneck. Consider increasing the value of the `num_workers` argument` (try 16 which is the"
        " number of cpus on this machine) in the `DataLoader` init to improve performance.\n"
        "  rank_zero_warn(\n"
        "Epoch 0: 100%|███████████████████████████████████████████████████████████| 100/100 [00:00<00:00, 324.18it/s,"
        " loss=0.0663, v_num=13]\n"
        "\n"
        "`Trainer.fit` stopped: `max_epochs=1` reached.\n"
    )
    assert verdict(log) == HEALTHY


def test_torchtitans_allocator_retries_are_a_warning() -> None:
    # pytorch/torchtitan#2389: training goes on after the caching allocator retried
    log = """[titan] 2026-02-24 19:44:31,996 - root - INFO - step:  2  loss:  9.69482  grad_norm: 26.5000  memory: \
175.54GiB(98.42%)  tps: 7,439  tflops: 232.94  mfu: 10.35%
[titan] 2026-02-24 19:44:31,996 - root - WARNING - 1 CUDA memory allocation retries.
[titan] 2026-02-24 19:44:34,452 - root - WARNING - 2 CUDA memory allocation retries.
[titan] 2026-02-24 19:44:34,452 - root - INFO - step:  3  loss: 10.47314  grad_norm: 24.7500  memory: \
175.60GiB(98.45%)  tps: 6,672  tflops: 208.93  mfu: 9.29%"""
    assert verdict(log) == HEALTHY


def test_an_fsdp_checkpoint_saved_under_a_deprecation_warning_is_healthy() -> None:
    # meta-llama/llama-cookbook#650
    log = """/home/user/llama-recipes/src/llama_recipes/model_checkpointing/checkpoint_handler.py:113: FutureWarning: \
`save_state_dict` is deprecated and will be removed in future versions.Please use `save` instead.
  dist_cp.save_state_dict(
Sharded state checkpoint saved to /home/user/llama-recipes/../llama_output_fsdp/fine-tuned-meta-llama/Meta-Llama-3.1-8B
Checkpoint Time = 14.0877

best eval loss on epoch 1 is 0.8483395576477051
Epoch 1: train_perplexity=1.0189, train_epoch_loss=0.0188, epoch time 7.993172182934359s"""
    assert verdict(log) == HEALTHY


def test_accelerates_kernel_version_warning_alone_is_healthy() -> None:
    # modelscope/ms-swift#283
    line = (
        "Detected kernel version 5.4.143, which is below the recommended minimum of 5.5.0; this can cause the"
        " process to hang. It is recommended to upgrade the kernel to the minimum version or higher."
    )
    assert verdict(line) == HEALTHY


def test_a_socket_that_cannot_bind_ipv6_is_a_warning_but_a_missing_module_is_not() -> None:
    # axolotl-ai-cloud/axolotl#1670: c10d's IPv6 warnings, then the interpreter's own error
    log = """[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family \
not supported by protocol).
/root/miniconda3/envs/py3.11/bin/python: Error while finding module specification for 'axolotl.cli.train' \
(ModuleNotFoundError: No module named 'axolotl')"""
    assert verdict(log) == ("py-import-error", "application", False)


# NVIDIA/MinkowskiEngine#359: the program catches CUDA OOM, logs it (and its traceback's header)
# at DEBUG level, logs at WARNING that it skips the batch, and goes on.
CAUGHT_OOM = (
    "2021-06-02 16:00:18 dev-ssh-geza root[14429] DEBUG Batch loss: 0.0011402334785088897\n"
    "2021-06-02 16:00:20 dev-ssh-geza root[14429] DEBUG Free GPU ram: 7142.5\n"
    "2021-06-02 16:00:23 dev-ssh-geza root[14429] DEBUG CUDA out of memory. Tried to allocate 196.00 MiB (GPU 0;"
    " 15.78 GiB total capacity; 13.57 GiB already allocated; 46.75 MiB free; 14.10 GiB reserved in total by PyTorch)\n"
    "2021-06-02 16:00:23 dev-ssh-geza root[14429] DEBUG Traceback (most recent call last):\n"
    "2021-06-02 16:00:23 dev-ssh-geza root[14429] WARNING CUDA OOM Error during batch execution, skipping batch.\n"
    "2021-06-02 16:00:23 dev-ssh-geza root[14429] DEBUG Free GPU ram: 7142.5\n"
    "2021-06-02 16:00:26 dev-ssh-geza root[14429] DEBUG CUDA out of memory. Tried to allocate 178.00 MiB (GPU 0;"
    " 15.78 GiB total capacity; 13.73 GiB already allocated; 54.75 MiB free; 14.09 GiB reserved in total by PyTorch)\n"
    "2021-06-02 16:00:26 dev-ssh-geza root[14429] DEBUG Traceback (most recent call last):\n"
    "2021-06-02 16:00:26 dev-ssh-geza root[14429] WARNING CUDA OOM Error during batch execution, skipping batch.\n"
    "2021-06-02 16:00:27 dev-ssh-geza root[14429] DEBUG Free GPU ram: 6788.5"
)


def test_an_out_of_memory_error_logged_at_debug_level_was_caught() -> None:
    assert verdict(CAUGHT_OOM) == HEALTHY


def test_the_same_out_of_memory_error_unlogged_is_fatal() -> None:
    # The same message as PyTorch raises it: the level was what made the difference.
    line = CAUGHT_OOM.splitlines()[2].split(" DEBUG ", 1)[1]
    assert verdict(line)[1:] == ("out_of_memory", False)


def test_a_debug_setting_in_a_message_is_not_a_logging_level() -> None:
    # NVIDIA/nccl#1231: the hint PyTorch puts in an NCCL error names NCCL_DEBUG; the line stays fatal
    line = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691,"
        " unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3"
    )
    assert not line_context(line).warning
    assert verdict(line)[0] is not None
    assert line_context(CAUGHT_OOM.splitlines()[2]).warning


def test_a_worker_failure_that_rich_wrapped_into_columns_is_a_failure() -> None:
    # bmaltais/kohya_ss#1414: rich's logging handler pads the level and wraps the agent's record
    # into a column (the pid and binary on the next rows), then rich draws the traceback in a box
    log = (
        "VAE: <All keys matched successfully>\n"
        "[01:21:55] ERROR    failed (exitcode: -7) local_rank: 0 (pid:      api.py:672\n"
        "                    2255697) of binary:                                      \n"
        "                    /root/miniconda3/envs/sd-webui/bin/python                \n"
        "╭──────────────────── Traceback (most recent call last) ────────────────────╮\n"
        "│ /root/miniconda3/envs/sd-webui/bin/accelerate:8 in <module>               │\n"
        "│                                                                           │\n"
        "│   5 from accelerate.commands.accelerate_cli import main                   │\n"
        "│   6 if __name__ == '__main__':                                            │\n"
        "│   7 │   sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])  │\n"
        "│ ❱ 8 │   sys.exit(main())                                                  │\n"
        "│   9                                                                       │"
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)
    assert {e.signature for e in found.evidence} >= {"torchelastic-worker-failed"}
    # the record alone, without the box after it
    assert verdict("\n".join(log.splitlines()[:4]))[0] == "torchelastic-worker-failed"


def test_a_debug_record_before_the_watchdogs_timeouts_leaves_them_fatal() -> None:
    # huggingface/trl#1726: the program's DEBUG record, then the NCCL watchdog on ranks 1 and 2
    log = (
        "2024-06-17 08:37:15,707::93731__main__:DEBUG Before PPO step\n"
        "[rank1]:[E617 08:47:15.010046090 ProcessGroupNCCL.cpp:572] [Rank 1] Watchdog caught collective operation"
        " timeout: WorkNCCL(SeqNum=7930, OpType=_ALLGATHER_BASE, NumelIn=214016000, NumelOut=856064000,"
        " Timeout(ms)=600000) ran for 600029 milliseconds before timing out.\n"
        "[rank2]:[E617 08:47:15.047646334 ProcessGroupNCCL.cpp:572] [Rank 2] Watchdog caught collective operation"
        " timeout: WorkNCCL(SeqNum=7930, OpType=_ALLGATHER_BASE, NumelIn=214016000, NumelOut=856064000,"
        " Timeout(ms)=600000) ran for 600073 milliseconds before timing out."
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == ("hang", "unknown", True)


def test_hydras_compact_report_of_a_target_it_cannot_locate_is_the_configs() -> None:
    # ashleve/lightning-hydra-template#350: Lightning under Hydra, the model class cannot be imported
    log = (
        "[2022-06-08 08:12:42,389][src.training_pipeline][INFO] - Instantiating datamodule"
        " <src.datamodules.xxx_datamodule.XXXDataModule>\n"
        "[2022-06-08 08:12:42,395][src.training_pipeline][INFO] - Instantiating model"
        " <src.models.xxx_module.XXXLitModule>\n"
        "Error executing job with overrides: []\n"
        "Error locating target 'src.models.xxx_module.XXXLitModule', see chained exception above.\n"
        "full_key: model\n"
        "\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."
    )
    assert verdict(log) == ("hydra-config-error", "application", False)


def test_an_override_hydra_cannot_apply_is_the_configs() -> None:
    # apple/ml-inrflow#1
    log = (
        "In 'experiment/inrflow_imagenet': Could not override 'data@experiment.data'.\n"
        "Did you mean to override data?\n"
        "\n"
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."
    )
    assert verdict(log) == ("hydra-config-error", "application", False)


def test_hydras_job_end_alone_is_a_failure_of_unknown_cause() -> None:
    # txie-93/cdvae#61: the excerpt ends at Hydra's line; the reason after it is cut
    log = (
        "[2024-05-13 21:24:38,353][hydra.utils][INFO] - Instantiating <cdvae.pl_data.data"
        "                 module.CrystDataModule>\n"
        "Error executing job with overrides: ['data=perov', 'expname=perov']"
    )
    assert verdict(log) == ("hydra-job-failed", "unknown", True)
