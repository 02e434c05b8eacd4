"""Real lines of compilers in a training process (torch.compile's Inductor, Triton, nvcc, ninja,
LLVM), with their sources: what fails again (a kernel that does not fit the GPU, a failed build),
what the node's software or filesystem caused (a toolkit older than the GPU, ranks racing on
Triton's cache), and the compile chatter that must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

FAILURES = [
    # FlashML-org/FreeToken#246: a serving stack logs Triton's OutOfResources message on lines of
    # its own, with no traceback (python/triton/runtime/errors.py gives the message)
    (
        "[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources: out of resource: shared memory,"
        " Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\n"
        "[16:10:42] health/ERROR  OutOfResources: out of resource: shared memory, Required: 98304,"
        " Hardware limit: 65536. Reducing block sizes or `num_stages` may help.  (x5)\n"
        "[16:10:43] stdout/ERROR  [2026-08-28|16:10:43|FrontendAPI] ERROR    Backend worker is gone and"
        " cannot be restarted; stopping the API server",
        ("triton-out-of-resources", "application", False),
    ),
    # state-spaces/mamba#387: the autotuner's spelling of the class, quoted in backticks
    (
        "`triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 663808,"
        " Hardware limit: 101376. Reducing block sizes or `num_stages` may help.`",
        ("triton-out-of-resources", "application", False),
    ),
    # triton-lang/triton#5017: Triton's header line, then ptxas's own lines say the kernel needs
    # more registers than the GPU has (the kernel's configuration, not the node's toolkit)
    (
        "RuntimeError: Internal Triton PTX codegen error: \n"
        "  ptxas info    : (C7516) Potential Performance Loss: wgmma.mma_async instructions are"
        " serialized due to ill formed pipeline stage in the function '\n"
        "  ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the"
        " program with a higher register target\n"
        "  ptxas fatal   : Ptx assembly aborted due to errors",
        ("ptxas-kernel-resources", "application", False),
    ),
    # triton-lang/triton#11747: LLVM's fatal error handler aborts the process compiling a kernel
    (
        "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.wait.st",
        ("llvm-fatal-error", "application", False),
    ),
    # pytorch/pytorch#108209: an extension build; ninja's summary above cpp_extension's error
    (
        "ninja: build stopped: subcommand failed.\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/.conda/envs/geo/lib/python3.8/site-packages/torch/utils/cpp_extension.py",'
        " line 1533, in _run_ninja_build\n"
        "    subprocess.run(\n"
        '  File "/home/user/.conda/envs/geo/lib/python3.8/subprocess.py", line 512, in run\n'
        "    raise CalledProcessError(retcode, process.args,\n"
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "setup.py", line 35, in <module>\n'
        "    setup(",
        ("native-build-failed", "application", False),
    ),
    # ninja-build/ninja#2589: nvcc's count of errors in a .cu file, then ninja's summary
    (
        "Error limit reached.\n"
        '100 errors detected in the compilation of "C:/Users/user/Desktop/PhysMamba-main/mamba/csrc/'
        'selective_scan/selective_scan_bwd_bf16_complex.cu".\n'
        "Compilation terminated.\n"
        "ninja: build stopped: subcommand failed.",
        ("native-build-failed", "application", False),
    ),
    # luka-group/mDPO#14: Triton builds its launcher (main.c) with the node's C compiler
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpy1gk3r1e/main.c', '-O3',"
        " '-shared', '-fPIC', '-Wno-psabi', '-o', '/tmp/tmpy1gk3r1e/cuda_utils.cpython-310-x86_64-linux-gnu.so',"
        " '-lcuda', '-L/lib64', '-L/lib', '-I/tmp/tmpy1gk3r1e',"
        " '-I/NAS/user/miniconda3/envs/mdpo/include/python3.10']' returned non-zero exit status 1.",
        ("triton-launcher-build-failed", "system_software", False),
    ),
    # PaddlePaddle/PaddleOCR#9391: Paddle's DataLoader worker SIGBUS handler names /dev/shm
    (
        "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient"
        " shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm"
        " is enough\n"
        "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient"
        " shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm"
        " is enough",
        ("shm-too-small", "system_software", False),
    ),
    # NVlabs/FoundationPose#19: an extension build asks nvcc for a GPU its toolkit does not know
    (
        "encode=arch=compute_89,code=compute_89 -gencode=arch=compute_89,code=sm_89 -std=c++17\n"
        "        nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
        "        FAILED: /kaolin/build/temp.linux-x86_64-cpython-38/kaolin/csrc/metrics/"
        "unbatched_triangle_distance_cuda.o",
        ("nvcc-unsupported-gpu-arch", "system_software", True),
    ),
    # facebookresearch/3detr#59: the same, without the spaces before the colon
    (
        "nvcc fatal: Unsupported gpu architecture 'compute_89'",
        ("nvcc-unsupported-gpu-arch", "system_software", True),
    ),
    # kijai/ComfyUI-WanVideoWrapper#1208: make_cubin's message for a ptxas that did not run
    (
        '  File "E:\\ComfyUI\\venv\\Lib\\site-packages\\triton\\backends\\nvidia\\compiler.py", line 309,'
        " in make_cubin\n"
        "    raise RuntimeError(f'`ptxas` failed with error code {e.returncode}: \\n{log}')\n"
        "RuntimeError: `ptxas` failed with error code 4294967295:",
        ("triton-ptx-codegen-error", "system_software", True),
    ),
]

# A compiler killed by SIGKILL (the OOM killer) mid-build: out of memory, not the code.
KILLED_COMPILERS = [
    # intel/compute-runtime#245
    (
        "FAILED: unit_tests/CMakeFiles/igdrcl_tests.dir/api/api_tests_wrapper3.cpp.o\n"
        "c++: fatal error: Killed signal terminated program cc1plus\n"
        "compilation terminated."
    ),
    # stellar/stellar-core#5308: make's summaries after it
    (
        "g++: fatal error: Killed signal terminated program cc1plus\n"
        "compilation terminated.\n"
        "make[3]: *** [Makefile:8448: ledger/test/LedgerCloseMetaStreamTests.o] Error 1\n"
        "make[2]: *** [Makefile:5333: all] Error 2\n"
        "make: *** [Makefile:520: all] Error 2"
    ),
]

# Ranks sharing Triton's kernel cache race on its files; the rerun finds the cache filled.
CACHE_RACES = [
    # triton-lang/triton#2688: os.replace of a cache file another rank moved
    (
        "  os.replace(temp_path, filepath)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: '/mnt/petrelfs/user/.triton/cache/"
        "cff628804055ab05f902072733c9ab2d/_rms_norm_bwd_dx_fused.ttir.tmp.pid_15735_304289' -> "
        "'/mnt/petrelfs/user/.triton/cache/cff628804055ab05f902072733c9ab2d/_rms_norm_bwd_dx_fused.ttir'"
    ),
    # pytorch/torchtitan#2146: Inductor wraps it; a TRITON_CACHE_DIR of the job's own naming
    (
        "[rank6]: torch._inductor.exc.InductorError: FileNotFoundError: [Errno 2] No such file or"
        " directory: '/home1/user/triton_cache_255441/E5DAZZK6P4ZXQ3VKJPNIEWZ7P4HLUH2VX7O2QO7USGHM5XQCLM6A/"
        "triton_red_fused_arange_bitwise_and_eq_ge_index_permute_sum_view_0.hsaco'\n"
        "\n"
        "[rank6]: Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if"
        ' you\'re reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"'
    ),
]

HEALTHY = [
    # Lightning-AI/lightning-thunder#2682: the recompile limit reached, the program goes on in eager
    (
        "W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8] torch._dynamo hit"
        " config.recompile_limit (8)\n"
        "W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8]    function: 'foo'"
        " (/opt/pytorch/lightning-thunder/test_thunder_recompile.py:4)\n"
        "W1021 10:44:18.989000 2926727 torch/_dynamo/convert_frame.py:1355] [0/8] To log all recompilation"
        ' reasons, use TORCH_LOGS="recompiles".\n'
        "\n"
        "Cache Misses: 10"
    ),
    # pytorch/pytorch#107179: Dynamo falls back to eager for a frame and the program prints its result
    (
        "[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING] Backend compiler failed with a"
        " fake tensor exception at\n"
        '[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING]   File "/data/users/user/spl.py",'
        " line 5, in fn\n"
        "[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING] Falling back to eager for this"
        " frame. Please use TORCH_LOGS=graph_breaks to see the full stack trace.\n"
        "[0, 0, 0, 0]"
    ),
    # rusty1s/pytorch_scatter#457: a graph break warning
    (
        "W0811 21:16:49.580000 11928 torch/_dynamo/variables/tensor.py:776] [0/0] Graph break from"
        " `Tensor.item()`, consider setting:\n"
        "W0811 21:16:49.580000 11928 torch/_dynamo/variables/tensor.py:776] [0/0]    "
        " torch._dynamo.config.capture_scalar_outputs = True\n"
        "W0811 21:16:49.580000 11928 torch/_dynamo/variables/tensor.py:776] [0/0] Graph break: from user"
        " code at:"
    ),
    # sgl-project/sglang#19776: Inductor's max-autotune chatter
    (
        "AUTOTUNE mm(4096x16384, 16384x4096)\n"
        "strides: [16384, 1], [1, 16384]\n"
        "dtypes: torch.bfloat16, torch.bfloat16\n"
        "  mm 0.6659 ms 100.0% \n"
        "  triton_mm_110 0.7683 ms 86.7% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=64, BLOCK_M=128,"
        " BLOCK_N=128, EVEN_K=True, GROUP_M=8, USE_FAST_ACCUM=False, num_stages=3, num_warps=4\n"
        "SingleProcess AUTOTUNE benchmarking takes 0.9773 seconds and 0.6039 seconds precompiling for 17"
        " choices"
    ),
    # pytorch/pytorch#159688: Inductor's max-autotune drops a candidate kernel that does not fit the
    # GPU (torch/_inductor/select_algorithm.py logs it at ERROR level and goes on)
    (
        "[0/0] RuntimeError: No valid triton configs. OutOfMemoryError: out of resource: triton_mm Required:"
        " 262144 Hardware limit:232448 Reducing block sizes or `num_stages` may help.\n"
        "[0/0] Runtime error during autotuning: \n"
        "[0/0] No valid triton configs. OutOfMemoryError: out of resource: triton_mm Required: 262144"
        " Hardware limit:232448 Reducing block sizes or `num_stages` may help.. \n"
        "[0/0] Ignoring this choice."
    ),
    # pytorch/torchdynamo#748: cudagraphs skipped, training goes on
    (
        "cuda train hf_Bart                            WARNING:root:using triton random, expect difference"
        " from eager\n"
        "WARNING torchinductor.compile_fx: skipping cudagraphs due to multple devices\n"
        "WARNING torchinductor.compile_fx: skipping cudagraphs due to multple devices"
    ),
    # mbzuai-oryx/groundingLMM#80: DeepSpeed's op builder starting a JIT build
    (
        "Using /home/user/.cache/torch_extensions/py310_cu117 as PyTorch extensions root...\n"
        "Detected CUDA files, patching ldflags\n"
        "Emitting ninja build file /home/user/.cache/torch_extensions/py310_cu117/fused_adam/build.ninja...\n"
        "Building extension module fused_adam...\n"
        "Allowing ninja to set a default number of workers... (overridable by setting the environment"
        " variable MAX_JOBS=N)"
    ),
    # tensorflow/tensorflow#48810: XLA falls back to the driver for PTX when ptxas is missing
    (
        "2021-04-28 21:34:18.432071: W tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:70] Can't find"
        " ptxas binary in ${CUDA_DIR}/bin.  Will back to the GPU driver for PTX -> sass compilation.  This is"
        " OK so long as you don't see a warning below about an out-of-date driver version. Custom ptxas"
        " location can be specified using $PATH."
    ),
]


@pytest.mark.parametrize(("text", "expected"), FAILURES)
def test_a_compiler_failure_reads_as_its_cause(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


@pytest.mark.parametrize("text", CACHE_RACES)
def test_ranks_racing_on_tritons_cache_are_retried(text: str) -> None:
    assert verdict(text) == ("triton-cache-race", "system_software", True)


@pytest.mark.parametrize("text", HEALTHY)
def test_compile_chatter_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)


@pytest.mark.parametrize("text", KILLED_COMPILERS)
def test_a_compiler_killed_mid_build_is_out_of_memory(text: str) -> None:
    assert verdict(text) == ("compiler-killed", "out_of_memory", False)
