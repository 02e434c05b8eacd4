"""Whole excerpts of real logs where a layer other than PyTorch's CUDA allocator ran out of
memory: XLA's stream-executor allocator ("Failed to allocate request for ... on device ordinal"),
Paddle's BadAlloc escaping to libstdc++'s terminate handler, TensorFlow's cuDNN handle that could
not allocate its resources, and MindSpore's kernel, memory-pool and pinned-host allocations; and
the alarming but harmless lines of the same layers (XLA's autotuner and rematerialization
warnings, DeepSpeed's cache flushes and loss-scale skips, TensorFlow's large-allocation notice, a
per-step memory report), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # huggingface/transformers issue 13219: Flax loads GPT-Neo 2.7B on a TPU VM; XLA's allocator
    # status under TensorFlow 1's spelling of the code.
    (
        "https://github.com/huggingface/transformers/issues/13219",
        'tokenizer = AutoTokenizer.from_pretrained("EleutherAI/gpt-neo-2.7B", pad_token="</s>", padding_side="left")\n'
        'model = FlaxAutoModelForCausalLM.from_pretrained("EleutherAI/gpt-neo-2.7B", pad_token_id=tokenizer.eos_token_id)\n'
        "RuntimeError: Resource exhausted: Failed to allocate request for 100.00MiB (104857600B) on device ordinal 0",
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # kingoflolz/mesh-transformer-jax issue 90: PjRt's failed execution names the allocation, then
    # the model's init traceback.
    (
        "https://github.com/kingoflolz/mesh-transformer-jax/issues/90",
        "key shape (1, 2)\n"
        "in shape (1, 2048)\n"
        "dp 1\n"
        "mp 1\n"
        "2021-08-12 10:19:56.549710: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/"
        "pjrt_stream_executor_client.cc:1981] Execution of replica 0 failed: Resource exhausted: Failed to"
        " allocate request for 128.00MiB (134217728B) on device ordinal 0\n"
        "Traceback (most recent call last):\n"
        '  File "resharding_example.py", line 50, in <module>\n'
        "    network = CausalTransformer(params)\n"
        '  File "/home/user/mesh-transformer-jax/mesh_transformer/transformer_shard.py", line 277, in __init__\n'
        "    self.state = self.init_xmap(jnp.array(key.take(mp_per_host)), x)",
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # PaddlePaddle/Paddle issue 42341: an eager-mode scale kernel's allocation fails and nothing
    # catches Paddle's BadAlloc; its what() is cut from the excerpt.
    (
        "https://github.com/PaddlePaddle/Paddle/issues/42341",
        "terminate called after throwing an instance of 'paddle::memory::allocation::BadAlloc'\n"
        "  what():\n"
        "\n"
        "--------------------------------------\n"
        "C++ Traceback (most recent call last):\n"
        "--------------------------------------\n"
        "0   scale_ad_func(paddle::experimental::Tensor const&, paddle::experimental::ScalarBase"
        "<paddle::experimental::Tensor>, float, bool)\n"
        "6   paddle::memory::allocation::StatAllocator::AllocateImpl(unsigned long)\n"
        "7   paddle::memory::allocation::Allocator::Allocate(unsigned long)",
        "out_of_memory",
        False,
        "paddle-operator-bad-alloc",
    ),
    # zzh8829/yolov3-tf2 issue 64: TensorFlow cannot create its cuDNN handle for want of memory;
    # the status, not the start-up failure, says what happened.
    (
        "https://github.com/zzh8829/yolov3-tf2/issues/64",
        "2019-09-05 17:25:59.832537: I tensorflow/stream_executor/platform/default/dso_loader.cc:44]"
        " Successfully opened dynamic library cudnn64_7.dll\n"
        "2019-09-05 17:26:01.310588: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create"
        " cudnn handle: CUDNN_STATUS_ALLOC_FAILED\n"
        "2019-09-05 17:26:01.313849: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create"
        " cudnn handle: CUDNN_STATUS_ALLOC_FAILED\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 193, in <module>\n'
        "    app.run(main)",
        "out_of_memory",
        False,
        "cuda-libraries-cudnn-status-alloc-failed",
    ),
    # mindspore-lab/mindone issue 465: MindSpore's runtime has no device memory for a kernel's
    # output and raises it as a RuntimeError.
    (
        "https://github.com/mindspore-lab/mindone/issues/465",
        '  File "/root/miniconda3/envs/mindspore_py39/lib/python3.9/site-packages/mindspore/common/_stub_tensor.py",'
        " line 85, in shape\n"
        "    self.stub_shape = self.stub.get_shape()\n"
        "RuntimeError: Malloc for kernel output failed, Memory isn't enough, node:Default/Cast-op446",
        "out_of_memory",
        False,
        "mindspore-kernel-malloc-failed",
    ),
    # candle-org/MindAct issue 1761: MindSpore's memory pool refuses a request beyond the NPU's
    # total, then the script's traceback starts.
    (
        "https://github.com/candle-org/MindAct/issues/1761",
        "[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/"
        "common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics"
        " : 29356337664 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than"
        " total mem size : 29464985600.\n"
        "Traceback (most recent call last):\n"
        '  File "/data/applications/workspace/mindnlp/llm/inference/gemma/run_gemma.py", line 17, in <module>\n'
        "    outputs = model.generate(**input_ids)",
        "out_of_memory",
        False,
        "mindspore-mem-pool-exhausted",
    ),
    # mindspore-ai/mindspore issue 172: pinned host memory for the data pipeline's device queue.
    (
        "https://github.com/mindspore-ai/mindspore/issues/172",
        "============== Starting Training ==============\n"
        "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 [mindspore/ccsrc/minddata/dataset/"
        "util/arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory\n"
        "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.253 [mindspore/ccsrc/minddata/dataset/"
        "util/task.cc:67] operator()] Task:  - thread(140643787593472) is terminated with err msg: Out of"
        " memory. Memory malloc failed.\n"
        "Line of code : 621",
        "out_of_memory",
        False,
        "mindspore-host-pinned-alloc-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_memory_layer_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # world-modelz/dreamax issue 1: XLA's convolution autotuner falls back and logs mismatches.
    "2022-04-08 08:17:10.165017: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/"
    "gpu_conv_algorithm_picker.cc:727] None of the algorithms provided by cuDNN heuristics worked; trying"
    " fallback algorithms.  Conv: (f16[1600,30,30,32]{3,2,1,0}, u8[0]{0}) custom-call(f16[1600,64,64,4]"
    '{3,2,1,0}, f16[6,6,4,32]{2,1,0,3}), window={size=6x6 stride=2x2}, custom_call_target="__cudnn$convForward"\n'
    "2022-04-08 08:17:10.241714: E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/"
    "buffer_comparator.cc:730] Difference at 0: 3442 vs 3876\n"
    "2022-04-08 08:17:10.241839: E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/"
    "gpu_conv_algorithm_picker.cc:612] Results mismatch between different convolution algorithms. This is"
    " likely a bug/unexpected loss of precision in cudnn.",
    # EnzymeAD/Enzyme-JAX pull 1363: XLA's rematerialization pass could not reach its target.
    "W0000 00:00:1756998431.440298    5182 hlo_rematerialization.cc:3183] Can't reduce memory use below"
    " 10.64GiB (11428802214 bytes) by rematerialization; only reduced to 71.27GiB (76523901244 bytes),"
    " down from 73.51GiB (78931543988 bytes) originally",
    # hiyouga/LlamaFactory issue 2258: DeepSpeed ZeRO-3's cache-flush warning.
    "2 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and"
    " is detrimental to performance. if this is happening frequently consider adjusting settings to reduce"
    " memory consumption. If you are unable to make the cache flushes go away consider adding"
    " get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches"
    " at the same time",
    # deepspeedai/DeepSpeed pull 1593: ZeRO-2's loss scaler skips a step.
    "[deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 65536",
    # dotnet/machinelearning issue 4090: TensorFlow's CPU allocator notes a large allocation.
    "2019-08-07 09:49:52.642800: W tensorflow/core/framework/allocator.cc:107] Allocation of 553190400"
    " exceeds 10% of system memory.",
    # google/flax issue 5116: a memory report per train-step variant, then steady losses.
    "NNX Train Step Memory Usage:\n"
    "tmp: 5.26 GB, arguments: 7.50 GB, total: 12.76 GB, host tmp 0.00 KB\n"
    "Step 0, loss: 0.0007948428392410278\n"
    "Step 10, loss: 0.0003609635168686509\n"
    "Pure JAX Train Step Memory Usage:\n"
    "tmp: 2.76 GB, arguments: 7.50 GB, total: 10.26 GB, host tmp 0.00 KB\n"
    "Step 0, loss: 0.0007948428974486887\n"
    "Step 40, loss: 0.00022612689645029604",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_memory_layer_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_oneflow_typed_out_of_memory_wins_over_the_glog_abort() -> None:
    # Oneflow-Inc/oneflow issue 9178: the VM allocator cannot extend its memory; the typed error
    # says why before glog's fatal stack reports the abort.
    found = diagnose(
        '  File "/mnt/DATA/user/oneflow/oneflow/core/vm/bin_allocator.h", line 305, in AllocateBlockToExtendTotalMem\n'
        "    backend_->Allocate(&mem_ptr, final_allocate_bytes)\n"
        "Error Type: oneflow.ErrorProto.out_of_memory_error\n"
        "*** Check failure stack trace: ***\n"
        "    @     0x7efaa9296cd3  google::LogMessage::Fail()\n"
        "    @     0x7efaa92971ff  google::LogMessageFatal::~LogMessageFatal()"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "oneflow-error-type-out-of-memory",
        "out_of_memory",
        False,
    )


def test_caught_oom_with_progress_after_stays_healthy() -> None:
    # NVIDIA/MinkowskiEngine issue 359: the loop catches CUDA OOM and skips the batch; losses and
    # an iteration line follow.
    found = diagnose(
        "2021-06-02 15:50:53 dev-node root[14429] WARNING CUDA OOM Error during batch execution, skipping batch.\n"
        "2021-06-02 15:50:57 dev-node root[14429] DEBUG Batch loss: 0.00563023891299963\n"
        "2021-06-02 15:50:59 dev-node root[14429] INFO Iteration: 15/1184, epoch 0, Bif Loss: 0.00563023891299963,"
        "  lr: 0.10000\n"
        "2021-06-02 15:51:03 dev-node root[14429] DEBUG CUDA out of memory. Tried to allocate 422.00 MiB (GPU 0;"
        " 15.78 GiB total capacity; 13.10 GiB already allocated; 372.75 MiB free; 13.78 GiB reserved in total by"
        " PyTorch)\n"
        "2021-06-02 15:51:03 dev-node root[14429] WARNING CUDA OOM Error during batch execution, skipping batch.\n"
        "2021-06-02 15:51:06 dev-node root[14429] DEBUG Batch loss: 0.010648244060575962"
    )
    assert found.symptom == "none"
