"""Whole excerpts of real logs from stacks other than PyTorch with NCCL on NVIDIA GPUs: Graphcore
IPUs through PopTorch, whose errors carry the type of the Poplar, PopART or C++ exception behind
them ("In <file>:<line>: '<type>': <message>"), and the communication libraries under MPI and
libfabric (PSM3, MPICH) whose always-on assertions abort the process, and the native backtraces
of a process inside abort() that fatal-signal handlers (Synapse's, Open MPI's) print. Each with where it was
printed; and the alarming but harmless lines the same stacks print while a run goes well
(PopTorch's type-coercion warnings, oneCCL's CCL_WARN notices), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # graphcore/poptorch issue 12: compiling the model for the IPU, PopTorch caught a C++
    # std::out_of_range: PopTorch's guide counts a plain poptorch.Error as the program's.
    (
        "https://github.com/graphcore/poptorch/issues/12",
        '  File "FOLDER/env/lib/python3.6/site-packages/poptorch/_poplar_executor.py", line 569, in _compile\n'
        "    self._executable = poptorch_core.compileWithTrace(*trace_args)\n"
        "poptorch.poptorch_core.Error: In poptorch/python/poptorch.cpp:1371: 'std::out_of_range': "
        "basic_string::replace: __pos (which is 5) > this->size() (which is 0)\n"
        "Error raised in:\n"
        "  [0] Compiler::initSession\n"
        "  [1] LowerToPopart::compile\n"
        "  [2] compileWithTrace",
        "application",
        False,
        "poptorch-std-out-of-range",
    ),
    # graphcore/poptorch issue 9: a Jupyter traceback whose exception line is a bare "Error:";
    # Poplar's stream_memory_allocation_error is memory a host stream could not get.
    (
        "https://github.com/graphcore/poptorch/issues/9",
        "--> 255             self._executable = poptorch_core.compileWithManualTracing(\n"
        "    256                 self._options.toDict(), accessAttributes, self._training,\n"
        "\n"
        "Error: In include/poptorch_err/ExceptionHandling.hpp:76: 'poplar_stream_memory_allocation_error': "
        "/opt/jenkins/workspace/poplar/poplar_ci_ubuntu_20_04_unprivileged/popart/willow/src/popx/irlowering.cpp:3516 "
        "Out of memory. Single stream of length 149766584 in bufferIndex 1\n"
        "Error raised in:\n"
        "  [0] popart::Session::prepareDevice: Poplar compilation",
        "out_of_memory",
        False,
        "poptorch-poplar-stream-memory-allocation-error",
    ),
    # graphcore/poptorch issue 14: an unrecoverable runtime error, which PopTorch's guide says to
    # take the system out of operation for; rerun elsewhere.
    (
        "https://github.com/graphcore/poptorch/issues/14",
        '  File "/usr/local/lib/python3.8/dist-packages/poptorch/_poplar_executor.py", line 562, in copyWeightsToDevice\n'
        "    poptorch_core.copyWeightsToDevice_impl(self._executable,\n"
        "poptorch.poptorch_core.UnrecoverableError: In unknown:0: 'poplar_unrecoverable_runtime_error': "
        "fabric_atomic_increment_hsp_register: Could not complete operation. Fabric error: connection not "
        "established: CONNECTION_KILL, device 3, IP 10.5.17.11:50052. IPUoF Server unreachable at "
        "2023-02-03T15:32:48.181819Z\n"
        "Error raised in:\n"
        "  [0] copyWeightsToDevice",
        "hardware",
        True,
        "poptorch-poplar-unrecoverable-runtime-error",
    ),
    # uxlfoundation/oneCCL issue 109: PSM3's internal assertion on rank 1 under mpirun.
    (
        "https://github.com/uxlfoundation/oneCCL/issues/109",
        "user@machine:~/ws/oneCCL/build$ CCL_WORKER_COUNT=2 mpirun -np 2 examples/cpu/cpu_allreduce_test\n"
        "[1705415958.879795729] machine:rank1.cpu_allreduce_test: Reading from remote process' memory failed. "
        "Disabling CMA support\n"
        "machine:rank1: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen\n"
        "machine:rank1: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen",
        "unknown",
        True,
        "native-assertion-failed",
    ),
    # pmodels/mpich issue 7200 (Aurora): MPICH's own assertion, then its backtrace.
    (
        "https://github.com/pmodels/mpich/issues/7200",
        "Assertion failed in file src/mpid/ch4/src/init_comm.c at line 72: in_use == 0\n"
        "/opt/aurora/24.180.1/CNDA/mpich/20240717/mpich-ofi-all-icc-default-pmix-gpu-drop20240717/lib/"
        "libmpi.so.12(+0x1d86514) [0x14763ac07514]",
        "unknown",
        True,
        "native-assertion-failed",
    ),
    # Lightning-AI/pytorch-lightning issue 16673: Habana's Synapse prints the native backtrace of a
    # process aborting in HCCL's host barrier; the exception's own text is not in the excerpt.
    (
        "https://github.com/Lightning-AI/pytorch-lightning/issues/16673",
        "/usr/lib/habanalabs/libSynapse.so(synapse::LogManager::logStackTrace()+0x50) [0x7fb9df5dcf50]\n"
        "/usr/lib/habanalabs/libSynapse.so(synapse::LogManager::signalHandler(int, siginfo_t*, void*)+0x5e) "
        "[0x7fb9df5dd8fe]\n"
        "/lib/x86_64-linux-gnu/libc.so.6(+0x3ef10) [0x7fba3cba7f10]\n"
        "/lib/x86_64-linux-gnu/libc.so.6(gsignal+0xc7) [0x7fba3cba7e87]\n"
        "/lib/x86_64-linux-gnu/libc.so.6(abort+0x141) [0x7fba3cba97f1]\n"
        "/usr/lib/habanalabs/libSynapse.so(synapse::LogManager::terminateHandler()+0x68) [0x7fb9df5dd7b8]\n"
        "/usr/local/lib/python3.8/dist-packages/habana_frameworks/torch/distributed/_hccl_C.so"
        "(c10d::ProcessGroupHCCL::hostBarrier()+0x3d6) [0x7fb9ea3caa86]",
        "unknown",
        True,
        "native-abort-backtrace",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_library_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_psm_assertion_names_the_rank_and_host() -> None:
    # uxlfoundation/oneCCL issue 109: PSM prints the process's label before its message.
    found = diagnose("machine:rank1: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen")
    assert (found.implicated.ranks, found.implicated.nodes) == ([1], ["machine"])


HEALTHY = [
    # Graphcore's BERT (PyTorch) example run: PopTorch's type-coercion warnings while compiling,
    # then training and its metrics.
    "  ---------- Compilation/Loading from Cache Started ---------\n"
    "  [17:47:29.814] [poptorch:cpp] [warning] [DISPATCHER] Type coerced from Long to Int for tensor id 6\n"
    "  [17:47:29.830] [poptorch:cpp] [warning] [DISPATCHER] Tensor (ptr 0x9a55530) type coerced from Double to Float\n"
    "  [17:47:29.860] [poptorch:cpp] [warning] ...repeated messages suppressed...\n"
    "  Graph compilation: 100%|██████████| 100/100 [01:32<00:00]\n"
    "  Compiled/Loaded model in 97.88873339025304 secs\n"
    "  --------------------- Training Started --------------------\n"
    "  Training time: 3.297 secs",
    # PaddlePaddle/PaddleClas issue 2914: oneCCL's notices while two Intel GPUs start training.
    "I0816 19:54:45.905407 1947284 tcp_utils.cc:130] Successfully connected to 10.165.58.187:41848\n"
    "2023:08:16-19:54:45:(1947284) |CCL_WARN| could not get local_idx/count from environment variables, "
    "trying to get them from ATL\n"
    "2023:08:16-19:54:45:(1947284) |CCL_WARN| sockets exchange mode is set. It may cause potential problem "
    "of 'Too many open file descriptors'",
    # ROCm/rccl issue 1129: rccl-tests on two MI100s, no wrong results.
    "# Using devices\n"
    "#   Rank  0 Pid   2303 on node-a3 device  0 [0000:2f:00.0] AMD Instinct MI100\n"
    "           8             2     float     sum      -1    13.10    0.00    0.00      0    13.92    0.00    0.00      0",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_library_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
