"""Stuck or slow without an error line: real excerpts where a job hung or slowed down and the log
itself shows it (Horovod's stall inspector, a store-based barrier that keeps waiting, a py-spy dump
in a collective, NCCL's communicator init that never completes), and the alarming but healthy logs
of the same family, which must stay healthy: bars and iteration lines that end mid-run, slow but
steady paces, one slow batch, start-up lines and notices that mention hangs, logs cut at start-up.
Each excerpt is quoted from the public thread named above it; where the thread says the job hung
but its log shows no stall, the log is what is judged."""

from __future__ import annotations

import pytest

from recovery.activities.progress import ProgressParser
from tests.unit.real_lines import diagnose

HANG = ("hang", "unknown", True)
HEALTHY = ("none", "none", None)

# (source, excerpt, signature of the first evidence line or None, ranks the log names as stuck)
HANGS: list[tuple[str, str, str | None, list[int]]] = [
    # github.com/horovod/horovod/issues/364: the bar stops and Horovod's stall warning lists ops ready on 6 ranks (the pre-0.13 format)
    (
        "https://github.com/horovod/horovod/issues/364",
        (
            "Train Epoch     #80:  29% 366/1252 [11:52<58:45,  3.98s/it, loss=0.94, accuracy=77.2]\n"
            "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of"
            " ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that "
            "different ranks are trying to submit different tensors or that only subset of ranks is submitti"
            "ng tensors, which will cause deadlock. \n"
            "Stalled ops: \n"
            "allreduce.conv1.weight [ready ranks: 0, 7, 3, 2, 4, 6], \n"
            "allreduce.bn1.weight [ready ranks: 0, 7, 3, 2, 4, 6], \n"
            "allreduce.bn1.bias [ready ranks: 0, 7, 3, 2, 4, 6], \n"
            "allreduce.layer1.0.conv1.weight [ready ranks: 0, 7, 3, 2, 4, 6], \n"
            "allreduce.layer1.0.bn1.weight [ready ranks: 0, 7, 3, 2, 4, 6],\n"
            " allreduce.layer1.0.bn1.bias [ready ranks: 0, 7, 3, 2, 4, 6],\n"
            " allreduce.layer1.0.conv2.weight [ready ranks: 0, 7, 3, 4, 2, 6], \n"
            "allreduce.layer1.0.bn2.weight [ready ranks: 0, 7, 3, 4, 2, 6],\n"
            " allreduce.layer1.0.bn2.bias [ready ranks: 0, 7, 3, 4, 2, 6], \n"
            "allreduce.layer1.0.bn3.weight [ready ranks: 0, 7, 3, 4, 6, 2], \n"
            "allreduce.layer1.0.downsample.0.weight [ready ranks: 0, 7, 3, 4, 6, 2], "
        ),
        "horovod-stall",
        [],
    ),
    # github.com/horovod/horovod/issues/457: every rank a `[missing ranks: ...]` list names is one the others wait for
    (
        "https://github.com/horovod/horovod/issues/457",
        (
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]\n"
            "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]"
        ),
        "horovod-stall",
        [0, 1, 3, 4],
    ),
    # github.com/google/automl/issues/563: stall_inspector's rank list; TensorFlow's op names carry their name scopes
    (
        "https://github.com/google/automl/issues/563",
        (
            "[1,0]<stderr>:[2020-07-04 19:23:57.817885: W horovod/common/stall_inspector.cc:105] One or more"
            " tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiti"
            "ng for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
            "trying to submit different tensors or that only subset of ranks is submitting tensors, which wi"
            "ll cause deadlock. \n"
            "[1,0]<stderr>:Stalled ranks:\n"
            "[1,0]<stderr>:0: [HorovodBroadcast_box_net_box_0_bias_0, HorovodBroadcast_box_net_box_0_bias_Mo"
            "mentum_0, HorovodBroadcast_box_net_box_0_bn_3_beta_0, HorovodBroadcast_box_net_box_0_bn_3_beta_"
            "Momentum_0, HorovodBroadcast_box_net_box_0_bn_3_gamma_0, HorovodBroadcast_box_net_box_0_bn_3_ga"
            "mma_Momentum_0 ...]\n"
            "[1,0]<stderr>:1: [DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_100_0,"
            " DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_101_0, DistributedMomen"
            "tumOptimizer_Allreduce/HorovodAllreduce_gradients_AddN_102_0, DistributedMomentumOptimizer_Allr"
            "educe/HorovodAllreduce_gradients_AddN_103_0, DistributedMomentumOptimizer_Allreduce/HorovodAllr"
            "educe_gradients_AddN_124_0, DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_gradients_A"
            "ddN_125_0 ...]"
        ),
        None,
        [0, 1],
    ),
    # github.com/huggingface/transformers/issues/22363: py-spy: the main thread waits in torch.distributed's broadcast (DeepSpeed's model broadcast)
    (
        "https://github.com/huggingface/transformers/issues/22363",
        (
            'Thread 27321 (active): "MainThread"\n'
            "    broadcast (torch/distributed/distributed_c10d.py:1555)\n"
            "    wrapper (torch/distributed/distributed_c10d.py:1436)\n"
            "    broadcast (deepspeed/comm/torch.py:78)\n"
            "    broadcast (deepspeed/comm/comm.py:228)\n"
            "    log_wrapper (deepspeed/comm/comm.py:123)\n"
            "    _broadcast_model (deepspeed/runtime/engine.py:1105)\n"
            "    _configure_distributed_model (deepspeed/runtime/engine.py:1182)\n"
            "    __init__ (deepspeed/runtime/engine.py:297)\n"
            "    initialize (deepspeed/__init__.py:125)\n"
            "    deepspeed_init (transformers/deepspeed.py:378)\n"
            "    _inner_training_loop (transformers/trainer.py:1702)\n"
            "    train (transformers/trainer.py:1633)\n"
            "    <module> (train.py:64)"
        ),
        "phase:open",
        [],
    ),
    # github.com/vllm-project/vllm/issues/8978: NCCL 2.20 prints `comm 0x.. rank r ... - Init START` with no function name; no Init COMPLETE follows
    (
        "https://github.com/vllm-project/vllm/issues/8978",
        (
            "cuda0003:2949603:2949644 [2] NCCL INFO Using network Socket\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO NET/IB : No device found.\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO NET/Socket : Using [0]enp35s0f0:10.107.72.224<0>\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO Using non-device net plugin version 0\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO Using network Socket\n"
            "cuda0003:2949602:2949643 [1] NCCL INFO comm 0x5649b30cf960 rank 1 nranks 4 cudaDev 1 nvmlDev 3 "
            "busId 61000 commId 0x795520212f433144 - Init START\n"
            "cuda0003:2949601:2949642 [0] NCCL INFO comm 0x55fb6f3ce680 rank 0 nranks 4 cudaDev 0 nvmlDev 2 "
            "busId 41000 commId 0x795520212f433144 - Init START\n"
            "cuda0003:2949603:2949644 [2] NCCL INFO comm 0x55703115d1f0 rank 2 nranks 4 cudaDev 2 nvmlDev 4 "
            "busId 81000 commId 0x795520212f433144 - Init START\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO comm 0x55991793c100 rank 3 nranks 4 cudaDev 3 nvmlDev 5 "
            "busId a1000 commId 0x795520212f433144 - Init START\n"
            "cuda0003:2949603:2949644 [2] NCCL INFO Setting affinity for GPU 4 to ffff0000,ffff0000\n"
            "cuda0003:2949603:2949644 [2] NCCL INFO NVLS multicast support is not available on dev 2\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO Setting affinity for GPU 5 to ffff0000,ffff0000\n"
            "cuda0003:2949604:2949645 [3] NCCL INFO NVLS multicast support is not available on dev 3"
        ),
        "phase:open",
        [],
    ),
    # github.com/vllm-project/vllm/issues/6201: NCCL 2.20: rank 1's communicator starts init and the log ends
    (
        "https://github.com/vllm-project/vllm/issues/6201",
        (
            "hostname:116024:116024 [0] NCCL INFO Bootstrap : Using eth0:10.164.53.65<0>\n"
            "NCCL version 2.20.5+cuda11.0\n"
            "hostname:116058:116058 [1] NCCL INFO Using network IB\n"
            "hostname:116058:116058 [1] NCCL INFO comm 0xde702f0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId d"
            "0000 commId 0x9df62c06a0653412 - Init START"
        ),
        "phase:open",
        [],
    ),
    # github.com/llnl/smith/issues/688: srun --label; every task's srun retries creating its step
    (
        "https://github.com/llnl/smith/issues/688",
        "29: srun: Job 9479148 step creation still disabled, retrying (Requested nodes are busy)\n"
        "52: srun: Job 9479148 step creation still disabled, retrying (Requested nodes are busy)\n"
        "53: srun: Job 9479148 step creation temporarily disabled, retrying (Requested nodes are busy)",
        "phase:open",
        [],
    ),
    # github.com/bioinfologics/satsuma2/issues/36: older srun (src/srun/allocate.c) names no job id
    (
        "https://github.com/bioinfologics/satsuma2/issues/36",
        "srun: mem < mem-per-cpu - resizing mem to be equal to mem-per-cpu\n"
        "srun: Job step creation temporarily disabled, retrying",
        "phase:open",
        [],
    ),
    # github.com/open-mpi/ompi/issues/8378: mpirun's srun on the second node never gets its step
    (
        "https://github.com/open-mpi/ompi/issues/8378",
        "user@node19:~$ mpirun --host node19 hostname\nnode19\nnode19\n"
        "user@node19:~$ mpirun --host node20 hostname\n"
        "srun: Job 1333683 step creation temporarily disabled, retrying (Requested nodes are busy)",
        "phase:open",
        [],
    ),
]


