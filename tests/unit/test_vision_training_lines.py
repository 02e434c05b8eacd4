"""Real lines from multi-GPU training of vision and image-generation models (detectron2, the
OpenMMLab stack, Ultralytics, Paddle's detection suites, DINO/MAE/Swin-style scripts, diffusers
and kohya's scripts, deformable-attention extensions), each with the thread it was printed in,
and the alarming but harmless chatter those runs print (DDP's stride and bucket notices, loss
scale skips, checkpoint key mismatches, NCCL and c10d fallbacks), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # microsoft/Swin-Transformer issue 342: the DeiT-style parser is built with a title, so
    # argparse prints the title, not the script's name, before ": error:".
    (
        "https://github.com/microsoft/Swin-Transformer/issues/342",
        "Swin Transformer training and evaluation script: error: the following arguments are required: --local_rank",
        "application",
        False,
        "argparse-bad-arguments",
    ),
    # SysCV/sam-hq issue 41: a parser named "HQ-SAM" refuses the launcher's --local-rank, and the
    # agent's report of the exit that followed is only a follow-on.
    (
        "https://github.com/SysCV/sam-hq/issues/41",
        "HQ-SAM: error: unrecognized arguments: --local-rank=0\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 1468) of"
        " binary: /usr/bin/python3",
        "application",
        False,
        "argparse-bad-arguments",
    ),
    # xingyizhou/CenterTrack issue 38: DCNv2's launch check prints cudaGetErrorString after
    # "error in <function>_cuda: "; the extension has no code for the other GPUs.
    (
        "https://github.com/xingyizhou/CenterTrack/issues/38",
        "error in modulated_deformable_im2col_cuda: no kernel image is available for execution on the device\n"
        "Traceback (most recent call last):\n"
        '  File "main.py", line 101, in <module>\n'
        "    main(opt)",
        "system_software",
        True,
        "cuda-no-kernel-image-for-device",
    ),
    # open-mmlab/mmcv issue 3089: the same check in the multi-scale deformable attention op.
    (
        "https://github.com/open-mmlab/mmcv/issues/3089",
        "error in ms_deformable_im2col_cuda: an illegal memory access was encountered",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
    # PaddlePaddle/PaddleDetection issue 4139: Paddle's enforce words the NCCL result
    # " Nccl error, <ncclGetErrorString> " inside an OSError that is not the OS's.
    (
        "https://github.com/PaddlePaddle/PaddleDetection/issues/4139",
        "OSError: (External)  Nccl error, unhandled cuda error  (at /paddle/paddle/fluid/platform/collective_helper.cc:100)",
        "unknown",
        True,
        "nccl-unhandled-cuda-error",
    ),
    # PaddlePaddle/PaddleDetection issue 7380: Paddle's launcher reports the failed container.
    (
        "https://github.com/PaddlePaddle/PaddleDetection/issues/7380",
        "I1121 02:35:53.560647 3004662 tcp_store.cc:257] receive shutdown event and so quit from MasterDaemon run loop\n"
        "LAUNCH INFO 2022-11-21 02:35:54,384 Pod failed\n"
        "LAUNCH ERROR 2022-11-21 02:35:54,385 Container failed !!!\n"
        "Container rank 0 status failed cmd ['/usr/bin/python3', '-u', 'tools/train.py', '-c',"
        " 'configs/keypoint/tiny_pose/tinypose_256x192_wholebody-v2-0921-1021-1108-1121.yml', '--eval']"
        " code 1 log log/workerlog.0",
        "unknown",
        True,
        "paddle-launch-container-failed",
    ),
    # facebookresearch/maskrcnn-benchmark issue 699: the old ProcessGroupNCCL wording of
    # ncclInvalidArgument at the first barrier.
    (
        "https://github.com/facebookresearch/maskrcnn-benchmark/issues/699",
        "    work = _default_pg.barrier()\n"
        "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1549635019666/work/torch/lib/c10d/"
        "ProcessGroupNCCL.cpp:388, invalid argument",
        "application",
        False,
        "nccl-invalid-argument",
    ),
    # open-mmlab/mmpretrain issue 473: Swin-T under srun, killed by the cgroup's OOM handler.
    (
        "https://github.com/open-mmlab/mmpretrain/issues/473",
        "2021-10-05 16:36:27,739 - mmcls - INFO - workflow: [('train', 1)], max: 300 epochs\n"
        "slurmstepd: error: Detected 254 oom-kill event(s) in step 12272627.0 cgroup. Some of your processes"
        " may have been killed by the cgroup out-of-memory handler.\n"
        "srun: error: j17r3n18: task 3: Out Of Memory",
        "out_of_memory",
        False,
        "slurm-oom",
    ),
    # microsoft/StyleSwin issue 11: 1024 px training on 24 GiB cards.
    (
        "https://github.com/microsoft/StyleSwin/issues/11",
        "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 MiB (GPU 3; 23.65 GiB total capacity;"
        " 19.49 GiB already allocated; 474.00 MiB free; 22.10 GiB reserved in total by PyTorch) If res",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # salesforce/ALBEF issue 46: the init barrier fails with ncclSystemError.
    (
        "https://github.com/salesforce/ALBEF/issues/46",
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error,"
        " NCCL version 2.7.8\n"
        "ncclSystemError: System call (socket, malloc, munmap, etc) failed.",
        "network",
        True,
        "nccl-system-error",
    ),
    # open-mmlab/mmdetection issue 2377: DDP finds parameters the loss never used.
    (
        "https://github.com/open-mmlab/mmdetection/issues/2377",
        "    self.reducer.prepare_for_backward([])\n"
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
        "application",
        False,
        "torch-ddp-unused-parameters",
    ),
    # open-mmlab/mmsegmentation issue 2085: a worker terminated from outside; who sent it is unsaid.
    (
        "https://github.com/open-mmlab/mmsegmentation/issues/2085",
        "RuntimeError: DataLoader worker (pid 8102) is killed by signal: Terminated.",
        "unknown",
        True,
        "torch-dataloader-worker-signalled",
    ),
    # facebookresearch/dino issue 97: DINO's loop stops itself on a non-finite loss.
    (
        "https://github.com/facebookresearch/dino/issues/97",
        "Loss is nan, stopping training",
        "application",
        False,
        "loss-not-finite",
    ),
    # GOATmessi8/RFBNet issue 77: the DataLoader's SIGBUS handler blames /dev/shm.
    (
        "https://github.com/GOATmessi8/RFBNet/issues/77",
        "Training RFB_vgg on VOC0712\n"
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "system_software",
        False,
        "shm-too-small",
    ),
    # LittlePey/SFD issue 34: the rendezvous store's port is taken.
    (
        "https://github.com/LittlePey/SFD/issues/34",
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket"
        " has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed"
        " to bind to ?UNKNOWN? (errno: 98 - Address already in use).",
        "network",
        True,
        "c10d-store-listen-failed",
    ),
    # AILab-CVC/YOLO-World issue 163: no store ever answered the client.
    (
        "https://github.com/AILab-CVC/YOLO-World/issues/163",
        "[E socket.cpp:957] [c10d] The client socket has timed out after 600s while trying to connect to"
        " (127.0.0.1, 3333).",
        "network",
        True,
        "c10d-store-connect-timeout",
    ),
    # facebookresearch/detectron2 issue 3972: a collective in a run that never made a group.
    (
        "https://github.com/facebookresearch/detectron2/issues/3972",
        "RuntimeError: Default process group has not been initialized, please make sure to call"
        " init_process_group.\n"
        "[02/16 08:16:42 d2.engine.hooks]: Total training time: 0:00:02 (0:00:00 on hooks)",
        "application",
        False,
        "torch-process-group-misuse",
    ),
    # kohya-ss/sd-scripts issue 412: xformers has no kernel for float32 inputs on the CPU.
    (
        "https://github.com/kohya-ss/sd-scripts/issues/412",
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(200, 9126, 1, 64) (torch.float32)\n"
        "`flshattF` is not supported because:\n"
        "    device=cpu (supported: {'cuda'})",
        "application",
        False,
        "py-other-bug",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_vision_training_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HANGS = [
    # bcmi/GPSDiffusion-Object-Shadow-Generation-SDXL issue 19: rank 2's watchdog, nothing else.
    "[rank2]:[E709 21:18:18.190909330 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 2] Process group"
    " watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout:"
    " WorkNCCL(SeqNum=835424, OpType=ALLREDUCE, NumelIn=1310720, NumelOut=1310720, Timeout(ms)=600000) ran"
    " for 600049 milliseconds before timing out.",
    # modelscope/DiffSynth-Studio issue 458: two ranks time out the same coalesced collective.
    "Epoch 0:   0%|                                                              | 0/500 [00:00<?, ?it/s]"
    "[rank1]:[E318 07:39:53.713449198 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=610, OpType=COALESCED, NumelIn=56320, NumelOut=450560, Timeout(ms)=600000) ran"
    " for 600007 milliseconds before timing out.\n"
    "[rank7]:[E318 07:39:53.717957624 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=610, OpType=COALESCED, NumelIn=107520, NumelOut=860160, Timeout(ms)=600000) ran"
    " for 600018 milliseconds before timing out.",
]


@pytest.mark.parametrize("text", HANGS)
def test_collective_timeouts_without_a_cause_are_hangs(text: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("hang", "unknown", True)
    assert found.evidence[0].signature == "nccl-watchdog-timeout"


def test_paddle_launcher_names_the_failed_containers_rank() -> None:
    # PaddlePaddle/PaddleDetection issue 7380: the container's rank is the trainer's global rank.
    text = (
        "LAUNCH ERROR 2022-11-21 02:35:54,385 Container failed !!!\n"
        "Container rank 0 status failed cmd ['/usr/bin/python3', '-u', 'tools/train.py'] code 1 log log/workerlog.0"
    )
    assert diagnose(text).implicated.ranks == [0]


def test_paddle_launcher_reports_a_container_killed_by_a_signal() -> None:
    # PaddlePaddle/PaddleDetection issue 7475: mid-training, code -6 (SIGABRT), with the env dump
    # FLAGS_print_launcher_env adds after the log path.
    text = (
        "LAUNCH ERROR 2022-12-08 02:04:51,549 Container failed !!!\n"
        "Container rank 0 status failed cmd ['/root/anaconda3/envs/pp37/bin/python', '-u', 'tools/train.py', '-c',"
        " 'configs/mot/bytetrack/detector/yolox_x_24e_800x1440_mix_det.yml', '--eval', '--amp'] code -6 log"
        " ppyoloe/workerlog.0 \n"
        "env {'CONDA_SHLVL': '2', 'LD_LIBRARY_PATH': '/usr/local/cuda-10.2/lib64'}"
    )
    found = diagnose(text)
    assert (found.category, found.retryable, found.implicated.ranks) == ("unknown", True, [0])
    assert "signal 6" in found.explanation


def test_paddle_workers_own_error_outranks_the_launchers_report() -> None:
    # An ERNIEKit run's log as a public file quotes it (code index id 69829257186): the worker's
    # ValueError comes first, then the launcher's report of the container it killed.
    text = (
        "ValueError: (InvalidArgument) concat(): argument 'x' (position 0) must be list of Tensors, but got"
        " empty list (at /paddle/paddle/fluid/pybind/eager_utils.cc:1393)\n"
        "\n"
        "LAUNCH INFO 2025-09-27 09:32:31,869 Pod failed\n"
        "LAUNCH ERROR 2025-09-27 09:32:31,869 Container failed !!!\n"
        "Container rank 0 status failed cmd ['/opt/conda/envs/python35-paddle120-env/bin/python', '-u',"
        " '/home/aistudio/ERNIE/erniekit/launcher.py', 'train',"
        " 'examples/configs/ERNIE-4.5-0.3B/sft/yue_zh_sft_full.yaml'] code 1 log erniekit_dist_log/workerlog.0"
    )
    found = diagnose(text)
    assert (found.category, found.retryable) == ("application", False)
    assert found.evidence[0].signature != "paddle-launch-container-failed"


HEALTHY = [
    # XPixelGroup/HAT issue 154: DDP's reducer says so itself: "This is not an error".
    "Grad strides do not match bucket view strides. This may indicate grad was not created according to the"
    " gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an"
    " error, but may impair performance.\n"
    "grad.sizes() = [180, 6, 1, 1], strides() = [6, 1, 6, 6]\n"
    "bucket_view.sizes() = [180, 6, 1, 1], strides() = [6, 1, 1, 1] (Triggered internally at"
    " ../torch/csrc/distributed/c10d/reducer.cpp:325.)",
    # nnizhang/VST issue 8: the same warning as a UserWarning, at the start of training.
    "UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created"
    " according to the gradient layout contract, or that the param's strides changed since DDP was"
    " constructed.  This is not an error, but may impair performance.\n"
    "  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    # open-mmlab/mmdetection issue 9867: the glog-style form on Ascend NPUs.
    "[W reducer.cpp:401] Warning: Grad strides do not match bucket view strides. This may indicate grad was"
    " not created according to the gradient layout contract, or that the param's strides changed since DDP"
    " was constructed.  This is not an error, but may impair performance.",
    # SwinTransformer/Transformer-SSL issue 19: apex's dynamic loss scaling skips a step.
    "INFO Train: [3/300][310/625]  eta 0:05:33 lr 0.002797 time 0.9247 (1.0588)    loss 10.9386 (10.9140)"
    "  grad_norm 3.8597 (1.6136)       mem 45716MBGradient overflow.  Skipping step, loss scaler 0 reducing"
    " loss scale to 65536.0",
    # ultralytics/yolov5 issue 3364: DDP's bucket notice inside a progress line.
    "     0/299     8.79G    0.1024   0.02105   0.06316    0.1866         2       640Reducer buckets have been"
    " rebuilt in this iteration.\n"
    "     0/299     8.98G   0.08874   0.02311   0.05468    0.1665         2       640",
    # microsoft/MeshTransformer issue 38: no libibverbs, so NCCL uses sockets.
    "2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:994:994 [4] misc/ibvwrap.cc:63 NCCL WARN"
    " Failed to open libibverbs.so[.1]\n"
    "2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:994:994 [4] NCCL INFO NET/Socket : Using"
    " [0]ib0:172.16.1.10<0>",
    # DevashishPrasad/CascadeTabNet issue 80: a backbone checkpoint with extra keys.
    "2020-09-03 10:32:57,393 - mmdet - WARNING - The model and loaded state dict do not match exactly\n"
    "\n"
    "unexpected key in source state_dict: incre_modules.0.0.conv1.weight, incre_modules.0.0.bn1.weight",
    # snap-research/EfficientFormer issue 66: mmengine's form, with missing keys too.
    "03/10 17:05:00 - mmengine - WARNING - The model and loaded state dict do not match exactly\n"
    "\n"
    "unexpected key in source state_dict: model, optimizer, lr_scheduler, epoch, model_ema, scaler, args",
    # NJU-PCALab/AddSR issue 15: accelerate's defaults notice and the old-kernel warning.
    "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.\n"
    "Detected kernel version 4.19.91, which is below the recommended minimum of 5.5.0; this can cause the"
    " process to hang. It is recommended to upgrade the kernel to the minimum version or higher.",
    # kohya-ss/sd-scripts pull 247: Windows' c10d client warns, then both processes load the model.
    "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:558] [c10d] The client socket has failed to connect to"
    " [kubernetes.docker.internal]:29500 (system error: 10049 - La direcci≤n solicitada no es vßlida en este"
    " contexto.).\n"
    "Using accelerator 0.15.0 or above.Using accelerator 0.15.0 or above.\n"
    "load StableDiffusion checkpoint",
    # deepinsight/insightface issue 2104: launcher deprecations and the agent's configuration.
    "WARNING:torch.distributed.run:--use_env is deprecated and will be removed in future releases.\n"
    " Please read local_rank from `os.environ('LOCAL_RANK')` instead.\n"
    "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:\n"
    "  max_restarts     : 3",
    # open-mmlab/mmgeneration issue 206: git's version probe outside a repository.
    "fatal: not a git repository (or any parent up to mount point /home/ma-user)\n"
    "Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).\n"
    "2022-01-06 23:08:41,239 - mmgen - INFO - FID: Adopt Inception in pytorch style",
    # ultralytics/ultralytics issue 10383: the same Windows c10d warning alone.
    "W socket.cpp:697] [c10d] The client socket has failed to connect to [WIN-ICPH5QEV67D]:56866 (system"
    " error: 10049 - �����������У�������ĵ�ַ��Ч��).",  # noqa: RUF001 (the thread's mis-decoded text)
]


@pytest.mark.parametrize("text", HEALTHY)
def test_vision_training_chatter_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
