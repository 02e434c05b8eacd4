"""Whole excerpts of real logs from the tools that wrap and relaunch training jobs, whose logs quote
the job's end: workflow engines and job agents (ClearML, Flyte, Metaflow, ZenML, Dask's nanny,
SkyPilot's spot controller), Slurm's accounting table, and process pools that ship work to other
processes (joblib/loky, pickling for a cluster submission). Each failure is given with where it was
printed and the signature, category and retryable it must get; the alarming but harmless lines the
same tools print (a retried step, a completed task with a warning, a zero exit status) must stay
healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # flyteorg/flyte issue 2376: Flyte's pod message, exit 137 with reason Error (not OOMKilled).
    (
        "https://github.com/flyteorg/flyte/issues/2376",
        "[1/1] currentAttempt done. Last Error: USER::Pod failed. No message received from kubernetes.\n"
        "[f8107735c673549d7acd-n0-0] terminated with exit code (137). Reason [Error]. Message: \n"
        ".",
        "unknown",
        True,
        "runner-flyte-container-terminated",
    ),
    # zenml-io/zenml issue 1295: the step's own error (Python's IndexError message) before ZenML's step failure.
    (
        "https://github.com/zenml-io/zenml/issues/1295",
        "Step model_deployer has started.\n"
        "Extracting step run metadata failed for component 'mlflow_deployer' of type 'model_deployer': list index out of range\n"
        "Failed to run step model_deployer.\n"
        "Pipeline run training_pipeline-2023_02_07-10_49_03_506170 failed.",
        "application",
        False,
        "py-index-out-of-range-message",
    ),
    # joblib/joblib issue 812: loky's workers all killed by SIGKILL; its mention of a segfault is a possible cause only.
    (
        "https://github.com/joblib/joblib/issues/812",
        '  File "/home/hadoop/miniconda3/envs/py3/lib/python3.6/concurrent/futures/_base.py", line 384, in __get_result\n'
        "    raise self._exception\n"
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an excessive memory usage causing the Operating System to kill the worker. The exit codes of the workers are {SIGKILL(-9)}",
        "out_of_memory",
        False,
        "loky-workers-killed",
    ),
    # dmwm/CRABServer issue 9040: the task's submission fails on an object that cannot be pickled.
    (
        "https://github.com/dmwm/CRABServer/issues/9040",
        "Task status: SUBMITFAILED\n"
        "Error: The submission of your task has failed.\n"
        "Failure message:\tProcess-2: I just had a failure for cannot pickle 'htcondor2_impl._handle' object\n"
        "\t\t\t\tworkid=0\n"
        "\t\t\t\ttask=250409_144114:user_crab_20250409_164107\n"
        "\t\t\tconcurrent.futures.process._RemoteTraceback: ",
        "application",
        False,
        "py-cannot-pickle",
    ),
    # joblib/joblib issue 318: pickle's own error for a module object sent to the workers.
    (
        "https://github.com/joblib/joblib/issues/318",
        '  File "/root/anaconda3/lib/python3.5/site-packages/joblib/pool.py", line 368, in send\n'
        "    CustomizablePickler(buffer, self._reducers).dump(obj)\n"
        "_pickle.PicklingError: Can't pickle <class 'module'>: attribute lookup module on builtins failed",
        "application",
        False,
        "py-cannot-pickle",
    ),
    # sillsdev/silnlp issue 173: the ClearML agent aborts the task (a cancellation).
    (
        "https://github.com/sillsdev/silnlp/issues/173",
        "Installing collected packages: urllib3, platformdirs, distlib, filelock, virtualenv, six, pathlib2, future, pyjwt, pyparsing, pyhocon, attrs, python-dateutil, PyYAML, psutil, pyrsistent, jsonschema, idna, chardet, certifi, requests, orderedmultidict, furl, clearml-agent\n"
        "Successfully installed PyYAML-5.4.1 attrs-20.3.0 certifi-2023.5.7 chardet-4.0.0 clearml-agent-1.2.4rc2 distlib-0.3.6 filelock-3.12.2 furl-2.1.3 future-0.18.3 idna-2.10 jsonschema-3.2.0 orderedmultidict-1.0.1 pathlib2-2.3.7.post1 platformdirs-3.8.1 psutil-5.8.0 pyhocon-0.3.60 pyjwt-2.0.1 pyparsing-2.4.7 pyrsistent-0.19.3 python-dateutil-2.8.2 requests-2.25.1 six-1.15.0 urllib3-1.26.16 virtualenv-20.23.1\n"
        "Using environment access token CLEARML_AUTH_TOKEN=********\n"
        "2023-07-11 11:11:17\n"
        "User aborted: stopping task (3)",
        "scheduler",
        False,
        "runner-clearml-task-aborted",
    ),
    # clearml/clearml-agent issue 28: the agent reports the task's exit status 255.
    (
        "https://github.com/clearml/clearml-agent/issues/28",
        "Environment setup completed successfully\n"
        "Starting Task Execution:\n"
        "Leaving process id 3790\n"
        "DONE: Running task '113333b6379d4a82a8627103163c5c1a', exit status 255\n"
        "No tasks in queue b80b1a1f86e94a11a75e43a1f2c315f3\n"
        "No tasks in Queues, sleeping for 5.0 seconds",
        "unknown",
        True,
        "runner-clearml-task-exit-status",
    ),
    # clearml/clearml issue 188: the SDK stops the run after its task's status changed on the server.
    (
        "https://github.com/clearml/clearml/issues/188",
        "2020-08-17 06:58:05,627 - trains.Task - ERROR - Action failed <401/30: tasks.get_all/v1.0 (Invalid token (invalid jwt token): reason=Signature verification failed)> (id=['ddd67cb5c3524ab0ac876aa509ee2317'], only_fields=['last_iteration'])\n"
        "2020-08-17 06:58:05,698 - trains.Task - ERROR - Action failed <401/30: tasks.get_all/v1.0 (Invalid token (invalid jwt token): reason=Signature verification failed)> (id=['ddd67cb5c3524ab0ac876aa509ee2317'], only_fields=['status', 'status_message'])\n"
        "2020-08-17 06:58:06,056 - trains.Metrics - ERROR - Action failed <400/131: events.add_batch/v1.0 (Events not added: Invalid task id=14)>\n"
        "2020-08-17 06:58:06,058 - trains.Metrics - ERROR - Failed reporting metrics: <400/131: events.add_batch/v1.0 (Events not added: Invalid task id=14)>\n"
        "2020-08-17 06:58:06,127 - trains.Task - ERROR - Action failed <400/101: tasks.get_by_id/v1.0 (Invalid task id: id=ddd67cb5c3524ab0ac876aa509ee2317, company=d1bd92a3b039400cbafc60a7a5b1e52b)> (task=ddd67cb5c3524ab0ac876aa509ee2317)\n"
        "2020-08-17 06:58:06,130 - trains.Task - WARNING - ### TASK STOPPED - USER ABORTED - STATUS CHANGED ###\n"
        "2020-08-17 06:58:06,449 - trains.log - WARNING - failed logging task to backend (1 lines, <400/131: events.add_batch/v1.0 (Events not added: Invalid task id=1)>)",
        "scheduler",
        False,
        "runner-clearml-task-aborted",
    ),
    # skypilot-org/skypilot pull 1500: the 2022 spot controller's preemption line.
    (
        "https://github.com/skypilot-org/skypilot/pull/1500",
        "(sky-de99-user, pid=734143) I 12-10 21:39:39 controller.py:118] Cluster is preempted (status: INIT). Recovering...\n"
        "(sky-de99-user, pid=734143) I 12-10 21:42:11 spot_state.py:134] === Recovering... ===\n"
        "(sky-de99-user, pid=734143) I 12-10 21:42:11 recovery_strategy.py:126] Ignoring the job cancellation failure; the spot cluster is likely completely stopped.\n"
        "(sky-de99-user, pid=734143) I 12-10 21:42:11 recovery_strategy.py:126]   Detailed exception: 'NoneType' object has no attribute 'cluster_yaml'\n"
        "(sky-de99-user, pid=734143) D 12-10 21:42:11 recovery_strategy.py:316] Terminating unhealthy spot cluster.\n"
        "(sky-de99-user, pid=734143) D 12-10 21:42:11 recovery_strategy.py:320] Relaunch the cluster  without constraining to prior cloud/region.",
        "scheduler",
        True,
        "runner-skypilot-cluster-preempted",
    ),
    # dask/dask-jobqueue issue 20: dask nannies report their workers killed.
    (
        "https://github.com/dask/dask-jobqueue/issues/20",
        "distributed.nanny - INFO - Failed to start worker process.  Restarting\n"
        "distributed.nanny - WARNING - Worker process 7779 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Worker process 7776 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Worker process 7773 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Worker process 7782 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Worker process 7785 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Worker process 7788 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Restarting worker\n"
        "distributed.nanny - WARNING - Restarting worker",
        "unknown",
        True,
        "runner-dask-worker-process-killed",
    ),
    # BSC-ES/autosubmit issue 382: sacct's table with the job in state OUT_OF_MEMORY (cut to OUT_OF_ME+).
    (
        "https://github.com/BSC-ES/autosubmit/issues/382",
        "[user@p9login1 LOG_a1ql]$ sacct -j 1488666\n"
        "       JobID    JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        "1488666      a1ql_2012+       main      bsc32          4 OUT_OF_ME+    0:125 \n"
        "1488666.bat+      batch                 bsc32          4 OUT_OF_ME+    0:125 \n"
        "1488666.ext+     extern                 bsc32          4  COMPLETED      0:0 ",
        "out_of_memory",
        False,
        "scheduler-slurm-state-out-of-memory",
    ),
    # Netflix/metaflow issue 2557: the task left no completed attempt.
    (
        "https://github.com/Netflix/metaflow/issues/2557",
        "2025-08-20 10:37:23.599 [1755700434929081/execute_ray_jobs/4 (pid 19450)] Data store error:\n"
        "2025-08-20 10:37:23.599 [1755700434929081/execute_ray_jobs/4 (pid 19xac50)] No completed attempts of the task was found for task 'DesignFlow/1755700434929081/execute_ray_jobs/4'",
        "unknown",
        True,
        "runner-metaflow-no-completed-attempt",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_wrapped_job_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_worker_import_error_wins_over_loky_report() -> None:
    # scverse/pertpy pull 704 (the captured stderr, without the package's own segfault hint): the
    # workers exited with code 1 because the worker interpreter could not import joblib; loky's
    # report and its possible causes are a cascade.
    found = diagnose(
        "E               joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by"
        " the executor was unexpectedly terminated. This could be caused by a segmentation fault while calling the"
        " function or by an excessive memory usage causing the Operating System to kill the worker.\n"
        "E               \n"
        "E               The exit codes of the workers are {EXIT(1), EXIT(1)}\n"
        "----------------------------- Captured stderr call -----------------------------\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'joblib'"
    )
    assert (found.category, found.retryable) == ("application", False)


def test_flyte_oom_killed_container() -> None:
    # flyteorg/flyte pull 4793 enriches the message of a container its memory limit killed.
    found = diagnose(
        "[1/1] currentAttempt done. Last Error: USER::\n"
        "[a8s2kqg5xlz9n-n0-0] terminated with exit code (137). Reason [OOMKilled]. Message: \n."
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "runner-flyte-container-oom-killed",
        "out_of_memory",
        False,
    )


HEALTHY = [
    # BSC-ES/autosubmit issue 336: a job first checked FAILED is resubmitted and COMPLETED.
    "172 of 172 jobs remaining (22:36)\n"
    "[WARNING] Job t032_LOCAL_SETUP completion check failed. There is no COMPLETED file\n"
    "Job t032_LOCAL_SETUP is FAILED. Checking completed files to confirm the failure...\n"
    "[WARNING] Job t032_LOCAL_SETUP completion check failed. There is no COMPLETED file\n"
    "Jobs ready for transfer_node: 1\n"
    "t032_LOCAL_SETUP submitted\n"
    "\n"
    "\n"
    "172 of 172 jobs remaining (22:37)\n"
    "Job t032_LOCAL_SETUP is COMPLETED\n"
    "Jobs ready for marenostrum4: 1\n"
    "t032_REMOTE_SETUP submitted",
    # Netflix/metaflow issue 587: a Batch step moves through its states and runs.
    "2021-06-28 14:36:45.432 [7637/hello/92219 (pid 66823)] Task is starting.\n"
    "2021-06-28 14:36:46.411 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Task is starting (status SUBMITTED)...\n"
    "2021-06-28 14:36:48.560 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Task is starting (status RUNNABLE)...\n"
    "2021-06-28 14:36:51.821 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Task is starting (status STARTING)...\n"
    "2021-06-28 14:37:11.387 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Task is starting (status RUNNING)...\n"
    "2021-06-28 14:37:10.625 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Setting up task environment.\n"
    "2021-06-28 14:37:19.546 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Downloading code package...\n"
    "2021-06-28 14:37:20.146 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Code package downloaded.\n"
    "2021-06-28 14:37:20.156 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Task is starting.\n"
    "2021-06-28 14:37:21.016 [7637/hello/92219 (pid 66823)] [24616654-4aca-42ad-9d86-c1133f519cb9] Metaflow says: Hi from AWS!",
    # meta-pytorch/torchx issue 202: two runs end with Job finished: SUCCEEDED.
    'tristanr@tristanr-arch2 ~> torchx run utils.echo --msg "Hellow world"\n'
    "0.1.0rc2: Pulling from pytorch/torchx\n"
    "Digest: sha256:f97df7bd3d2137b3dcb6b85e14f4eef9c1c7cdd826d12508cc7cafb08bb2f704\n"
    "Status: Image is up to date for ghcr.io/pytorch/torchx:0.1.0rc2\n"
    "ghcr.io/pytorch/torchx:0.1.0rc2\n"
    "local_docker://torchx/echo_dfc8191d\n"
    "torchx 2021-10-20 15:15:49 INFO     Waiting for the app to finish...\n"
    "Hellow world\n"
    "torchx 2021-10-20 15:15:50 INFO     Job finished: SUCCEEDED\n"
    'tristanr@tristanr-arch2 ~> torchx run -s local_cwd utils.echo --msg "Hellow world"\n'
    "Hellow world\n"
    "local_cwd://torchx/echo_cfeb1ad7\n"
    "torchx 2021-10-20 15:16:47 INFO     Waiting for the app to finish...\n"
    "torchx 2021-10-20 15:16:47 INFO     Job finished: SUCCEEDED",
    # PrefectHQ/prefect issue 11841: a completed task run logged again as a warning.
    "INFO: Finished in state Completed().\nWARNING: Task run '...' finished in state Completed().",
    # ZenML's step retry policy (zenml/orchestrators/step_launcher.py): a step run again is no end.
    "Failed to run step `trainer`. Retrying...",
    # clearml-agent's line for a task that ended well.
    "DONE: Running task '113333b6379d4a82a8627103163c5c1a', exit status 0",
    # Netflix/metaflow-service issue 7: a remote task that finished with exit code 0.
    "2020-02-11 07:03:14.694 [877/start/3028 (pid 15173)] [d2820876-216b-4005-81f8-c7bfd452fb8a] Task finished with"
    " exit code 0.\n"
    "2020-02-11 07:03:15.456 [877/start/3028 (pid 15173)] Task finished successfully.",
    # dask/distributed's nanny on a worker that exited cleanly.
    "distributed.nanny - INFO - Worker process 12345 exited with status 0",
    # yongliang-wu/NumPro issue 9: the dataset catches a bad sample's IndexError, logs its message
    # and loads another; the trainer logs its loss between.
    "25.35s/it]Error at loading 142473: list index out of range\n"
    "Error at loading 201544: list index out of range\n"
    "{'loss': 343.127, 'grad_norm': 442.24884033203125, 'learning_rate': 3.367003367003367e-06, 'epoch': 0.01}\n"
    "Error at loading 247525: list index out of range\n"
    "Error at loading 107189: list index out of range",
]


def test_an_index_error_the_program_did_not_catch_is_still_its_own() -> None:
    found = diagnose(TRACEBACK + "IndexError: list index out of range")
    assert (found.symptom, found.category, found.retryable) == ("crash", "application", False)


@pytest.mark.parametrize("text", HEALTHY)
def test_wrapper_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