@pytest.mark.parametrize(
    ("source", "text", "signature", "ranks"), HANGS, ids=[h[0].split("github.com/")[-1] for h in HANGS]
)
def test_a_log_that_shows_the_job_stuck_is_a_hang(
    source: str, text: str, signature: str | None, ranks: list[int]
) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == HANG, source
    if signature is not None:
        assert found.evidence[0].signature == signature
    assert sorted(found.implicated.ranks) == ranks


# (source, excerpt): healthy or not shown stuck by the log itself
HEALTHY_LOGS: list[tuple[str, str]] = [
    # github.com/open-mmlab/mmdetection/issues/7976: the log's last line is DDP's ordinary info that its reducer buckets were rebuilt; nothing wrong is printed
    (
        "https://github.com/open-mmlab/mmdetection/issues/7976",
        ("2022-05-12 22:06:13,674 - mmcv - INFO - Reducer buckets have been rebuilt in this iteration."),
    ),
    # github.com/EleutherAI/gpt-neox/issues/990: DeepSpeed's generic warning that its own NCCL backend is not implemented, then its cdb=None line: harmless start-up output
    (
        "https://github.com/EleutherAI/gpt-neox/issues/990",
        (
            "[WARNING] [comm.py:152:init_deepspeed_backend] NCCL backend in DeepSpeed not yet implemented\n"
            " [INFO] [comm.py:594:init_distributed] cdb=None"
        ),
    ),
    # github.com/Lightning-AI/pytorch-lightning/issues/5750: Lightning bars of epoch 54 with the validation bar in between, ending at 100%: the run is progressing when the log ends
    (
        "https://github.com/Lightning-AI/pytorch-lightning/issues/5750",
        (
            "Epoch 54:  99%|█████████▉| 2914/2950 [1:01:19<00:45,  1.26s/it, loss=0.541, v_num=0]\n"
            "Epoch 54:  99%|█████████▉| 2918/2950 [1:01:31<00:40,  1.27s/it, loss=0.541, v_num=0]\n"
            "Validating:  90%|█████████ | 254/282 [13:04<01:25,  3.04s/it]\n"
            "Validating:  94%|█████████▎| 264/282 [13:36<01:02,  3.50s/it]\n"
            "Validating:  97%|█████████▋| 274/282 [14:09<00:26,  3.33s/it]\n"
            "Epoch 54: 100%|██████████| 2950/2950 [1:03:38<00:00,  1.29s/it, loss=0.541, v_num=0]"
        ),
    ),
    # github.com/princeton-vl/px2graph/issues/2: train and validation tqdm bars at a steady pace; the log ends part way through a training bar
    (
        "https://github.com/princeton-vl/px2graph/issues/2",
        (
            "100%|##########| 2000/2000 [47:19<00:00,  1.42s/it]\n"
            "100%|##########| 100/100 [01:22<00:00,  1.22it/s]\n"
            "100%|##########| 2000/2000 [45:40<00:00,  1.37s/it]\n"
            "100%|##########| 100/100 [01:17<00:00,  1.29it/s]\n"
            "34%|###3      | 670/2000 [14:58<29:42,  1.34s/it]"
        ),
    ),
    # github.com/XPixelGroup/BasicSR/issues/269: BasicSR ESRGAN training prints an iteration line every ~39 s at a steady 0.37-0.39 s/iter; nothing wrong in the log
    (
        "https://github.com/XPixelGroup/BasicSR/issues/269",
        (
            "2020-08-15 15:50:30,390 INFO: [My_ES..][epoch:207, iter:  20,100, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:13:17, time (data): 0.365 (0.002)] l_g_pix: 3.1516e-04 l_g_percep: 5.2308e-01 l_g_gan: 4.23"
            "22e-02 l_d_real: 2.6469e-04 l_d_fake: 2.4991e-04 out_d_real: 9.1384e+01 out_d_fake: 8.2920e+01\n"
            "2020-08-15 15:51:08,890 INFO: [My_ES..][epoch:208, iter:  20,200, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:12:08, time (data): 0.375 (0.002)] l_g_pix: 3.8449e-04 l_g_percep: 6.5796e-01 l_g_gan: 1.62"
            "33e-02 l_d_real: 5.6346e-02 l_d_fake: 5.7430e-02 out_d_real: 1.8667e+01 out_d_fake: 1.5477e+01\n"
            "2020-08-15 15:51:47,540 INFO: [My_ES..][epoch:209, iter:  20,300, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:11:03, time (data): 0.390 (0.002)] l_g_pix: 3.6667e-04 l_g_percep: 5.6971e-01 l_g_gan: 3.32"
            "18e-02 l_d_real: 4.9696e-03 l_d_fake: 2.8609e-03 out_d_real: 4.7469e+01 out_d_fake: 4.0829e+01\n"
            "2020-08-15 15:52:26,426 INFO: [My_ES..][epoch:210, iter:  20,400, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:10:02, time (data): 0.377 (0.002)] l_g_pix: 3.3959e-04 l_g_percep: 6.2266e-01 l_g_gan: 9.39"
            "60e-03 l_d_real: 2.0036e-01 l_d_fake: 1.9684e-01 out_d_real: 1.1326e+02 out_d_fake: 1.1158e+02\n"
            "2020-08-15 15:53:05,349 INFO: [My_ES..][epoch:211, iter:  20,500, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:09:02, time (data): 0.392 (0.003)] l_g_pix: 3.6478e-04 l_g_percep: 5.6358e-01 l_g_gan: 5.97"
            "27e-05 l_d_real: 5.0785e+00 l_d_fake: 5.0776e+00 out_d_real: 1.\n"
            "2020-08-15 16:03:41,902 INFO: [My_ES..][epoch:227, iter:  22,100, lr:(1.000e-04,)] [eta: 1 day,"
            " 17:57:28, time (data): 0.386 (0.002)] l_g_pix: 4.0449e-04 l_g_percep: 6.2189e-01 l_g_gan: 2.24"
            "86e-02 l_d_real: 1.4423e-02 l_d_fake: 1.3582e-02 out_d_real: 8.5756e+01 out_d_fake: 8.1273e+01"
        ),
    ),
    # github.com/xinntao/Real-ESRGAN/issues/236: BasicSR start-up lines ending with 'Start training from epoch: 0, iter: 0': a log cut at the start of training
    (
        "https://github.com/xinntao/Real-ESRGAN/issues/236",
        (
            "2022-01-28 12:00:05,326 INFO: Loading: params_ema does not exist, use params.\n"
            "2022-01-28 12:00:05,327 INFO: Loading RRDBNet model from experiments/pretrained_models/ESRGAN_S"
            "Rx4_DF2KOST_official-ff704c30.pth, with param key: [params].\n"
            "2022-01-28 12:00:05,409 INFO: Use Exponential Moving Average with decay: 0.999\n"
            "2022-01-28 12:00:05,579 INFO: Network [RRDBNet] is created.\n"
            "2022-01-28 12:00:05,629 INFO: Loading: params_ema does not exist, use params.\n"
            "2022-01-28 12:00:05,629 INFO: Loading RRDBNet model from experiments/pretrained_models/ESRGAN_S"
            "Rx4_DF2KOST_official-ff704c30.pth, with param key: [params].\n"
            "2022-01-28 12:00:05,709 INFO: Loss [L1Loss] is created.\n"
            "2022-01-28 12:00:05,722 INFO: Model [RealESRNetModel] is created."
        ),
    ),
    # github.com/martinkersner/train-CRF-RNN/issues/2: Caffe's solver starts the iteration-0 test pass; the user thought it stuck, it was only slow
    (
        "https://github.com/martinkersner/train-CRF-RNN/issues/2",
        ("I0204 01:27:48.109928 10533 solver.cpp:291] Iteration 0, Testing net (#0)"),
    ),
    # github.com/Lightning-AI/pytorch-lightning/issues/13585: ddp_spawn on 2 GPUs: both processes announce themselves, rank 0 registers them, the model summary prints; start-up completed
    (
        "https://github.com/Lightning-AI/pytorch-lightning/issues/13585",
        (
            "GPU available: True, used: True\n"
            "TPU available: False, using: 0 TPU cores\n"
            "IPU available: False, using: 0 IPUs\n"
            "HPU available: False, using: 0 HPUs\n"
            "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
            "-----------------------------------------------------------------------------------------------"
            "-----\n"
            "distributed_backend=nccl"
        ),
    ),
    # github.com/facebookresearch/fairseq/issues/247: multi-GPU fairseq warm-up: every rank's bar at ~3 s/it, wps=0 before the first update; slow but moving
    (
        "https://github.com/facebookresearch/fairseq/issues/247",
        (
            "| epoch 001:   0%| | 39/11265 [01:55<9:15:41,  2.97s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 38/11265 [01:56<9:32:57,  3.06s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 38/11265 [01:56<9:32:03,  3.06s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 39/11265 [01:57<9:23:14,  3.01s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 40/11265 [01:59<9:18:04,  2.98s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 39/11265 [01:59<9:32:20,  3.06s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 39/11265 [02:00<9:38:28,  3.09s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,\n"
            "| epoch 001:   0%| | 41/11265 [02:01<9:13:56,  2.96s/it, loss=0.000, ppl=1.00, wps=0, ups=0.0, "
            "wpb=0, bsz=0, num_updates=0, lr=1e-07,"
        ),
    ),
    # github.com/facebookresearch/fairseq/issues/301: fairseq on one GPU at a steady ~962 words/s through epochs 15-16 with a validation pass between; slow but steady
    (
        "https://github.com/facebookresearch/fairseq/issues/301",
        (
            "| epoch 015  4000 / 8223 loss=0.73 (0.96), wps=963, wpb=915, bsz=32, lr=0.001, clip=100%, gnorm"
            "=1.8137\n"
            "| epoch 015  5000 / 8223 loss=0.73 (0.95), wps=962, wpb=909, bsz=32, lr=0.001, clip=100%, gnorm"
            "=1.8049\n"
            "| epoch 015  6000 / 8223 loss=2.99 (0.94), wps=962, wpb=910, bsz=32, lr=0.001, clip=100%, gnorm"
            "=1.7922\n"
            "| epoch 015  7000 / 8223 loss=0.66 (0.93), wps=962, wpb=908, bsz=32, lr=0.001, clip=100%, gnorm"
            "=1.7845\n"
            "| epoch 015  8000 / 8223 loss=3.33 (0.92), wps=961, wpb=906, bsz=32, lr=0.001, clip=100%, gnorm"
            "=1.7872\n"
            "| epoch 015 | train loss 0.92 | train ppl 1.89 | s/checkpoint    7748 | words/s    961 | words/"
            "batch    906 | bsz    32 | lr 0.001000 | clip 100% | gnorm 1.7830\n"
            "| epoch 015 | valid on 'valid' subset  1000 / 1311 loss=1.27\n"
            "| epoch 015 | valid on 'valid' subset | valid loss 1.57 | valid ppl 2.97"
        ),
    ),
    # github.com/hiyouga/EasyR1/issues/289: GRPO rollout: vLLM's 'Processed prompts' bar advances with the sharding manager's memory lines; the log ends mid-bar
    (
        "https://github.com/hiyouga/EasyR1/issues/289",
        (
            "(WorkerDict pid=141364) Before state_dict() in sharding manager: 10.07 GB / 39.59 GB.\n"
            "(WorkerDict pid=141364) After state_dict() in sharding manager: 12.42 GB / 39.59 GB.\n"
            "(WorkerDict pid=141364) After del state_dict and empty_cache in sharding manager: 30.85 GB / 39"
            ".59 GB.\n"
            "Processed prompts:   0%|          | 0/128 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, outpu"
            "t: 0.00 toks/s]\n"
            "Processed prompts:   3%|▎         | 4/128 [00:13<07:03,  3.41s/it, est. speed input: 394.90 tok"
            "s/s, output: 95.79 toks/s]\n"
            "Processed prompts:   6%|▋         | 8/128 [00:16<03:46,  1.89s/it, est. speed input: 638.03 tok"
            "s/s, output: 183.14 toks/s]\n"
            "Processed prompts:   9%|▉         | 12/128 [00:17<02:01,  1.05s/it, est. speed input: 946.82 to"
            "ks/s, output: 271.62 toks/s]\n"
            "Processed prompts:  12%|█▎        | 16/128 [00:17<01:19,  1.41it/s, est. speed input: 1208.63 t"
            "oks/s, output: 348.09 toks/s]"
        ),
    ),
    # github.com/deepspeedai/DeepSpeedExamples/issues/915: DeepSpeed-Chat step 2 builds its datasets and names the torch extensions root; the log then ends without any error or stall notice
    (
        "https://github.com/deepspeedai/DeepSpeedExamples/issues/915",
        (
            "Creating prompt dataset ['/mnt/workspace/RLHF/data/pinpai'], reload=False\n"
            "Creating dataset data_pinpai for train_phase=2 size=392\n"
            "Creating dataset data_pinpai for train_phase=2 size=392\n"
            "Using /root/.cache/torch_extensions/py310_cu118 as PyTorch extensions root..."
        ),
    ),
    # github.com/sgl-project/sglang/issues/3909: sglang decode batches at 184-187 tokens/s as the context grows: a steady pace within noise
    (
        "https://github.com/sgl-project/sglang/issues/3909",
        (
            "[2025-02-27 04:46:39 TP0] Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, gen "
            "throughput (token/s): 186.64, #queue-req: 0\n"
            "[2025-02-27 04:46:41 TP0] Decode batch. #running-req: 8, #token: 62851, token usage: 0.13, gen "
            "throughput (token/s): 185.93, #queue-req: 0\n"
            "[2025-02-27 04:46:43 TP0] Decode batch. #running-req: 8, #token: 63171, token usage: 0.13, gen "
            "throughput (token/s): 186.99, #queue-req: 0\n"
            "[2025-02-27 04:46:44 TP0] Decode batch. #running-req: 8, #token: 63491, token usage: 0.13, gen "
            "throughput (token/s): 185.91, #queue-req: 0\n"
            "[2025-02-27 04:46:46 TP0] Decode batch. #running-req: 8, #token: 63811, token usage: 0.13, gen "
            "throughput (token/s): 184.27, #queue-req: 0\n"
            "[2025-02-27 04:46:48 TP0] Decode batch. #running-req: 8, #token: 64131, token usage: 0.13, gen "
            "throughput (token/s): 184.96, #queue-req: 0\n"
            "[2025-02-27 04:46:49 TP0] Decode batch. #running-req: 8, #token: 64451, token usage: 0.13, gen "
            "throughput (token/s): 185.33, #queue-req: 0\n"
            "[2025-02-27 04:46:51 TP0] Decode batch. #running-req: 8, #token: 64771, token usage: 0.13, gen "
            "throughput (token/s): 185.12, #queue-req: 0"
        ),
    ),
    # github.com/PaddlePaddle/PaddleX/issues/2884: PaddleDetection iterations at 82-96 images/s; the last one drops to 35 images/s with a long data_cost: one slow batch, not a sustained slowdown
    (
        "https://github.com/PaddlePaddle/PaddleX/issues/2884",
        (
            "[02/04 22:46:24] ppdet.engine.callbacks INFO: Epoch: [0] [2087/7312] learning_rate: 0.000029 lo"
            "ss: 4.504654 loss_cls: 1.374781 loss_iou: 0.142509 loss_dfl: 0.800746 loss_mask: 0.949291 loss_"
            "l1: 0.369396 eta: 67 days, 10:28:48 batch_cost: 0.1664 data_cost: 0.0034 ips: 96.1758 images/s,"
            " max_mem_reserved: 42653 MB, max_mem_allocated: 31490 MB\n"
            "[02/04 22:46:24] ppdet.engine.callbacks INFO: Epoch: [0] [2088/7312] learning_rate: 0.000029 lo"
            "ss: 5.154541 loss_cls: 1.369879 loss_iou: 0.167398 loss_dfl: 0.882983 loss_mask: 1.169871 loss_"
            "l1: 0.431591 eta: 67 days, 9:53:14 batch_cost: 0.1876 data_cost: 0.0049 ips: 85.2884 images/s, "
            "max_mem_reserved: 42653 MB, max_mem_allocated: 31490 MB\n"
            "[02/04 22:46:24] ppdet.engine.callbacks INFO: Epoch: [0] [2089/7312] learning_rate: 0.000029 lo"
            "ss: 6.694592 loss_cls: 1.626675 loss_iou: 0.203672 loss_dfl: 0.967037 loss_mask: 1.630088 loss_"
            "l1: 0.576798 eta: 67 days, 9:18:02 batch_cost: 0.1930 data_cost: 0.0042 ips: 82.8919 images/s, "
            "max_mem_reserved: 42653 MB, max_mem_allocated: 31490 MB\n"
            "[02/04 22:46:25] ppdet.engine.callbacks INFO: Epoch: [0] [2090/7312] learning_rate: 0.000029 lo"
            "ss: 4.441298 loss_cls: 1.255100 loss_iou: 0.114932 loss_dfl: 0.775614 loss_mask: 1.004424 loss_"
            "l1: 0.289436 eta: 67 days, 8:58:02 batch_cost: 0.4535 data_cost: 0.2961 ips: 35.2787 images/s, "
            "max_mem_reserved: 42653 MB, max_mem_allocated: 31490 MB"
        ),
    ),
    # github.com/PaddlePaddle/Paddle/issues/199: legacy Paddle trainer: batches, a test pass and a parameter save at a steady pace
    (
        "https://github.com/PaddlePaddle/Paddle/issues/199",
        (
            "I1013 14:09:47.796533 10456 TrainerInternal.cpp:163]  Batch=500 samples=800000 AvgCost=2.51426 "
            "CurrentCost=2.55992 Eval:  CurrentEval: \n"
            ".................................................................I1013 14:09:53.230159 10456 Tr"
            "ainerInternal.cpp:180]  Pass=23 Batch=565 samples=904000 AvgCost=2.51811 Eval: \n"
            "I1013 14:09:55.277237 10456 Tester.cpp:111]  Test samples=97383 cost=2.87493 Eval: \n"
            "I1013 14:09:55.277359 10456 GradientMachine.cpp:112] Saving parameters to ./output/pass-00023\n"
            "I1013 14:09:55.291581 10456 Util.cpp:230] copy trainer_config.py to ./output/pass-00023\n"
            "..............................................................................................."
            "....\n"
            "I1013 14:10:03.744340 10456 TrainerInternal.cpp:163]  Batch=100 samples=160000 AvgCost=2.43395 "
            "CurrentCost=2.43395 Eval:  CurrentEval: \n"
            "..............................................................................................."
            "...."
        ),
    ),
    # github.com/Tongyi-Zhiwen/Qwen-Doc/issues/6: Ray head node starts, the shell traces the verl launch command; the log ends as the trainer starts
    (
        "https://github.com/Tongyi-Zhiwen/Qwen-Doc/issues/6",
        (
            "Waiting for Ray cluster to be ready...\n"
            "2025-06-09 11:50:07,469 SUCC scripts.py:804 -- --------------------\n"
            "2025-06-09 11:50:07,469 SUCC scripts.py:805 -- Ray runtime started.\n"
            "2025-06-09 11:50:07,469 SUCC scripts.py:806 -- --------------------\n"
            "2025-06-09 11:50:07,469 INFO scripts.py:808 -- Next steps\n"
            "2025-06-09 11:50:07,469 INFO scripts.py:811 -- To add another node to this Ray cluster, run\n"
            "2025-06-09 11:50:07,470 INFO scripts.py:814 --   ray start --address='10.88.0.182:6382'\n"
            "2025-06-09 11:50:07,470 INFO scripts.py:857 -- To terminate the Ray runtime, run"
        ),
    ),
    # github.com/vllm-project/vllm/issues/8422: vLLM start-up with VLLM_TRACE_FUNCTION: its warnings mention debugging hangs, but they are start-up notices and the engine goes on
    (
        "https://github.com/vllm-project/vllm/issues/8422",
        (
            "WARNING 09-13 00:35:49 multiproc_gpu_executor.py:56] Reducing Torch parallelism from 72 threads"
            " to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS in the external environment to t"
            "une this value as needed.\n"
            "INFO 09-13 00:35:49 custom_cache_manager.py:17] Setting Triton cache manager to: vllm.triton_ut"
            "ils.custom_cache_manager:CustomCacheManager\n"
            "WARNING 09-13 00:35:49 logger.py:147] VLLM_TRACE_FUNCTION is enabled. It will record every func"
            "tion executed by Python. This will slow down the code. It is suggested to be used for debugging"
            " hang or crashes only.\n"
            "INFO 09-13 00:35:49 logger.py:151] Trace frame log is saved to /tmp/vllm/vllm-instance-17ffcfe4"
            "0d29405d9a707d59e9534c70/VLLM_TRACE_FUNCTION_for_process_3740804_thread_127505140479808_at_2024"
            "-09-13_00:35:49.983688.log\n"
            "(VllmWorkerProcess pid=3740967) WARNING 09-13 00:35:49 logger.py:147] VLLM_TRACE_FUNCTION is en"
            "abled. It will record every function executed by Python. This will slow down the code. It is su"
            "ggested to be used for debugging hang or crashes only.\n"
            "(VllmWorkerProcess pid=3740967) INFO 09-13 00:35:49 logger.py:151] Trace frame log is saved to "
            "/tmp/vllm/vllm-instance-17ffcfe40d29405d9a707d59e9534c70/VLLM_TRACE_FUNCTION_for_process_374096"
            "7_thread_127505140479808_at_2024-09-13_00:35:49.984074.log"
        ),
    ),
    # github.com/Project-HAMi/HAMi-core/issues/261: vLLM debug start-up lines: both workers set up world_size=2 and detect one node; the log ends during start-up
    (
        "https://github.com/Project-HAMi/HAMi-core/issues/261",
        (
            "DEBUG 08-09 21:13:56 [tokenizers/registry.py:73] Loading CachedHfTokenizer for tokenizer_mode='"
            "hf'\n"
            "DEBUG 08-09 21:13:57 [config/kernel.py:85] Setting IR op priority for rms_norm to ['vllm_c', 'n"
            "ative']\n"
            "DEBUG 08-09 21:13:57 [ir/op.py:422] Priority for vllm.ir.rms_norm set to ['vllm_c', 'native']\n"
            "(Worker pid=958) DEBUG 08-09 21:13:57 [distributed/parallel_state.py:1563] world_size=2 rank=1 "
            "local_rank=1 distributed_init_method=tcp://127.0.0.1:43615 backend=nccl\n"
            "(Worker pid=958) INFO 08-09 21:13:57 [distributed/parallel_state.py:1607] world_size=2 rank=1 l"
            "ocal_rank=1 distributed_init_method=tcp://127.0.0.1:43615 backend=nccl\n"
            "(Worker pid=958) DEBUG 08-09 21:13:57 [distributed/parallel_state.py:1689] Detected 1 nodes in "
            "the distributed environment\n"
            "(Worker pid=820) DEBUG 08-09 21:13:57 [distributed/parallel_state.py:1689] Detected 1 nodes in "
            "the distributed environment"
        ),
    ),
    # github.com/facebookresearch/fairseq/issues/1294: the last line of a multi-GPU fairseq job the user says halted: an ordinary progress line of update 121
    (
        "https://github.com/facebookresearch/fairseq/issues/1294",
        (
            "| epoch 001:    123 / 9333 loss=14.327, ppl=20557.44, wps=2773, ups=0, wpb=23492.661, bsz=311.2"
            "07, num_updates=121, lr=0.00756349, gnorm=4.059, clip=1.000, oom=0.000, loss_scale=16.000, wall"
            "=1025, train_wall=396, MDSU:loss=14.3274, MDSU:ntokens=23492.7, MDSU:nsentences=311.207, MDSU:s"
            "ample_size=234"
        ),
    ),
    # github.com/deepspeedai/DeepSpeed/issues/255: BART under DeepSpeed on 4 GPUs at a steady 13.2 samples/s as DeepSpeed reports it; slow but steady
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/255",
        (
            "[INFO 2020-06-08 05:26:19] 0/2650, SamplesPerSec=13.19749106827976\n"
            "[INFO 2020-06-08 05:26:34] 0/2700, SamplesPerSec=13.198177991591365"
        ),
    ),
    # github.com/deepspeedai/DeepSpeed/issues/1436: HF Trainer with DeepSpeed's wall-clock breakdown: training starts, the bar at 0% of 1000 steps with the first step's timings
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/1436",
        (
            "[INFO|trainer.py:1013] 2021-10-08 20:03:14,331 >> ***** Running training *****\n"
            "[INFO|trainer.py:1014] 2021-10-08 20:03:14,332 >>   Num examples = 150\n"
            "[INFO|trainer.py:1015] 2021-10-08 20:03:14,332 >>   Num Epochs = 53\n"
            "[INFO|trainer.py:1016] 2021-10-08 20:03:14,332 >>   Instantaneous batch size per device = 8\n"
            "[INFO|trainer.py:1017] 2021-10-08 20:03:14,332 >>   Total train batch size (w. parallel, distri"
            "buted & accumulation) = 8\n"
            "[INFO|trainer.py:1018] 2021-10-08 20:03:14,332 >>   Gradient Accumulation steps = 1\n"
            "[INFO|trainer.py:1019] 2021-10-08 20:03:14,332 >>   Total optimization steps = 1000\n"
            "  0%|                                                                                          "
            "                                                                                               "
            "      | 0/1000 [00:00<?, ?it/s][2021-10-08 20:03:15,649] [INFO] [logging.py:68:log_dist] [Rank "
            "0] rank=0 time (ms) | forward_microstep: 435.69 | backward_microstep: 744.13 | backward_inner_m"
            "icrostep: 513.94 | backward_allreduce_microstep: 230.14 | step_microstep: 1.00"
        ),
    ),
    # github.com/lucidrains/audiolm-pytorch/issues/210: the user's own prints around accelerate's wait_for_everyone: ranks arrive and leave step 499, then step 500's arrivals; no framework notice of a stall
    (
        "https://github.com/lucidrains/audiolm-pytorch/issues/210",
        (
            "499: device cuda:4 arrived at 2\n"
            "499: device cuda:5 arrived at 2\n"
            "499: device cuda:2 arrived at 2\n"
            "499: device cuda:3 arrived at 2\n"
            "499: device cuda:6 arrived at 2\n"
            "499: device cuda:7 arrived at 2\n"
            "499: device cuda:1 arrived at 2\n"
            "498: device cuda:0 arrived 3"
        ),
    ),
    # github.com/fractal-analytics-platform/fractal-server/issues/2835: concurrent steps wait, then
    # every one is created
    (
        "https://github.com/fractal-analytics-platform/fractal-server/issues/2835",
        "srun: Job 23547409 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
        "srun: Job 23547409 step creation still disabled, retrying (Requested nodes are busy)\n"
        "srun: Step created for StepId=23547409.1\n"
        "srun: Step created for StepId=23547409.2",
    ),
    # Older srun's closer (src/srun/allocate.c `info("Job step created")`), as a public Slurm guide
    # shows a job step waiting for its relative nodes (code index id 49019697147)
    (
        "code index id 49019697147",
        "salloc: Granted job allocation 15760\nn[1-4]\n"
        "srun: Job step creation temporarily disabled, retrying\n"
        "srun: Job step created\n"
        "1: n4\n0: n3\n0: n1\n1: n2\n"
        "salloc: Relinquishing job allocation 15760",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY_LOGS, ids=[h[0].split("github.com/")[-1] for h in HEALTHY_LOGS])
