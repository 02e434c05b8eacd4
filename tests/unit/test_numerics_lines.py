"""Training that goes numerically wrong: NaN or infinite losses, fp16 loss scales that collapse,
the frameworks' own divergence checks, and Megatron's re-run of a rejected iteration, which tells
a GPU that computed a wrong result (retry without that node) from numbers the program itself
produces (a restart repeats them). And the alarming but harmless side, which must stay healthy:
overflow skips, a NaN gradient norm or loss once and then recovery, a failed check that was not
fatal. Lines from public threads and from the frameworks' own source, each with its source."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# (text, symptom, category, retryable)
FAILURES = [
    # facebookresearch/fairseq#512: overflow after overflow down to fairseq's last scale above its
    # default --min-loss-scale (fairseq/optim/dynamic_loss_scaler.py), then the traceback, cut
    (
        "| epoch 027 | loss 6.343 | nll_loss 4.984 | ppl 31.65 | wps 164346 | ups 0.4 | wpb 364096 | bsz 11907"
        " | num_updates 10198 | lr 0.000626286 | gnorm 0.390 | clip 0% | oom 0 | loss_scale 0.500 | wall 23080"
        " | train_wall 21383\n"
        "| WARNING: overflow detected, setting loss scale to: 0.25\n"
        "| WARNING: overflow detected, setting loss scale to: 0.00048828125\n"
        "| WARNING: overflow detected, setting loss scale to: 0.000244140625\n"
        "| WARNING: overflow detected, setting loss scale to: 0.0001220703125\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", l',
        "crash",
        "application",
        False,
    ),
    # EleutherAI/gpt-neox#482: megatron/utils.py OverflowMonitor
    (
        "Traceback (most recent call last):\n"
        '  File "\\~/gpt-neox/megatron/utils.py", line 353, in check\n'
        "    raise Exception(\n"
        "Exception: Skipped 50 iterations in a row due to Overflow - Exiting training.",
        "crash",
        "application",
        False,
    ),
    # TinyLLaVA/TinyLLaVA_Factory#107: DeepSpeed's loss scaler at its minimum, quoted in lower case
    (
        "exception: current loss scale already at minimum - cannot decrease scale anymore. exiting run",
        "crash",
        "application",
        False,
    ),
    # thodan/epos#9: the summed loss named `total_loss`
    (
        "step: 0 total_loss: 9.5576973 obj_cls: 2.77258897 frag_cls: 4.15888262 frag_loc: 2.37503433\n"
        "step: 100 total_loss: nan obj_cls: nan frag_cls: nan frag_loc: nan\n"
        "INFO:tensorflow:global_step/sec: 2.1272\n"
        "step: 200 total_loss: nan obj_cls: nan frag_cls: nan frag_loc: nan",
        "crash",
        "application",
        False,
    ),
    # christianpayer/MedicalDataAugmentationTool-VerSe#31: the loss named `loss_net`, beside a
    # loss scale that must not be read as the loss
    (
        "02:29:53: train iter: 0 loss_net: 0.9443 loss_scale: 32768.0000 norm: 21.8862 norm_average: 1.0100"
        " seconds: 445.463\n"
        "02:31:56: train iter: 100 loss_net: nan loss_scale: 785.4200 norm: nan norm_average: 0.8729"
        " seconds: 122.871",
        "crash",
        "application",
        False,
    ),
    # mozilla/TTS#575: the program's own exception naming a NaN loss (TTS/tts/layers/losses.py)
    (
        "[WARNING] NaN or Inf found in input tensor.\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ubuntu/TTS/TTS/tts/layers/losses.py", line 380, in forward\n'
        '    raise RuntimeError(f" [!] NaN loss with {key}.")\n'
        "RuntimeError:  [!] NaN loss with decoder_loss.",
        "crash",
        "application",
        False,
    ),
    # torch/nn/utils/clip_grad.py: clip_grad_norm_(error_if_nonfinite=True) on a NaN or Inf norm
    (
        "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be"
        " clipped. To disable this error and scale the gradients by the non-finite norm anyway, set"
        " `error_if_nonfinite=False`",
        "crash",
        "application",
        False,
    ),
    # MeteoSwiss/ldcast#7: Lightning's EarlyStopping stops on a metric that is not finite
    # (callbacks/early_stopping.py)
    (
        "Epoch 12: : 1200it [20:40,  1.03s/it, loss=nan, v_num=0, val_loss=nan.0, val_rec_loss=nan.0,"
        " val_kl_loss=nan.0]                                   Monitored metric val_rec_loss = nan is not finite."
        " Previous best value was 0.045. Signaling Trainer to stop.",
        "crash",
        "application",
        False,
    ),
    # keras-team/keras#6747: Keras' TerminateOnNaN callback (keras/callbacks/terminate_on_nan.py)
    ("Batch 6: Invalid loss, terminating training", "crash", "application", False),
]

# Megatron-LM megatron/core/rerun_state_machine.py (d98e8a64): log_failure's verdicts after the
# re-run of a rejected iteration, with the lines should_checkpoint_and_exit prints before exiting.
RERUN = [
    # not reproducible on the same GPU: a transient fault of rank 5's GPU (exit code 17)
    (
        "Rank 5, node gpu-node-07, device 5, iteration #1201: First rerun: unexpected result is not reproducible"
        " within the tolerance (nan != 3.25)!\n"
        "Rank 5, node gpu-node-07, device 5, iteration #1201: Possible transient error!\n"
        "Exiting now. The job can be resumed from a previous checkpoint",
        ("crash", "hardware", True),
        {"nodes": ["gpu-node-07"], "ranks": [5], "gpus": ["gpu5"]},
    ),
    # reproducible on the same GPU: checkpoint, exit 16, resume on another GPU to decide
    (
        "Rank 5, node gpu-node-07, device 5, iteration #1201: First rerun: unexpected result is reproducible"
        " within the tolerance (nan = nan). Need to rerun on a different GPU to verify correctness.!\n"
        "Saving a checkpoint and exiting now. Please resume the job from the checkpoint to rerun the last"
        " iteration and establish a diagnostic",
        ("crash", "unknown", True),
        {"nodes": ["gpu-node-07"], "ranks": [5], "gpus": ["gpu5"]},
    ),
    # resumed on the GPU to avoid: it names that node and GPU
    (
        "Got rescheduled on the same GPU. Need to resume again from the same checkpoint (node: gpu-node-07, gpu: 5)\n"
        "Need to restart job from the same checkpoint because it was scheduled on the same node/GPU\n"
        "Exiting now. Please resume the job from the same checkpoint to rerun the last iteration and establish"
        " a diagnostic",
        ("crash", "unknown", True),
        {"nodes": ["gpu-node-07"], "gpus": ["gpu5"]},
    ),
    # the different GPU disagrees with the first: the first GPU is faulty; the line's own node is
    # the healthy one, so nothing is named
    (
        "Second rerun: unexpected result is not reproducible on a different GPU, therefore was likely incorrect"
        " (3.25 != nan)\n"
        "Rank 2, node gpu-node-11, device 2, iteration #1201: Possible persistent error!\n"
        "Exiting now. A checkpoint at the last iteration already exists if further examination is needed",
        ("crash", "hardware", True),
        {},
    ),
    # the different GPU agrees: the program's own numbers
    (
        "Second rerun: unexpected result is reproducible on a different GPU, therefore it was likely correct"
        " (nan = nan)\n"
        "Rank 2, node gpu-node-11, device 2, iteration #1201: Correct result (but possible Application error)"
        " (found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication"
        " collective)!\n"
        "Exiting now. A checkpoint at the last iteration already exists if further examination is needed",
        ("crash", "application", False),
        {},
    ),
    # the whole story on the rank that rejected its result: the rejection, the re-run, the verdict;
    # the rejection repeats the NaN check's words but the verdict says what it was
    (
        "Result validation enabled\n"
        "Unexpected result nan on rank 5 at iteration #1201 invocation #1 (message='found NaN in local grad norm"
        " for bucket #0 in backward pass before data-parallel communication collective')\n"
        "Need to rerun step to check reproducibility of initial result\n"
        "Rank 5, node gpu-node-07, device 5, iteration #1201: First rerun: unexpected result is not reproducible"
        " within the tolerance (3.25 != nan)!\n"
        "Rank 5, node gpu-node-07, device 5, iteration #1201: Possible transient error!\n"
        "Exiting now. The job can be resumed from a previous checkpoint",
        ("crash", "hardware", True),
        {"nodes": ["gpu-node-07"], "ranks": [5], "gpus": ["gpu5"]},
    ),
    (
        "Unexpected result nan on rank 0 at iteration #1201 invocation #1 (message='found NaN in local forward"
        " loss calculation')\n"
        "Need to rerun step to check reproducibility of initial result\n"
        "Rank 0, node dgx-a01, device 0, iteration #1201: First rerun: unexpected result is reproducible within"
        " the tolerance (nan = nan). Need to rerun on a different GPU to verify correctness.!",
        ("crash", "unknown", True),
        {"nodes": ["dgx-a01"], "ranks": [0], "gpus": ["gpu0"]},
    ),
    # a rejection with no verdict after it (the job died during the re-run): the numbers
    (
        "Unexpected result nan on rank 5 at iteration #1201 invocation #1 (message='found NaN in local grad norm"
        " for bucket #0 in backward pass before data-parallel communication collective')",
        ("crash", "application", False),
        {"ranks": [5]},
    ),
    # the same verdicts as releases before 2026 wrote them (Megatron-LM 32ebde7c): no iteration,
    # and the reproducible first re-run as a plain warning
    (
        "First rerun: unexpected result is not reproducible within the tolerance (nan != 3.25)\n"
        "Rank 5, node gpu-node-07, device 5: Possible transient error!",
        ("crash", "hardware", True),
        {"nodes": ["gpu-node-07"], "ranks": [5], "gpus": ["gpu5"]},
    ),
    (
        "First rerun: unexpected result is reproducible within the tolerance (nan = nan). Need to rerun on a"
        " different GPU to verify correctness\n"
        "Saving a checkpoint and exiting now. Please resume the job from the checkpoint to rerun the last"
        " iteration and establish a diagnostic",
        ("crash", "unknown", True),
        {},
    ),
    # NVIDIA-NeMo/Speech#14348: with re-runs disabled the check raises; before the first completed
    # iteration the counter prints as -1
    (
        "i.pretrain/0 [default2]:[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1:"
        " Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before"
        " data-parallel communication collective')",
        ("crash", "application", False),
        {"nodes": ["dcfai-xe9680-01"], "ranks": [2], "gpus": ["gpu2"]},
    ),
    # Megatron-LM 0.7's param_and_grad_buffer.py wording ends with the rank's device and node
    (
        "AssertionError: Rank 13: found NaN in local grad norm in backward pass before data-parallel"
        " communication collective. Device: 5, node: node-15-11",
        ("crash", "application", False),
        {"nodes": ["node-15-11"], "ranks": [13], "gpus": ["gpu5"]},
    ),
]

HEALTHY = [
    # THUDM/Chinese-Transformer-XL#7: one NaN loss, then the run recovers and validates
    " iteration      600/    3000 | elapsed time per iteration (ms): 11052.7 | learning rate 9.517E-06"
    " | lm loss 5.763325E+00 | loss scale 4.0 |\n"
    " iteration      700/    3000 | elapsed time per iteration (ms): 12932.3 | learning rate 9.773E-06"
    " | lm loss NAN | loss scale 4.0 |\n"
    "Warning: NaN or Inf found in input tensor.\n"
    " iteration      800/    3000 | elapsed time per iteration (ms): 11020.1 | learning rate 9.457E-06"
    " | lm loss 5.193296E+00 | loss scale 0.1 |\n"
    " iteration      900/    3000 | elapsed time per iteration (ms): 11070.0 | learning rate 9.133E-06"
    " | lm loss 4.792100E+00 | loss scale 0.1 |\n"
    " iteration     1000/    3000 | elapsed time per iteration (ms): 12955.2 | learning rate 8.807E-06"
    " | lm loss 4.454510E+00 | loss scale 0.1 |",
    # facebookresearch/fairseq#515: overflows that lower the scale while training goes on
    "| WARNING: overflow detected, setting loss scale to: 0.03125\n"
    "| epoch 001:    400 / 1374 loss=13.137, ppl=9007.95, wps=52932, ups=0, wpb=277361.147, bsz=8693.717,"
    " num_updates=389, lr=9.81528e-06, gnorm=2.587, clip=0.000, oom=0.000, loss_scale=0.031, wall=2038,"
    " train_wall=1880\n"
    "| WARNING: overflow detected, setting loss scale to: 0.015625\n"
    "| WARNING: overflow detected, setting loss scale to: 0.00390625\n"
    "| epoch 001:    500 / 1374 loss=12.636, ppl=6365.15, wps=53414, ups=0, wpb=277442.903, bsz=8660.477,"
    " num_updates=486, lr=1.22379e-05, gnorm=2.302, clip=0.000, oom=0.000, loss_scale=0.004, wall=2524,"
    " train_wall=2346",
    # facebookresearch/fairseq#1895: the newer wording, a scale still above the floor
    "2020-03-23 11:41:18 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.00048828125\n"
    "2020-03-23 11:48:04 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.000244140625",
    # deepspeedai/DeepSpeed#2069: the fused optimizer's overflow notices on every rank
    "[2022-07-05 16:30:10,796] [INFO] [fused_optimizer.py:382:_update_scale] \n"
    "Grad overflow on iteration 9\n"
    "[2022-07-05 16:30:10,796] [INFO] [fused_optimizer.py:383:_update_scale] Reducing dynamic loss scale from"
    " 8388608.0 to 4194304.0\n"
    "[2022-07-05 16:30:10,797] [INFO] [logging.py:69:log_dist] [Rank 0] Overflow detected. Skipping step."
    " Attempted loss scale: 8388608.0, reducing to 4194304.0",
    # Kai-46/minFM#4: the trainer skips steps with a spiky gradient and goes on
    "2025-08-23 06:19:20,889 - trainers.dit_trainer - WARNING - Step 1557: detected nan/inf/spiky gradient"
    " (norm=2.1966569423675537); skipping optimizer step.\n"
    "2025-08-23 06:20:07,600 - trainers.dit_trainer - INFO - Step   1560 | Loss: 0.5275 | LR: 3.00e-04 |"
    " GradNorm: 2.29 | TPS: 16.88K | Data: 0.007s",
    # ChenRocks/UNITER#28: apex's skips at the start of a Horovod run
    "[1,1]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n"
    "[1,0]<stdout>:Warning: NaN or Inf found in input tensor.\n"
    "[1,0]<stdout>:Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
    # JiaquanYe/TableMASTER-mmocr#32: a NaN gradient norm once, the loss finite
    "2021-11-22 01:30:00,000 - mmocr - INFO - Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46,"
    " time: 0.539, data_time: 0.051, memory: 7239, loss_ce: 1.2757, loss: 1.9091, grad_norm: nan\n"
    "2021-11-22 01:32:34,502 - mmocr - INFO - Epoch [1][200/62598]\tlr: 1.000e-03, eta: 7 days, 15:55:58,"
    " time: 0.705, data_time: 0.002, memory: 7239, loss_ce: 0.5921, loss: 0.9186, grad_norm: 3.9772",
    # Megatron-LM rerun_state_machine.py: a check that is not fatal (a spiky loss) logs its verdict
    # and training goes on
    "Unexpected result 412.5 on rank 0 at iteration #88 invocation #1 (message='Spiky loss')\n"
    "Need to rerun step to check reproducibility of initial result\n"
    "Rank 0, node dgx-a01, device 0, iteration #88: First rerun: unexpected result is not reproducible within"
    " the tolerance (398.1 != 412.5)!\n"
    "Rank 0, node dgx-a01, device 0, iteration #88: Possible transient error!\n"
    "Continuing normal execution because failed validation was not fatal\n"
    " iteration       89/  500000 | lm loss: 2.318E+00 | number of skipped iterations:   0 |\n"
    " iteration       90/  500000 | lm loss: 2.301E+00 | number of skipped iterations:   0 |\n"
    " iteration       91/  500000 | lm loss: 2.297E+00 | number of skipped iterations:   0 |",
]


@pytest.mark.parametrize(("text", "symptom", "category", "retryable"), FAILURES)
def test_divergence_is_the_programs(text: str, symptom: str, category: str, retryable: bool) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == (symptom, category, retryable), found.explanation


@pytest.mark.parametrize(("text", "expected", "culprit"), RERUN)
def test_rerun_verdicts_name_the_gpu(
    text: str, expected: tuple[str, str, bool], culprit: dict[str, list[object]]
) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == expected, found.explanation
    implicated = found.implicated.model_dump()
    for kind in ("nodes", "ranks", "gpus"):
        assert sorted(map(str, implicated.get(kind, []))) == sorted(map(str, culprit.get(kind, []))), (kind, implicated)


def test_a_transient_fault_keeps_its_node_out() -> None:
    found = diagnose(RERUN[0][0])
    assert found.exclude and found.implicated.nodes == ["gpu-node-07"]


def test_a_persistent_fault_names_no_healthy_node() -> None:
    found = diagnose(RERUN[3][0])
    assert not found.exclude and not found.implicated.nodes


@pytest.mark.parametrize("text", HEALTHY)
def test_numbers_that_recover_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
