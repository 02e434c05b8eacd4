"""Whole excerpts of real logs from the system software under a training job's start: CUDA's own
driver-mismatch text raised bare by a framework, PyTorch's extension builder whose `ninja -v`
failed in a chained traceback the log was cut in, and a trainer's error line quoting CUDA's
initialisation failure; each with its source. The healthy ones (warnings, fallbacks that then
work, PyTorch's CUDA start-up warning followed by training steps that go on) must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # gnina/scripts issue 57: caffe's Python layer raises CUDA's 803 text with no prefix.
    (
        "https://github.com/gnina/scripts/issues/57",
        "WRITING solver.36822.prototxt\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/root/data/gnina_train/train.py", line 932, in <module>\n'
        "    results = train_and_test_model(args, train_test_files[i], outname, cont)\n"
        '  File "/root/data/gnina_train/train.py", line 441, in train_and_test_model\n'
        "    solver = caffe.get_solver(solverf)\n"
        "RuntimeError: system has unsupported display driver / cuda driver combination",
        "system_software",
        True,
        "cuda-system-driver-mismatch",
    ),
    # deepspeedai/DeepSpeed issue 6892: a rank's chained traceback is cut in its caller's frames;
    # the exception it was raised from is cpp_extension's failed `ninja -v`.
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/6892",
        "Building extension module fused_adam...\n"
        "Allowing ninja to set a default number of workers... (overridable by setting the environment"
        " variable MAX_JOBS=N)\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "[..]/svgen2/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 2105,'
        " in _run_ninja_build\n"
        "[rank1]:     subprocess.run(\n"
        '[rank1]:   File "[..]/.pyenv/versions/3.11.9/lib/python3.11/subprocess.py", line 571, in run\n'
        "[rank1]:     raise CalledProcessError(retcode, process.args,\n"
        "[rank1]: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        "\n"
        "[rank1]: The above exception was the direct cause of the following exception:\n"
        "\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "[..]/svgen/Parser/trainer.py", line 163, in <module>\n'
        "[rank1]:     trainer.train() \n"
        '[rank1]:   File "[..]/svgen2/lib/python3.11/site-packages/transformers/trainer.py", line 2164, in train\n'
        "[rank1]:     return inner_training_loop(\n"
        '[rank1]:   File "[..]/svgen2/lib/python3.11/site-packages/transformers/trainer.py", line 2325,'
        " in _inner_training_loop\n"
        "[rank1]:     model, self.optimizer, self.lr_scheduler = self.accelerator.prepare(",
        "application",
        False,
        "torch-extension-build-failed",
    ),
    # bghira/SimpleTuner issue 1888: the trainer's own error line quotes torch's RuntimeError.
    (
        "https://github.com/bghira/SimpleTuner/issues/1888",
        "Epoch 85/160 Steps:  53%|██████████████████████████████████████                                  |"
        " 2028/3840 [00:00<?, ?it/s][RANK 0] 2025-11-01 09:50:24,521 [ERROR] (id=training-images) Error while computing latents: CUDA"
        " driver initialization failed, you might not have a CUDA gpu.\n"
        "CUDA driver initialization failed, you might not have a CUDA gpu.\n"
        "Traceback (most recent call last):\n"
        '  File "/workspace/SimpleTuner/simpletuner/train.py", line 76, in <module>\n'
        "    trainer.train()",
        "system_software",
        True,
        "cuda-initialization-error",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_gpu_stack_start_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # wenet-e2e/wenet issue 700: torch warns CUDA could not initialise; training batches go on.
    "the number of model params: 49349138\n"
    "/data/home/user/miniconda3/envs/wenet/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning:"
    " CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered"
    " internally at  /opt/conda/conda-bld/pytorch_1631630839582/work/c10/cuda/CUDAFunctions.cpp:115.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "2021-10-21 14:32:41,099 INFO Checkpoint: save to checkpoint exp/conformer/init.pt\n"
    "2021-10-21 14:32:41,453 INFO Epoch 0 TRAIN info lr 8e-08\n"
    "2021-10-21 14:32:47,093 DEBUG TRAIN Batch 0/7507 loss 223.928131 loss_att 83.471237 loss_ctc 551.660828"
    " lr 0.00000008 rank 0\n"
    "2021-10-21 14:37:10,424 DEBUG TRAIN Batch 100/7507 loss 232.583084 loss_att 83.298691 loss_ctc 580.913330"
    " lr 0.00000208 rank 0",
    # pytorch/pytorch pull 107179: dynamo falls back to eager and the function's result prints.
    "[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING] Backend compiler failed with a fake"
    " tensor exception at\n"
    "[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING] Falling back to eager for this frame."
    " Please use TORCH_LOGS=graph_breaks to see the full stack trace.\n"
    "[0, 0, 0, 0]",
    # Akegarasu/lora-scripts issue 107: xFormers' Triton notice, then training steps go on.
    "A matching Triton is not available, some optimizations will not be enabled.\n"
    "Error caught was: No module named 'triton'\n"
    "steps:  10%|██████      | 780/7800 [05:04<45:36,  2.57it/s, loss=0.117]epoch 2/10",
    # tensorflow/tensorflow issue 57103: TensorFlow's dlerror notice, then a clean exit.
    "2022-08-11 14:21:29.345331: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not"
    " load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n"
    "2022-08-11 14:21:29.345439: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart"
    " dlerror if you do not have a GPU set up on your machine.\n"
    "TensorFlow version: 2.9.1\n"
    "\n"
    "Process finished with exit code 0",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_gpu_stack_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_wenet_batch_lines_are_progress() -> None:
    # wenet-e2e/wenet issue 700: WeNet's executor logs each batch with its loss.
    from recovery.activities.progress import ProgressParser

    record = ProgressParser().parse(
        "2021-10-21 14:37:10,424 DEBUG TRAIN Batch 100/7507 loss 232.583084 loss_att 83.298691 loss_ctc"
        " 580.913330 lr 0.00000208 rank 0"
    )
    assert record is not None and (record.step, record.total, record.loss) == (100, 7507, 232.583084)
