"""Whole excerpts of real logs from pretraining frameworks other than Megatron-LM and the JAX stack
(MaxText's TPU slices, JAX on TPU VMs, EasyLM, Colossal-AI's launcher, XLA's NCCL calls), each with
where it was printed, and the alarming but harmless lines these runs print (allocator retries,
start-up notices, profiler warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # MaxText's troubleshooting guide (PR 2041): the TPU session master names the failed worker.
    (
        "https://github.com/AI-Hypercomputer/maxtext/pull/2041",
        "E0511 18:18:50.796514     915 session_master.cc:505] Session is failing with the following status:"
        " Session master detected TPU session error from worker tpu-job-jax-v6e-8-5-15.headless-svc:8471."
        " The reporting TPU chip locations are:tpu31:pe4:3, \n"
        "tpu31:pe4:2\n"
        "E0511 18:18:50.796852     915 tpunetd_client.cc:311] Detected failure SLICE_FAILURE_CHIP_DRIVER_ERROR"
        " in session e6c885828b538167; Start failure handling",
        "hardware",
        True,
        "tpu-slice-failure",
    ),
    # marin-community/marin issue 4783: a reused TPU VM whose chips another process still holds.
    (
        "https://github.com/marin-community/marin/issues/4783",
        "jax.errors.JaxRuntimeError: UNKNOWN: TPU initialization failed: open(/dev/vfio/0): Device or resource"
        " busy: Device or resource busy; Couldn't open iommu group /dev/vfio/0",
        "system_software",
        True,
        "tpu-device-busy",
    ),
    # kingoflolz/mesh-transformer-jax issue 202: libtpu from another release than jax and jaxlib.
    (
        "https://github.com/kingoflolz/mesh-transformer-jax/issues/202",
        "2022-02-23 17:35:25.749201: F external/org_tensorflow/tensorflow/core/tpu/tpu_library_init_fns.inc:104]"
        " TpuEmbeddingEngine_WriteParameters not available in this library.\n"
        "Aborted (core dumped)",
        "system_software",
        True,
        "tpu-library-function-missing",
    ),
    # jax-ml/jax issue 6157: JAX's TPU driver cannot reach the TPU host of a pod slice.
    (
        "https://github.com/jax-ml/jax/issues/6157",
        "RuntimeError: Deadline exceeded: Failed to connect to remote server at address: grpc://10.59.106.169:8470."
        " Error fr\nom gRPC: Deadline Exceeded. Details: ",
        "network",
        True,
        "tpu-driver-connect-failed",
    ),
    # hpcaitech/ColossalAI issue 5213: `colossalai run` cannot log in to the second host.
    (
        "https://github.com/hpcaitech/ColossalAI/issues/5213",
        "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11"
        " --master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA"
        " private key file\n"
        "WARNING:torch.distributed.run:\n"
        "*****************************************",
        "application",
        False,
        "colossalai-run-ssh-auth",
    ),
    # hpcaitech/Open-Sora issue 657: the same launcher, a worker's own error, so no ssh problem.
    (
        "https://github.com/hpcaitech/Open-Sora/issues/657",
        "/bin/bash: SSH_CONNECTION: readonly variable\n"
        "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=0 --master_addr=x.x.x.x"
        " --master_port=29500 scripts/train.py configs/opensora-v1-2/train/stage3.py --data-path mydata.csv"
        " on x.x.x.x, is localhost: True, exception: Encountered a bad command exit code!",
        "unknown",
        True,
        "colossalai-run-failed",
    ),
    # young-geng/EasyLM issue 98: the TPU compiler's HBM budget, exceeded.
    (
        "https://github.com/young-geng/EasyLM/issues/98",
        "jax._src.traceback_util.UnfilteredStackTrace: jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED:"
        " XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 87.08G of 30.75G hbm."
        " Exceeded hbm capacity by 56.33G.\n"
        "Total hbm usage >= 88.33G:",
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # j-towns/vdvae-jax issue 2: XLA's NCCL all-reduce, used wrongly.
    (
        "https://github.com/j-towns/vdvae-jax/issues/2",
        "RuntimeError: Internal: external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nccl_all_reduce_thunk.cc:162:"
        " NCCL operation ncclAllReduce(send_buffer, recv_buffer, buffer.element_count, datatype, reduce_op, comm,"
        " *cu_stream) failed: invalid usage: while running replica 0 and partition 0 of a replicated computation"
        " (other replicas may have failed as well).",
        "application",
        False,
        "nccl-invalid-usage",
    ),
    # erfanzar/EasyDeL issue 111: JAX cannot bring up the TPU backend.
    (
        "https://github.com/erfanzar/EasyDeL/issues/111",
        "    raise RuntimeError(err_msg)\n"
        "RuntimeError: Unable to initialize backend 'tpu': INTERNAL: Failed to get global TPU topology."
        " (set JAX_PLATFORMS='' to automatically",
        "system_software",
        True,
        "jax-backend-init-failed",
    ),
    # jax-ml/jax issue 8243: the same failure in older JAX's words.
    (
        "https://github.com/jax-ml/jax/issues/8243",
        "RuntimeError: Requested backend tpu, but it failed to initialize: INVALID_ARGUMENT: TpuPlatform is not"
        " available.",
        "system_software",
        True,
        "jax-backend-init-failed",
    ),
    # jax-ml/jax-ai-stack issue 149: the Colab TPU runtime cannot read a newer JAX's StableHLO.
    (
        "https://github.com/jax-ml/jax-ai-stack/issues/149",
        "--> 303     return backend.compile(built_c, compile_options=options)\n"
        "    304   except xc.XlaRuntimeError as e:\n\n"
        "XlaRuntimeError: UNKNOWN: -:0:0: error: unknown vhlo type code: 33\n"
        "-:0:0: note: in bytecode version 6 produced by: StableHLO_v1.7.1",
        "system_software",
        True,
        "stablehlo-version-mismatch",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_pretraining_stack_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_tpu_slice_failure_names_the_worker() -> None:
    found = diagnose(FAILURES[0][1])
    assert "tpu-job-jax-v6e-8-5-15" in found.implicated.nodes


def test_tpu_driver_names_the_host_it_cannot_reach() -> None:
    assert diagnose(FAILURES[3][1]).implicated.peers == ["10.59.106.169"]


HEALTHY = [
    # pytorch/torchtitan PR 2389: the allocator retried, the steps go on.
    "[titan] 2026-02-24 19:44:31,996 - root - INFO - step:  2  loss:  9.69482  grad_norm: 26.5000  memory:"
    " 175.54GiB(98.42%)  tps: 7,439  tflops: 232.94  mfu: 10.35%\n"
    "[titan] 2026-02-24 19:44:31,996 - root - WARNING - 1 CUDA memory allocation retries.\n"
    "[titan] 2026-02-24 19:44:34,452 - root - WARNING - 2 CUDA memory allocation retries.\n"
    "[titan] 2026-02-24 19:44:34,452 - root - INFO - step:  3  loss: 10.47314  grad_norm: 24.7500  memory:"
    " 175.60GiB(98.45%)  tps: 6,672  tflops: 208.93  mfu: 9.29%",
    # marin-community/levanter issue 678: start-up notices of a single-node GPU run.
    "INFO:levanter.distributed:Not initializing jax.distributed because no distributed config was provided,"
    " and no cluster was detected.\n"
    "INFO:jax._src.xla_bridge:Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform"
    ' with name: "rocm". Available platform names are: CUDA\n'
    "/levanter/src/levanter/models/attention.py:266: UserWarning: transformer_engine is not installed. Please"
    " install it to use NVIDIA's optimized fused attention.. Falling back to the reference implementation.",
    # AI-Hypercomputer/maxtext PR 4847: step lines, then the profiler's warnings.
    "I0811 21:55:16.704861 138304841739136 metric_logger.py:226] completed step: 3, seconds: 10.344,"
    " TFLOP/s/device: 346.932, Tokens/s/device: 19006.461, total_weights: 1572864, loss: 12.979, lm_loss: 12.979,"
    " perplexity: 433110.281\n"
    "I0811 21:55:27.300535       7 profiler_session.cc:136] Profiler session started.\n"
    "W0811 21:55:27.378361    4942 gfc_configs.cc:136]  Overriding tracemark filters for GFC to 0..max."
    " See b/394884361.",
    # huggingface/nanotron issue 390: iteration lines.
    "10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | consumed_tokens: 85.8G |"
    " elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K |"
    " global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu:"
    " 38.3 | grad_norm: 1.25",
    # EleutherAI/gpt-neox issue 990: a DeepSpeed warning the maintainers call safe to ignore.
    "[WARNING] [comm.py:152:init_deepspeed_backend] NCCL backend in DeepSpeed not yet implemented\n"
    " [INFO] [comm.py:594:init_distributed] cdb=None",
    # Lightning-AI/pytorch-lightning issue 20890: torch_xla's deprecation warnings, per process.
    "WARNING:root:torch_xla.core.xla_model.xla_model.get_ordinal() will be removed in release 2.7. is deprecated."
    " Use torch_xla.runtime.global_ordinal instead.\n"
    "WARNING:root:torch_xla.core.xla_model.xrt_world_size() will be removed in release 2.7. is deprecated."
    " Use torch_xla.runtime.world_size instead.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_pretraining_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
