"""Whole excerpts of real logs from image, video and audio model training and fine-tuning
(kohya's sd-scripts, MMEngine/MMDetection, DINOv2, Cosmos, NeMo ASR): a checkpoint save that
safetensors refused because tensors share memory, training that diverged for good, and the
alarming but harmless lines the same trainers print (a NaN loss in one logging interval that the
next interval reports finite again, an infinite running average beside finite current losses, a
checkpoint export, NeMo's data-loader set-up warnings), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # kohya-ss/sd-scripts issue 629: saving the SDXL checkpoint under DeepSpeed; safetensors'
    # _flatten refuses the state dict (its message starts on the line after the bare class).
    (
        "https://github.com/kohya-ss/sd-scripts/issues/629",
        '  File "/mnt/my_raid/github/sd-scripts/library/sdxl_model_util.py", line 312, in save_stable_diffusion_checkpoint\n'
        "    save_file(state_dict, output_file)\n"
        '  File "/mnt/my_raid/github/sd-scripts/venv/lib/python3.9/site-packages/safetensors/torch.py", line 232, in save_file\n'
        "    serialize_file(_flatten(tensors), filename, metadata=metadata)\n"
        '  File "/mnt/my_raid/github/sd-scripts/venv/lib/python3.9/site-packages/safetensors/torch.py", line 394, in _flatten\n'
        "    raise RuntimeError(\n"
        "RuntimeError: \n"
        "            Some tensors share memory, this will lead to duplicate memory on disk and potential differences"
        " when loading them again: [{`\n"
        "\n"
        "`\n"
        "            A potential way to correctly save your model is to use `save_model`.\n"
        "            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors\n"
        "            \n"
        "steps:   1%|                 | 100/18165 [07:46<23:24:42,  4.67s/it, loss=0.112]\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 22397 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 22396)"
        " of binary: /mnt/my_raid/github/sd-scripts/venv/bin/python",
        "application",
        False,
        "safetensors-shared-tensors",
    ),
    # open-mmlab/mmdetection issue 11893: MMEngine's train line with the loss and every term NaN.
    (
        "https://github.com/open-mmlab/mmdetection/issues/11893",
        "08/03 22:09:24 - mmengine - INFO - Epoch(train)  [1][ 500/2931]  lr: 2.0000e-02  eta: 0:39:15  time: 0.0578"
        "  data_time: 0.0017  memory: 2389  loss: nan  loss_rpn_cls: nan  loss_rpn_bbox: nan  loss_cls: nan"
        "  acc: 0.0000  loss_bbox: nan",
        "application",
        False,
        "loss-not-finite",
    ),
    # karpathy/nanoGPT issue 215: finite iterations, then every iteration after 3010 reports a NaN
    # loss: no later finite loss, so the run diverged for good.
    (
        "https://github.com/karpathy/nanoGPT/issues/215",
        "2023-03-22 09:31:56 iter 2990: loss 3.8853, time 1096.65ms, mfu 15.34%\n"
        "2023-03-22 09:32:32 step 3000: train loss 4.0390, val loss 4.0427\n"
        "saving checkpoint to out\n"
        "2023-03-22 09:32:41 iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%\n"
        "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%\n"
        "2023-03-22 09:33:02 iter 3020: loss nan, time 1015.95ms, mfu 14.36%\n"
        "2023-03-22 09:33:12 iter 3030: loss nan, time 1017.59ms, mfu 14.58%\n"
        "2023-03-22 09:33:22 iter 3040: loss nan, time 1016.57ms, mfu 14.78%",
        "application",
        False,
        "loss-not-finite",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_generative_training_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # open-mmlab/mmdetection issue 5911: one logging interval averages a NaN loss_bbox, the next
    # two report it finite again and training goes on.
    "2021-08-18 19:36:36,093 - mmdet - INFO - Epoch [1][100/5808]\tlr: 1.000e-02, eta: 4:49:14, time: 0.717,"
    " data_time: 0.020, memory: 8104, loss_rpn_cls: 0.3281, loss_rpn_bbox: 0.1095, loss_cls: 0.4124, acc: 93.2749,"
    " loss_bbox: 0.1914, loss: 1.0415\n"
    "2021-08-18 19:37:12,902 - mmdet - INFO - Epoch [1][150/5808]\tlr: 1.000e-02, eta: 4:46:48, time: 0.736,"
    " data_time: 0.020, memory: 8104, loss_rpn_cls: 0.3319, loss_rpn_bbox: 0.1191, loss_cls: 0.4035, acc: 92.7739,"
    " loss_bbox: nan, loss: nan\n"
    "2021-08-18 19:37:49,537 - mmdet - INFO - Epoch [1][200/5808]\tlr: 1.000e-02, eta: 4:44:57, time: 0.733,"
    " data_time: 0.019, memory: 8104, loss_rpn_cls: 0.3148, loss_rpn_bbox: 0.1156, loss_cls: 0.4204, acc: 92.6089,"
    " loss_bbox: 0.2086, loss: 1.0595",
    # facebookresearch/dinov2 issue 492: the running averages in brackets are inf (one early koleo
    # step), the current losses are finite and the iterations go on.
    "I20250104 12:12:42 90 dinov2 helpers.py:102] Training  [   1250/2500000]  eta: 40 days, 13:22:08  lr: 0.0006"
    " (0.0003)  wd: 0.0400 (0.0400)  mom: 0.9940 (0.9940)  last_layer_lr: 0.0000 (0.0000)  current_batch_size:"
    " 380.0000 (380.0000)  total_loss: 6.7223 (inf)  dino_local_crops_loss: 4.9698 (5.1138)  dino_global_crops_loss:"
    " 0.6292 (0.6445)  koleo_loss: 0.0315 (inf)  ibot_loss: 1.0857 (1.1301)  time: 1.363414  data: 0.000342"
    "  max mem: 61695\n"
    "I20250104 12:12:55 90 dinov2 helpers.py:102] Training  [   1260/2500000]  eta: 40 days, 13:03:52  lr: 0.0006"
    " (0.0003)  wd: 0.0400 (0.0400)  mom: 0.9940 (0.9940)  last_layer_lr: 0.0006 (0.0000)  current_batch_size:"
    " 380.0000 (380.0000)  total_loss: 6.7171 (inf)  dino_local_crops_loss: 4.9707 (5.1126)  dino_global_crops_loss:"
    " 0.6294 (0.6444)  koleo_loss: 0.0315 (inf)  ibot_loss: 1.0856 (1.1297)  time: 1.356799  data: 0.000374"
    "  max mem: 61695",
    # nvidia-cosmos/cosmos-reason1 issue 19: the policy exports a huggingface checkpoint in chunks.
    "[rank0]:[cosmos] 2025-06-13 12:02:14,930 - cosmos - INFO - [Policy] Saving huggingface checkpoint at step 850"
    " to /ml/output/model/20250612163220...\n"
    "[rank0]:[cosmos] 2025-06-13 12:02:19,029 - cosmos - INFO - Saved chunk 0 to 00000.safetensors\n"
    "[rank0]:[cosmos] 2025-06-13 12:02:23,213 - cosmos - INFO - Saved chunk 1 to 00001.safetensors\n"
    "[rank0]:Exported safetensors to /ml/output/model/20250612163220/safetensors/step_850",
    # NVIDIA-NeMo/Speech issue 7738: restoring a model warns that no train/validation loader is set up.
    "[NeMo I 2023-10-24 09:15:03 mixins:170] Tokenizer SentencePieceTokenizer initialized with 1024 tokens\n"
    "[NeMo W 2023-10-24 09:15:04 modelPT:161] If you intend to do training or fine-tuning, please call the"
    " ModelPT.setup_training_data() method and provide a valid configuration file to setup the train data loader.\n"
    "    Train config : \n"
    "    manifest_filepath: null\n"
    "    sample_rate: 16000",
    # open-mmlab/mmdetection issue 11279: an epoch ends with a checkpoint, validation and its mAP.
    "2023/12/05 09:56:22 - mmengine - INFO - Epoch(train)  [30][80/86]  base_lr: 4.0000e-03 lr: 4.0000e-03"
    "  eta: 5:10:57  time: 1.0093  data_time: 0.0032  memory: 26352  loss: 0.8485  loss_cls: 0.3955  loss_bbox: 0.4529\n"
    "2023/12/05 09:56:27 - mmengine - INFO - Saving checkpoint at 30 epochs\n"
    "2023/12/05 09:56:35 - mmengine - INFO - Epoch(val)  [30][20/20]    eta: 0:00:00  time: 0.2431  data_time: 0.0236"
    "  memory: 1608  \n"
    "2023/12/05 09:56:38 - mmengine - INFO - Evaluating bbox...\n"
    "2023/12/05 09:56:48 - mmengine - INFO - bbox_mAP_copypaste: 0.379 0.636 0.397 0.154 0.353 0.552",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_generative_training_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
