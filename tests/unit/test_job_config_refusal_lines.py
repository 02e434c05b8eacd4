"""Whole excerpts of real logs where the job's own configuration, paths or inputs were refused by
a tool that says so in its own words, with no exception class that would: Hydra's compact report
of an override it could not merge and OmegaConf's refusal of a key a struct config lacks,
accelerate's FSDP plugin finding no layer class its config names, a subcommand's argparse
refusal, Windows refusing a path the program built (WinError 123), TensorFlow's TensorShape
aborting on a shape it was given, and TensorFlow 1.x's `<Class> (see above for traceback):` line
left when the traceback's own exception line is cut. And the alarming but harmless lines the same
tools print (deprecation and version warnings, weights a checkpoint did not fill), which must
stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # hydra-ecosystem/hydra issue 854: an override of a key the config does not declare.
    (
        "https://github.com/hydra-ecosystem/hydra/issues/854",
        'Error merging override +hydra.job.env_set.WANDB_NOTES="X"\n'
        "Key 'WANDB_NOTES' is not in struct\n"
        "\tfull_key: hydra.job.env_set.WANDB_NOTES\n"
        "\treference_type=Dict[str, str]\n"
        "\tobject_type=dict",
        "application",
        False,
        "hydra-config-error",
    ),
    # hydra-ecosystem/hydra issue 1457: a new key without `+`.
    (
        "https://github.com/hydra-ecosystem/hydra/issues/1457",
        "$ python my_app.py new_key=new_value\n"
        "Could not override 'new_key'.\n"
        "To append to your config use +new_key=new_value\n"
        "Key 'new_key' is not in struct\n"
        "    full_key: new_key\n"
        "    object_type=dict",
        "application",
        False,
        "hydra-config-error",
    ),
    # GAP-LAB-CUHK-SZ/Total3DUnderstanding issue 50: a run directory named after the time, `:`
    # and all, which Windows refuses (a bare OSError).
    (
        "https://github.com/GAP-LAB-CUHK-SZ/Total3DUnderstanding/issues/50",
        "Traceback (most recent call last):\n"
        '  File "main.py", line 19, in <module>\n'
        "    cfg = CONFIG(args.config)\n"
        '  File "D:\\_Python_Respository\\Total3DUnderstanding\\configs\\config_utils.py", line 65, in load_logger\n'
        "    os.makedirs(save_path)\n"
        '  File "C:\\Anaconda3\\envs\\Total3D\\lib\\os.py", line 220, in makedirs\n'
        "    mkdir(name, mode)\n"
        "OSError: [WinError 123] The filename, directory name, or volume label syntax is incorrect:"
        " 'out/total3d\\\\2023-06-13T11:09:46.665278'",
        "application",
        False,
        "windows-invalid-name",
    ),
    # Anttwo/SuGaR issue 23: a checkpoint path with a drive letter in the middle.
    (
        "https://github.com/Anttwo/SuGaR/issues/23",
        '  File "C:\\Users\\user\\SuGaR\\sugar_trainers\\refine.py", line 316, in refined_training\n'
        "    os.makedirs(sugar_checkpoint_path, exist_ok=True)\n"
        "  [Previous line repeated 11 more times]\n"
        '  File "C:\\Users\\user\\anaconda3\\envs\\sugar\\lib\\os.py", line 225, in makedirs\n'
        "    mkdir(name, mode)\n"
        "OSError: [WinError 123] The filename, directory name, or volume label syntax is incorrect:"
        " 'C:\\\\Users\\\\user\\\\SuGaR\\\\gaussian_splatting\\\\data\\\\head01\\\\sugarfine_C:'",
        "application",
        False,
        "windows-invalid-name",
    ),
    # tensorflow/tensorflow issue 6276: TensorShape's checks on a negative size and a wrong rank.
    (
        "https://github.com/tensorflow/tensorflow/issues/6276",
        "F tensorflow/core/framework/tensor_shape.cc:172] Check failed: size >= 0 (-82806 vs. 0)\n"
        "F tensorflow/core/framework/tensor_shape.cc:36] Check failed: NDIMS == dims() (2 vs. 1)"
        "Asking for tensor of 2dimensions from a tensor of 1 dimensions",
        "application",
        False,
        "tf-tensor-shape-check",
    ),
    # tensorflow/tensorflow issue 9282: the reporter traced it to a custom op fed a wrong-rank input.
    (
        "https://github.com/tensorflow/tensorflow/issues/9282",
        "F tensorflow/core/framework/tensor_shape.cc:36] Check failed: NDIMS == dims() (2 vs. 1)"
        " Asking for tensor of 2 dimensions from a tensor of 1 dimensions",
        "application",
        False,
        "tf-tensor-shape-check",
    ),
    # mozilla/DeepSpeech issue 2081: TensorFlow 1.x's repeat of the class after the op's stack;
    # the checkpoint does not fit the graph.
    (
        "https://github.com/mozilla/DeepSpeech/issues/2081",
        'File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/framework/ops.py", line 1770, in __init__\n'
        "self._traceback = tf_stack.extract_stack()\n"
        " \n"
        "InvalidArgumentError (see above for traceback): Restoring from checkpoint failed. This is most"
        " likely due to a mismatch between the current graph and the graph from the checkpoint. Please"
        " ensure that you have not altered the graph expected based on the checkpoint. Original error:\n"
        " \n"
        "E Assign requires shapes of both tensors to match. lhs shape= [41] rhs shape= [29]",
        "application",
        False,
        "uncaught-exception",
    ),
    # netease-youdao/BCEmbedding issue 66: accelerate's FSDP plugin finds no layer class the
    # config names (a bare Exception; the issue quotes the line).
    (
        "https://github.com/netease-youdao/BCEmbedding/issues/66",
        "> Exception: Could not find the transformer layer class to wrap in the model.",
        "application",
        False,
        "fsdp-wrap-class-missing",
    ),
    # meta-pytorch/torchx issue 557: torchx names each component's parser after its command line.
    (
        "https://github.com/meta-pytorch/torchx/issues/557",
        "usage: torchx run <run args...> ddp  [--help] [--script SCRIPT] [-m M] [--image IMAGE]\n"
        "                                     [--mounts MOUNTS]\n"
        "                                     ...\n"
        "torchx run <run args...> ddp : error: unrecognized arguments: --epoch",
        "application",
        False,
        "argparse-bad-arguments",
    ),
    # xamyzhao/brainstorm issue 23: a Windows build prints its source path as `.\tensorflow/...`;
    # an internal check whose cause the line does not say.
    (
        "https://github.com/xamyzhao/brainstorm/issues/23",
        "2020-06-26 11:00:27.306985: F .\\tensorflow/core/util/mkl_util.h:636] Check failed: dims == sizes.size() (5 vs. 4)",
        "unknown",
        True,
        "glog-check-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_job_config_refusals(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


HEALTHY = [
    # MIC-DKFZ/nnDetection issue 255: Hydra's version_base warning, then the checks go on.
    "/home/user/nnDetection/scripts/preprocess.py:381: UserWarning: \n"
    "The version_base parameter is not specified.\n"
    "Please specify a compatability version level, or None.\n"
    "Will assume defaults for version 1.1\n"
    '  initialize_config_module(config_module="nndet.conf")\n\n'
    "Start dataset info check.\n"
    "Dataset info check complete.",
    # sktime/sktime issue 6735: weights newly initialized because their shapes did not match.
    "Some weights of AutoformerForPrediction were not initialized from the model checkpoint at"
    " huggingface/autoformer-tourism-monthly and are newly initialized because the shapes did not match:\n"
    "- model.encoder.value_embedding.value_projection.weight: found shape torch.Size([64, 22]) in the"
    " checkpoint and torch.Size([64, 6]) in the model instantiated",
    # zhiyuanyou/UniAD issue 7: torch.distributed.launch's deprecation warning alone.
    "/home/user/anaconda3/envs/bisenet/lib/python3.6/site-packages/torch/distributed/launch.py:186:"
    " FutureWarning: The module torch.distributed.launch is deprecated\n"
    "and will be removed in future. Use torchrun.\n"
    "Note that --use_env is set by default in torchrun.\n"
    "If your script expects `--local_rank` argument to be set, please\n"
    "change it to read from `os.environ['LOCAL_RANK']` instead.",
    # clovaai/donut issue 27: weights resized on purpose (the maintainers: not a problem).
    "Some weights of DonutModel were not initialized from the model checkpoint at naver-clova-ix/donut-base"
    " and are newly initialized because the shapes did not match",
    # txie-93/cdvae issue 2: Hydra's start-up warnings, then instantiation goes on.
    "/home/user/miniconda3/envs/cdvae/lib/python3.9/site-packages/hydra/_internal/defaults_list.py:251:"
    " UserWarning: In 'default': Defaults list is missing `_self_`. See"
    " https://hydra.cc/docs/upgrades/1.0_to_1.1/default_composition_order for more information\n"
    "  warnings.warn(msg, UserWarning)\n"
    "[2022-06-11 20:18:18,133][hydra.utils][INFO] - Instantiating <cdvae.pl_data.datamodule.CrystDataModule>",
    # Cognexa/cxflow issue 239: a hook's unrecognised config arguments, logged as warnings.
    "2018-09-19 09:39:43.364: WARNING @abstract_hook: Argument `long_term` was not recognized by"
    " `DecayLROnPlateau`. Recognized arguments are `['decay_value', 'kwargs']`.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_config_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