def test_alarming_but_healthy_logs_stay_healthy(source: str, text: str) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == HEALTHY, source


def test_a_store_client_retrying_at_the_end_is_stuck_reaching_its_host() -> None:
    # github.com/sehoffmann/dmlcloud/issues/56: the TCPStore client keeps retrying the rendezvous host
    found = diagnose(
        "[W129 21:03:46.878435961 TCPStore.cpp:330] [c10d] TCP client failed to connect/validate to host"
        " 192.168.212.142:41312 - retrying (try=0, timeout=1800000ms, delay=46647ms): Interrupted system call"
    )
    assert (found.symptom, found.category, found.retryable) == ("hang", "network", True)
    assert found.implicated.peers == ["192.168.212.142"]


def test_nccl_2_24_connect_retries_inside_init_are_the_network() -> None:
    # NCCL 2.24-2.26 (src/misc/socket.cc socketConnectCheck) retries a refused or timed-out connect
    # with an INFO line per attempt; a public log in the code index (id 59087038135) ends in them
    # after the communicators' Init START: the process is stuck reaching a peer.
    log = (
        "6e094e9a088e:147147:147212 [7] NCCL INFO ncclCommInitRank comm 0x5573b32da6e0 rank 7 nranks 16 cudaDev 7"
        " nvmlDev 7 busId be000 commId 0xc5194a2a2d53c3b9 - Init START\n"
        "6e094e9a088e:147147:147173 [0] NCCL INFO socketStartConnect: connect returned Connection timed out,"
        " retrying (1/34) after sleep for 100 msec\n"
        "6e094e9a088e:147147:147173 [0] NCCL INFO socketStartConnect: connect returned Connection timed out,"
        " retrying (2/34) after sleep for 200 msec\n"
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.retryable) == ("hang", "network", True)


