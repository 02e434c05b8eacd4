"""Whole excerpts of real logs from LLM post-training runs that put Ray, vLLM or TensorRT-LLM
and NCCL together (OpenRLHF, NeMo-Aligner, alibaba/ROLL and the Ray memory monitor's kill
message as other Ray versions print it): a worker that could not register with its raylet,
Ray's memory monitor killing a worker on a node it names without an address, TensorRT-LLM's
failed check when the trainer refits the engine; and the alarming but harmless lines such runs
print (Ray's startup warnings, its dashboard failing to start, vLLM's preemption notice,
SGLang retracting a request), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # alibaba/ROLL issue 263: the driver connects to the cluster, then its worker cannot register
    # with the raylet and exits; nothing else follows.
    (
        "https://github.com/alibaba/ROLL/issues/263",
        "[2025-11-23 22:52:41] [initialize.py (46)] [INFO] [DRIVER 0 / 1][PID 51567] Starting ray cluster:"
        " ray start --head --port=6379 --node-name=127.0.0.1:0 --dashboard-port=8265\n"
        "2025-11-23 22:52:47,374 INFO worker.py:1837 -- Connecting to existing Ray cluster at address:"
        " [2605:340:cd51:6900:3829:8af0:4e1f:1ffb]:6379...\n"
        "2025-11-23 22:52:47,385 INFO worker.py:2023 -- Connected to Ray cluster.\n"
        "[2025-11-23 22:52:54,526 E 51567 51567] core_worker_process.cc:223: Failed to register worker to"
        " Raylet: IOError: Failed to read data from the socket: End of file"
        " worker_id=01000000ffffffffffffffffffffffffffffffffffffffffffffffff",
        "unknown",
        True,
        "ray-worker-register-failed",
    ),
    # deepseek-ai/smallpond issue 17: the same exit in the wording with "[RayletClient]", then
    # Python's leaked-semaphore warning at shutdown.
    (
        "https://github.com/deepseek-ai/smallpond/issues/17",
        "[2025-03-03 13:03:38,823 E 53766 2515875] core_worker.cc:499: Failed to register worker to Raylet:"
        " IOError: [RayletClient] Unable to register worker with raylet. Failed to read data from the"
        " socket: End of file worker_id=01000000ffffffffffffffffffffffffffffffffffffffffffffffff\n"
        "/usr/local/Cellar/python@3.12/3.12.8/Frameworks/Python.framework/Versions/3.12/lib/python3.12/"
        "multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There appear to be 24"
        " leaked semaphore objects to clean up at shutdown\n"
        "  warnings.warn('resource_tracker: There appear to be %d '",
        "unknown",
        True,
        "ray-worker-register-failed",
    ),
    # OpenRLHF/OpenRLHF issue 171: Ray's memory monitor kills the reward-model actor; this Ray
    # names the node by its id only ("( ID: ...)").
    (
        "https://github.com/OpenRLHF/OpenRLHF/issues/171",
        "Memory on the node ( ID: 37f3bd9fa11d642c9e13892ee048dfc1f58c4597b77202a59a33835b) where the task"
        " (actor ID: 658f7608dec0f9a3428857d502000000, name=RewardModelRayActor.__init__, pid=5315, memory"
        " used=1.67GB) was running was 445.48GB / 468.75GB (0.950365), which exceeds the memory usage"
        " threshold of 0.95. Ray killed this worker (ID: 384252cde217c088bb1cceb44ff7b1fec88a53bd8e7c82273275b694)"
        " because it was the most recently scheduled task; to see more information about memory usage on"
        " this node, use `ray logs raylet.out -ip 10.123.202.4`.\n"
        "PID\tMEM(GB)\tCOMMAND\n"
        "5312\t211.81\tray::ActorModelRayActor\n"
        "5313\t202.20\tray::CriticModelRayActor.init_model_from_pretrained\n"
        "5315\t1.67\tray::RewardModelRayActor",
        "out_of_memory",
        False,
        "ray-memory-threshold-exceeded",
    ),
    # NVIDIA/NeMo-Aligner issue 264: refitting the TensorRT-LLM engine with the trained weights
    # fails TensorRT-LLM's check, at the start of the second PPO step.
    (
        "https://github.com/NVIDIA/NeMo-Aligner/issues/264",
        "RuntimeError: RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed to refit"
        " transformer.layers.0.input_layernorm.bias (/opt/TensorRT-LLM/cpp/tensorrt_llm/runtime/tllmRuntime.cpp:229)\n"
        "1       0x7fcb9b2f2ee4 tensorrt_llm::common::throwRuntimeError(char const*, int, std::__cxx11::"
        "basic_string<char, std::char_traits<char>, std::allocator<char> > const&) + 100\n"
        "2       0x7fcb9b309254 /usr/local/lib/python3.10/dist-packages/tensorrt_llm/libs/libtensorrt_llm.so"
        "(+0xd8254) [0x7fcb9b309254]",
        "application",
        False,
        "trtllm-assertion-failed",
    ),
    # NVIDIA/TensorRT-LLM issue 583: the engine's plugin fails its check while loading.
    (
        "https://github.com/NVIDIA/TensorRT-LLM/issues/583",
        "[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB\n"
        "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed:"
        " d == a + length (/app/tensorrt_llm/cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp:320)\n"
        "1       0x7f6ce803be0b /opt/tritonserver/backends/tensorrtllm/libnvinfer_plugin_tensorrt_llm.so.9(+0x35e0b)"
        " [0x7f6ce803be0b]",
        "application",
        False,
        "trtllm-assertion-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_rl_framework_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # allenai/open-instruct pull 1067: Ray's startup warning that the object store uses /tmp.
    "2025-10-09 20:16:32,652    WARNING services.py:2159 -- WARNING: The object store is using /tmp instead\n"
    "  of /dev/shm because /dev/shm has only 5368709120 bytes available. This will harm performance! You may\n"
    "  be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you can\n"
    "  increase /dev/shm size by passing '--shm-size=10.24gb' to 'docker run' (or add it to the run_options\n"
    "  list in a Ray cluster config). Make sure to set this to more than 30% of available RAM.",
    # rllm-org/rllm issue 93: rollout goes on while vLLM preempts a request for KV cache space.
    "(WorkerDict pid=25555, ip=10.0.18.120) Rank 6, TP rank 0 initialized vLLM rollout [repeated 15x across cluster]\n"
    "(WorkerDict pid=25295, ip=10.0.10.41) WARNING 04-14 20:04:53 scheduler.py:1484] Sequence group 63 is"
    " preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect"
    " the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV"
    " cache memory. total_num_cumulative_preemption=1\n"
    "(WorkerDict pid=25448, ip=10.0.20.147) Rank 21, TP rank 1 `generate_sequence`: BS=8 [repeated 31x across cluster]",
    # zhaochenyang20/Awesome-ML-SYS-Tutorial issue 191: a slime run's expected warnings and SGLang
    # retracting a request when its KV pool is full.
    "WARNING:megatron.core.dist_checkpointing.validation:Rank 1 common state dict differs from rank 0 common"
    " state dict. Keys only on rank 0: [], Keys only on 1: [], Mismatched keys: [(('args',), <class"
    " 'argparse.Namespace'>, <class 'argparse.Namespace'>)]\n"
    "(SGLangEngine pid=13265) [2025-08-14 23:22:40 TP7] KV cache pool is full. Retract requests."
    " #retracted_reqs: 1, #new_token_ratio: 0.4533 -> 0.4767",
    # TensorRT-LLM's informational lines while it loads and tunes an engine.
    "[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB\n"
    "[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [I] [Autotuner]: Autotuning process ends",
    # Ray's dashboard failing to start does not stop the driver (hear-t1/EasyR1 issue 12 shows it
    # before the run's own failure).
    "INFO 07-25 14:15:49 [__init__.py:256] Automatically detected platform cuda.\n"
    "2025-07-25 14:16:34,565 ERROR services.py:1350 -- Failed to start the dashboard \n"
    "2025-07-25 14:16:34,566 ERROR services.py:1375 -- Error should be written to 'dashboard.log' or"
    " 'dashboard.err'. We are printing the last 20 lines for you.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_rl_framework_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
