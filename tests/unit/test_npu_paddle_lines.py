"""Whole excerpts of real logs from Ascend NPU and PaddlePaddle training jobs, as Chinese-language
users pasted them into their projects' issue threads: HCCL failing to set up a transport link to
another rank (EI0009, the network), aclnn operators rejecting their arguments (ACLNN_ERR_PARAM_*,
the program's call), CANN finding no operator library for an operator at the model's dtype
(EZ3003, the program's model), Paddle's newer `NCCL error(<n>), <message>.` wording of NCCL's
result codes, and Paddle's report of an operator whose allocation failed (BadAlloc, logged at
warning level); and the alarming but harmless lines the same stacks print (CPU fallbacks, format
notices, deprecation warnings, huge first losses), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # vllm-project/vllm-ascend issue 3162: GRPO weight sync on 910B; HCCL cannot create the link
    # from rank 1 to rank 0.
    (
        "https://github.com/vllm-project/vllm-ascend/issues/3162",
        "[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason:"
        " [Create][DestLink]Create Dest error! createLink para:rank[1]-localUserrank[1]-localIpAddr[172.16.0.114],"
        " dst_rank[0]-remoteUserrank[0]-remote_ip_addr[172.16.0.114]\n"
        "[rank1]:         Solution: Check other NPUs that are not reporting errors, or check if there are any"
        " abnormalities on the other end's NPU.",
        "network",
        True,
        "ascend-transport-init-failed",
    ),
    # hiyouga/LlamaFactory issue 4388: on an Ascend 310B, aclnnMatmul rejects float32 inputs.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/4388",
        '  File "/home/user/dev/llama-factory/.venv/lib/python3.10/site-packages/transformers/models/qwen3/'
        'modeling_qwen3.py", line 341, in forward\n'
        "    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)\n"
        "RuntimeError: matmul_implement_npu:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:92 NPU function"
        " error: call aclnnMatmul failed, error code is 161002\n"
        "[ERROR] 2025-11-28-18:37:41 (PID:595606, Device:0, RankID:-1) ERR00100 PTA call acl api failed.\n"
        "[PID: 595606] 2025-11-28-18:37:41.744.591 AclNN_Parameter_Error(EZ1001): Self dtype DT_FLOAT or mat2"
        " dtype DT_FLOAT not support under keep type mode.",
        "application",
        False,
        "ascend-aclnn-param-invalid",
    ),
    # hiyouga/LlamaFactory issue 6694: Qwen2-VL's Conv3D in BF16 on 910B; the report's head (with
    # its EZ3003) was cut off in the thread, its traceback repeats the message without the code.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/6694",
        "nel [AIcoreEngine] is unsupported. Reason: [tbe-custom]:op type Conv3D is not found in this op store."
        "[tbe-custom]:op type Conv3D is not found in this op store.[Dynamic shape check]: data type DT_BFLOAT16"
        " of input [x] is not supported. All supported data type and format of tensor input0.x is: Data Type:"
        " {DT_FLOAT16,DT_INT8}Format:{NDC1HWC0,NDC1HWC0}.\n"
        "        Possible Cause: The operator type is unsupported in the operator information library due to"
        " specification mismatch.\n"
        "        Solution: Submit an issue to request for support at https://gitee.com/ascend, or remove this type"
        " of operators from your model.\n"
        "        TraceBack (most recent call last):\n"
        "        No supported Ops kernel and engine are found for [Conv3D1], optype [Conv3D].\n"
        "        build graph failed, graph id:0, ret:-1[FUNC:BuildModelWithGraphId][FILE:ge_generator.cc][LINE:1615]",
        "application",
        False,
        "ascend-unsupported-operator",
    ),
    # PaddlePaddle/PaddleDetection issue 7380: Paddle 2.4's barrier fails with NCCL's system error.
    (
        "https://github.com/PaddlePaddle/PaddleDetection/issues/7380",
        '  File "/usr/local/lib/python3.8/dist-packages/paddle/distributed/collective.py", line 328, in barrier\n'
        "    task = group.process_group.barrier()\n"
        "OSError: (External) NCCL error(2), unhandled system error.\n"
        "  [Hint: Please search for the error code(2) on website (https://docs.nvidia.com/deeplearning/nccl/"
        "user-guide/docs/api/types.html#ncclresult-t) to get Nvidia's official solution and advice about NCCL"
        " Error.] (at /paddle/paddle/fluid/distributed/collective/ProcessGroupNCCL.cc:236)\n"
        "LAUNCH INFO 2022-11-21 02:35:54,386 Exit code 1",
        "network",
        True,
        "nccl-system-error",
    ),
    # PaddlePaddle/Paddle issue 63348: the same wording for NCCL's remote error, two machines.
    (
        "https://github.com/PaddlePaddle/Paddle/issues/63348",
        "    task = group.process_group.barrier()\n"
        "OSError: (External) NCCL error(6), remote process exited or there was a network error.\n"
        "  [Hint: Please search for the error code(6) on website (https://docs.nvidia.com/deeplearning/nccl/"
        "user-guide/docs/api/types.html#ncclresult-t) to get Nvidia's official solution and advice about NCCL"
        " Error.] (at /paddle/paddle/fluid/distributed/collective/ProcessGroupNCCL.cc:247)",
        "network",
        True,
        "nccl-remote-error",
    ),
    # PaddlePaddle/PaddleSeg issue 622: the operator's warning that batch_norm raised BadAlloc, with
    # the CUDA allocator's call stack under it; the memory message itself is cut off in the thread.
    (
        "https://github.com/PaddlePaddle/PaddleSeg/issues/622",
        "W1125 20:59:06.179869 21088 device_context.cc:260] device: 0, cuDNN Version: 7.6.\n"
        "Use multi-thread reader\n"
        "W1125 20:59:23.948345 21299 operator.cc:187] batch_norm raises an exception paddle::memory::allocation::BadAlloc,\n"
        "\n"
        "--------------------------------------------\n"
        "C++ Call Stacks (More useful to developers):\n"
        "--------------------------------------------\n"
        "0   std::string paddle::platform::GetTraceBackString<std::string>(std::string&&, char const*, int)\n"
        "1   paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)",
        "out_of_memory",
        False,
        "paddle-operator-bad-alloc",
    ),
    # PaddlePaddle/Paddle issue 21694: the same report from an LSTM after a few epochs, with the
    # allocator's message after it.
    (
        "https://github.com/PaddlePaddle/Paddle/issues/21694",
        "lstm raises an exception paddle::memory::allocation::BadAlloc\n"
        "\n"
        "PaddleCheckError:\n"
        "Out of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, available memory is only 221.875000MB.",
        "out_of_memory",
        False,
        "paddle-operator-bad-alloc",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_npu_and_paddle_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_bare_unsupported_operator_needs_its_op_type() -> None:
    # CANN's solution line that follows the report names no operator and is no failure.
    found = diagnose(
        "        Solution: Submit an issue to request for support at https://gitee.com/ascend, or remove this type"
        " of operators from your model."
    )
    assert found.symptom == "none"


HEALTHY = [
    # hiyouga/LlamaFactory issue 5071: torch_npu falls back to the CPU for one operator and goes on.
    "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not"
    " currently supported on the NPU backend and will fall back to run on the CPU. This may have performance"
    " implications. (function npu_cpu_fallback)",
    # vllm-project/vllm-ascend issue 4026: torch_npu's notice that a tensor keeps the ND format.
    "[rank2]:[W1106 01:17:59.125572526 compiler depend.ts:62] Warning: Cannot create tensor with NZ format while"
    " dim < 2, tensor will be created with ND format. (function operator())",
    # hiyouga/LlamaFactory issue 8439: checkpointing's deprecation warning on a 910B run.
    "/data/miniconda3/envs/llamafactory/lib/python3.11/site-packages/torch/utils/checkpoint.py:295: FutureWarning:"
    " `torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.\n"
    "  with torch.enable_grad(), device_autocast_ctx, torch.cpu.amp.autocast(**ctx.cpu_autocast_kwargs):"
    "  # type: ignore[attr-defined]",
    # lm-sys/FastChat pull 2422: torchrun on Ascend NPUs, a deprecation warning while loading shards.
    "[2023-09-13 10:20:36,763] torch.distributed.run: [WARNING] Setting OMP_NUM_THREADS environment"
    " variable for each process to be 1 in default, to avoid your system being overloaded, please further"
    " tune the variable for optimal performance in your application as needed. \n"
    "Loading checkpoint shards:  50%|███████████████████████████████████████████                         "
    "                  | 1/2 [00:13<00:13, 13.34s/it][W LegacyTypeDispatch.h:74] Warning:"
    " AutoNonVariableTypeMode is deprecated and will be removed in 1.10 release. For kernel"
    " implementations please use AutoDispatchBelowADInplaceOrView instead, If you are looking for a user"
    " facing API to enable running your inference-only workload, please use c10::InferenceMode. Using"
    " AutoDispatchBelowADInplaceOrView in user code is under risk of producing silent wrong result in"
    " some edge cases. See Note [AutoDispatchBelowAutograd] for more details. (function operator())",
    # PaddlePaddle/Paddle issue 34297: a YOLO run starts with a huge objectness loss that falls.
    "[07/21 14:40:44] ppdet.engine INFO: Epoch: [0] [  0/200] learning_rate: 0.000000 loss_xy: 6.467412"
    " loss_wh: 22.083004 loss_iou: 25.574692 loss_obj: 5243.871582 loss_cls: 33.527027 loss: 5331.523438"
    " eta: 27 days, 22:18:02 batch_cost: 18.5622 data_cost: 17.9648 ips: 1.7239 images/s\n"
    "[07/21 14:43:00] ppdet.engine INFO: Epoch: [0] [ 20/200] learning_rate: 0.000025 loss_xy: 7.020596"
    " loss_wh: 23.817680 loss_iou: 27.600710 loss_obj: 947.480469 loss_cls: 35.948715 loss: 1037.630493"
    " eta: 10 days, 19:39:33 batch_cost: 6.6231 data_cost: 6.0753 ips: 4.8315 images/s",
    # hiyouga/LlamaFactory issue 5627: an NPU run logging nan gradient norms with finite losses.
    "{'loss': 1.4596, 'grad_norm': nan, 'learning_rate': 4.552255167404752e-06, 'epoch': 0.66}\n"
    "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.549912997495027e-06, 'epoch': 0.66}",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_npu_and_paddle_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