def test_nccl_2_27_connect_retries_name_the_peer() -> None:
    # NCCL 2.27+ names the address it retries (`connect to %s returned %s, retrying (%d/%ld) ...`),
    # as a public report in the code index (id 69458073699) quotes rank 0 of NCCL 2.28.9.
    log = (
        "NCCL INFO NCCL version 2.28.9+cuda12.9\n"
        "NCCL INFO Bootstrap: Using tailscale0:100.64.0.7<0>\n"
        "NCCL INFO socketPollConnect: connect to 172.17.194.153<43893> returned No route to host, retrying (1/34)"
        " after sleep for 100 msec\n"
    )
    found = diagnose(log)
    assert (found.symptom, found.category, found.implicated.peers) == ("hang", "network", ["172.17.194.153"])


RAY_PENDING = (
    # github.com/secretflow/secretflow/issues/192: the autoscaler's event summary, every 30 s
    "(scheduler +38s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0,"
    " 'alice': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating"
    " fewer actors or adding more nodes to this Ray cluster.\n"
    "(scheduler +1m13s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0,"
    " 'carol': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating"
    " fewer actors or adding more nodes to this Ray cluster.\n"
)
RAY_INFEASIBLE = (
    # github.com/rllm-org/rllm/issues/35: no node type has 8 GPUs; `ray status` shows the demand
    "(autoscaler +34s) Error: No available node types can fulfill resource request defaultdict(<class 'float'>,"
    " {'CPU': 8.0, 'GPU': 8.0}). Add suitable node types to this cluster to resolve this issue.\n"
    "\n"
    "======== Autoscaler status: 2025-02-17 18:36:14.406028 ========\n"
    "Node status\n"
    "---------------------------------------------------------------\n"
    "Active:\n"
    " 1 node_9ce4595c6c9628208ab67348060cfe32348196bec94f997ee553da82\n"
    "Pending:\n"
    " (no pending nodes)\n"
    "Recent failures:\n"
    " (no failures)\n"
    "\n"
    "Resources\n"
    "---------------------------------------------------------------\n"
    "Usage:\n"
    " 0.0/112.0 CPU\n"
    " 0.0/1.0 GPU\n"
    " 0B/337.53GiB memory\n"
    " 0B/148.65GiB object_store_memory\n"
    "\n"
    "Demands:\n"
    " {'GPU': 1.0, 'CPU': 1.0} * 8 (STRICT_PACK): 1+ pending placement groups\n"
)


