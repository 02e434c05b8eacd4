"""Whole excerpts of real logs from the launchers of PaddlePaddle and MindSpore and from jobs
whose lines carry prefixes that are not a node's name: Paddle's fleet launcher naming the
trainers that aborted, Paddle's DataLoader reporting a worker killed by SIGKILL, MindSpore's
msrun reporting a worker that exited with an error; Huawei CANN's error codes at the head of a
line (`EJ0001:`), which are not pdsh host prefixes; TorchX's and NeMo-Run's `<role>/<replica>`
prefix before UCX's `[host:pid:tid]`. And alarming but harmless lines of the same stacks and of
JAX/XLA, TensorFlow, vLLM, DeepSpeed and torch.compile, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # PaddlePaddle/Paddle issue 33074: the fleet launcher's summary is all the job's output shows.
    (
        "https://github.com/PaddlePaddle/Paddle/issues/33074",
        "INFO 2021-05-24 17:17:14,611 launch_utils.py:307] terminate all the procs\n"
        "ERROR 2021-05-24 17:17:14,611 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process"
        " with rank=[3] was aborted. Please check its log.\n"
        "INFO 2021-05-24 17:17:17,615 launch_utils.py:307] terminate all the procs\n"
        "[INFO]: train job failed! train_ret: 1",
        "unknown",
        True,
        "paddle-launch-trainer-aborted",
    ),
    # PaddlePaddle/PaddleDetection issue 7252: a DataLoader worker killed by SIGKILL, then the
    # launcher's summary; the worker's death is the cause.
    (
        "https://github.com/PaddlePaddle/PaddleDetection/issues/7252",
        '  File "/usr/local/python3.7.0/lib/python3.7/site-packages/paddle/fluid/multiprocess_utils.py",'
        " line 134, in __handler__\n"
        "    core._throw_error_if_process_failed()\n"
        "SystemError: (Fatal) DataLoader process (pid 1104) exited is killed by signal: Killed."
        " (at /paddle/paddle/fluid/imperative/data_loader.cc:181)\n"
        "\n"
        "INFO 2022-11-02 08:42:32,186 launch_utils.py:341] terminate all the procs\n"
        "\n"
        "ERROR 2022-11-02 08:42:32,186 launch_utils.py:604] ABORT!!! Out of all 1 trainers, the trainer"
        " process with rank=[0] was aborted. Please check its log.",
        "out_of_memory",
        False,
        "dataloader-killed",
    ),
    # candle-org/MindAct issue 1893: msrun's report of a worker that exited with an error.
    (
        "https://github.com/candle-org/MindAct/issues/1893",
        "[ERROR] ME(130371:281473296949264,MainProcess):2024-12-26-14:22:26.839.923"
        " [mindspore/parallel/cluster/process_entity/_api.py:268] Worker process 130673 exit with exception.",
        "unknown",
        True,
        "mindspore-msrun-process-exited",
    ),
    # hiyouga/LlamaFactory issue 3839: CANN's EJ0001 heads its line; HCCP could not start.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/3839",
        "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n"
        "[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.\n"
        "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last"
        " training process is running.\n"
        "        Solution: Wait for 10s after killing the last training process and try again.",
        "system_software",
        True,
        "ascend-hccp-init-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_launcher_and_runtime_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_paddle_launcher_names_the_aborted_ranks() -> None:
    # PaddlePaddle/models issue 4064: two of four trainers aborted.
    found = diagnose(
        "ERROR 2019-12-12 04:02:41,061 launch.py:269] ABORT!!! Out of all 4 trainers, the trainer process with"
        " rank=[0, 2] was aborted. Please check its log."
    )
    assert (found.evidence[0].signature, found.implicated.ranks) == ("paddle-launch-trainer-aborted", [0, 2])


def test_cann_error_codes_are_not_hosts() -> None:
    # hiyouga/LlamaFactory issue 3839 (EJ0001) and Ascend/pytorch issue 48 (EE1002): the code at
    # the head of CANN's report looked like a pdsh `host: ` prefix.
    hccp = diagnose(
        "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last"
        " training process is running."
    )
    stream = diagnose(
        "EE1002: 2024-09-03-16:50:00.041.231 Stream synchronize timeout. rtDeviceSynchronize execute failed,"
        " reason=[stream sync timeout]"
    )
    assert hccp.symptom == "crash" and hccp.implicated.nodes == []
    assert stream.symptom == "hang" and stream.implicated.nodes == []


def test_torchx_replica_prefix_keeps_the_ucx_host() -> None:
    # NVIDIA-NeMo/Run issue 16: NeMo-Run's TorchX prefix before UCX's `[host:pid:tid]`, the host
    # a cloud VM's dashed address.
    found = diagnose(
        "nemo.collections.llm.api.finetune/0 [10-7-133-247:16170:0:17316] Caught signal 11 (Segmentation fault:"
        " address not mapped to object at address 0x3800)\n"
        "nemo.collections.llm.api.finetune/0 ==== backtrace (tid:  17316) ====\n"
        "nemo.collections.llm.api.finetune/0  0 0x0000000000042520 __sigaction()  ???:0\n"
        "nemo.collections.llm.api.finetune/0  3 0x000000000005a30a ncclCommAbort()  ???:0"
    )
    assert (found.evidence[0].signature, found.implicated.nodes) == ("segfault", ["10-7-133-247"])


HEALTHY = [
    # noonghunna/club-3090 issue 142: vLLM waits a minute for its workers while they compile.
    "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [monitor.py:53] torch.compile took 9.61 s in total\n"
    "(EngineCore pid=110) INFO 05-15 16:03:26 [shm_broadcast.py:681] No available shared memory broadcast block"
    " found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming"
    " work (e.g. compilation, weight/kv cache quantization).\n"
    "(Worker_TP0 pid=119) INFO 05-15 16:03:34 [monitor.py:81] Initial profiling/warmup run took 56.94 s",
    # zzh8829/yolov3-tf2 issue 144: TensorFlow's end-of-epoch iterator notice.
    "2020-01-05 18:27:37.863969: W tensorflow/core/common_runtime/base_collective_executor.cc:216]"
    " BaseCollectiveExecutor::StartAbort Out of range: End of sequence\n"
    "         [[{{node IteratorGetNext}}]]\n"
    "         [[Shape/_10]]",
    # google-deepmind/dm-haiku issue 539: XLA's slow constant-folding alarm, then its duration.
    "2022-10-12 16:01:47.590034: E external/org_tensorflow/tensorflow/compiler/xla/service/slow_operation_alarm.cc:65]"
    " Constant folding an instruction is taking > 1s:\n"
    "\n"
    "  reduce-window.16 (displaying the full instruction incurs a runtime overhead. Raise your logging level to 4"
    " or above).\n"
    "2022-10-12 16:02:05.867327: E external/org_tensorflow/tensorflow/compiler/xla/service/slow_operation_alarm.cc:133]"
    " The operation took 19.277362298s",
    # GAIR-NLP/LIMO issue 29: vLLM preempts a sequence for lack of KV cache and recomputes it.
    " Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space."
    " This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide"
    " more KV cache memory. total_num_cumulative_preemption=101",
    # deepspeedai/DeepSpeedExamples issue 186: ZeRO-3's allocator cache flush warning between steps.
    "[2022-07-13 21:09:08,702] [INFO] [timer.py:193:stop] 0/50, SamplesPerSec=8.589520405326056,"
    " MemAllocated=0.93GB, MaxMemAllocated=12.76GB\n"
    "[2022-07-13 21:09:13,651] [WARNING] [stage3.py:2391:step] 2 pytorch allocator cache flushes since last step."
    " this happens when there is high memory pressure and is detrimental to performance.",
    # Comfy-Org/ComfyUI issue 9972: torch._dynamo's recompile limit warning; the run goes on.
    "W0921 18:32:27.863000 6084 Lib\\site-packages\\torch\\_dynamo\\convert_frame.py:964] [9/64] torch._dynamo hit"
    " config.recompile_limit (64)\n"
    "W0921 18:32:27.863000 6084 Lib\\site-packages\\torch\\_dynamo\\convert_frame.py:964] [9/64]    function:"
    " '__call__' (ComfyUI\\comfy\\model_patcher.py:129)",
    # datawhalechina/self-llm issue 125: accelerate's old-kernel notice.
    "Detected kernel version 5.4.0, which is below the recommended minimum of 5.5.0; this can cause the process to"
    " hang. It is recommended to upgrade the kernel to the minimum version or higher.",
    # THUDM/GLM issue 13: no checkpoint metadata yet, so the model starts from its initial weights.
    "WARNING: could not find the metadata file /root/data/checkpoints/blocklm-large-chinese/"
    "latest_checkpointed_iteration.txt",
    # PaddlePaddle/Paddle issue 49037: the fleet launcher's TCPStore retries, then connects.
    "I1213 09:42:06.845081 476913 tcp_utils.cc:107] Retry to connect to 127.0.0.1:41013 while the server is not"
    " yet listening.\n"
    "I1213 09:42:06.846009 476911 tcp_utils.cc:181] The server starts to listen on IP_ANY:41013\n"
    "I1213 09:42:09.845256 476913 tcp_utils.cc:130] Successfully connected to 127.0.0.1:41013",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_framework_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
