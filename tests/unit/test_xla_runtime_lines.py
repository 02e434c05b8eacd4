"""Whole excerpts of real logs from the JAX, XLA and TensorFlow stack and the systems under it:
the statuses XLA and TensorFlow carry up from what they call (the GCS client's HTTP status after its
retries, a CUDA driver error in the GPU linker, ptxas failing under the autotuner, the TPU driver's
gRPC Open status, a fatal glog line run into a progress bar), each with where it was printed; and
the alarming but harmless lines the same stack prints at start-up and while it works (slow-operation
alarms, XLA's failed cuInit on a host without a GPU, duplicate plugin registrations, the CPU
fallback, libtpu's notices, Orbax's save notices), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # google-research/text-to-text-transfer-transformer issue 280: TensorFlow's GCS client gives up on a checkpoint
    # upload after its retries with HTTP 503 (the service, not the job).
    (
        "https://github.com/google-research/text-to-text-transfer-transformer/issues/280",
        "I0626 06:03:25.061087 139703188657984 basic_session_run_hooks.py:614] Calling checkpoint listeners before saving checkpoint 8300...\n"
        "INFO:tensorflow:Before Save.\n"
        "I0626 06:03:25.061593 139703188657984 ops.py:5742] Before Save.\n"
        "INFO:tensorflow:About to write a checkpoint\n"
        "I0626 06:03:29.075753 139703188657984 ops.py:5744] About to write a checkpoint\n"
        "INFO:tensorflow:Saving checkpoints for 8300 into gs://xxxxxxxx/11b/model.ckpt.\n"
        "I0626 06:03:29.076128 139703188657984 basic_session_run_hooks.py:618] Saving checkpoints for 8300 into gs://bucket/t5/models/un\n"
        "iref100/11b/model.ckpt.\n"
        "INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker or parameter server. The current session will be c\n"
        "losed and a new session will be created. This error may also occur due to a gRPC failure caused by high memory or network bandwidth usage in\n"
        "the parameter servers. If this error occurs repeatedly, try increasing the number of parameter servers assigned to the job. Error: From /job:\n"
        "worker/replica:0/task:15:\n"
        "All 10 retry attempts failed. The last failure: Unavailable: Error executing an HTTP request: HTTP response code 503",
        "network",
        True,
        "http-status-503",
    ),
    # google-research/text-to-text-transfer-transformer issue 1003: the same client's 403 while restoring: the
    # TPU's service account lacks access, a setting to fix.
    (
        "https://github.com/google-research/text-to-text-transfer-transformer/issues/1003",
        "InvalidArgumentError: Restoring from checkpoint failed. This is most likely due to a mismatch between the current graph and the graph from the checkpoint. Please ensure that you have not altered the graph expected based on the checkpoint. Original error:\n"
        "\n"
        "From /job:worker/replica:0/task:0:\n"
        "Unsuccessful TensorSliceReader constructor: Failed to get matching files on gs://test_model/model.ckpt-524288: Permission denied: Error executing an HTTP request: HTTP response code 403 with body '{\n"
        '  "error": {\n'
        '    "code": 403,\n'
        '    "message": "service-account does not have storage.objects.list access to the Google Cloud Storage bucket.",\n'
        '    "errors": [\n'
        "      {\n"
        '        "message": "service-account does not have storage.objects.list access to the Google Cloud Storage bucket.",\n'
        '        "domain": "global",\n'
        '        "reason": "forbidden"\n'
        "      }\n"
        "    ]\n"
        "  }\n"
        "}\n"
        "'",
        "application",
        False,
        "http-status-403",
    ),
    # google/flax issue 1731: XLA's GPU linker gets CUDA_ERROR_INVALID_IMAGE from the driver (stream executor's
    # UNKNOWN status of cuGetErrorString's text, the failed call on the next row).
    (
        "https://github.com/google/flax/issues/1731",
        "/usr/bin/python3 -u /workdisk/jax/FlaxExamples/flax/examples/imagenet/models_test.py\n"
        "Running tests under Python 3.8.10: /usr/bin/python3\n"
        "[ RUN      ] ResNetV1Test.test_resnet_v1_model\n"
        "I1216 13:56:24.360462 140268445701952 xla_bridge.py:243] Unable to initialize backend 'tpu_driver': NOT_FOUND: Unable to find driver in registry given worker: \n"
        "I1216 13:56:25.496197 140268445701952 xla_bridge.py:243] Unable to initialize backend 'tpu': INVALID_ARGUMENT: TpuPlatform is not available.\n"
        "2021-12-16 13:56:25.729863: E external/org_tensorflow/tensorflow/compiler/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:419] ********************************************************************************\n"
        "RuntimeError: UNKNOWN: device kernel image is invalid\n"
        "in external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_asm_compiler.cc(69): 'cuLinkComplete(link_state, &cubin_out, &cubin_size)'",
        "system_software",
        True,
        "cuda-invalid-kernel-image",
    ),
    # google-deepmind/mujoco_playground issue 113: XLA's GEMM autotuner aborts because ptxas crashed (exit 139);
    # the F line's status is on the next row.
    (
        "https://github.com/google-deepmind/mujoco_playground/issues/113",
        "(rl_mujoco_playground) user@host:~/Documents/code/mujoco_playground_ws/mujoco_playground/learning$ python train_jax_ppo.py --env_name=CartpoleBalance\n"
        "Environment Config:\n"
        "action_repeat: 1\n"
        "ctrl_dt: 0.01\n"
        "episode_length: 1000\n"
        "sim_dt: 0.01\n"
        "vision: false\n"
        "PPO Training Parameters:\n"
        "action_repeat: 1\n"
        "batch_size: 1024\n"
        "discounting: 0.995\n"
        "entropy_cost: 0.01\n"
        "episode_length: 1000\n"
        "learning_rate: 0.001\n"
        "normalize_observations: true\n"
        "num_envs: 2048\n"
        "num_evals: 10\n"
        "num_minibatches: 32\n"
        "num_timesteps: 60000000\n"
        "num_updates_per_batch: 16\n"
        "reward_scaling: 10.0\n"
        "unroll_length: 30\n"
        "Experiment name: CartpoleBalance-20250423-203518\n"
        "Logs are being stored in: /home/user/Documents/code/mujoco_playground_ws/mujoco_playground/learning/logs/CartpoleBalance-20250423-203518\n"
        "No checkpoint path provided, not restoring from checkpoint\n"
        "Checkpoint path: /home/user/Documents/code/mujoco_playground_ws/mujoco_playground/learning/logs/CartpoleBalance-20250423-203518/checkpoints\n"
        "0: reward=317.351\n"
        "2025-04-23 20:35:34.618070: F external/xla/xla/service/gpu/autotuning/gemm_fusion_autotuner.cc:1099] Non-OK-status: executable.status()\n"
        "Status: INTERNAL: ptxas exited with non-zero error code 139, output:",
        "system_software",
        True,
        "xla-ptxas-failed",
    ),
    # huggingface/accelerate issue 471: TensorFlow's F line runs into the progress bar on one row.
    (
        "https://github.com/huggingface/accelerate/issues/471",
        '2022-06-24 18:10:20.468975: E tensorflow/core/framework/op_kernel.cc:1693] OpKernel (\'op: "TpuHandleToProtoKey" device_type: "CPU"\') for unknown op: TpuHandleToProtoKey\n'
        '2022-06-24 18:10:20.474551: E tensorflow/core/framework/op_kernel.cc:1693] OpKernel (\'op: "TPURoundRobin" device_type: "CPU"\') for unknown op: TPURoundRobin\n'
        '2022-06-24 18:10:20.474636: E tensorflow/core/framework/op_kernel.cc:1693] OpKernel (\'op: "TpuHandleToProtoKey" device_type: "CPU"\') for unknown op: TpuHandleToProtoKey\n'
        '2022-06-24 18:10:20.509402: E tensorflow/core/framework/op_kernel.cc:1693] OpKernel (\'op: "TPURoundRobin" device_type: "CPU"\') for unknown op: TPURoundRobin\n'
        '2022-06-24 18:10:20.509462: E tensorflow/core/framework/op_kernel.cc:1693] OpKernel (\'op: "TpuHandleToProtoKey" device_type: "CPU"\') for unknown op: TpuHandleToProtoKey\n'
        "  1%|█▏                                                                                                                                    | 1/111 [00:06<12:12,  6.66s/it]2022-06-24 18:11:19.419635: F tensorflow/core/tpu/kernels/tpu_program_group.cc:86] Check failed: xla_tpu_programs.size() > 0 (0 vs. 0)\n"
        "https://symbolize.stripped_domain/r/?trace=7f147ec0c18b,7f147ec0c20f,7f13cd4ff64f,7f13c833ec97,7f13c8333b01,7f13c835429e,7f13c8353e0b,7f13c4f6793d,7f13c98422a8,7f13ccff5580,7f13ccff7943,7f13cd4d0f71,",
        "unknown",
        True,
        "glog-check-failed",
    ),
    # googlecolab/colabtools issue 3513: JAX's TPU driver logs its gRPC Open status (4, DEADLINE_EXCEEDED) before
    # the backend request fails; the stored copy ends inside the traceback.
    (
        "https://github.com/googlecolab/colabtools/issues/3513",
        "2023-03-17 19:08:36.468458: E external/org_tensorflow/tensorflow/compiler/xla/python/tpu_driver/grpc_tpu_driver.cc:1070] Failed to open the gRPC driver: 4: Deadline Exceeded: \n"
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        "Traceback (most recent call last):\n"
        '  File "/content/KoboldAI-Client/aiserver.py", line 10284, in <module>\n'
        "    load_model(initial_load=True)\n"
        '  File "/content/KoboldAI-Client/aiserver.py", line 2807, in load_model\n'
        '    tpu_mtj_backend.load_model(vars.custmodpth, hf_checkpoint=vars.model not in ("TPUMeshTransformerGPTJ", "TPUMeshTransformerGPTNeoX") and vars.use_colab_tpu, **vars.modelconfig)\n'
        '  File "/content/KoboldAI-Client/tpu_mtj_backend.py", line 1194, in load_model\n'
        "    devices = np.array(jax.devices()[:cores_per_replica]).reshape(mesh_shape)\n"
        '  File "/usr/local/lib/python3.9/dist-packages/jax/_src/lib/xla_bridge.py", line 314, in devices\n'
        "    return get_backend(backend).devices()\n"
        '  File "/usr/local/lib/python3.9/dist-packages/jax/_src/lib/xla_bridge.py", line 258, in get_backend\n'
        "    return _get_backend_uncached(platform)\n"
        '  File "/usr/local/lib/python3.9/dist-packages/jax/_src/lib/xla_bridge.py", line 248, in _get_backend_uncached',
        "network",
        True,
        "tpu-driver-connect-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_stack_failures_read_as_their_cause(
    source: str, text: str, category: str, retryable: bool, signature: str
) -> None:
    assert verdict(text) == (signature, category, retryable), source


HEALTHY = [
    # google-deepmind/dm-haiku pull 540: XLA's slow-operation alarm while constant folding; compilation goes on.
    (
        "Wall time [Initialisation]: 0.119s\n"
        "2022-10-12 16:01:47.590034: E external/org_tensorflow/tensorflow/compiler/xla/service/slow_operation_alarm.cc:65] Constant folding an instruction is taking > 1s:\n"
        "\n"
        "  reduce-window.16 (displaying the full instruction incurs a runtime overhead. Raise your logging level to 4 or above).\n"
        "\n"
        "This isn't necessarily a bug; constant-folding is inherently a trade-off between compilation time and speed at runtime.  XLA has some guards that attempt to keep constant folding from taking too long, but fundamentally you'll always be able to come up with an input program that takes a long time.\n"
        "\n"
        "If you'd like to file a bug, run with envvar XLA_FLAGS=--xla_dump_to=/tmp/foo and attach the results.\n"
        "2022-10-12 16:02:05.867327: E external/org_tensorflow/tensorflow/compiler/xla/service/slow_operation_alarm.cc:133] The operation took 19.277362298s"
    ),
    # voicepaw/so-vits-svc-fork issue 1017: TensorFlow's duplicate plugin registrations and a TF-TRT warning.
    (
        "Reusing TensorBoard on port 6006 (pid 7397), started 0:07:57 ago. (Use '!kill 7397' to kill it.)\n"
        "2023-11-10 16:22:14.699866: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
        "2023-11-10 16:22:14.699924: E tensorflow/compiler/xla/stream_executor/cuda/cuda_fft.cc:609] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered\n"
        "2023-11-10 16:22:14.699952: E tensorflow/compiler/xla/stream_executor/cuda/cuda_blas.cc:1518] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered\n"
        "2023-11-10 16:22:16.048258: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT"
    ),
    # matthias-wright/flaxmodels issue 11: JAX falls back to the CPU and creates its CPU client.
    (
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        "2021-10-08 16:05:10.421297: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic library libcudart.so.11.0\n"
        "2021-10-08 16:05:12.352286: I external/org_tensorflow/tensorflow/compiler/xla/service/service.cc:171] XLA service 0x55a8d14dddc0 initialized for platform Interpreter (this does not guarantee that XLA will be used). Devices:\n"
        "2021-10-08 16:05:12.352348: I external/org_tensorflow/tensorflow/compiler/xla/service/service.cc:179]   StreamExecutor device (0): Interpreter, <undefined>\n"
        "2021-10-08 16:05:12.358082: I external/org_tensorflow/tensorflow/compiler/xla/pjrt/tfrt_cpu_pjrt_client.cc:163] TfrtCpuClient created."
    ),
    # grpc/grpc issue 38703: libtpu's start-up notices on a v5e host.
    (
        "(pid=) I1114 09:32:22.280168 13509 tpu_hal.cc:448] Registered plugin from module: sdc_checker_callback\n"
        "(pid=) I1114 09:32:22.280190 13509 tpu_hal.cc:448] Registered plugin from module: xsc_explicit_checksum_tracing_callback\n"
        "(pid=) I1114 09:32:22.280250 13509 mlock.cc:219] mlock()-ed 4096 bytes for BuildID, using 1 syscalls.\n"
        "(pid=) I1114 09:32:22.280321 13509 gce_instance_metadata_snapshot.cc:31] Skipping MDS query due to 1\n"
        "(pid=) I1114 09:32:22.293415 13509 singleton_tpu_states_manager.cc:73] TPU premapped buffer enabled. Size: 4294967296 Threshold: 4294967296\n"
        "(pid=) I1114 09:32:22.293422 13509 singleton_tpu_states_manager.cc:96] TpuStatesManager::GetOrCreate(): no tpu system exists. Creating a new tpu system.\n"
        "(pid=) I1114 09:32:22.298350 13509 device_util.cc:124] Found 8 TPU v5 lite chips.\n"
        "(pid=) I1114 09:32:22.298360 13509 device_util.cc:126] After filtering devices, we have 1 chip(s) available.\n"
        "(pid=) I1114 09:32:22.298365 13509 tpu_version_flag.cc:54] Using auto-detected TPU version TPU v5 lite\n"
        "(pid=) I1114 09:32:22.303000 13509 device_util.cc:124] Found 8 TPU v5 lite chips.\n"
        "(pid=) I1114 09:32:22.303005 13509 device_util.cc:126] After filtering devices, we have 1 chip(s) available."
    ),
    # tensorflow/tpu issue 821: Keras fit on a Colab TPU runs its ten epochs.
    (
        "Epoch 1/10\n"
        "5/5 [==============================] - 2s 448ms/step - loss: 13.7076 - accuracy: 0.0000e+00\n"
        "Epoch 2/10\n"
        "5/5 [==============================] - 0s 10ms/step - loss: 13.7256 - accuracy: 0.0000e+00\n"
        "Epoch 3/10\n"
        "5/5 [==============================] - 0s 9ms/step - loss: 13.8872 - accuracy: 0.0000e+00\n"
        "Epoch 4/10\n"
        "5/5 [==============================] - 0s 9ms/step - loss: 14.1986 - accuracy: 0.0000e+00\n"
        "Epoch 5/10\n"
        "5/5 [==============================] - 0s 9ms/step - loss: 14.5464 - accuracy: 0.0000e+00\n"
        "Epoch 6/10\n"
        "5/5 [==============================] - 0s 8ms/step - loss: 14.8935 - accuracy: 0.0000e+00\n"
        "Epoch 7/10\n"
        "5/5 [==============================] - 0s 9ms/step - loss: 15.2337 - accuracy: 0.0000e+00\n"
        "Epoch 8/10\n"
        "5/5 [==============================] - 0s 9ms/step - loss: 15.5591 - accuracy: 0.0000e+00\n"
        "Epoch 9/10\n"
        "5/5 [==============================] - 0s 8ms/step - loss: 15.9003 - accuracy: 0.0000e+00\n"
        "Epoch 10/10\n"
        "5/5 [==============================] - 0s 10ms/step - loss: 16.2539 - accuracy: 0.0000e+00\n"
        "<tensorflow.python.keras.callbacks.History at 0x7f78b8ad6ac8>"
    ),
    # Physical-Intelligence/openpi issue 425: Orbax starts an async checkpoint save on one process.
    (
        "20:15:38.288 [I] [process=0] Started async saving checkpoint to /media/disk/pi0_robocasa_panda/PnPCounterToCabTest/ckpts/pi0_robocasaPanda_test_lora/my_experiment_0408_robocasa/140. (2406527:async_checkpointer.py:358)\n"
        "20:15:38.289 [I] [process=0][thread=MainThread] Skipping global process sync, barrier name: create_tmp_directory:pre (2406527:multihost.py:293)\n"
        "20:15:38.290 [I] Creating tmp directory /media/disk/pi0_robocasa_panda/PnPCounterToCabTest/ckpts/pi0_robocasaPanda_test_lora/my_experiment_0408_robocasa/140.orbax-checkpoint-tmp-16 (2406527:atomicity.py:144)\n"
        "20:15:38.291 [I] [process=0][thread=MainThread] Skipping global process sync, barrier name: create_tmp_directory:post (2406527:multihost.py:293)\n"
        "20:15:38.292 [I] [process=0][thread=MainThread] Skipping global process sync, barrier name: create_tmp_directory:pre (2406527:multihost.py:293)\n"
        "20:15:38.293 [I] Creating tmp directory /media/disk/pi0_robocasa_panda/PnPCounterToCabTest/ckpts/pi0_robocasaPanda_test_lora/my_experiment_0408_robocasa/140.orbax-checkpoint-tmp-16/assets.orbax-checkpoint-tmp-17 (2406527:atomicity.py:144)"
    ),
    # ecnal-cienet.github.io MaxView (a MaxText test run on a TPU v6e slice): XLA's CUDA plugin
    # cannot start CUDA on the TPU host, then JAX's distributed system starts and the run goes on.
    (
        "XPK Start: Sat Apr 18 18:20:34 UTC 2026\n"
        "PyTorch was not found. Models won't be available and only tokenizers, configuration and file/data utilities can be used.\n"
        "2026-04-18 18:20:58.747697: E external/local_xla/xla/stream_executor/cuda/cuda_platform.cc:51] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n"
        "I0418 18:20:59.279374 138120810325824 max_utils.py:273] Attempting to initialize the jax distributed system...\n"
        "I0418 18:21:08.318775 138120810325824 distributed.py:149] Starting JAX distributed service on [::]:8482\n"
        "I0418 18:21:08.321148 138120810325824 distributed.py:172] Connecting to JAX distributed service on mt-06-grad-accum-0jggr-slice-job-0-0.mt-06-grad-accum-0jggr:8482\n"
        "I0418 18:21:09.061537 138120810325824 max_utils.py:284] Jax distributed system initialized!\n"
        "I0418 18:21:15.305518 138120810325824 max_utils.py:800] System Information: Jax Version: 0.9.2\n"
        "I0418 18:21:15.305618 138120810325824 max_utils.py:801] System Information: Jaxlib Version: 0.9.2\n"
        "I0418 18:21:15.305668 138120810325824 max_utils.py:802] System Information: Jax Backend: PJRT C API\n"
        "TFRT TPU v6 lite\n"
        "Built on Mar 4 2026 11:32:08 (1772652728) cl/878335365\n"
        "I0418 18:21:15.305708 138120810325824 train_utils.py:348] WARNING: Sequence packing is essentially ignored for synthetic data. Please use a real dataset to use sequence packing."
    ),
]


@pytest.mark.parametrize("text", HEALTHY)
def test_stack_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