def test_ray_waiting_for_resources_at_the_end_is_a_hang() -> None:
    found = diagnose(RAY_PENDING)
    assert (found.symptom, found.category, found.retryable) == HANG
    # The raylet's own warning to the driver (github.com/ray-project/ray/issues/19326).
    found = diagnose(
        "2021-10-12 05:44:32,010\tWARNING worker.py:1228 -- The actor or task with ID"
        " 38b7b52b8a7371117241b1a3f60f62e6f940fd5479d1b53b cannot be scheduled right now. It requires"
        " {node:172.31.57.230: 0.001000}, {CPU: 1.000000} for placement, however the cluster currently cannot"
        " provide the requested resources. The required resources may be added as autoscaling takes place or"
        " placement groups are scheduled. Otherwise, consider reducing the resource requirements of the task."
    )
    assert (found.symptom, found.category, found.retryable) == HANG


def test_a_request_no_node_type_can_fulfill_is_the_jobs_and_not_retried() -> None:
    found = diagnose(RAY_INFEASIBLE)
    assert (found.symptom, found.category, found.retryable) == ("hang", "application", False)


def test_ray_requests_that_get_placed_are_healthy() -> None:
    # The same waits, then the run goes on (its steps, as a trainer's key=value lines print them).
    steps = "".join(f"step={100 + i} loss=0.{50 - i}\n" for i in range(4))
    assert diagnose(RAY_PENDING + steps).symptom == "none"
    assert diagnose(RAY_INFEASIBLE + steps).symptom == "none"


