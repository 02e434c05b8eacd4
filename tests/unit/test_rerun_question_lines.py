"""Whole excerpts of real logs where the question is whether running the job again would help: a
download cut short or hung up on by the server (Python's http.client), a tracking server that never
answered wandb.init, an exception whose message was logged just above a traceback the log is cut
inside; against the program's own faults that look alike (a strict checkpoint load with resized
parameters, a checkpoint file that cannot be read). And the alarming but harmless lines of the
same tools: OpenMMLab's non-strict checkpoint loader listing the parameters it skipped, fvcore's
skipped heads, a Trainer's nan grad_norm while the loss stays finite; which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # cleinc/bts issue 71: the dataset download breaks off mid-transfer; the log is cut inside the
    # chained traceback, so the first exception (http.client's) is the one the log shows.
    (
        "https://github.com/cleinc/bts/issues/71",
        "python utils/download_from_gdrive.py 1AysroWpfISmm-yRFGBgFTrLy6FjQwvwP ../dataset/nyu_depth_v2/sync.zip\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/bts/venv/lib/python3.6/site-packages/urllib3/response.py", line 437, in _error_catcher\n'
        "    yield\n"
        '  File "/home/user/bts/venv/lib/python3.6/site-packages/urllib3/response.py", line 711, in _handle_chunk\n'
        "    value = self._fp._safe_read(amt)\n"
        '  File "/usr/lib/python3.6/http/client.py", line 624, in _safe_read\n'
        "    raise IncompleteRead(b''.join(s), amt)\n"
        "http.client.IncompleteRead: IncompleteRead(32761 bytes read, 7 more expected)\n"
        "\n"
        "During handling of the above exception, another exc",
        "network",
        True,
        "uncaught-exception",
    ),
    # chenyaofo/pytorch-cifar-models issue 14: torch.hub's download; the server hung up.
    (
        "https://github.com/chenyaofo/pytorch-cifar-models/issues/14",
        "http.client.RemoteDisconnected: Remote end closed connection without response",
        "network",
        True,
        "uncaught-exception",
    ),
    # DeepLabCut/DeepLabCut issue 2497: the GUI logs the exception's message, then its traceback,
    # which the excerpt cuts before its last line.
    (
        "https://github.com/DeepLabCut/DeepLabCut/issues/2497",
        "ConnectionResetError: [Errno 104] Connection reset by peer\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/miniconda3/envs/DLC39/lib/python3.9/site-packages/deeplabcut/gui/tabs/'
        'create_training_dataset.py", line 100, in create_training_dataset\n'
        "    deeplabcut.create_multianimaltraining_dataset(\n"
        '  File "/home/user/miniconda3/envs/DLC39/lib/python3.9/site-packages/deeplabcut/utils/auxfun_models.py",'
        " line 69, in check_for_weights\n"
        "    download_weights(modeltype, model_path.parent)",
        "network",
        True,
        "py-connection-error",
    ),
    # wandb/wandb issue 10044: wandb.init retries, then gives up after its init timeout.
    (
        "https://github.com/wandb/wandb/issues/10044",
        "wandb: W&B API key is configured. Use `wandb login --relogin` to force relogin\n"
        "wandb: Network error (ConnectTimeout), entering retry loop.\n"
        "wandb: ERROR Run initialization has timed out after 90.0 sec. Please try increasing the timeout with the"
        " `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/anaconda3/envs/myenv/lib/python3.10/asyncio/locks.py", line 214, in wait\n'
        "    await fut\n"
        "asyncio.exceptions.CancelledError\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/anaconda3/envs/myenv/lib/python3.10/site-packages/wandb/sdk/mailbox/response_handle.py",'
        " line 105, in wait_async\n"
        "    await asyncio.wait_for(evt.wait(), timeout=timeout)",
        "network",
        True,
        "wandb-init-timeout",
    ),
    # IrisRainbowNeko/genshin_auto_fish issue 254: torch's strict load lists each resized
    # parameter on an indented line under its header.
    (
        "https://github.com/IrisRainbowNeko/genshin_auto_fish/issues/254",
        "RuntimeError: Error(s) in loading state_dict for YOLOX:\n"
        "\tsize mismatch for head.cls_preds.0.bias: copying a param with shape torch.Size([80]) from checkpoint,"
        " the shape in current model is torch.Size([6]).",
        "application",
        False,
        "state-dict-mismatch",
    ),
    # open-mmlab/mmdetection issue 4835: the checkpoint given to --resume-from cannot be read.
    (
        "https://github.com/open-mmlab/mmdetection/issues/4835",
        "RuntimeError: [enforce fail at inline_container.cc:144] . PytorchStreamReader failed reading zip archive:"
        " failed finding central directory",
        "application",
        False,
        "checkpoint-unreadable",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_rerun_question(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_the_indented_size_mismatch_alone_is_still_a_strict_load() -> None:
    # bearpaw/pytorch-classification issue 27: only torch's tab-indented lines, no header.
    found = diagnose(
        "\tsize mismatch for module.layer1.7.conv1.weight: copying a param with shape torch.Size([16, 64, 1, 1])"
        " from checkpoint, the shape in current model is torch.Size([16, 16, 3, 3]).\n"
        "\tsize mismatch for module.layer1.8.conv1.weight: copying a param with shape torch.Size([16, 64, 1, 1])"
        " from checkpoint, the shape in current model is torch.Size([16, 16, 3, 3])."
    )
    assert (found.evidence[0].signature, found.category) == ("shape-mismatch", "application")


def test_an_error_far_above_a_cut_traceback_does_not_name_its_exception() -> None:
    # NVIDIA-Merlin/Transformers4Rec issue 726: a peer's socket closed well above torchrun's own
    # traceback (cut off); that is another process's story, not the exception of the traceback.
    found = diagnose(
        "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.\n"
        "\n"
        "node-a:255200:255473 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer"
        " node-a.ap-south-1.compute.internal<40048>\n"
        "node-a:255200:255473 [1] NCCL INFO transport/net_socket.cc:493 -> 6\n"
        "node-a:255200:255473 [1] NCCL INFO proxy.cc:684 -> 6 [Proxy Thread]\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 255200 closing signal SIGTERM\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 255201 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 255199) of"
        " binary: /home/user/miniconda3/envs/merlin_env_2/bin/python\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/miniconda3/envs/merlin_env_2/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())"
    )
    assert found.category == "unknown"


HEALTHY = [
    # chenyilun95/DSGN2 issue 11: OpenMMLab's non-strict loader lists the parameters it skipped.
    "size mismatch for layer3.0.conv1.weight: copying a param with shape torch.Size([256, 128, 3, 3]) from"
    " checkpoint, the shape in current model is torch.Size([128, 128, 3, 3]).\n"
    "size mismatch for layer3.0.bn1.weight: copying a param with shape torch.Size([256]) from checkpoint, the shape"
    " in current model is torch.Size([128]).",
    # open-mmlab/mmdetection issue 11865: the same listing under its header (mmengine's loader).
    "Loads checkpoint by local backend from path: checkpoints/epoch_45_11.pth\n"
    "The model and loaded state dict do not match exactly\n"
    "\n"
    "size mismatch for decoder.decoder.1.embedding.weight: copying a param with shape torch.Size([37, 512]) from"
    " checkpoint, the shape in current model is torch.Size([38, 512]).\n"
    "size mismatch for decoder.decoder.1.embedding.bias: copying a param with shape torch.Size([37]) from"
    " checkpoint, the shape in current model is torch.Size([38]).",
    # Time-MoE/Time-MoE issue 71: grad_norm nan on two steps, the loss finite, training goes on.
    "{'loss': 0.1474, 'grad_norm': nan, 'learning_rate': 0.0001, 'epoch': 0.04}\n"
    "{'loss': 0.1549, 'grad_norm': 0.1899697184562683, 'learning_rate': 0.0001, 'epoch': 0.08}\n"
    "{'loss': 0.1819, 'grad_norm': nan, 'learning_rate': 0.0001, 'epoch': 0.15}\n"
    "{'loss': 0.1558, 'grad_norm': 0.7023305296897888, 'learning_rate': 0.0001, 'epoch': 0.19}",
    # Visual-AI/Mr.DETR issue 16: fvcore's checkpointer skips the resized class heads.
    "WARNING [08/09 16:14:08 fvcore.common.checkpoint]: Skip loading parameter"
    " 'transformer.decoder.class_embed.0.weight' to the model due to incompatible shapes: (80, 256) in the"
    " checkpoint but (227, 256) in the model! You might want to double check if this is expected.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_alarming_loader_and_tracker_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
