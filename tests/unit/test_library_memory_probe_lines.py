"""Whole excerpts of real logs where the libraries under a training job ran out of memory or
refused a resource: cuBLAS and cuDNN handles that could not be allocated, NCCL's CUDA calls out
of device memory, HIP and Apple MPS allocators, `std::bad_alloc` and ENOMEM at fork, spawn and
mmap, vLLM's KV cache refusal, and Triton kernels that need more shared memory than the GPU gives
a block (the kernel's configuration, not memory); and the alarming but harmless lines the same
stacks print (a caught OOM, allocator pressure and batch-size searches, KV cache sizing, and the
candidate kernels TorchInductor's max-autotune drops and goes on without), which must stay
healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # QwenLM/Qwen3 issue 873: cuBLAS could not create its handle in F.linear.
    (
        "https://github.com/QwenLM/Qwen3/issues/873",
        'File "lib/python3.9/site-packages/torch/nn/modules/linear.py", line 116, in forward\n'
        "    return F.linear(input, self.weight, self.bias)\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "out_of_memory",
        False,
        "cublas-alloc-failed",
    ),
    # datitran/face2face-demo issue 28: TensorFlow's older lower-case report of cudnnCreate.
    (
        "https://github.com/datitran/face2face-demo/issues/28",
        r" T:\src\github\tensorflow\tensorflow\stream_executor\cuda\cuda_dnn.cc:332] could not create cudnn"
        " handle: CUDNN_STATUS_ALLOC_FAILED",
        "out_of_memory",
        False,
        "cuda-libraries-cudnn-status-alloc-failed",
    ),
    # pytorch/pytorch issue 4921: NCCL's init runs out of device memory, then the collective fails.
    (
        "https://github.com/pytorch/pytorch/issues/4921",
        "c460c041:101211:106353 [0] init.cu:218 WARN Cuda failure 'out of memory'\n"
        "c460c041:101211:106353 [0] transport/p2p.cu:404 WARN rank 1 failed to get CUDA IPC handle to device 0"
        " : 11 invalid argument\n"
        "c460c041:101211:106353 [0] INFO init.cu:191 -> 3\n"
        "c460c041:101211:106353 [0] INFO misc/group.cu:70 -> 3 [Async thread]\n"
        "Traceback (most recent call last):\n"
        '  File "toy.py", line 10, in run\n'
        "    dist.all_reduce(tensor, op=dist.reduce_op.SUM, group=group)\n"
        "RuntimeError: NCCL error in: /home/user/gpfs/pytorch/torch/lib/THD/base/data_channels/DataChannelNccl.cpp:324,"
        " internal error",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # JuliaGPU/AMDGPU.jl issue 591: HIP's own error name for an allocation that failed.
    (
        "https://github.com/JuliaGPU/AMDGPU.jl/issues/591",
        "*ERROR: HIPError(code hipErrorOutOfMemory, out of memory)*\n\nStacktrace:\n  [1] check",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # gensyn-ai/rl-swarm issue 341: the MPS allocator's limit, then the wrapper stops the trainer.
    (
        "https://github.com/gensyn-ai/rl-swarm/issues/341",
        "RuntimeError: MPS backend out of memory (MPS allocated: 15.05 GB, other allocations: 11.91 GB, max allowed:"
        " 27.20 GB). Tried to allocate 1.16 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable"
        " upper limit for memory allocations (may cause system failure).\n"
        ">> Shutting down trainer...\n"
        "zsh: terminated  ./run_rl_swarm.sh",
        "out_of_memory",
        False,
        "torch-accelerator-out-of-memory",
    ),
    # tensorflow/tensor2tensor issue 192: std::bad_alloc during evaluation aborts the trainer.
    (
        "https://github.com/tensorflow/tensor2tensor/issues/192",
        "INFO:tensorflow:Evaluation [3/10]\n"
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n"
        "Aborted",
        "out_of_memory",
        False,
        "cpp-bad-alloc",
    ),
    # vicariousinc/science_rcn issue 9: the pool's worker thread cannot fork a new worker.
    (
        "https://github.com/vicariousinc/science_rcn/issues/9",
        "Exception in thread Thread-1:\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib64/python2.7/multiprocessing/pool.py", line 222, in _repopulate_pool\n'
        "    w.start()\n"
        '  File "/usr/lib64/python2.7/multiprocessing/forking.py", line 121, in __init__\n'
        "    self.pid = os.fork()\n"
        "OSError: [Errno 12] Cannot allocate memory",
        "out_of_memory",
        False,
        "uncaught-exception",
    ),
    # pytorch/pytorch issue 87861: share_memory_ cannot map its shared file.
    (
        "https://github.com/pytorch/pytorch/issues/87861",
        "Traceback (most recent call last):\n"
        '  File "/home/user/miniconda3/lib/python3.9/site-packages/torch/storage.py", line 208, in share_memory_\n'
        "RuntimeError: unable to mmap 29764 bytes from file </torch_10182_3020184674_63991>: Cannot allocate memory (12)",
        "out_of_memory",
        False,
        None,
    ),
    # gensyn-ai/rl-swarm issue 118: vLLM has no GPU memory left for KV cache blocks.
    (
        "https://github.com/gensyn-ai/rl-swarm/issues/118",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when"
        " initializing the engine.",
        "out_of_memory",
        False,
        "vllm-no-kv-cache-memory",
    ),
    # sgl-project/sglang issue 4330: SGLang has no GPU memory left for its KV cache pool.
    (
        "https://github.com/sgl-project/sglang/issues/4330",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "out_of_memory",
        False,
        "sglang-no-kv-cache-memory",
    ),
    # pytorch/pytorch issue 3038: cuDNN refuses the configuration; a large batch, not memory.
    (
        "https://github.com/pytorch/pytorch/issues/3038",
        "Traceback (most recent call last):\n"
        '  File "/home/user/.local/lib/python3.5/site-packages/torch/nn/functional.py", line 639, in batch_norm\n'
        "    return f(input, weight, bias)\n"
        "RuntimeError: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
        "application",
        False,
        None,
    ),
    # Yuliang-Liu/MonkeyOCR issue 86: Triton's launcher refuses a kernel that needs too much shared memory.
    (
        "https://github.com/Yuliang-Liu/MonkeyOCR/issues/86",
        "model_agent.py:498 - Task <ModelAgentLoop> failed\n"
        '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit:"
        " 101376. Reducing block sizes or `num_stages` may help.",
        "application",
        False,
        "triton-out-of-resources",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_library_memory_failures(source: str, text: str, category: str, retryable: bool, signature: str | None) -> None:
    found, got_category, got_retryable = verdict(text)
    assert (got_category, got_retryable) == (category, retryable), source
    if signature is not None:
        assert found == signature, source


HEALTHY = [
    # pytorch/pytorch pull 143098: max-autotune drops a Triton template that needs too much shared
    # memory (the precompile's ERROR record, then the benchmark's WARNING with Triton's message).
    "E1216 site-packages/torch/_inductor/select_algorithm.py:1756] [0/0] Exception out of resource: shared memory,"
    " Required: 131072, Hardware limit:101376. Reducing block sizes or `num_stages` may help. for benchmark choice"
    " TritonTemplateCaller(/tmp/torchinductor_root/tc/.....py, ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=64,"
    " BLOCK_M=128, BLOCK_N=128, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=5, num_warps=8)\n"
    "W1216 site-packages/torch/_inductor/select_algorithm.py:1997] [0/0] out of resource: shared memory, Required:"
    " 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
    # pytorch/pytorch issue 150980: a rank's precompile of one candidate fails and autotuning goes on.
    "[rank0]:E0410 07:53:02.558000 255947 torch/_inductor/select_algorithm.py:1905] [15/4] Exception No valid triton"
    " configs. OutOfMemoryError: out of resource: triton_mm Required: 262144 Hardware limit:232448 Reducing block"
    " sizes or `num_stages` may help.. ",
    # krasserm/fairseq-image-captioning issue 23: fairseq caught an OOM and recovers.
    "WARNING: attempting to recover from OOM in forward/backward pass",
    # ultralytics/yolov5 issue 9287: AutoBatch's warning, then it falls back to a default batch size.
    "AutoBatch: CUDA:0 (NVIDIA GeForce GTX 1080) 7.92G total, 2.53G reserved, 0.16G allocated, 5.24G free\n"
    "AutoBatch: WARNING: ⚠️ CUDA anomaly detected, recommend restart environment and retry command.",
    # huggingface/trl issue 1100: DeepSpeed ZeRO-3's allocator pressure notice.
    "1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is"
    " detrimental to performance.",
    # Lightning-AI/pytorch-lightning issue 20231: the batch size finder's trials.
    "`Trainer.fit` stopped: `max_steps=3` reached.\n"
    "Batch size 2 succeeded, trying batch size 4\n"
    "`Trainer.fit` stopped: `max_steps=3` reached.",
    # sgl-project/sglang pull 18263: SGLang sizes its KV cache and captures CUDA graphs.
    "[2026-07-15 13:14:54] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 76.44 GB,"
    " V size: 76.44 GB\n"
    "[2026-07-15 13:14:54] Memory pool end. avail mem=74.01 GB\n"
    "Capturing batches (bs=496 avail_mem=20.14 GB):   2%|▊          | 1/52 [00:03<03:17,  3.88s/it]",
    # pytorch/pytorch issue 122057: the allocator setting is not supported and PyTorch goes on without it.
    "[W CUDAAllocatorConfig.h:28] Warning: expandable_segments not supported on this platform (function operator())",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_library_memory_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_autotune_notice_does_not_hide_an_uncaught_out_of_resources() -> None:
    """Inductor's dropped candidate is no failure, but Triton's exception reaching the program is
    (Yuliang-Liu/MonkeyOCR issue 86 after pytorch/pytorch pull 143098)."""
    text = (
        "W1216 site-packages/torch/_inductor/select_algorithm.py:1997] [0/0] out of resource: shared memory, Required:"
        " 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n"
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit:"
        " 101376. Reducing block sizes or `num_stages` may help."
    )
    assert verdict(text)[1:] == ("application", False)
