"""Whole excerpts of real logs from the newest training stack (PyTorch 2.7-2.10 with FSDP2 and
DTensor, NCCL 2.26-2.28, vLLM's V1 engine), each with its source: an operator that mixes DTensors
with plain tensors or device meshes is the program's; and the alarming but harmless lines of the
same stack, which must stay healthy: NCCL's CUDA refusal while it tears a communicator down
(its commReclaim WARN after it, PyTorch's "Destroy complete." next), the TF32 API deprecation of
PyTorch 2.9, Dynamo's recompile-limit warning and vLLM's orderly shutdown lines. A dead Ray actor
is named by the `ip:` field above its death cause; SGLang's parent process reporting that a child
failed is a failure, the child's own error its cause."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # meta-pytorch/torchtune issue 2856: Llama 4 LoRA under FSDP2; rank 1's aten.mm gets a plain
    # tensor and a DTensor, then rank 7's traceback begins.
    (
        "https://github.com/meta-pytorch/torchtune/issues/2856",
        '[rank1]:   File "/home/user/miniconda3/envs/py310/lib/python3.10/site-packages/torch/distributed/tensor/'
        '_dispatch.py", line 452, in _try_replicate_spec_for_scalar_tensor\n'
        "[rank1]:     raise RuntimeError(\n"
        "[rank1]: RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all"
        " torch.Tensor to DTensor before calling distributed operators!\n"
        "[rank7]: Traceback (most recent call last):\n"
        '[rank7]:   File "/home/user/torchtune/recipes/lora_finetune_distributed.py", line 1013, in <module>\n'
        "[rank7]:     sys.exit(recipe_main())",
        "application",
        False,
        "torch-dtensor-mixed-with-tensor",
    ),
    # sgl-project/sglang issue 3685: a two-node DeepSeek-R1 launch; the parent's SIGQUIT handler is
    # all the log shows (its logging call failed, so the message is printed raw).
    (
        "https://github.com/sgl-project/sglang/issues/3685",
        "    return self._loop.run_until_complete(task)\n"
        '  File "/usr/local/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py", line 343, in'
        " sigquit_handler\n"
        "    logger.error(\n"
        "Message: 'Received sigquit from a child proces. It usually means the child failed.'",
        "unknown",
        True,
        "sglang-child-failed",
    ),
    # Code index 53903288818 (an SGLang MiniCPM server's start-up): the scheduler's own assertion,
    # then the parent's SIGQUIT notice; the child's error is the cause.
    (
        "code index 53903288818",
        '  File "/root/sglang-minicpm/sglang_minicpm_sala_env/lib/python3.10/site-packages/flashinfer/jit/attention/'
        'modules.py", line 978, in gen_batch_prefill_module\n'
        '    assert not fp8_enabled, "fp8 tensor core is not supported in fa2 backend"\n'
        "AssertionError: fp8 tensor core is not supported in fa2 backend\n"
        "\n"
        "[2026-03-13 14:24:23] Received sigquit from a child process. It usually means the child failed.\n"
        "Killed",
        "application",
        False,
        "py-assertion-error",
    ),
    # pytorch/pytorch issue 134212: an optimizer step over a model only partly tensor-parallelised
    # (1D and 2D DTensors), as the maintainer quotes the error.
    (
        "https://github.com/pytorch/pytorch/issues/134212",
        "NotImplementedError: aten._foreach_mul_.Scalar: DTensor does not support cross-mesh operation yet!"
        "Got meshes: DeviceMesh('cuda', [[0, 1], [2, 3]], mesh_dim_names=('dp', 'tp')) DeviceMesh('cuda',"
        " [1, 3], mesh_dim_names=('dp',))",
        "application",
        False,
        "torch-dtensor-cross-mesh",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_newest_stack_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", category, retryable), source
    assert found.evidence[0].signature == signature, source


def test_the_dtensor_error_names_its_rank() -> None:
    # meta-pytorch/torchtune issue 2856: the rank that raised it, not rank 7 whose traceback follows.
    found = diagnose(FAILURES[0][1])
    assert found.implicated.ranks == [1]


def test_a_refused_call_outside_teardown_still_fails() -> None:
    # pytorch/pytorch issue 147575: the same refusal as PyTorch reports it under "Last error:",
    # with no communicator teardown around it, is the run's failure.
    found = diagnose(
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:3384, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1\n"
        "[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "[rank0]: Last error:\n"
        "[rank0]: Cuda failure 1 'invalid argument'"
    )
    assert (found.symptom, found.category) == ("crash", "system_software")


def test_a_dead_ray_actor_names_the_node_of_its_ip_field() -> None:
    # Simple-Efficient/RL-Factory issue 123: a verl rollout worker's RayActorError; the death
    # cause line names no node, the `ip:` field right above it does (address anonymised).
    found = diagnose(
        '  File "/data/user/RL_Factory/RL-Factory/verl/single_controller/ray/base.py", line 51, in __call__\n'
        "    output = ray.get(output)\n"
        "             ^^^^^^^^^^^^^^^\n"
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "  class_name: create_colocated_worker_cls.<locals>.WorkerDict\n"
        "  actor_id: 17f730ef04a3a7406b421ea101000000\n"
        "  pid: 16424\n"
        "  name: wd6rCqWorkerDict_0:5\n"
        "  namespace: bd542de1-90f2-46ba-8ece-bfcd459a3150\n"
        "  ip: 10.11.12.211\n"
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit"
        " detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential"
        " root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop"
        " --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors."
    )
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True)
    assert found.implicated.nodes == ["10.11.12.211"]


def test_an_ip_field_away_from_the_death_cause_names_nobody() -> None:
    # Constructed from the excerpt above: an `ip:` line that is not the field right above the death
    # cause (a blank line between) is not the dead actor's.
    found = diagnose(
        "  ip: 10.0.0.7\n"
        "\n"
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit"
        " detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential"
        " root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage."
    )
    assert found.implicated.nodes == []


HEALTHY = [
    # pytorch/pytorch pull 155740 (NCCL 2.27, symmetric memory tests): at teardown each rank's NCCL
    # thread reports a refused CUDA call and that commReclaim could not clean the comm up, and
    # PyTorch then says the destroy completed.
    (
        "https://github.com/pytorch/pytorch/pull/155740",
        "[rank0]:[I617 21:49:04.240959859 ProcessGroupNCCL.cpp:1479] [PG ID 0 PG GUID 0(default_pg) Rank 0]"
        " Watchdog joined, destroying NCCL communicators.\n"
        "[rank3]:[I617 21:49:04.240961582 ProcessGroupNCCL.cpp:1479] [PG ID 0 PG GUID 0(default_pg) Rank 3]"
        " Watchdog joined, destroying NCCL communicators.\n"
        "\n"
        "[2025-06-17 21:49:04] devvm5552:3355146:3355146 [0] transport/p2p.cc:1128 NCCL WARN Cuda failure 1"
        " 'invalid argument'\n"
        "\n"
        "[2025-06-17 21:49:04] devvm5552:3355146:3355146 [0] init.cc:2143 NCCL WARN commReclaim: cleanup comm"
        " 0x9801e10 rank 0 failed in destroy/abort, error 1\n"
        "[rank0]:[I617 21:49:04.735740424 ProcessGroupNCCL.cpp:1487] [PG ID 0 PG GUID 0(default_pg) Rank 0]"
        " Destroy complete.\n"
        "\n"
        "[2025-06-17 21:49:04] devvm5552:3355147:3355147 [1] transport/p2p.cc:1128 NCCL WARN Cuda failure 1"
        " 'invalid argument'\n"
        "\n"
        "[2025-06-17 21:49:04] devvm5552:3355147:3355147 [1] init.cc:2143 NCCL WARN commReclaim: cleanup comm"
        " 0xa6e0f00 rank 1 failed in destroy/abort, error 1\n"
        "[rank1]:[I617 21:49:04.752210537 ProcessGroupNCCL.cpp:1487] [PG ID 0 PG GUID 0(default_pg) Rank 1]"
        " Destroy complete.",
    ),
    # vllm-project/vllm pull 30428: the engine's thread-count warning and PyTorch 2.9's TF32 notice.
    (
        "https://github.com/vllm-project/vllm/pull/30428",
        "(EngineCore_DP0 pid=246229) WARNING 12-10 13:33:50 [multiproc_executor.py:880] Reducing Torch"
        " parallelism from 112 threads to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS in the"
        " external environment to tune this value as needed.\n"
        "/home/user/.venv/lib/python3.12/site-packages/torch/__init__.py:1617: UserWarning: Please use the new"
        " API settings to control TF32 behavior, such as torch.backends.cudnn.conv.fp32_precision = 'tf32' or"
        " torch.backends.cuda.matmul.fp32_precision = 'ieee'. Old settings, e.g, torch.backends.cuda.matmul."
        "allow_tf32 = True, torch.backends.cudnn.allow_tf32 = True, allowTF32CuDNN() and allowTF32CuBLAS() will"
        " be deprecated after Pytorch 2.9. Please see https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-"
        "32-tf32-on-ampere-and-later-devices (Triggered internally at /pytorch/aten/src/ATen/Context.cpp:80.)\n"
        "  _C._set_float32_matmul_precision(precision)",
    ),
    # vllm-project/vllm pull 43707: Ctrl-C on a served model, the new shutdown log lines.
    (
        "https://github.com/vllm-project/vllm/pull/43707",
        "^C(EngineCore pid=3946143) INFO 05-26 19:19:56 [core.py:1155] [shutdown] EngineCore: trigger received"
        " signal=SIGINT\n"
        "(Worker_TP0 pid=3946523) INFO 05-26 19:19:56 [multiproc_executor.py:905] [shutdown] WorkerProc:"
        " terminated by shutdown signal\n"
        "(APIServer pid=3945527) INFO 05-26 19:19:56 [launcher.py:100] [shutdown] API server: shutdown triggered",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY)
def test_newest_stack_noise_stays_healthy(source: str, text: str) -> None:
    assert diagnose(text).symptom == "none", source