@pytest.mark.parametrize(
    ("source", "line", "step", "seconds"),
    [
        (
            "https://github.com/XPixelGroup/BasicSR/issues/269",
            "2020-08-15 15:50:30,390 INFO: [My_ES..][epoch:207, iter:  20,100, lr:(1.000e-04,)] [eta: 1 day,"
            " 18:13:17, time (data): 0.365 (0.002)] l_g_pix: 3.1516e-04 l_g_percep: 5.2308e-01",
            20100,
            0.365,
        ),
        (
            "https://github.com/XPixelGroup/BasicSR/issues/582",
            "2022-12-02 00:53:12,679 INFO: [train..][epoch:  0, iter:   3,700, lr:(5.000e-04,)] [eta: 7 days,"
            " 4:14:43, time (data): 0.602 (0.007)] l_pix: 1.8931e-02",
            3700,
            0.602,
        ),
    ],
)
def test_basicsr_iterations_read_whole_with_their_pace(source: str, line: str, step: int, seconds: float) -> None:
    # BasicSR's MessageLogger (basicsr/utils/logger.py) prints `iter:{current_iter:8,d}` with
    # thousands separators and `time (data): {iter_time:.3f} ({data_time:.3f})`.
    record = ProgressParser().parse(line, 1)
    assert record is not None, source
    assert (record.step, record.step_time) == (step, seconds)


