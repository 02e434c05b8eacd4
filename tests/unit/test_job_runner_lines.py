"""Whole excerpts of real logs where the thing that ran a job reported its end after the program's
own output (docker compose, kubectl, Ray Jobs, SkyPilot, GitHub Actions, Azure Pipelines, CircleCI,
GitLab, wandb's sweep agent, Jupyter), each with where it was printed, and the alarming but
healthy end lines (exit code 0, a job submitted or succeeded, a retry that completed, finished
trials), which must stay healthy."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from recovery.activities.signatures.catalog import Signature
from recovery.activities.signatures.tables import read_table, signature_entries
from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # jupyter/docker-stacks issue 736: kubectl exec into a notebook pod; client-go's remotecommand
    # reports the command's exit status as "command terminated with exit code %d".
    (
        "https://github.com/jupyter/docker-stacks/issues/736",
        "jupyternotebook-user-847ff4564c-gqvn6   1/1       Running   3          3h        1/1\n"
        "command terminated with exit code 137",
        "unknown",
        True,
        "runner-kubectl-exec-exit",
    ),
    # ray-project/ray issue 40768: the job's status message is the entrypoint's exit code (-11,
    # SIGSEGV) and then the driver's last logs, whose progress is not the run going on.
    (
        "https://github.com/ray-project/ray/issues/40768",
        "Job entrypoint command failed with exit code -11, last available logs (truncated to 20,000 chars):\n"
        "Running: 0.0/18.0 CPU, 0.0/0.0 GPU, 0.03 MiB/2.33 GiB object_store_memory:   0%|          |"
        " 1/1296 [00:00<03:29,  6.17it/s]\n"
        "Running: 0.0/18.0 CPU, 0.0/0.0 GPU, 0.0 MiB/2.33 GiB object_store_memory:   1%|▏         |"
        " 19/1296 [00:00<03:26,  6.17it/s]\n"
        "Running: 0.0/18.0 CPU, 0.0/0.0 GPU, 0.0 MiB/2.33 GiB object_store_memory: 100%|██████████|"
        " 36/36 [00:00<00:00, 71.21it/s]  \n"
        "2023-10-28 15:55:46 impute.py run:70 [INFO] - >>>>>>>>>finished<<<<<<<<<",
        "unknown",
        True,
        "runner-ray-job-failed",
    ),
    # DOsinga/deep_learning_cookbook issue 71: the classic notebook's "Kernel Restarting" dialog.
    (
        "https://github.com/DOsinga/deep_learning_cookbook/issues/71",
        "09.3 Retraining -- Kernel Restarting \nThe kernel appears to have died. It will restart automatically.",
        "unknown",
        True,
        "runner-jupyter-kernel-died",
    ),
    # mrdbourke/m1-machine-learning-test issue 17: JupyterLab's dialog and jupyter_client's restarter.
    (
        "https://github.com/mrdbourke/m1-machine-learning-test/issues/17",
        "[D 2023-08-25 17:12:14.399 ServerApp] Accepting token-authenticated request from ::1\n"
        "[I 2023-08-25 17:12:15.769 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random ports\n"
        "[W 2023-08-25 17:12:15.769 ServerApp] kernel e2dcf2e8-1352-4305-957d-eedf1d33904a restarted",
        "unknown",
        True,
        "runner-jupyter-kernel-died",
    ),
    # skypilot-org/skypilot issue 4599: the run's return codes, then the job's status.
    (
        "https://github.com/skypilot-org/skypilot/issues/4599",
        "$ sky launch ..\nERROR: Job 439 failed with return code list: [1]\n✓ Job finished (status: FAILED).",
        "unknown",
        True,
        "runner-skypilot-job-failed",
    ),
    # skypilot-org/skypilot issue 5583: SkyPilot's job driver failed.
    (
        "https://github.com/skypilot-org/skypilot/issues/5583",
        "⚙︎ Job submitted, ID: 3\n✓ Job finished (status: FAILED_DRIVER).\ncommand terminated with exit code 100",
        "unknown",
        True,
        "runner-skypilot-job-failed",
    ),
    # skypilot-org/skypilot issue 9189: the program printed its result; SkyPilot's controller failed.
    (
        "https://github.com/skypilot-org/skypilot/issues/9189",
        "(sky-5851-root, pid=1787) Running echo with sink: ?\n"
        "(sky-5851-root, pid=1787) ECHO: 22\n"
        "✓ Job finished (status: FAILED_CONTROLLER).",
        "system_software",
        True,
        "runner-skypilot-controller-failed",
    ),
    # dstackai/dstack issue 1300: the task's command is missing; dstack's reason for the run.
    (
        "https://github.com/dstackai/dstack/issues/1300",
        "bitter-skunk-1 provisioning completed (running)\n"
        "bash: qwerty: command not found\n"
        "Run failed with error code CONTAINER_EXITED_WITH_ERROR. Check CLI and server logs\n"
        "for more details.",
        "unknown",
        True,
        "runner-dstack-run-failed",
    ),
    # dstackai/dstack issue 1397: the cloud took the spot TPU back after 16 minutes.
    (
        "https://github.com/dstackai/dstack/issues/1397",
        "Run failed with error code INTERRUPTED_BY_NO_CAPACITY. Check CLI and server logs for more details.",
        "scheduler",
        True,
        "runner-dstack-no-capacity",
    ),
    # determined-ai/determined issue 2275: the trial's container and the end of its log stream.
    (
        "https://github.com/determined-ai/determined/issues/2275",
        "[2021-04-28T01:55:38Z] e54b4385 || INFO: container failed with non-zero exit code: container failed"
        " with non-zero exit code: 1 (exit code 1)\n"
        "Trial log stream ended. To reopen log stream, run: det trial logs -f 2",
        "unknown",
        True,
        "runner-determined-container-failed",
    ),
    # determined-ai/determined issue 2290: the master restarts a trial whose container was killed.
    (
        "https://github.com/determined-ai/determined/issues/2290",
        "<error>   [2021-04-28, 08:20:22] unexpected failure of trial after restart 2/5: container failed with"
        ' non-zero exit code: container failed with non-zero exit code: 137 (exit code 137)  experiment-id="1"\n'
        '<info>    [2021-04-28, 08:20:22] resetting trial 1  experiment-id="1"',
        "unknown",
        True,
        "runner-determined-container-failed",
    ),
    # wandb/wandb issue 3521: the sweep agent reports the training function's own KeyError.
    (
        "https://github.com/wandb/wandb/issues/3521",
        "wandb: ERROR Run yhjvnf8d errored: KeyError('sentence_id')",
        "application",
        False,
        "uncaught-exception",
    ),
    # cocktailpeanut/fluxgym issue 337: the app's runner names the command that exited.
    (
        "https://github.com/cocktailpeanut/fluxgym/issues/337",
        "[2025-02-16 13:28:09] [ERROR] Command exited with code 1\n"
        "[2025-02-16 13:28:09] [INFO] Runner: <LogsViewRunner nb_logs=280 exit_code=1>",
        "unknown",
        True,
        "runner-compose-exited",
    ),
    # YanWenKun/ComfyUI-Docker issue 68: docker compose v2's status line, 139 = 128 + SIGSEGV.
    (
        "https://github.com/YanWenKun/ComfyUI-Docker/issues/68",
        "[+] Running 1/0\nAttaching to comfyui-1\ncomfyui-1 exited with code 139",
        "unknown",
        True,
        "runner-compose-exited",
    ),
    # aeon-toolkit/aeon issue 2415: GitHub's annotation when the hosted runner went away.
    (
        "https://github.com/aeon-toolkit/aeon/issues/2415",
        "The operation was canceled.\n"
        "The hosted runner: GitHub Actions 12 lost communication with the server. Anything in your workflow"
        " that terminates the runner process, starves it for CPU/Memory, or blocks its network access can"
        " cause this error.",
        "unknown",
        True,
        "runner-github-runner-lost",
    ),
    # microsoft/vsts-docker issue 39: the agent's ProcessInvoker on a task's non-zero exit.
    (
        "https://github.com/microsoft/vsts-docker/issues/39",
        "2017-03-10T18:44:22.4819820Z Login Succeeded\n"
        "2017-03-10T18:44:22.7936250Z ##[error]Exit code 137 returned from process: file name"
        " '/vsts/agent/externals/node/bin/node', arguments '\"/var/vsts/user.76bbb752/_tasks/"
        "DockerCompose_adcfa1c1-3be7-45fc-871f-13634b2cff1d/0.3.4/dockerCompose.js\"'.\n"
        "2017-03-10T18:44:22.8017150Z ##[section]Finishing: Build repository",
        "unknown",
        True,
        "runner-ci-process-exit-code",
    ),
    # mozilla/addons issue 5259: CircleCI's step result; its generic hint is no OOM evidence.
    (
        "https://github.com/mozilla/addons/issues/5259",
        "+ docker-compose exec web supervisorctl restart all\n"
        "Exited with code 137\n\n"
        "Hint: Exit code 137 typyically means the process is killed because it was running out of memory",
        "unknown",
        True,
        "runner-circleci-exit-code",
    ),
    # pytorch/vision issue 6496: CircleCI's other wording of the same result.
    (
        "https://github.com/pytorch/vision/issues/6496",
        "+ ./test_frcnn_tracing\n\nExited with code exit status 127\nCircleCI received exit code 127",
        "unknown",
        True,
        "runner-circleci-exit-code",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_a_runners_end_line_is_a_failure(
    source: str, text: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_a_runners_exit_line_gives_way_to_the_programs_own_error() -> None:
    # aws/sagemaker-containers issue 274: local mode's compose line, then the SDK's own exception
    # about it; the exit code line is only a follow-on (a cascade), the exception speaks.
    text = (
        "tmpsqcmqlg5_algo-1-5rcld_1 exited with code 1\n"
        "Aborting on container exit...\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\Program Files\\Python37\\lib\\site-packages\\sagemaker\\local\\image.py", line 161, in train\n'
        "    _stream_output(process)\n"
        "RuntimeError: Process exited with code: 1"
    )
    found = diagnose(text)
    assert (found.evidence[0].signature, found.category) == ("uncaught-exception", "unknown")


def test_a_table_entrys_own_counterexample_is_checked() -> None:
    table = read_table(
        "family: x\nkind: signatures\nsource: a manual, chapter 3, 2024\nkey: name\n"
        "counterexamples: ['all good']\n"
        "entries: [{name: e, pattern: 'job \\d+ failed', description: d, category: unknown, retryable: true,"
        " symptom: crash, examples: ['job 3 failed'], counterexamples: ['job 0 failed']}]\n",
        "tables/x.yaml",
    )
    (data,) = signature_entries(table, "tables/x.yaml")
    with pytest.raises(ValidationError, match="counterexample matches"):
        Signature.model_validate(data)


HEALTHY = [
    # ray-project/kuberay pull 3216: the RayJob submitter's first pod failed, its retry completed.
    "$ kubectl get po\n"
    "NAME                                                        READY   STATUS      RESTARTS   AGE\n"
    "pytorch-text-classifier-6q6ff-x59k6                         0/1     Error       0          11m\n"
    "pytorch-text-classifier-6q6ff-xqhk7                         0/1     Completed   0          10m",
    # skypilot-org/skypilot issue 8928: the job's own words, and SkyPilot's success.
    "(task, pid=6295) About to crash\nJob finished (status: SUCCEEDED).",
    # wandb/wandb issue 1526: wandb retries a read timeout and the next epoch starts.
    "Epoch 5: 28/04/2021 07:49:46\n"
    "gen_sine - 1024/1024 (10m 5s)      | loss = 0.000     | ll = -0.127    | bpd = 0.000\n"
    "wandb: Network error (ReadTimeout), entering retry loop. See wandb/debug-internal.log for full traceback.\n"
    "gen_sine - 16/16 (0m 3s)           | loss = 0.000     | ll = -0.125    | bpd = 0.000\n"
    "Epoch 6: 28/04/2021 07:59:56",
    # wandb/examples issue 57: a sweep run ends successfully and the agent starts the next.
    "wandb: Waiting for W&B process to finish, PID 11267\n"
    "wandb: Program ended successfully.\n"
    "wandb: Run summary:\n"
    "wandb:   val_accuracy 0.84223\n"
    "wandb: Synced sweepy-sweep-4-3: https://wandb.ai/user/myproject/runs/1zpp9ex8\n"
    "wandb: Syncing run sweepy-sweep-4-4",
    # aws/amazon-sagemaker-examples issue 1068: local mode's compose run ends with code 0.
    "2020-02-29 13:53:49,328 sagemaker-containers INFO     Reporting training SUCCESS\n"
    "tmpxyobh8pn_algo-1-h70nf_1 exited with code 0\n"
    "Aborting on container exit...",
    # doccano/doccano issue 471: a build-only service's exit, code 0.
    "doccano_frontend_1 exited with code 0",
    # verl-project/verl issue 2890: `ray job submit` without tailing.
    "Job 'raysubmit_bjwdzBV23QNJ9fQu' submitted successfully\n"
    "Next steps\n"
    "  Query the logs of the job:\n"
    "    ray job logs raysubmit_bjwdzBV23QNJ9fQu",
    # ray-project/ray issue 48701: Ray Tune's table, every trial TERMINATED (finished).
    "│ function_trainable_17836_00198   TERMINATED   0.414847  │\n"
    "│ function_trainable_17836_00199   TERMINATED   0.949224  │\n"
    "╰─────────────────────────────────────────────────────────╯",
    # docker/cli issue 1117: compose's verbose output around a service that exited with code 0.
    "compose.cli.verbose_proxy.proxy_callable: docker wait -> {'Error': None, 'StatusCode': 0}\n"
    "dockertesting_web_1 exited with code 0",
    # jobcespedes/docker-compose-moodle issue 9: `docker-compose ps`, a helper service in Exit 0.
    "    moodle_35stable_app_1 / true Exit 0\n    moodle_35stable_cron_1 php-fpm-xdebug-entrypoint ... Up 9000 / tcp",
    # nv-tlabs/Difix3D issue 28: the run ends at its configured epochs; wandb's offline hint.
    "wandb:\nwandb: You can sync this run to the cloud by running:\n"
    "wandb: wandb sync ./outputs/difix/train/wandb/offline-run-20250710_193439-mvkyjrpz",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_end_lines_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
