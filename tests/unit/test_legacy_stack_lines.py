"""Whole excerpts of real logs printed by older stacks: PyTorch's THC check (`THCudaCheck FAIL
... error=N : <message>`, printed before PyTorch < 2.0 raised `cuda runtime error (N)`), which
explains a traceback a pasted log ends inside, cut before its exception line; the check detection
code's ROI kernels print before they exit (`cudaCheckError() failed : <message>`); and Gloo's
connect failures as the Gloo of each era wrote them (an enforce on SO_ERROR, then `connect [peer]:`).
Healthy: THC checks a program survived, and today's Gloo connect retry, which must stay healthy."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.tables import builtin_tables
from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # NVIDIA/nvvl issue 76: the first epoch ends, validation runs out of GPU memory; the paste
    # stops inside the traceback, so THC's check above it is all that says what it raised.
    (
        "https://github.com/NVIDIA/nvvl/issues/76",
        "Epoch: [0][23/25]\tTime 1.192 (1.475)\tData 0.339 (0.299)\tLoss 0.4957 (0.6006)\tAcc@1 0.822 (0.795)\n"
        "\n"
        "Epoch: [0][24/25]\tTime 1.199 (1.464)\tData 0.336 (0.300)\tLoss 0.4492 (0.5945)\tAcc@1 0.867 (0.798)\n"
        "\n"
        "Epoch 0 training completed: 2018-10-26T09:33:02.176891\n"
        "\n"
        "\n"
        "THCudaCheck FAIL file=/opt/pytorch/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
        "Traceback (most recent call last):\n"
        '  File "main.py", line 546, in <module>\n'
        "    main(parser.parse_args())\n"
        '  File "main.py", line 251, in main\n'
        "    lossV, accV, timeV = validate(val_loader, model, criterion, args)\n"
        '  File "main.py", line 364, in validate\n'
        "    output = model(input)",
        "out_of_memory",
        False,
        "cuda-thc-out-of-memory",
    ),
    # microsoft/human-pose-estimation.pytorch issue 21: a kernel fails mid-epoch; the traceback
    # is cut after the optimizer's frame.
    (
        "https://github.com/microsoft/human-pose-estimation.pytorch/issues/21",
        "Epoch: [1][2100/4682]\tTime 0.476s (0.496s)\tSpeed 67.2 samples/s\tData 0.000s (0.007s)\t"
        "Loss 0.00062 (0.00070)\tAccuracy 0.571 (0.580)\n"
        "Epoch: [1][2200/4682]\tTime 0.479s (0.497s)\tSpeed 66.8 samples/s\tData 0.000s (0.007s)\t"
        "Loss 0.00068 (0.00070)\tAccuracy 0.624 (0.582)\n"
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/generated/../generic/THCTensorMathPointwise.cu line=265 "
        "error=4 : unspecified launch failure\n"
        "Traceback (most recent call last):\n"
        '  File "pose_estimation/train.py", line 206, in <module>\n'
        "    main()\n"
        '  File "pose_estimation/train.py", line 174, in main\n'
        "    final_output_dir, tb_log_dir, writer_dict)",
        "unknown",
        True,
        "cuda-thc-launch-failure",
    ),
    # Ybowei/P-CNN issue 6: the whole traceback; its `cuda runtime error (2)` line speaks, as before.
    (
        "https://github.com/Ybowei/P-CNN/issues/6",
        "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
        "Traceback (most recent call last):\n"
        '  File "train_pcnn.py", line 387, in <module>\n'
        "    im_data.data.resize_(data[0].size()).copy_(data[0])\n"
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
    # fanq15/FSOD-code issue 56: a survived THC check, then the ROI kernels' own check exits: the
    # build has no kernel for this GPU (`cudaCheckError() failed : <message>`, then exit(-1)).
    (
        "https://github.com/fanq15/FSOD-code/issues/56",
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1535491974311/work/aten/src/THC/THCGeneral.cpp line=663 "
        "error=11 : invalid argument\n"
        "cudaCheckError() failed : no kernel image is available for execution on the device",
        "system_software",
        True,
        "cuda-no-kernel-image-for-device",
    ),
    # facebookarchive/caffe2 issue 360: Gloo before April 2017 enforced the connect's SO_ERROR;
    # mpirun then reports the rank that aborted on it.
    (
        "https://github.com/facebookarchive/caffe2/issues/360",
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
        "  what():  [enforce fail at /home/user/gloo_GIT/gloo/gloo/transport/tcp/pair.cc:498] optval == 0. "
        "111 vs 0. SO_ERROR: Connection refused\n"
        "--------------------------------------------------------------------------\n"
        "mpirun noticed that process rank 1 with PID 29013 on node 172.17.27.12 exited on signal 6 (Aborted).\n"
        "--------------------------------------------------------------------------",
        "network",
        True,
        "torch-gloo-connect-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_legacy_stack_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable), source


def test_gloo_connect_names_its_peer() -> None:
    # Gloo from 2017 to 2023 names the peer it could not connect to (a class project's report
    # of ProcessGroupGloo failing under torch.distributed.run).
    found = diagnose(
        "    pg = ProcessGroupGloo(\n"
        "RuntimeError: [/opt/conda/conda-bld/pytorch_1623448255797/work/third_party/gloo/gloo/transport/tcp/"
        "pair.cc:799] connect [192.168.0.222]:2226: Connection refused"
    )
    assert (found.evidence[0].signature, found.category, found.implicated.peers) == (
        "torch-gloo-connect-failed",
        "network",
        ["192.168.0.222"],
    )


def test_thc_checks_follow_the_cuda_table() -> None:
    # Each THC check means what the CUDA runtime's own error means (tables/cuda.yaml).
    tables = dict(builtin_tables())
    cuda = {e["name"]: e for e in tables["cuda.yaml"].entries}
    for entry in tables["cuda_thc.yaml"].entries:
        same = cuda[entry["name"]]
        assert entry["message"] == same["message"], entry["name"]
        assert (entry["category"], entry["retryable"]) == (same["category"], same["retryable"]), entry["name"]


HEALTHY = [
    # MVIG-SJTU/AlphaPose issue 752: THC's check on start-up twice, and the run goes to 100 %
    # (the bar's line as the thread's excerpt shows it, cut short).
    "Load SE Resnet...\n"
    "Loading YOLO model..\n"
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument\n"
    "Loading pose model from ./pretrained_models/fast_421_res152_256x192.pth...\n"
    "  0%|          | 0/87 [00:00<?, ?it/s]\n"
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument\n"
    "100%|████████████████████████████████████████████████████████████",
    # open-mmlab/mmdetection issue 872: the check during testing, and the progress bar goes on.
    "[                              ] 0/1146, elapsed: 0s, ETA:THCudaCheck FAIL "
    "file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument\n"
    "[>>>>>>>>>>>>>>>>>>>>>         ] 822/1146, 8.3 task/s, elapsed: 100s, ETA:    39"
    "[>>>>>>>>>>>>>>>>>>>>>         ] 823/1146, 8.3 task/s, elapsed: 100s, ETA:    39",
    # MindIE LLM's FAQ on Gloo connections: today's Gloo logs each failed connect attempt it retries.
    "ERROR failed to connect, willRetry=1, retry=2, retryLimit=3, rank=1, size=2, local=[127.0.0.1]:123, "
    "remote=[127.0.0.1]:345, error=SO_ERROR: Connection refused",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_survived_checks_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_thc_table_is_explaining_only() -> None:
    # The printed check alone is no failure: every entry only explains, after every root cause.
    table = dict(builtin_tables())["cuda_thc.yaml"]
    assert (table.defaults["alone"], table.defaults["cascade"]) == (False, True)
