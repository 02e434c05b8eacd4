"""Whole excerpts of real logs of TensorFlow's distributed training and the machinery around it:
a ring all-reduce that lost its peer (CollectiveAllReduceStrategy), ParameterServerStrategy's
coordinator whose step failed on an unreachable parameter server, a TPU worker given a path no
file system of its serves, a spot machine taken back under a Taskcluster task, and a console's
negative exit code; and the alarming but harmless lines the same stacks print (the TPU polling
thread's health notice, Keras' slow-callback warning, a GeneratorDataset finalized at exit, the
host-memory allocation notice), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # mlcommons/training issue 272: MultiWorkerMirroredStrategy's ring all-reduce lost a peer.
    (
        "https://github.com/mlcommons/training/issues/272",
        "INFO:tensorflow:loss = 3.7297182, step = 10300 (50.581 sec)\n"
        "INFO:tensorflow:loss = 3.7297182, step = 10300 (50.594 sec)\n"
        "INFO:tensorflow:global_step/sec: 1.97598\n"
        "2019-05-19 15:08:13.128241: E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce"
        " with Unavailable: Socket closed\n"
        "2019-05-19 15:08:13.128323: W tensorflow/core/common_runtime/base_collective_executor.cc:203]"
        " BaseCollectiveExecutor::StartAbort Unavailable: Socket closed\n"
        "2019-05-19 15:08:13.128342: E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce"
        " with Unavailable: Socket closed",
        "network",
        True,
        "tf-ring-reduce-unavailable",
    ),
    # tensorflow/tensorflow issue 57760: ParameterServerStrategy workers lose the parameter server.
    (
        "https://github.com/tensorflow/tensorflow/issues/57760",
        "ERROR:tensorflow:/job:worker/task:2 encountered the following error when processing closure:"
        " UnavailableError():Graph execution error:\n"
        "\n"
        "Socket closed\n"
        "Additional GRPC error information from remote target /job:ps/replica:0/task:0/device:CPU:0:\n"
        ':{"created":"@1663638747.953042461","description":"Error received from peer ipv4:10.244.14.61:2222",'
        '"file":"external/com_github_grpc_grpc/src/core/lib/surface/call.cc","file_line":1056,'
        '"grpc_message":"Socket closed","grpc_status":14}\n'
        "ERROR:tensorflow:/job:worker/task:0 encountered",
        "network",
        True,
        "tf-coordinator-closure-unavailable",
    ),
    # tensorflow/tensorflow issue 23406: a TPUEstimator on Colab saves to a local /tmp path.
    (
        "https://github.com/tensorflow/tensorflow/issues/23406",
        "Error recorded from training_loop: File system scheme '[local]' not implemented (file:"
        " '/tmp/tmpu0amtet8/model.ckpt-0_temp_b2eedcafbb1e42d1949c6e0ec2f85501')\n"
        "\t [[node save/SaveV2 (defined at /usr/local/lib/python3.6/dist-packages/tensorflow/contrib/tpu/python/"
        'tpu/tpu_estimator.py:2403)  = SaveV2[dtypes=[DT_FLOAT, DT_INT64], _device="/job:worker/replica:0/task:0/'
        'device:CPU:0"](save/ShardedFilename, save/SaveV2/tensor_names, save/SaveV2/shape_and_slices)]]',
        "application",
        False,
        "tf-filesystem-scheme-unimplemented",
    ),
    # mozilla/translations issue 964: the GCP spot machine under a training task is reclaimed.
    (
        "https://github.com/mozilla/translations/issues/964",
        "Dec 17 16:03:58Z translations-1-b-linux-v100-gpu-4-1tb-vvppjagzspgzcf58mfvmzw-1 start-worker"
        " 2024/12/17 16:03:58 GCP Metadata Service says termination is imminent\n"
        "Dec 17 16:04:09Z translations-1-b-linux-v100-gpu-4-1tb-vvppjagzspgzcf58mfvmzw-1 systemd-logind"
        " Power key pressed.",
        "scheduler",
        True,
        "runner-taskcluster-spot-termination",
    ),
    # google-research/google-research issue 97: PyCharm's console ends the run with exit code -1.
    (
        "https://github.com/google-research/google-research/issues/97",
        "I1031 20:38:29.308702 140505617327872 train.py:123] Iter[29/150000], 27.3s/iter, Loss: 0.724\n"
        "I1031 20:38:56.431218 140505617327872 train.py:123] Iter[30/150000], 27.1s/iter, Loss: 0.744\n"
        "\n"
        "Process finished with exit code -1",
        "unknown",
        True,
        "launcher-child-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_tensorflow_distributed_failures(
    source: str, text: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_negative_console_code_is_no_signal() -> None:
    # A Windows crash code printed by PyCharm is not a signal number: the explanation must not
    # say the process died of a signal.
    found = diagnose("Process finished with exit code -1073741819 (0xC0000005)")
    assert found.symptom == "crash"
    assert "signal" not in found.explanation


HEALTHY = [
    # google-research/google-research issue 146: TPUEstimator's polling thread reports a healthy
    # TPU at warning level while the outfeed iterations go on.
    "I1124 07:10:36.469368 139978655139584 tpu_estimator.py:279] Outfeed finished for iteration (19, 182)\n"
    "WARNING:tensorflow:TPUPollingThread found TPU b'gorilla-alb-tpu' in state READY, and health HEALTHY.\n"
    "W1124 07:11:00.554763 139978646746880 preempted_hook.py:91] TPUPollingThread found TPU b'gorilla-alb-tpu'"
    " in state READY, and health HEALTHY.\n"
    "INFO:tensorflow:Outfeed finished for iteration (19, 216)\n"
    "I1124 07:11:38.161521 139978655139584 tpu_estimator.py:279] Outfeed finished for iteration (19, 216)",
    # tensorflow/tensorflow issue 37876: Keras warns of a slow callback and finishes its epochs.
    "Epoch 1/3\n"
    "   2/1688 [..............................] - ETA: 6:36 - loss: 2.2862 - accuracy: 0.1562WARNING:tensorflow:"
    "Callbacks method `on_train_batch_end` is slow compared to the batch time (batch time: 0.0027s vs"
    " `on_train_batch_end` time: 0.4677s). Check your callbacks.\n"
    "1688/1688 [==============================] - 5s 3ms/step - loss: 0.4661 - accuracy: 0.8339\n"
    "Epoch 3/3\n"
    "1688/1688 [==============================] - 4s 2ms/step - loss: 0.2734 - accuracy: 0.8991",
    # tensorflow/tensorflow issue 35100: a GeneratorDataset iterator finalized at interpreter exit
    # (the run had ended with exit code 0).
    "W tensorflow/core/kernels/data/generator_dataset_op.cc:108] Error occurred when finalizing GeneratorDataset"
    " iterator: FAILED_PRECONDITION: Python interpreter state is not initialized. The process may be terminated.\n"
    "\t [[{{node PyFunc}}]]",
    # tensorflow/models issue 2980: slim's host-memory allocation notice between training steps.
    "INFO:tensorflow:global step 41: loss = 36.0097 (19.789 sec/step)\n"
    "2020-02-07 17:09:38.256759: W tensorflow/core/framework/allocator.cc:124] Allocation of 1445222400"
    " exceeds 10% of system memory.\n"
    "INFO:tensorflow:global step 42: loss = 36.1353 (19.666 sec/step)",
    # A Keras input that ran out mid-epoch aborts the collective executor with End of sequence,
    # which the TensorFlow course notebooks call safe to ignore (the ring row reads UNAVAILABLE only).
    "2020-06-12 13:41:59.760226: W tensorflow/core/common_runtime/base_collective_executor.cc:216]"
    " BaseCollectiveExecutor::StartAbort Out of range: End of sequence\n"
    "\t [[{{node IteratorGetNext}}]]\n"
    "Epoch 2/50",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_tensorflow_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