def test_pytorch_xla_training_updates_give_the_current_rate() -> None:
    # github.com/pytorch/xla/pull/6026: torch_xla's print_training_update, `Rate=` examples/s of the
    # current batch (read), `GlobalRate=` the average since the start (not the pace).
    line = "| Training Device=xla:0/3 Epoch=1 Step=280 Loss=0.01022 Rate=1760.91 GlobalRate=257.10 Time=07:29:39"
    record = ProgressParser().parse(line, 1)
    assert record is not None
    assert (record.step, record.throughput) == (280, 1760.91)


def test_straggler_and_barrier_notices_are_no_failure() -> None:
    # Megatron-Core's StragglerDetector report (megatron/core/README_STRAGGLER.md, code index id
    # 1152128418): the slowest and fastest ranks of the last interval, not a verdict; and
    # ProcessGroupNCCL's warning that a barrier guesses its device "can potentially cause a hang"
    # (github.com/huggingface/trl/pull/3317, where training went on).
    lines = [
        " 0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 |"
        " MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnTmp/Rnk: 52C/0 | MxTmp/Rnk: 65C/21 | MnUtl/Rnk: 97%/8 |"
        " MxUtl/Rnk: 100%/6 | MnClk/Rnk: 1950MHz/28 | MxClk/Rnk: 1980MHz/0 | MnDRtt/Rnk: 14.27ms/23 |"
        " MxDRtt/Rnk: 34.65ms/3 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8",
        "[rank0]:[W501 21:01:27.110829382 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0 to"
        " perform barrier as devices used by this process are currently unknown. This can potentially cause a hang"
        " if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular"
        " device, or call init_process_group() with a device_id.",
    ]
    for line in lines:
        found = diagnose(line)
        assert (found.symptom, found.category, found.retryable) == HEALTHY
