"""Whole excerpts of real logs where a job could not set up its GPUs: NCCL's topology detection
that cannot find the GPU's PCI device under /sys (a container or WSL that hides the host's
sysfs), CUDA's start-up failure that a test harness relays only as a DEBUG record before its
own traceback, and MXNet's GPU memory pool and CUDA checks running out of device memory; and the alarming but harmless lines the same setups print (libibverbs' provider
warnings, NCCL's barrier and teardown warnings, DataParallel's gather warning, a whole run with
library warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # xg-chu/CrowdDet issue 86: NCCL 2.4 in a container; init unwinds with ncclSystemError (2).
    (
        "https://github.com/xg-chu/CrowdDet/issues/86",
        "Init multi-processing training...\n"
        "d13186ffee3a:57:57 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.2<0>\n"
        "d13186ffee3a:57:57 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
        "\n"
        "d13186ffee3a:57:57 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "d13186ffee3a:57:57 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.2<0>\n"
        "NCCL version 2.4.8+cuda10.1\n"
        "\n"
        "d13186ffee3a:57:75 [0] misc/topo.cc:22 NCCL WARN Could not find real path of "
        "/sys/class/pci_bus/0000:02/../../0000:02:00.0\n"
        "d13186ffee3a:57:75 [0] NCCL INFO init.cc:876 -> 2\n"
        "d13186ffee3a:57:75 [0] NCCL INFO init.cc:909 -> 2\n"
        "d13186ffee3a:57:75 [0] NCCL INFO init.cc:947 -> 2\n"
        "d13186ffee3a:57:75 [0] NCCL INFO misc/group.cc:69 -> 2 [Async thread]\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 174, in <module>\n'
        "    run_train()\n"
        '  File "train.py", line 155, in multi_train\n'
        "    torch.multiprocessing.spawn(train_worker, nprocs=num_gpus, args=(train_config, network, config))",
        "system_software",
        True,
        "nccl-gpu-pci-path-missing",
    ),
    # chungyiweng/humannerf issue 87: NCCL 2.7 under WSL, both ranks fail the same way.
    (
        "https://github.com/chungyiweng/humannerf/issues/87",
        "DESKTOP-KQ38CGS:1582:1582 [0] NCCL INFO Using network Socket\n"
        "NCCL version 2.7.8+cuda10.2\n"
        "\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] graph/xml.cc:332 NCCL WARN Could not find real path of "
        "/sys/class/pci_bus/0000:01/../../0000:01:00.0\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] NCCL INFO graph/xml.cc:469 -> 2\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] NCCL INFO graph/xml.cc:660 -> 2\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] NCCL INFO graph/topo.cc:523 -> 2\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] NCCL INFO init.cc:581 -> 2\n"
        "DESKTOP-KQ38CGS:1582:1705 [0] NCCL INFO init.cc:840 -> 2\n"
        "\n"
        "DESKTOP-KQ38CGS:1582:1706 [1] graph/xml.cc:332 NCCL WARN Could not find real path of "
        "/sys/class/pci_bus/0000:01/../../0000:01:00.0\n"
        "DESKTOP-KQ38CGS:1582:1706 [1] NCCL INFO graph/xml.cc:469 -> 2",
        "system_software",
        True,
        "nccl-gpu-pci-path-missing",
    ),
    # pytorch/pytorch issue 40273: NCCL 2.4's include/topo.h, then PyTorch's traceback.
    (
        "https://github.com/pytorch/pytorch/issues/40273",
        "XXX:430:430 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
        "NCCL version 2.4.2+cuda9.0\n"
        "\n"
        "XXX:430:2237 [0] include/topo.h:27 NCCL WARN Could not find real path of "
        "/sys/class/pci_bus/0000:02/../../0000:02:00.0\n"
        "XXX:430:2237 [0] NCCL INFO init.cu:864 -> 2\n"
        "XXX:430:2237 [0] NCCL INFO init.cu:887 -> 2\n"
        "XXX:430:2237 [0] NCCL INFO init.cu:911 -> 2\n"
        "XXX:430:2237 [0] NCCL INFO misc/group.cu:69 -> 2 [Async thread]\n"
        "Traceback (most recent call last):\n"
        '  File "distributed_data_parallel.py", line 55, in <module>\n'
        "    output_device=args.local_rank)",
        "system_software",
        True,
        "nccl-gpu-pci-path-missing",
    ),
    # zackchase/mxnet-the-straight-dope issue 361: MXNet's GPU memory pool gives up right after
    # cuDNN's autotuning (its dmlc LOG(FATAL), then the native stack trace).
    (
        "https://github.com/zackchase/mxnet-the-straight-dope/issues/361",
        "running with 1 GPUs\n"
        "Running on [gpu(0)]\n"
        "Batch size is 12\n"
        "initalizing parameters\n"
        "initalizing trainer\n"
        "[17:36:51] src/operator/././cudnn_algoreg-inl.h:112: Running performance tests to find the best convolution "
        "algorithm, this can take a while... (setting env variable MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)\n"
        "[17:36:58] /opt/mxnet/dmlc-core/include/dmlc/./logging.h:308: [17:36:58] "
        "src/storage/./pooled_storage_manager.h:111: cudaMalloc failed: out of memory\n"
        "\n"
        "Stack trace returned 10 entries:\n"
        "[bt] (0) /usr/local/lib/libmxnet.so(_ZN4dmlc15LogMessageFatalD1Ev+0x3c) [0x7fd3561641fc]\n"
        "[bt] (1) /usr/local/lib/libmxnet.so(_ZN5mxnet7storage23GPUPooledStorageManager5AllocEm+0x163) [0x7fd357174b93]",
        "out_of_memory",
        False,
        "mxnet-gpu-pool-oom",
    ),
    # microsoft/lisa issue 2823: the test harness relays torch's start-up warning as a DEBUG
    # record (CUDA error 802, fabric manager not running), then its own test fails; the
    # traceback names no exception, so the quiet line is the cause the log gives.
    (
        "https://github.com/microsoft/lisa/issues/2823",
        "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout "
        "/home/user/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:80: UserWarning: CUDA "
        "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
        "yet initialized (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:112.)\n"
        "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout   "
        "return torch._C._cuda_getDeviceCount() > 0\n"
        "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout gpu count: 0\n"
        "2023-06-27 06:27:41.841[16376][DEBUG] lisa.env[generated_4].node[0].cmd[384] execution time: "
        "1.395 sec, exit code: 0\n"
        "2023-06-27 06:27:41.903[16768][ERROR] lisa.suite[Gpu].case[verify_gpu_cuda_with_pytorch] case failed\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\GitEnlistments\\github.com\\microsoft\\lisa\\lisa\\testsuite.py", line 767, in __run_case\n'
        "    _call_with_retry_and_timeout(\n"
        '  File "C:\\GitEnlistments\\github.com\\microsoft\\lisa\\lisa\\testsuite.py", line 63, in '
        "_call_with_retry_and_timeout\n"
        "    retry_call(",
        "system_software",
        True,
        "cuda-system-not-ready",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_gpu_setup_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_a_named_exception_still_wins_over_a_quiet_line_before_it() -> None:
    # microsoft/lisa issue 2823's DEBUG record, then a traceback whose exception class says what
    # failed (a ValueError, the program's own): the class speaks, not the quiet line before it.
    found = diagnose(
        "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout "
        "/home/user/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:80: UserWarning: CUDA "
        "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
        "yet initialized (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:112.)\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 10, in <module>\n'
        "ValueError: invalid literal for int() with base 10: 'a'"
    )
    assert (found.category, found.retryable) == ("application", False)


def test_mxnet_cuda_call_names_the_error_after_its_condition() -> None:
    # MXNet's CUDA_CALL (apache/mxnet src/common/cuda/utils.h) prints its CHECK condition, which
    # names cudaErrorCudartUnloading as an error it lets pass, then the runtime's message: the
    # message is the failure (out of memory here), not a driver shutting down.
    found = diagnose(
        "[01:38:23] src/storage/./gpu_device_storage.h:39: Check failed: e == cudaSuccess || "
        "e == cudaErrorCudartUnloading CUDA: out of memory"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "cuda-out-of-memory",
        "out_of_memory",
        False,
    )


HEALTHY = [
    # microsoft/lisa issue 2823: the relayed start-up warning alone, a DEBUG record; nothing failed.
    "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout "
    "/home/user/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:80: UserWarning: CUDA "
    "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
    "yet initialized (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:112.)\n"
    "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout gpu count: 0",
    # bytedance/byteps issue 313: libibverbs cannot load other vendors' providers; wrapped lines.
    "# ib_send_bw -d mlx5_0 -F -x 3 -a -q 2\n"
    "\n"
    "libibverbs: Warning: couldn't load driver 'vmw_pvrdma': libvmw_pvrdma-rdmav2.so: cannot open shared object file\n"
    ": No such file or directory\n"
    "libibverbs: Warning: couldn't load driver 'cxgb4': libcxgb4-rdmav2.so: cannot open shared object file: No such\n"
    "file or directory\n"
    "libibverbs: Warning: couldn't load driver 'hns': libhns-rdmav2.so: cannot open shared object file: No such file\n"
    " or directory",
    # pytorch/pytorch issue 60752: ProcessGroupNCCL guesses the barrier's GPU and says it may hang.
    "[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this "
    "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
    "incorrect.Specify device_ids in barrier() to force use of a particular device.\n"
    "[W ProcessGroupNCCL.cpp:1569] Rank 1 using best-guess GPU 1 to perform barrier as devices used by this "
    "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
    "incorrect.Specify device_ids in barrier() to force use of a particular device.",
    # zunxbt/gensyn-testnet issue 10: the process group was not destroyed before exit.
    "[rank0]:[W403 11:42:02.380967152 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
    "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare "
    "cases this process can exit before this point and block the progress of another member of the process "
    "group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 "
    "(function operator())",
    # zengxianyu/crfill issue 8: DataParallel's gather warning, printed every epoch.
    "UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead "
    "unsqueeze and return a vector.   warnings.warn('Was asked to gather along dimension 0, but all",
    # saforem2/vault (a 32-GPU DeepSpeed run on ThetaGPU): library and config warnings, then the
    # run trains ten epochs and reports its time.
    "/bin/bash: /lus/grand/projects/datascience/user/locations/thetaGPU/miniconda3/envs/2022-07-01/lib/"
    "libtinfo.so.6: no version information available (required by /bin/bash)\n"
    "wandb: wandb version 0.13.8 is available!  To upgrade, please run:\n"
    "[2023-01-11 13:26:55,977] [INFO] [comm.py:654:init_distributed] Initializing TorchBackend in DeepSpeed "
    "with backend nccl\n"
    "[2023-01-11 13:27:00,749] [WARNING] [config_utils.py:67:_process_deprecated_field] Config parameter "
    "cpu_offload is deprecated use offload_optimizer instead\n"
    "[2023-01-11 13:28:26,530][mlprof.trainers.pytorch.trainer][INFO] - [0] [10/10: 1280/1875 (62%)] "
    "epoch=10.0000 step=78.0000 dt=0.0023 batch_acc=0.9258 batch_loss=0.0010 acc=0.7589 running_loss=0.0009\n"
    "[2023-01-11 13:28:26,589][mlprof.trainers.pytorch.trainer][INFO] - [0] :: Total training time: "
    "13.143308877944946 seconds",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_gpu_setup_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
