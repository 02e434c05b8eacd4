"""Whole excerpts of real logs of vision, multimodal and diffusion training whose data or worker
processes ended the job: Pillow's OSError on an image of the dataset that is cut short (a corrupt
sample, not the node's I/O), torch 1.9's launcher reporting a worker killed by a signal in its own
log format, a zh_CN shell's "Killed" after an evaluation progress bar; each with where it was
printed. And the alarming but harmless lines of the same pipelines (webdataset skipping samples it
could not decode, an exception CPython ignored while shutting DataLoader workers down, mmengine's
deprecation warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # Media-Smart/vedastr issue 72: a DataLoader worker's traceback ends in Pillow's truncated image.
    (
        "https://github.com/Media-Smart/vedastr/issues/72",
        "Original Traceback (most recent call last):\n"
        '  File "/root/anaconda3/envs/test/lib/python3.7/site-packages/torch/utils/data/_utils/worker.py",'
        " line 202, in _worker_loop\n"
        "    data = fetcher.fetch(index)\n"
        '  File "tools/../vedastr/datasets/lmdb_dataset.py", line 73, in read_data\n'
        "    img = Image.open(buf).convert('RGB')  # for color image\n"
        '  File "/root/anaconda3/envs/test/lib/python3.7/site-packages/PIL/ImageFile.py", line 249, in load\n'
        '    "(%d bytes not processed)" % len(b)\n'
        "OSError: image file is truncated (43 bytes not processed)",
        "application",
        False,
        "pil-image-truncated",
    ),
    # salesforce/BLIP issue 90: torch 1.9's launcher logs "[LEVEL] <time> <module>: <message>"; the
    # worker was killed at the start of evaluation and the agent restarts the group.
    (
        "https://github.com/salesforce/BLIP/issues/90",
        "Train Epoch: [0] Total time: 22:40:08 (2.3040 s / it)\n"
        "Computing features for evaluation...\n"
        "Evaluation:  [   0/1251]  eta: 21 days, 12:31:33    time: 1486.4058  data: 8.5921  max mem: 8854\n"
        "[ERROR] 2022-08-21 20:11:07,312 api: failed (exitcode: -9) local_rank: 0 (pid: 28413) of binary:"
        " /home/user/anaconda3/envs/torch19/bin/python\n"
        "[ERROR] 2022-08-21 20:11:08,697 local_elastic_agent: [default] Worker group failed\n"
        "[INFO] 2022-08-21 20:11:08,757 api: [default] Worker group FAILED. 3/3 attempts left; will restart worker group",
        "unknown",
        True,
        "torchelastic-worker-failed",
    ),
    # open-mmlab/mmsegmentation issue 308: a zh_CN shell's "Killed" after the evaluation progress bar.
    (
        "https://github.com/open-mmlab/mmsegmentation/issues/308",
        "2020-12-18 19:37:58,021 - mmseg - INFO - Iter [1300/40000]\tlr: 9.710e-03, eta: 4:21:40, time: 0.402,"
        " data_time: 0.003, memory: 19873, decode.loss_seg: 0.1303, loss: 0.1810\n"
        "2020-12-18 19:56:07,472 - mmseg - INFO - Saving checkpoint at 4000 iterations"
        " [>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>> ] 3217/3849, 4.0 task/s, elapsed: 799s, ETA: 157s已杀死",
        "unknown",
        True,
        "process-killed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_dataset_pipeline_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # ExplainableML/cosmos issue 3: webdataset's handler skips samples it cannot decode; training goes on.
    "|2025-09-04|22:05:31.097| [WARNING] Handling webdataset error (DecodingError()). Ignoring.\n"
    "2025-09-04,22:05:31 | WARNING | Handling webdataset error (DecodingError()). Ignoring.\n"
    "2025-09-04,22:05:43 | INFO | Train Epoch: 0 [    128/1600000 (0%)] Data (t): 284.173 Batch (t): 302.214,"
    " 0.423541/s, 0.105885/s/gpu LR: 0.000000 Loss: 9.7984 (9.7984)\n"
    "|2025-09-04|22:05:50.139| [WARNING] Handling webdataset error (DecodingError()). Ignoring.",
    # quark0/darts issue 95: CPython ignores the exception raised while the iterator shuts its workers down.
    "Exception ignored in: <bound method _DataLoaderIter.__del__ of"
    " <torch.utils.data.dataloader._DataLoaderIter object at 0x7ff940e565c0>>\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 399, in __del__\n'
    "    self._shutdown_workers()\n"
    '  File "/opt/conda/lib/python3.6/multiprocessing/reduction.py", line 153, in recvfds\n'
    "    msg, ancdata, flags, addr = sock.recvmsg(1, socket.CMSG_LEN(bytes_size))\n"
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    # open-mmlab/mmsegmentation issue 2888: mmengine's deprecation warnings, then training and a save.
    '06/13 15:42:20 - mmengine - WARNING - "FileClient" will be deprecated in future. Please use io functions in'
    " https://mmengine.readthedocs.io/en/latest/api/fileio.html#file-io\n"
    '06/13 15:42:20 - mmengine - WARNING - "HardDiskBackend" is the alias of "LocalBackend" and the former will be'
    " deprecated in future.\n"
    "06/13 15:43:17 - mmengine - INFO - Iter(train) [ 100/2000]  lr: 9.9559e-03  eta: 0:17:56  time: 0.5263"
    "  data_time: 0.0017  memory: 3525  loss: 0.0016\n"
    "06/13 15:43:17 - mmengine - INFO - Saving checkpoint at 100 iterations",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_dataset_pipeline_noise_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
