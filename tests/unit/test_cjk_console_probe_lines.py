"""Whole excerpts of training logs posted by Chinese-, Japanese- and Korean-speaking users, whose
consoles print their reports in the user's language: a JetBrains IDE's run console with its
Chinese language pack (its translated "process finished with exit code" sentence, where the code and its NTSTATUS form stay
as the IDE's stringifyExitCode writes them), bash's `已杀死`, a Chinese Windows' WinError 1455
text; and the alarming but harmless lines the same users' runs print (glog W-level device notes
of Paddle, a TensorFlow global-step warning, a negative loss, Trainer loss dicts), which must
stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # ChengzeYe/Defrise-and-Clack-reconstruction issue 3: the Chinese console's exit line right
    # after training starts; 0xC0000005 is an access violation.
    (
        "https://github.com/ChengzeYe/Defrise-and-Clack-reconstruction/issues/3",
        "Trainer has started \n\n进程已结束，退出代码为 -1073741819 (0xC0000005)",  # noqa: RUF001 (the real text)
        "unknown",
        True,
        "launcher-child-failed",
    ),
    # qubvel-org/segmentation_models.pytorch issue 512: the same line alone.
    (
        "https://github.com/qubvel-org/segmentation_models.pytorch/issues/512",
        "进程已结束，退出代码为 -1073741819 (0xC0000005)",  # noqa: RUF001 (the real text)
        "unknown",
        True,
        "launcher-child-failed",
    ),
    # xiaopp123/bert-joint-NLU issue 2: an older translation (ASCII comma, no space before the code).
    (
        "https://github.com/xiaopp123/bert-joint-NLU/issues/2",
        "进程已结束,退出代码-1073741819 (0xC0000005)",
        "unknown",
        True,
        "launcher-child-failed",
    ),
    # KyanChen/STT issue 6: training ends at its start on a fail-fast report (0xC0000409).
    (
        "https://github.com/KyanChen/STT/issues/6",
        "进程已结束,退出代码-1073740791 (0xC0000409)",
        "unknown",
        True,
        "launcher-child-failed",
    ),
    # crownpku/Somiao-Pinyin issue 10: bash in a zh_CN locale reports the kill after a progress bar.
    (
        "https://github.com/crownpku/Somiao-Pinyin/issues/10",
        "  0%|                                        | 0/16733 [00:00<?, ?b/s]2019-11-05 15:38:21.301871:"
        " I tensorflow/stream_executor/dso_loader.cc:152] successfully opened CUDA library libcublas.so.10.0 locally\n"
        "已杀死",
        "unknown",
        True,
        "process-killed",
    ),
    # IrisRainbowNeko/genshin_auto_fish issue 100: a Chinese Windows out of commit memory.
    (
        "https://github.com/IrisRainbowNeko/genshin_auto_fish/issues/100",
        'OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "D:\\Program Files\\anaconda3\\envs\\ysfish'  # noqa: RUF001 (the real text)
        '\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops_gpu.dll" or one of its dependencies.',
        "out_of_memory",
        False,
        "windows-commitment-limit",
    ),
    # HarderThenHarder/transformers_tasks issue 48: the poster's Chinese "error:" prefix, the message wrapped.
    (
        "https://github.com/HarderThenHarder/transformers_tasks/issues/48",
        "报错：OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; \n"  # noqa: RUF001 (the real text)
        "24.00 GiB total capacity; 23.13 GiB already allocated; 0 bytes free; 23.15 GiB \n"
        "reserved in total by PyTorch) If reserved memory is >> allocated memory try \n"
        "setting max_split_size_mb to avoid fragmentation.  See documentation for Memory\n"
        "Management and PYTORCH_CUDA_ALLOC_CONF",
        "out_of_memory",
        False,
        "cuda-out-of-memory",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_localised_console_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # mymusise/ChatGLM-Tuning issue 271: Trainer loss dicts falling to 0.0001.
    "{'loss': 1.141, 'learning_rate': 8.366666666666668e-05, 'epoch': 50.0}\n"
    "{'loss': 0.0003, 'learning_rate': 6.7e-05, 'epoch': 100.0}\n"
    "{'loss': 0.0001, 'learning_rate': 5.0333333333333335e-05, 'epoch': 150.0}",
    # jingyaogong/minimind issue 26: the first epoch-time estimate settles as training goes on.
    "Epoch:[0/19](0/24681) loss:8.863 lr:0.00020000 epoch_Time:372.0min:\n"
    "Epoch:[0/19](100/24681) loss:5.251 lr:0.00020000 epoch_Time:98.0min:\n"
    "Epoch:[0/19](200/24681) loss:4.716 lr:0.00020000 epoch_Time:96.0min:",
    # PaddlePaddle/Paddle issue 23487: the result, then glog's W-level device notes.
    "infer results: dog\n"
    "W0404 16:40:48.365986 14840 device_context.cc:237] Please NOTE: device: 0, CUDA Capability: 61,"
    " Driver API Version: 10.1, Runtime API Version: 10.0\n"
    "W0404 16:40:48.373013 14840 device_context.cc:245] device: 0, cuDNN Version: 7.6.",
    # ChihoLeung/RoBERTa_Emotion_Classification issue 1: TensorFlow's global-step warning.
    "WARNING:tensorflow:It seems that global step (tf.train.get_global_step) has not been increased."
    " Current value (could be stable): 16 vs previous value: 16. You could increase the global step by"
    " passing tf.train.get_global_step() to Optimizer.apply_gradients or Optimizer.minimize.",
    # jeffffffli/res-loglikelihood-regression issue 33: a negative loss is this loss's normal.
    "loss: -8.48068483 | acc: 0.2207:  71%|█████████████████████▎        | 417/586 [47:52<27:15,  9.68s/it]",
    # zai-org/ChatGLM-6B issue 1007: P-tuning logs its process line at WARNING.
    "05/11/2023 17:35:27 - WARNING - __main__ - Process rank: -1, device: cuda:0, n_gpu: 1distributed"
    " training: False, 16-bits training: False",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_localised_console_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
