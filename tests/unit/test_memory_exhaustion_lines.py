"""Whole excerpts of real logs where memory ran out (GPU, host, cgroup, allocator), as issue
threads show them, with the verdict a careful operator gives (out of memory, not retryable: the
same model, batch and nodes run out again), and the memory chatter of the same systems that
leaves the run going (healthy)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

FAILURES = [
    # QwenLM/Qwen3-Coder#174: PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp)
    # on rank 3, then the log's DEBUG chatter of filelock goes on
    (
        "2024-11-20 14:37:16 [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB."
        " GPU 3 has a total capacity of 79.10 GiB of which 98.00 MiB is free. Process 387746 has 78.89 GiB memory"
        " in use. Of the allocated memory 70.12 GiB is allocated by PyTorch, and 765.81 MiB is reserved by PyTorch"
        " but unallocated. If reserved but unallocated memory is large try setting"
        " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
        "2024-11-20 14:37:16 DEBUG:filelock:Attempting to acquire lock 140341412642880 on"
        " /root/.triton/autotune/Fp16Matmul_2d_kernel.pickle.lock\n"
        "2024-11-20 14:37:16 DEBUG:filelock:Lock 140341412642880 acquired on"
        " /root/.triton/autotune/Fp16Matmul_2d_kernel.pickle.lock",
        "out_of_memory",
    ),
    # junjie18/CMT#15: cumm/spconv's tensorview check (TV_CUDART_RESULT_CHECK) quoting
    # cudaGetErrorString of error 2 (cudaErrorMemoryAllocation)
    (
        "RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\n"
        "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.",
        "out_of_memory",
    ),
    # nextflow-io/nextflow#5932: Slurm 23+'s wording of the cgroup's OOM kills, and srun's task
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM"
        " Killed.\nsrun: error: sdumont6156: task 0: Out Of Memory",
        "out_of_memory",
    ),
    # openbmc/openbmc#1887: kernels before 4.19 print the OOM kill alone (mm/oom_kill.c), and the
    # oom_reaper reports the victim's memory reaped
    (
        "[ 4018.450000] Killed process 935 (python) total-vm:113656kB, anon-rss:102104kB, file-rss:0kB,"
        " shmem-rss:0kB\n"
        "[ 4022.980000] oom_reaper: reaped process 935 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
        "out_of_memory",
    ),
    # equinor/ert#7797: today's kernel report (dmesg --time-format iso)
    (
        "2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE),"
        " order=0, oom_score_adj=0\n"
        "2024-04-29T14:55:41,679700+02:00 Out of memory: Killed process 1440763 (perl) total-vm:87033376kB,"
        " anon-rss:60356340kB, file-rss:0kB, shmem-rss:0kB, UID:21417 pgtables:169956kB oom_score_adj:0",
        "out_of_memory",
    ),
    # jax-ml/jax#27354: XLA:GPU's rematerialization gives up, then TSL's BFC allocator gives up
    # on the allocation (bfc_allocator.cc, logged at WARNING with "(rounded to ...)requested by op")
    (
        "2025-03-23 20:28:49.804627: W external/xla/xla/hlo/transforms/simplifiers/hlo_rematerialization.cc:3021]"
        " Can't reduce memory use below 0B (0 bytes) by rematerialization; only reduced to 1.25TiB (1374521760000"
        " bytes), down from 1.25TiB (1374521760000 bytes) originally\n"
        "2025-03-23 20:28:59.832181: W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc)"
        " ran out of memory trying to allocate 1.25TiB (rounded to 1374521760000)requested by op \n"
        "2025-03-23 20:28:59.832478: W external/xla/xla/tsl/framework/bfc_allocator.cc:512]"
        " *______________________________________________________________________________________",
        "out_of_memory",
    ),
    # NovaSky-AI/SkyRL#624: XLA's cudaMallocAsync allocator cannot get the memory
    (
        "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed"
        " to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        " Reported by CUDA: Free memory/Total memory: 22635544576/85095874560",
        "out_of_memory",
    ),
    # tensorflow/tensor2tensor#192: libstdc++'s terminate handler for operator new's failure
    (
        "INFO:tensorflow:Evaluation [3/10]\nterminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\nAborted",
        "out_of_memory",
    ),
]


@pytest.mark.parametrize(("text", "category"), FAILURES)
def test_memory_running_out_is_not_retried(text: str, category: str) -> None:
    assert verdict(text)[1:] == (category, False)


def test_the_rank_that_ran_out_is_the_culprit() -> None:
    # QwenLM/Qwen3-Coder#174
    found = diagnose(FAILURES[0][0])
    assert 3 in found.implicated.ranks


HEALTHY = [
    # tensorflow/tensorflow#43546: the BFC allocator's retry form ("not a failure")
    "2020-09-24 21:35:23.363348: W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran"
    " out of memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not a"
    " failure, but may mean that there could be performance gains if more memory were available.",
    # keras-team/keras#5326: the same allocator's older wording, and its bin summary
    "W tensorflow/core/common_runtime/bfc_allocator.cc:217] Ran out of memory trying to allocate 1.09GiB. The caller"
    " indicates that this is not a failure, but may mean that there could be performance gains if more memory is"
    " available.\nI tensorflow/core/common_runtime/bfc_allocator.cc:643] Bin (256): \tTotal Chunks: 2, Chunks in"
    " use: 0 512B allocated for chunks. 16B client-requested for chunks. 0B in use in bin. 0B client-requested in"
    " use in bin.",
    # talmolab/sleap#2142: StreamExecutor's device allocation fails at INFO while the BFC
    # allocator collects garbage and retries
    "2025-03-17 17:48:09.854267: I tensorflow/stream_executor/cuda/cuda_driver.cc:739] failed to allocate 2.12G"
    " (2282521344 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
    "2025-03-17 17:48:09.854399: W tensorflow/core/common_runtime/bfc_allocator.cc:343] Garbage collection:"
    " deallocate free memory regions (i.e., allocations) so that we can re-allocate a larger region to avoid OOM"
    " due to memory fragmentation. If you see this message frequently, you are running near the threshold of the"
    " available device memory and re-allocation may incur great performance overhead.",
    # pytorch/pytorch#193195: torch 2.13's caching allocator warns on each failed cudaMalloc attempt,
    # including those it recovers from by freeing cached blocks and retrying (no OutOfMemoryError)
    "[rank1]:[W812 16:00:28.643448608 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 1"
    " while trying to allocate 20971520 bytes (free: 15794176, total: 150111977472).",
    # Lightning-AI/pytorch-lightning#3259: the batch-size finder's progress and result
    "Batch size 16777216 succeeded, trying batch size 33554432\n"
    "Batch size 33554432 succeeded, trying batch size 67108864\n"
    "Finished batch size finder, will continue with full run using batch size 67108864",
    # ladaapp/lada#51: PyTorch's allocator config warns it cannot use expandable segments
    ".\\venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py:1329: UserWarning: expandable_segments not"
    " supported on this platform (Triggered internally at"
    " C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\c10/cuda/CUDAAllocatorConfig.h:28.)",
    # vllm-project/vllm-ascend#8289: vLLM's memory profile at start-up
    "(EngineCore pid=2884597) INFO 04-15 06:30:01 [worker.py:575] Free memory on device (60.86/61.27 GiB) on"
    " startup. Desired GPU memory utilization is (0.9, 55.14 GiB). Actual usage: 1.14 GiB for weights, 0.22 GiB"
    " for peak activation, 0.13 GiB for non-torch memory, 0.04 GiB for NPU graph memory.",
    # deepspeedai/DeepSpeed#4700: ZeRO's see_memory_usage reports
    "[2023-11-17 11:03:46,600] [INFO] [utils.py:802:see_memory_usage] DeepSpeedZeRoOffload initialize [begin]\n"
    "[2023-11-17 11:03:46,601] [INFO] [utils.py:803:see_memory_usage] MA 26.38 GB         Max_MA 26.38 GB"
    "         CA 26.71 GB         Max_CA 27 GB \n"
    "[2023-11-17 11:03:46,602] [INFO] [utils.py:810:see_memory_usage] CPU Virtual Memory:  used = 322.57 GB,"
    " percent = 17.1%",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_memory_chatter_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
