"""Whole excerpts of real logs from hosted notebooks and managed training services, each with
where it was printed: how Google Colab, Databricks, Vertex AI / AI Platform, Jupyter's server,
nbclient (papermill) and TensorFlow on a Colab Drive mount say a job or its kernel died; and the
alarming but harmless notices the same platforms print (Colab's GPU-not-used notice, JAX's CPU
fallback, tcmalloc's large-allocation report), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # PV-Lab/FTCP/issues/8: Colab: session crashed after using all available RAM.
    (
        "https://github.com/PV-Lab/FTCP/issues/8",
        "Your session crashed after using all available RAM. If you are interested in access to high-RAM runtimes, you may want to check out Colab Pro.",
        "out_of_memory",
        False,
        "colab-session-out-of-memory",
    ),
    # borisdayma/dalle-mini/issues/207: Colab Pro: session crashed after using all available RAM while replicating params.
    (
        "https://github.com/borisdayma/dalle-mini/issues/207",
        "params = replicate(params)\n"
        "vqgan_params = replicate(vqgan_params)\n"
        "Your session crashed after using all available RAM. As a Colab Pro user, you have higher memory than non-subscribed users..",
        "out_of_memory",
        False,
        "colab-session-out-of-memory",
    ),
    # googlecolab/colabtools/issues/513: Colab runtime log: kernel restarted right after tcmalloc large allocations.
    (
        "https://github.com/googlecolab/colabtools/issues/513",
        "Timestamp | Level | Message\n"
        "-- | -- | --\n"
        'May 4, 2020, 5:02:36 PM | WARNING | warn("IPython.utils.traitlets has moved to a top-level traitlets package.")\n'
        "May 4, 2020, 5:02:36 PM | WARNING | /usr/local/lib/python3.6/dist-packages/IPython/utils/traitlets.py:5:  UserWarning: IPython.utils.traitlets has moved to a top-level traitlets  package.\n"
        "May 4, 2020, 5:02:35 PM | WARNING | WARNING:root:kernel 4222e7b2-aca5-4c53-972e-ea8892e41d74 restarted\n"
        "May 4, 2020, 5:02:29 PM | WARNING | tcmalloc:  large alloc 2400002048 bytes == 0x99a00000 @  0x7fb5f9f8c1e7  0x7fb5f15505e1 0x7fb5f15b3138 0x7fb5f15b33f7 0x7fb5f164b3e8 0x50ac25  0x50c5b9 0x508245 0x50a080 0x50aa7d 0x50d390 0x508245 0x50a080 0x50aa7d  0x50d390 0x508245 0x50a080 0x50aa7d 0x50d390 0x508245 0x509642 0x595311  0x5a067e 0x50d966 0x508245 0x50a080 0x50aa7d 0x50c5b9 0x508245 0x50a080  0x50aa7d\n"
        "May 4, 2020, 5:02:29 PM | WARNING | tcmalloc:  large alloc 2400002048 bytes == 0xa92e000 @  0x7fb5f9f8c1e7  0x7fb5f15505e1 0x7fb5f15b3138 0x7fb5f15b33f7 0x7fb5f164b3e8 0x50ac25  0x50d390 0x508245 0x50a080 0x50aa7d 0x50d390 0x508245 0x50a080 0x50aa7d  0x50d390 0x508245 0x509642 0x595311 0x5a067e 0x50d966 0x508245 0x50a080  0x50aa7d 0x50c5b9 0x508245 0x50a080 0x50aa7d 0x5",
        "unknown",
        True,
        "jupyter-kernel-died",
    ),
    # googlecolab/colabtools/issues/2538: Colab console: 'Your session crashed. Automatically restarting.' (runtime restarted).
    (
        "https://github.com/googlecolab/colabtools/issues/2538",
        "XHRPOSThttps://colab.research.google.com/tun/m/assign?authuser=0&shape=hm&be=0&nbh=x4-L1DNbvJuuJsgNZYrisJf0GfiCqpQNOdDFZ4xIRDw.\n"
        "[HTTP/3 503 Service Unavailable 189ms]\n"
        "\n"
        "Connected to https://colab.research.google.com/tun/m/m-s-1jbt90j79ou03 external_polymer_binary.js:5359:1066\n"
        "Mounting Google Drive... external_polymer_binary.js:1928:55\n"
        "...\n"
        "Your session crashed. Automatically restarting. external_polymer_binary.js:1928:55\n"
        "Ignoring benign restart error: CustomError: Runtime restarted at: \n"
        " O7@https://colab.research.google.com/v2/external/external_polymer_binary.js?vrz=colab-20211230-060054-RC00_418938256:5001:279\n"
        "k.execute@https://colab.research.google.com/v2/external/external_polymer_binary.js?vrz=colab-20211230-060054-RC00_418938256:4992:62\n"
        "g8.prototype.execute@https://colab.research.google.com/v2/external/external_polymer_binary.js?vrz=colab-20211230-060054-RC00_418938256:5071:146",
        "unknown",
        True,
        "colab-session-crashed",
    ),
    # Vaibhavs10/insanely-fast-whisper/issues/257: Databricks: Python kernel unresponsive, the Python process exited with code 134 (SIGABRT).
    (
        "https://github.com/Vaibhavs10/insanely-fast-whisper/issues/257",
        "Fatal error: The Python kernel is unresponsive.\n"
        '---------------------------------------------------------------------------The Python process exited with exit code 134 (SIGABRT: Aborted).The last 10 KB of the process\'s stderr and stdout can be found below. See driver logs for full logs.---------------------------------------------------------------------------Last messages on stderr:, line 3079 in _run_cell  File "/databricks/python/lib/python3.11/site-packages/IPython/core/interactiveshell.py", line 3024 in run_cell  File "/databricks/python/lib/python3.11/site-packages/ipykernel/zmqshell.py", line 546 in run_cell  File "/databricks/python/lib/python3.11/site-packages/ipykernel/ipkernel.py", line 422 in do_execute  File "/databricks/python_shell/dbruntime/DatabricksShell.py", line 182 in do_execute  File "/databricks/python/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 740 in execute_request  File "/databricks/python/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 412 in dispatch_shell  File "/databricks/p\n'
        'ython/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 505 in process_one  File "/databricks/python/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 516 in dispatch_queue  File "/usr/lib/python3.11/asyncio/events.py", line 80 in _run  File "/usr',
        "unknown",
        True,
        "databricks-python-kernel-unresponsive",
    ),
    # pymssql/pymssql/issues/950: Databricks: 'Fatal error: The Python kernel is unresponsive.'.
    (
        "https://github.com/pymssql/pymssql/issues/950",
        "Fatal error: The Python kernel is unresponsive.",
        "unknown",
        True,
        "databricks-python-kernel-unresponsive",
    ),
    # tensorflow/models/issues/5591: Cloud ML Engine: replica master 0 ran out-of-memory, exit status 9 (SIGKILL).
    (
        "https://github.com/tensorflow/models/issues/5591",
        "The replica master 0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL)",
        "out_of_memory",
        False,
        "vertex-replica-out-of-memory",
    ),
    # tensorflow/models/issues/9352: AI Platform training: replica master 0 ran out-of-memory and exited with status 9.
    (
        "https://github.com/tensorflow/models/issues/9352",
        "executed command:\n"
        "gcloud ai-platform jobs submit training OD_ssd_fpn_large \\\n"
        "--job-dir=gs://${MODEL_DIR} \\\n"
        "--package-path ./object_detection \\\n"
        "The replica master 0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL)",
        "out_of_memory",
        False,
        "vertex-replica-out-of-memory",
    ),
    # GoogleCloudPlatform/vertex-ai-samples/pull/321: papermill: kernel died while waiting for execute reply in cell 68.
    (
        "https://github.com/GoogleCloudPlatform/vertex-ai-samples/pull/321",
        "INFO:papermill:Executing Cell 66--------------------------------------\n"
        "INFO:papermill:(4453834, 11) (1908786, 11)\n"
        "\n"
        "(4453834, 11) (1908786, 11)\n"
        "INFO:papermill:Ending Cell 66-----------------------------------------\n"
        "INFO:papermill:Executing Cell 67--------------------------------------\n"
        "INFO:papermill:Ending Cell 67-----------------------------------------\n"
        "INFO:papermill:Executing Cell 68--------------------------------------\n"
        "ERROR:papermill:Kernel died while waiting for execute reply.\n"
        "INFO:papermill:Ending Cell 68-----------------------------------------",
        "unknown",
        True,
        "nbclient-dead-kernel",
    ),
    # Azure/MachineLearningNotebooks/issues/1160: Azure ML's run script wrapper reports the script's exit code 250.
    (
        "https://github.com/Azure/MachineLearningNotebooks/issues/1160",
        "Failed to run ['python', 'azureml-setup/run_script.py', 'python', 'azureml-setup/context_manager_injector.py',"
        " '-i', 'ProjectPythonPath:context_managers.ProjectPythonPath', '-i', 'RunHistory:context_managers.RunHistory',"
        " '-i', 'TrackUserError:context_managers.TrackUserError', 'code/train/train_and_evaluate.py', '--remote_train',"
        " 'true'] \\n Exit code 250 \\nDetails can be found in azureml-logs/60_control_log.txt log file.",
        "unknown",
        True,
        "azureml-user-process-exited",
    ),
    # scikit-hep/pyhf/issues/1840: nbclient: cell execution ended with DeadKernelError('Kernel died').
    (
        "https://github.com/scikit-hep/pyhf/issues/1840",
        "        loop       = <_UnixSelectorEventLoop running=False closed=False debug=False>\n"
        "../../../.pyenv/versions/3.9.6/lib/python3.9/asyncio/base_events.py:642: in run_until_complete\n"
        "    return future.result()\n"
        "        future     = <Task finished name='Task-19' coro=<NotebookClient.async_execute_cell() done, defined at /home/user/.pyenv/versions/pyhf-dev-CPU/lib/python3.9/site-packages/nbclient/client.py:864> exception=DeadKernelError('Kernel died')>\n"
        "        new_task   = True\n"
        "        self       = <_UnixSelectorEventLoop running=False closed=False debug=False>",
        "unknown",
        True,
        "nbclient-dead-kernel",
    ),
    # matterport/Mask_RCNN/issues/1042: Paperspace notebook: the kernel appears to have died.
    (
        "https://github.com/matterport/Mask_RCNN/issues/1042",
        "The kernel appears to have died. It will restart automatically",
        "unknown",
        True,
        "jupyter-kernel-died",
    ),
    # microsoft/AzureNotebooks/issues/391: Azure Notebooks: the kernel appears to have died.
    (
        "https://github.com/microsoft/AzureNotebooks/issues/391",
        "The kernel appears to have died. It will restart automatically.",
        "unknown",
        True,
        "jupyter-kernel-died",
    ),
    # googlecolab/colabtools/issues/1718: Colab runtime log: KernelRestarter restarting kernel after a 12 GB tcmalloc allocation.
    (
        "https://github.com/googlecolab/colabtools/issues/1718",
        "Nov 16, 2020, 10:20:09 PM | INFO | KernelRestarter: restarting kernel (1/5), keep random ports\n"
        "-- | -- | --\n"
        "Nov 16, 2020, 10:20:04 PM | WARNING | tcmalloc: large alloc 12884901888 bytes == 0x7f8880000000 @ 0x7f94b4551001 0x7f94aba49765 0x7f94abaadbb0 0x7f94abaafa4f 0x7f94abb46048 0x50a4a5 0x50cc96 0x507be4 0x509900 0x50a2fd 0x50beb4 0x507be4 0x509900 0x50a2fd 0x50cc96 0x507be4 0x588e5c 0x59fd0e 0x50d256 0x5095c8 0x50a2fd 0x50beb4 0x5095c8 0x50a2fd 0x50beb4 0x507be4 0x588e5c 0x59fd0e 0x50d256 0x507be4 0x509900",
        "unknown",
        True,
        "jupyter-kernel-died",
    ),
    # mrdbourke/m1-machine-learning-test/issues/17: JupyterLab: kernel appears to have died, AsyncIOLoopKernelRestarter restarting kernel.
    (
        "https://github.com/mrdbourke/m1-machine-learning-test/issues/17",
        "Kernel Restarting\n"
        "The kernel for Untitled.ipynb appears to have died. It will restart automatically.\n"
        "\n"
        "[D 2023-08-25 17:12:14.399 ServerApp] Accepting token-authenticated request from ::1\n"
        "[D 2023-08-25 17:12:14.401 ServerApp] 200 GET /api/contents/Untitled.ipynb/checkpoints?1692979934395 (dc9f29f487ed46a38796cc35484a0c0a@::1) 2.97ms\n"
        "[I 2023-08-25 17:12:15.769 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random ports\n"
        "[W 2023-08-25 17:12:15.769 ServerApp] kernel e2dcf2e8-1352-4305-957d-eedf1d33904a restarted\n"
        "[D 2023-08-25 17:12:15.778 ServerApp] Websocket closed e2dcf2e8-1352-4305-957d-eedf1d33904a:b37bd840-f8d0-43f7-97f3-b6701599982d\n"
        "[I 2023-08-25 17:12:15.779 ServerApp] Starting buffering for e2dcf2e8-1352-4305-957d-eedf1d33904a:b37bd840-f8d0-43f7-97f3-b6701599982d\n"
        "[D 2023-08-25 17:12:15.779 ServerApp] Clearing buffer for e2dcf2e8-1352-4305-957d-eedf1d33904a\n"
        "[D 2023-08-25 17:12:15.782 ServerApp] Starting kernel: ['/Users/x/.pyenv/versions/3.8.12/bin/python3.8', '-m', 'ipykernel_launcher', '-f', '/Users/x/Library/Jupyter/runtime/kernel-e2dcf2e8-1352-4305-957d-eedf1d33904a.json']\n"
        "[D 2023-08-25 17:12:15.839 ServerApp] Connecting to: tcp://127.0.0.1:56889",
        "unknown",
        True,
        "jupyter-kernel-died",
    ),
    # ultralytics/ultralytics/issues/3414: Colab: writing to the Drive mount failed, Transport endpoint is not connected.
    (
        "https://github.com/ultralytics/ultralytics/issues/3414",
        "tensorflow.python.framework.errors_impl.FailedPreconditionError: runs/detect/train2/events.out.tfevents.1687850605.59944f8c394b.34155.0; Transport endpoint is not connected\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'
        "    self.run()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/tensorboard/summary/writer/event_file_writer.py", line 244, in run\n'
        "    self._run()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/tensorboard/summary/writer/event_file_writer.py", line 289, in _run\n'
        "    self._record_writer.flush()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/tensorboard/summary/writer/record_writer.py", line 43, in flush\n'
        "    self._writer.flush()",
        "system_software",
        True,
        "uncaught-exception",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_hosted_platform_ends(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.category, found.retryable) == (category, retryable), source
    assert found.evidence[0].signature.endswith(signature), source


HEALTHY = [
    # googlecolab/colabtools/issues/1829: Colab notice: connected to a GPU runtime but not utilizing the GPU.
    "Warning: you are connected to a GPU runtime, but not utilizing the GPU.",
    # huggingface/optimum-benchmark/issues/67: progress lines of an embedding job on Colab; the GPU-not-used notice is harmless.
    "Cases uploaded: 7622\n"
    "Uploading 126473\n"
    "Embedding time: 5.838446617126465\n"
    "{'upserted_count': 14}\n"
    "Upload time: 1.2239892482757568\n"
    "Cases uploaded: 7623\n"
    "Uploading 126491\n"
    "Embedding time: 6.212247133255005\n"
    "{'upserted_count': 18}",
    # CDCgov/cfa-variant-forecasting-2026/issues/20: JAX notice: CUDA-enabled jaxlib not installed, falling back to CPU.
    "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
    # huggingface/transformers/issues/27294: tcmalloc large alloc warning while training on a TPU VM; training goes on (slowly).
    "cmalloc: large alloc 13261799424 bytes == 0x53d90000 @  0x7efe22acb680 0x7efe22aec824 0x7efe22aecb8a 0x7efd7854d2dc 0x7efd7343b7e5 0x7efd734462b0 0x7efd734521f7 0x7efd75b16a37 0x7efd733dc26a 0x7efd733dd56e 0x7efd730a3e04 0x7efd73077cbf 0x5f6939 0x5f7506 0x50b8d3 0x570556 0x5697da 0x5f6ec3 0x5f60b2 0x56ccfc 0x5697da 0x5f6ec3 0x59d21e 0x5f62ae 0x56ccfc 0x5697da 0x5f6ec3 0x5f60b2 0x56ccfc 0x5697da 0x5f6ec3",
    # google-deepmind/tapnet/issues/37: JAX notice: no GPU/TPU found, falling back to CPU.
    "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    # cloud-annotations/cloud-annotations/issues/223: TensorFlow GPU init info lines on Colab.
    "2020-09-14 07:25:04.932330: I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:983] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero\n"
    "2020-09-14 07:25:04.933168: I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:983] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero\n"
    "2020-09-14 07:25:04.933900: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1767] Adding visible gpu devices: 0\n"
    "2020-09-14 07:25:04.939392: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcudart.so.10.1\n"
    "2020-09-14 07:25:04.941279: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1180] Device interconnect StreamExecutor with strength 1 edge matrix:\n"
    "2020-09-14 07:25:04.941317: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1186]      0 \n"
    "2020-09-14 07:25:04.941334: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1199] 0:   N \n"
    "2020-09-14 07:25:04.942701: I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:983] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_hosted_platform_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
