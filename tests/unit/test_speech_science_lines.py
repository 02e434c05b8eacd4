"""Whole excerpts of real logs from multi-GPU and multi-node runs of speech, audio, video,
multimodal and scientific models (ESPnet, NeMo, fairseq/wav2vec, SpeechBrain, icefall/k2, VITS and
Coqui TTS, video diffusion trainers, OpenFold/AlphaFold/ColabFold, DGL, MACE/NequIP/DeePMD), each
with its thread: the print forms these stacks add to the usual ones (PyTorch 1.x's THCudaCheck,
jaxlib's GPU status, k2's fatal checks, DistDGL's sockets and DGLError, Coqui Trainer's GPU check, icefall's
bracketed metrics), and the alarming but harmless lines they print, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # jaywalnut310/vits issue 106: THC's check prints the device-side assert before the NCCL
    # communicator's teardown throws; the assert is the cause.
    (
        "https://github.com/jaywalnut310/vits/issues/106",
        "THCudaCheck FAIL file=../aten/src/THC/THCCachingHostAllocator.cpp line=280 error=710 : device-side assert triggered\n"
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:181, unhandled cuda error, NCCL version 21.0.3\n"
        "Process Group destroyed on rank 0",
        "crash",
        "application",
        False,
        "cuda-device-assert",
    ),
    # sokrypton/ColabFold issue 234: jaxlib's PRNG kernel status, logged under "Could not predict".
    (
        "https://github.com/sokrypton/ColabFold/issues/234",
        "2022-05-30 17:01:49,990 Running model_1\n"
        "2022-05-30 17:05:03,971 Could not predict test_b38f0. Not Enough GPU memory? INTERNAL: CustomCall failed:"
        " jaxlib/cuda_prng_kernels.cc:30: operation cudaGetLastError() failed: the provided PTX was compiled with an"
        " unsupported toolchain.\n"
        "2022-05-30 17:05:03,973 Done",
        "crash",
        "system_software",
        True,
        "cuda-unsupported-ptx-version",
    ),
    # YoshitakaMo/localcolabfold issue 210: cuDNN would not start.
    (
        "https://github.com/YoshitakaMo/localcolabfold/issues/210",
        "2024-05-07 15:24:47,456 Setting max_seq=512, max_extra_seq=5120\n"
        "2024-05-07 15:24:47,470 Could not predict D-OXA-23-prot. Not Enough GPU memory? FAILED_PRECONDITION: DNN library"
        " initialization failed. Look at the errors above for more details.\n"
        "2024-05-07 15:24:47,470 Done",
        "crash",
        "system_software",
        True,
        "cudnn-mismatch",
    ),
    # sokrypton/ColabFold issue 169: XLA's allocator on a K80.
    (
        "https://github.com/sokrypton/ColabFold/issues/169",
        "-> 1100   out_bufs = compiled.execute(input_bufs)\n\n"
        "RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 50331648 bytes.",
        "crash",
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # awslabs/dgl-ke issue 229: DGL's socket recv fails, then the communicator's CHECK aborts.
    (
        "https://github.com/awslabs/dgl-ke/issues/229",
        "/dgl_workspace/dgl/src/graph/network/tcp_socket.cc:180: recv error: Resource temporarily unavailable\n"
        "terminate called after throwing an instance of 'dmlc::Error'\n"
        "  what():  [04:04:56] /dgl_workspace/dgl/src/graph/network/socket_communicator.cc:282: Check failed: tmp != -1"
        " (-1 vs. -1) : ",
        "crash",
        "network",
        True,
        "dgl-rpc-socket-failed",
    ),
    # dmlc/dgl issue 3388: a DistDGL server's port still held by an earlier run ("error: Success").
    (
        "https://github.com/dmlc/dgl/issues/3388",
        "Warning! Interface: eno2 \n"
        "IP address not available for interface.\n"
        "[14:49:15] /opt/dgl/src/rpc/network/tcp_socket.cc:76: Failed bind on 10.1.2.3:34567 , error: Success",
        "crash",
        "network",
        True,
        "dgl-rpc-socket-failed",
    ),
    # dmlc/dgl issue 6868: a DGL check on a partition's local ids, raised as DGLError.
    (
        "https://github.com/dmlc/dgl/issues/6868",
        "dgl._ffi.base.DGLError: [02:00:36] /opt/dgl/src/rpc/rpc.cc:484: Check failed: l_id < local_data_shape[0]"
        " (18446744073707713820 vs. 630098) : \n"
        "Stack trace:\n"
        "  [bt] (0) /home/user/.conda/envs/dgl/lib/python3.11/site-packages/dgl/libdgl.so(+0x8a4b80) [0x7f63c1aa4b80]",
        "crash",
        "application",
        False,
        "uncaught-exception",
    ),
    # coqui-ai/TTS issue 1536: the Trainer refuses two visible GPUs without its launcher (quoted
    # in the issue as a Markdown block quote).
    (
        "https://github.com/coqui-ai/TTS/issues/1536",
        '> CUDA_VISIBLE_DEVICES="0,1" python recipes/multilingual/vits_tts/train_vits_tts.py\n\n'
        "> RuntimeError:  [!] 2 active GPUs. Define the target GPU by `CUDA_VISIBLE_DEVICES`. For multi-gpu training"
        " use `TTS/bin/distribute.py`.",
        "crash",
        "application",
        False,
        "coqui-trainer-several-gpus",
    ),
    # lifeiteng/vall-e issue 47: icefall's bracketed metrics go NaN as the grad scale reaches 0.
    (
        "https://github.com/lifeiteng/vall-e/issues/47",
        "2023-03-06 12:41:16,652 WARNING [trainer.py:680] (2/4) Grad scale is small: 0.0\n"
        "2023-03-06 12:41:16,653 INFO [trainer.py:694] (2/4) Epoch 1, batch 8500, train_loss[loss=nan,"
        " ArTop10Accuracy=0, NarTop10Accuracy=0.007109, over 1266.00 frames. ], tot_loss[loss=nan,"
        " ArTop10Accuracy=0.0009642, NarTop10Accuracy=0.006076, over 265830.71 frames. ], batch size: 2, lr: 3.56e-02,"
        " grad_scale: 0.0",
        "crash",
        "application",
        False,
        "loss-not-finite",
    ),
    # aqlaboratory/openfold issue 98: every loss term NaN (each skipped), then the AMP scaler's
    # assertion: the skipped NaN losses are the cause because the run then failed.
    (
        "https://github.com/aqlaboratory/openfold/issues/98",
        "WARNING:root:fape loss is NaN. Skipping...\n"
        "WARNING:root:lddt loss is NaN. Skipping...\n"
        "AssertionError: No inf checks were recorded for this optimizer.",
        "crash",
        "application",
        False,
        "loss-not-finite-skipped",
    ),
    # ACEsuit/mace issue 458: torchrun and the script both start a TCPStore on one port.
    (
        "https://github.com/ACEsuit/mace/issues/458",
        "[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:12355 (errno: 98 - Address already"
        " in use).\n"
        "[E socket.cpp:500] [c10d] The server socket has failed to listen on any local network address.",
        "crash",
        "network",
        True,
        "c10d-store-listen-failed",
    ),
    # speechbrain/speechbrain issue 2340: WavLM layers that never receive a gradient under DDP.
    (
        "https://github.com/speechbrain/speechbrain/issues/2340",
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error"
        " indicates that your module has parameters that were not used in producing loss.",
        "crash",
        "application",
        False,
        "torch-ddp-unused-parameters",
    ),
    # k2-fsa/k2 issue 696: K2_CHECK_CUDA_ERROR's fatal line, wrapped by the terminal mid-check;
    # the CUDA error on the second row is the cause, not the check.
    (
        "https://github.com/k2-fsa/k2/issues/696",
        "World size: 1 Rank: 0                                  \n"
        "[F] /idiap/temp/user/code/k2/k2/csrc/array.h:275:T k2::Array1<T>::operator[](int32_t) const [with T = int;"
        " int32_t = int] Check failed: ret == cudaSuccess (700\n"
        " vs. 0)  Error: an illegal memory access was encountered.\n"
        "[ Stack-Trace: ]                                        ",
        "crash",
        "unknown",
        True,
        "cuda-illegal-address",
    ),
    # k2-fsa/icefall issue 49: the same check on one line, naming a device-side assert.
    (
        "https://github.com/k2-fsa/icefall/issues/49",
        "[F] /workspace/k2/k2/csrc/array.h:341:T k2::Array1<T>::operator[](int32_t) const [with T = int; int32_t = int]"
        " Check failed: ret == cudaSuccess (710 vs. 0)  Error: device-side assert triggered. \n"
        "[ Stack-Trace: ]",
        "crash",
        "application",
        False,
        "cuda-device-assert",
    ),
    # k2-fsa/k2 issue 934: a k2 invariant the decoding inputs broke.
    (
        "https://github.com/k2-fsa/k2/issues/934",
        "[F] /export/c07/user/mini_scale_2022/k2/k2/csrc/ragged.cu:116:k2::Array1<int>& k2::RaggedShape::RowIds(int32_t)"
        " Check failed: axis < NumAxes() (1 vs. -472640871)",
        "crash",
        "application",
        False,
        "k2-check-failed",
    ),
    # MLI-lab/DeepDeWedge issue 22: a collective timeout with no cause in the log.
    (
        "https://github.com/MLI-lab/DeepDeWedge/issues/22",
        "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout:"
        " WorkNCCL(SeqNum=44, OpType=ALLREDUCE, NumelIn=6832129, NumelOut=6832129, Timeout(ms)=1800000) ran for"
        " 1800772 milliseconds before timing out.",
        "hang",
        "unknown",
        True,
        "nccl-watchdog-timeout",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_speech_and_science_failures(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == symptom, source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable), source


HEALTHY = [
    # facebookresearch/fairseq issue 2404: an fp16 overflow, and training goes on.
    "2020-08-01 12:39:16 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 1024.0\n"
    "2020-08-01 12:39:39 | INFO | train_inner | epoch 001:   3615 / 6547 loss=0.439, nll_loss=0.001, accuracy=87.9,"
    " wps=82565, ups=2.66, wpb=31075.5, bsz=64, num_updates=3600, lr=9e-06, gnorm=3.952, loss_scale=1399,"
    " train_wall=38, wall=1353",
    # mailong25/self-supervised-speech-recognition issue 20: wav2vec 2.0 pretraining's scale settling.
    "2021-01-26 03:01:31 | INFO | fairseq.trainer | begin training epoch 1\n"
    "2021-01-26 03:02:32 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 64.0\n"
    "2021-01-26 03:03:23 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 32.0\n"
    "2021-01-26 03:10:26 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 8.0",
    # k2-fsa/icefall issue 1463: icefall's warning and bad-model checkpoint, before any exit.
    "2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.2924697071141057e-26\n"
    "2024-01-14 01:03:00,826 INFO [checkpoint.py:75] (2/4) Saving checkpoint to zipformer/exp-causal/2500/bad-model-2.pt",
    # k2-fsa/ZipVoice issue 3: the icefall trainer's bracketed losses, finite, beside its clipping notes.
    "2025-10-27 17:32:19 2025-10-27 17:32:19,686 WARNING [optim.py:600] Clipping_scale=2.0, grad-norm quartiles"
    " 2.645e-03 3.446e-03 3.830e-03 4.745e-03 9.672e-03, threshold=1.532e-02, percent-clipped=0.0\n"
    "2025-10-27 17:32:39 2025-10-27 17:32:39,748 INFO [train_zipvoice.py:731] Epoch 1, batch 49, global_batch_idx: 50,"
    " batch size: 25, loss[loss=0.06789, over 17994.00 frames. ], tot_loss[loss=0.06891, over 778288.75 frames. ],"
    " cur_lr: 1.00e-04, grad_scale: 65536.0",
    # alibaba/graph-learn issue 67: graph-learn's E-level RPC lines at the end of a data pass.
    "Epoch 38, Iteration 6, Time(s) 0.0681, Loss 0.77587\n"
    "E0717 17:30:22.467953   589 notification.cc:194] RpcNotification:Failed\treq_type:GetNodes\tstatus:Out of range:No"
    " more nodes exist.\n"
    "E0717 17:30:22.468039   589 distribute_runner.h:125] Rpc failed:Out of range:No more nodes exist.name:GetNodes",
    # deepmodeling/deepmd-kit issue 1774: DeePMD falls back to serial training and goes on.
    "[1,0]:Switch to serial execution due to lack of horovod module.\n"
    "[1,1]:Switch to serial execution due to lack of horovod module.\n"
    "[1,0]:DEEPMD INFO Calculate neighbor statisti",
    # wenet-e2e/wenet issue 1709: DDP's find_unused_parameters notice at the start of epoch 0.
    "2023-02-27 08:55:40,835 INFO Epoch 0 TRAIN info lr 8e-08\n"
    "[W reducer.cpp:1258] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any"
    " unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every"
    " iteration,  which can adversely affect performance. (function operator())",
    # AlexandaJerry/whisper-vits-japanese issue 15: DDP's grad strides notice, which says it is no error.
    "UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to"
    " the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an"
    " error, but may impair performance.\n"
    "grad.sizes() = [1, 9, 98], strides() = [29498, 98, 1]",
    # modelscope/FunASR issue 1518: a fresh start on every rank.
    "[2024-03-20 11:52:52,547][root][INFO] - total_num of samplers across ranks: 2042300\n"
    "No checkpoint found at './exp/offline_8k_paraformer/model.pt', does not resume status!",
    # espnet/espnet issue 4377: an ESPnet2 epoch summary on 8 GPUs.
    "[c6e67e6e69c6:0/8] 2022-05-27 07:59:22,541 (trainer:328) INFO: 2epoch results: [train] iter_time=1.824e-04,"
    " forward_time=0.065, loss_ctc=285.285, loss_att=243.501, acc=0.060, loss=256.036, backward_time=0.110",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_speech_and_science_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
