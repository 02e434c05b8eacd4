"""Whole excerpts of real logs from accelerators other than NVIDIA's (AMD ROCm, Huawei Ascend,
Intel Gaudi), each with where it was printed, diagnosed as the systems' own references say they
mean (tables/rocm.yaml, tables/ascend.yaml, tables/synapse.yaml, tables/torch.yaml), and the
alarming lines those stacks print on healthy runs, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # hiyouga/LlamaFactory pull 975 (comment): torch_npu's NPU error and HCCL's EI0002 on an
    # allreduce whose peer never arrived; HCCL's own text names no cause.
    (
        "https://github.com/hiyouga/LlamaFactory/pull/975",
        "npuSynchronizeDevice:/usr1/02/workspace/j_vqN6BFvg/pytorch/torch_npu/csrc/core/npu/NPUStream.cpp:370"
        " NPU error, error code is 107020.\n"
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not"
        " received the Notify record from remote rank [4294967295].base information: [streamID:[1], taskID[39],"
        " taskType[Notify Wait], tag[AllReduce_192.168.0.116%enp69s0_60000_0_1694500287022627].] task"
        " information: [notify id:[0x0000000500000010], stage:[0], remote rank:[local].]\n"
        "        Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a"
        " result, collective communication operation failed.2. The execution speed on some NPU in the cluster"
        " is too slow to complete a communication operation within the timeout interval. (default 1800s, You"
        " can set the interval by using HCCL_EXEC_TIMEOUT.)",
        "hang",
        "unknown",
        True,
        "ascend-rt-task-timeout",
    ),
    # Ascend/pytorch issue 48: a torch_npu warning, then the runtime's EE1002 on a 16-NPU run.
    (
        "https://github.com/Ascend/pytorch/issues/48",
        "W NPUStream.cpp:409] Warning: NPU warning, error code is 507046[Error]: \n"
        "[Error]: In the specified timeout waiting event, all tasks in the specified stream are not completed. \n"
        "        Rectify the fault based on the error information in the ascend log.\n"
        "EE1002: 2024-09-03-16:50:00.041.231 Stream synchronize timeout. rtDeviceSynchronize execute failed,"
        " reason=[stream sync timeout]\n"
        "        Possible Cause: 1. The timeout interval may be improperly set.\n"
        "        wait for compute device to finish failed, runtime result = 507046.[FUNC:ReportCallError]"
        "[FILE:log_inner.cpp][LINE:161]\n"
        " (function npuSynchronizeUsedDevices)",
        "hang",
        "unknown",
        True,
        "ascend-stream-sync-timeout",
    ),
    # hiyouga/LlamaFactory issue 5071: a CPU-fallback warning, then HCCL's EI0006.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/5071",
        "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is"
        " not currently supported on the NPU backend and will fall back to run on the CPU. This may have"
        " performance implications. (function npu_cpu_fallback)\n"
        "EI0006: 2024-08-05-18:15:21.270.506 Getting socket times out. Reason: Remote Rank did not send the"
        " data in time. Please check the reason for the rank being stuck\n"
        "        Solution: 1. Check the rank service processes with other errors or no errors in the cluster.",
        "crash",
        "network",
        True,
        "ascend-get-socket-timeout",
    ),
    # vllm-project/vllm-ascend issue 486: torch_npu's HCCL call failure and EI0006 under [rank1].
    (
        "https://github.com/vllm-project/vllm-ascend/issues/486",
        "[rank1]:     work = group.allreduce([tensor], opts)\n"
        "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error:"
        " HcclAllreduce, error code is 6\n"
        "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.\n"
        "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote"
        " Rank did not send the data in time. Please check the reason for the rank being stuck",
        "crash",
        "network",
        True,
        "ascend-get-socket-timeout",
    ),
    # vllm-project/vllm-ascend issue 1955: HCCL's log of a port it could not listen on and links
    # that never formed (hcclRet 19 is HCCL_E_NETWORK).
    (
        "https://github.com/vllm-project/vllm-ascend/issues/1955",
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket]"
        "[Listen] socket type[1], listen on ip[192.168.20.160] and specific port[16666] fail. Please check the"
        " port status and whether the port is been using by other process.\n"
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.466 [hccl_socket_manager.cc:54] [2717288]"
        "[ServerInit]call trace: hcclRet -> 19\n"
        "[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2734049][Wait]"
        "[LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
        "crash",
        "network",
        True,
        "ascend-hccl-e-network",
    ),
    # hiyouga/LlamaFactory issue 3839: the device's task service did not answer; the runtime's
    # driver call failed internally, then torchelastic stopped the job.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/3839",
        "        tsd client wait response fail, device response code[1]. unknown device error.[FUNC:WaitRsp]"
        "[FILE:process_mode_manager.cpp][LINE:290]\n"
        "        Fail to get sq reg virtual addr, deviceId=2, sqId=40.[FUNC:Setup][FILE:stream.cc][LINE:1102]\n"
        "        rtGetDevMsg execute failed, reason=[driver error:internal error][FUNC:FuncErrorReason]"
        "[FILE:error_message_manage.cc][LINE:53]\n"
        "\n"
        "[2024-05-21 11:58:06,441] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process"
        " 926997 closing signal SIGTERM",
        "crash",
        "system_software",
        True,
        "ascend-driver-internal-error",
    ),
    # xingchensong/TouchNet issue 100: torch_npu's allocator on NPU 3.
    (
        "https://github.com/xingchensong/TouchNet/issues/100",
        "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47"
        " GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total by"
        " PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid"
        " fragmentation.",
        "crash",
        "out_of_memory",
        False,
        "torch-accelerator-out-of-memory",
    ),
    # HabanaAI/vllm-fork issue 484: Synapse's graph compiler log on an 8x Gaudi2 server.
    (
        "https://github.com/HabanaAI/vllm-fork/issues/484",
        "[19:08:34.164951][GC                    ][error][tid:44F8A] Failed to load tpc kernel for node:"
        " TPC634, GUID: constant_bf16. Got error: GLUE_FAILED\n"
        "[19:08:34.164986][PASS_MANAGER          ][error][tid:44F8A] Graph optimization failed pass:"
        " loadTpcKernels\n"
        "[19:08:34.165033][SYN_API       ][error][tid:44F8A] synGraphCompile: SYN_API_CALL failed status:"
        " 26[synFail]. graphHandle 0x557b3b2885e0\n"
        "[19:08:34.165045][PT_BRIDGE       ][error][tid:44F8A] /npu-stack/pytorch-integration/backend/"
        "synapse_helpers/graph.cpp: 599Graph compile failed. synStatus=synStatus 26 [Generic failure]. compile",
        "crash",
        "application",
        False,
        "synapse-graph-compile-failed",
    ),
    # hiyouga/LlamaFactory pull 7275 (comment): the Gaudi bridge could not build a node.
    (
        "https://github.com/hiyouga/LlamaFactory/pull/7275",
        "[rank2]: RuntimeError: synNodeCreateWithId failed for node: batch_gemm with synStatus 26 [Generic"
        " failure]. .\n"
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "/root/app/LLaMA-Factory/src/llamafactory/launcher.py", line 23, in <module>\n'
        "[rank3]:     launch()",
        "crash",
        "application",
        False,
        "synapse-graph-compile-failed",
    ),
    # huggingface/tgi-gaudi issue 93: another process holds the Gaudi card.
    (
        "https://github.com/huggingface/tgi-gaudi/issues/93",
        "RuntimeError: synStatus=20 [Device already acquired] Device acquire failed.",
        "crash",
        "system_software",
        True,
        "synapse-syndevicealreadyacquired",
    ),
    # huggingface/optimum-habana issue 1611: a bare synFail while acquiring the card.
    (
        "https://github.com/huggingface/optimum-habana/issues/1611",
        "12/16/2024 09:09:06 - INFO - __main__ - Single-device run.\n"
        "RuntimeError: synStatus=26 [Generic failure] Device acquire failed.",
        "crash",
        "system_software",
        True,
        "synapse-device-acquire-failed",
    ),
    # HabanaAI/Setup_and_Install issue 1: the habanalabs driver gives up on a card at boot.
    (
        "https://github.com/HabanaAI/Setup_and_Install/issues/1",
        "[   44.263378] habanalabs hl0: Successfully loaded firmware to device\n"
        "[   72.993087] habanalabs hl2: Failed to communicate with Device CPU (CPU-CP timeout)\n"
        "[   72.993088] habanalabs hl2: failed to initialize CPU H/W queues -5\n"
        "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT usable !",
        "crash",
        "hardware",
        True,
        "habanalabs-device-not-usable",
    ),
    # open-edge-platform/physical-ai-studio issue 440: SYCL aborts on an XPU out of memory.
    (
        "https://github.com/open-edge-platform/physical-ai-studio/issues/440",
        "terminate called after throwing an instance of 'sycl::_V1::exception'\n"
        "  what():  Enqueue process failed.\n"
        "level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n"
        "Fatal Python error: Aborted",
        "crash",
        "out_of_memory",
        False,
        "unified-runtime-ur-result-error-out-of-device-memory",
    ),
    # vladmandic/sdnext issue 1526: the SYCL plugin interface's name for the same result.
    (
        "https://github.com/vladmandic/sdnext/issues/1526",
        "23:58:13-803766 ERROR    Exception: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5\n"
        "                         (PI_ERROR_OUT_OF_RESOURCES)",
        "crash",
        "out_of_memory",
        False,
        "unified-runtime-ur-result-error-out-of-resources",
    ),
    # intel/torch-xpu-ops issue 2757: the XPU device lost under a test.
    (
        "https://github.com/intel/torch-xpu-ops/issues/2757",
        "    return torch._C._xpu_synchronize(device)\n"
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        "crash",
        "unknown",
        True,
        "unified-runtime-ur-result-error-device-lost",
    ),
    # hiyouga/LlamaFactory issue 6816: CANN's EL0004 and the driver's out of memory on an NPU.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/6816",
        "RuntimeError: ACL stream synchronize failed.\n"
        "EL0004: 2025-01-31-08:23:58.845.175 Failed to allocate memory.\n"
        "        Possible Cause: Available memory is insufficient.\n"
        "        rtMalloc execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason]"
        "[FILE:error_message_manage.cc][LINE:53]\n"
        "        synchronize stream failed, runtime result = 107020[FUNC:ReportCallError][FILE:log_inner.cpp]"
        "[LINE:161]",
        "crash",
        "out_of_memory",
        False,
        "ascend-device-memory-allocation-failed",
    ),
    # ROCm/legacy-rocm-build issue 2494: two GPUs of a multi-card ROCm 5.7 node fail to reset.
    (
        "https://github.com/ROCm/legacy-rocm-build/issues/2494",
        "[22344.295190] amdgpu 0000:03:00.0: amdgpu: SMU: response:0xFFFFFFFF for index:47 param:0x00000000"
        " message:Mode1Reset?\n"
        "[22344.295194] amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed\n"
        "[22344.456139] amdgpu 0000:83:00.0: amdgpu: ASIC reset failed with error, -121 for drm dev, 0000:83:00.0\n"
        "[22348.746284] amdgpu 0000:83:00.0: amdgpu: GPU reset succeeded, trying to resume\n"
        "[22348.746525] [drm] VRAM is lost due to GPU reset!\n"
        "[22348.967420] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!",
        "crash",
        "hardware",
        True,
        "amdgpu-gpu-reset-failed",
    ),
    # ROCm/amdgpu issue 150: the driver's VM fault for a python3 process running PyTorch.
    (
        "https://github.com/ROCm/amdgpu/issues/150",
        "[  110.313943] amdgpu: Runlist is getting oversubscribed. Expect reduced ROCm performance.\n"
        "[  110.707027] amdgpu 0000:8b:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:14"
        " pasid:32773, for process python3 pid 1802 thread python3 pid 1802)\n"
        "[  110.707038] amdgpu 0000:8b:00.0: amdgpu:   in page starting at address 0x0000000000000000 from IH"
        " client 0x1b (UTCL2)\n"
        "[  110.707047] amdgpu 0000:8b:00.0: amdgpu: VM_L2_PROTECTION_FAULT_STATUS:0x00E01030",
        "crash",
        "unknown",
        True,
        "amdgpu-vm-page-fault",
    ),
    # ROCm/legacy-rocm-build issue 1070: rocminfo cannot start the HSA runtime.
    (
        "https://github.com/ROCm/legacy-rocm-build/issues/1070",
        "ROCk module is loaded\n"
        "hsa api call failure at: /data/jenkins-workspace/compute-rocm-rel-3.3/rocminfo/rocminfo.cc:1102\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary"
        " resources. This error may also occur when the core runtime library needs to spawn threads or create"
        " internal OS-specific events.",
        "crash",
        "system_software",
        True,
        "rocminfo-hsa-init-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_accelerator_failure_reads_as_its_reference_says(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == (symptom, category, retryable), source
    assert found.evidence and found.evidence[0].signature == signature, source


def test_npu_out_of_memory_names_the_npu() -> None:
    # xingchensong/TouchNet issue 100: "(NPU 3; ...)" is the device the allocator ran out on.
    found = diagnose(
        "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; 49.47"
        " GiB already allocated; 1.32 GiB free; 57.55 GiB reserved in total by PyTorch)"
    )
    assert "gpu3" in found.implicated.gpus


def test_gpu_reset_failure_names_the_gpu() -> None:
    # ROCm/legacy-rocm-build issue 2494: the first GPU whose reset failed.
    found = diagnose("[22344.295194] amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed")
    assert found.implicated.gpus[:1] == ["0000:03:00"]


# Alarming lines these stacks print on runs that go on: they must stay healthy.
HEALTHY = [
    # ROCm/rccl issue 1026: RCCL's start-up advice on a MI250X node (NCCL WARN lines).
    (
        "https://github.com/ROCm/rccl/issues/1026",
        "g1072:1263985:1263985 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/"
        'build/src/init.cpp:120 NCCL WARN Missing "amd_iommu=on" from kernel command line which can lead to'
        " system instablity or hang!\n"
        "g1072:1263985:1263985 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/"
        'build/src/init.cpp:122 NCCL WARN Missing "iommu=pt" from kernel command line which can lead to system'
        " instablity or hang!\n"
        "g1072:1263985:1263985 [0] /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/"
        'build/src/init.cpp:126 NCCL WARN Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead'
        " to low RCCL performance, system instablity or hang!\n"
        "g1072:1263986:1263986 [1] NCCL INFO Bootstrap : Using bond0:10.64.4.23<0>",
    ),
    # pytorch/pytorch issue 138067: PyTorch falls back from hipBLASLt and goes on.
    (
        "https://github.com/pytorch/pytorch/issues/138067",
        "[W1016 17:27:46.690175963 Context.cpp:301] Warning: Attempting to use hipBLASLt on an unsupported"
        " architecture! Overriding blas backend to hipblas (function operator())",
    ),
    # ROCm/MIOpen issue 1010: MIOpen's warnings that it cannot open its database.
    (
        "https://github.com/ROCm/MIOpen/issues/1010",
        "MIOpen(HIP): Warning [FindWinogradSolutions] /MIOpen/src/sqlite_db.cpp:109: open memvfs: unable to"
        " open database file\n"
        "MIOpen(HIP): Warning [FindDataDirectSolutions] /MIOpen/src/sqlite_db.cpp:109: open memvfs: unable to"
        " open database file",
    ),
    # ROCm/TheRock issue 1668: rocm-smi on a GPU in a low-power state.
    (
        "https://github.com/ROCm/TheRock/issues/1668",
        "=== rocm-smi VRAM usage ===\n"
        "WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n"
        "GPU[0]          : VRAM Total Memory (B): 34359738368",
    ),
    # huggingface/optimum-habana pull 2231: version warnings on a Gaudi run that went on.
    (
        "https://github.com/huggingface/optimum-habana/pull/2231",
        "[WARNING|misc.py:213] 2025-09-25 08:11:12,577 >> optimum-habana v1.20.0.dev0 has been validated for"
        " SynapseAI v1.22.0 but habana-frameworks v1.21.0.555 was found, this could lead to undefined behavior!\n"
        "[WARNING|misc.py:226] 2025-09-25 08:11:14,298 >> optimum-habana v1.20.0.dev0 has been validated for"
        " SynapseAI v1.22.0 but the driver version is v1.21.2, this could lead to undefined behavior!",
    ),
    # intel/intel-extension-for-pytorch issue 810: DDP's timing warning on every XPU rank.
    (
        "https://github.com/intel/intel-extension-for-pytorch/issues/810",
        "[0] [rank0]:[W416 22:45:40.723224165 reducer.cpp:69] Warning: measureDifference between two events is"
        " not supported on XPU backend! (function operator())\n"
        "[2] [rank2]:[W416 22:45:40.723223113 reducer.cpp:69] Warning: measureDifference between two events is"
        " not supported on XPU backend! (function operator())",
    ),
    # hiyouga/LlamaFactory issue 5071 (its first line): torch_npu's CPU-fallback caution.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/5071",
        "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is"
        " not currently supported on the NPU backend and will fall back to run on the CPU. This may have"
        " performance implications. (function npu_cpu_fallback)",
    ),
    # opea-project/GenAIExamples issue 137: hl-smi's header on a Gaudi host.
    (
        "https://github.com/opea-project/GenAIExamples/issues/137",
        "| HL-SMI Version:                              hl-1.15.1-fw-49.0.0.0          |\n"
        "| Driver Version:                                     1.15.1-62f612b          |",
    ),
    # intel/intel-extension-for-pytorch issue 763: the XPU device's properties and a kernel override warning.
    (
        "https://github.com/intel/intel-extension-for-pytorch/issues/763",
        "[W109 16:42:15.529640748 OperatorEntry.cpp:155] Warning: Warning only once for all operators,  other"
        " operators may also be overridden.\n"
        "[0]: _XpuDeviceProperties(name='Intel(R) Arc(TM) A770 Graphics', platform_name='Intel(R) oneAPI Unified"
        " Runtime over Level-Zero', type='gpu', driver_version='1.3.29735+27', total_memory=15473MB)",
    ),
    # Ascend/pytorch issue 48 (its first lines): torch_npu's warning form of a runtime code.
    (
        "https://github.com/Ascend/pytorch/issues/48",
        "W NPUStream.cpp:409] Warning: NPU warning, error code is 507046[Error]: ",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY)
def test_alarming_accelerator_lines_stay_healthy(source: str, text: str) -> None:
    assert diagnose(text).symptom == "none", source
