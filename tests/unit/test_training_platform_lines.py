"""Whole excerpts of real logs where a container or managed-training platform reported how a
training job ended: Kubernetes pods and events as `kubectl` prints them (a pod's own deadline, the
kubelet's admission refusals and evictions, a pod that can never be placed or whose image cannot be
pulled), the MPI operator's launcher, SageMaker's, Vertex AI's, Azure ML's and Databricks' verdicts;
each with where it was printed. And the alarming lines those platforms print around healthy runs
(a pod waiting for a node the autoscaler is adding, a container that was restarted and runs again,
completed jobs), which must stay healthy."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.catalog import Signature
from recovery.activities.signatures.phases import K8S_IMAGE, K8S_MOUNT, K8S_PENDING, K8S_UNFIT
from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # aws-samples/amazon-sagemaker-bert-classify-pytorch issue 2: the SDK's verdict alone. The
    # script's own error is not in the log: a cascade of unknown cause.
    (
        "https://github.com/aws-samples/amazon-sagemaker-bert-classify-pytorch/issues/2",
        "UnexpectedStatusException: Error for Training job pytorch-training-2020-10-26-17-35-06-746: Failed."
        " Reason: AlgorithmError: ExecuteUserScriptError:\n"
        'Command "/opt/conda/bin/python train_deploy.py --backend gloo --epochs 1 --num_labels 2"',
        "unknown",
        True,
        "managed-training-sagemaker-algorithm-error",
    ),
    # huggingface/notebooks issue 136: the same verdict quoted without the SDK's exception class.
    (
        "https://github.com/huggingface/notebooks/issues/136",
        "Error:- Error for Training job huggingface-pytorch-training-2022-01-25-19-23-38-888: Failed. Reason:"
        " AlgorithmError: ExecuteUserScriptError:\n"
        "ExitCode 1\n"
        'ErrorMessage "raise EnvironmentError(msg)',
        "unknown",
        True,
        "managed-training-sagemaker-algorithm-error",
    ),
    # aws/sagemaker-pytorch-training-toolkit pull 171: no instances of the type; the old SDK's
    # ValueError carries the reason, which speaks for its line.
    (
        "https://github.com/aws/sagemaker-pytorch-training-toolkit/pull/171",
        "ValueError: Error for Training job sagemaker-test-2020-03-03-22-36-18-979: Failed Reason: CapacityError:"
        " Unable to provision requested ML compute capacity. Please retry using a different ML instance type.",
        "scheduler",
        True,
        "managed-training-sagemaker-capacity-error",
    ),
    # DIAGNijmegen/rse-grand-challenge issue 2631: the API's FailureReason as the service stores it.
    (
        "https://github.com/DIAGNijmegen/rse-grand-challenge/issues/2631",
        'FailureReason: "CapacityError: Unable to provision requested ML compute capacity. Please retry using a'
        ' different ML instance type."',
        "scheduler",
        True,
        "managed-training-sagemaker-capacity-error",
    ),
    # aws/amazon-sagemaker-examples issue 3444: the SDK's status line comes first.
    (
        "https://github.com/aws/amazon-sagemaker-examples/issues/3444",
        "2022-06-02 17:28:14 Failed - Training job failed\n"
        "ProfilerReport-1654189943: Stopping\n"
        "sagemaker.exceptions.UnexpectedStatusException: Error for Training job cluster-eames-: Failed. Reason:"
        " AlgorithmError: ExecuteUserScriptError:",
        "unknown",
        True,
        "managed-training-sagemaker-job-failed",
    ),
    # GoogleCloudPlatform/vertex-ai-samples issue 1898: the primary replica could not start; the
    # message is cut before the runtime's reason.
    (
        "https://github.com/GoogleCloudPlatform/vertex-ai-samples/issues/1898",
        "Job failed with:\n"
        "code: 3\n"
        'message: "The replica workerpool0-0 exited with a non-zero status of 128. Termination reason:'
        " StartError. \\n Termination log message: failed to create containerd task: fa",
        "unknown",
        True,
        "managed-training-vertex-replica-exited",
    ),
    # Azure/MachineLearningNotebooks issue 1360: the run's verdict; the driver log is not shown.
    (
        "https://github.com/Azure/MachineLearningNotebooks/issues/1360",
        "[2021-02-23T15:33:21.2314948Z][Info]Some child runs have reached terminal state. All active child runs"
        " will be cancelled. The run Ids that reached terminal state are: CartPole-v0-SC_1614094323_113e09a5_head.\n"
        "\n"
        "AzureMLCompute job failed. JobFailed: Submitted script failed with a non-zero exit code; see the driver"
        " log file for details. \tReason: Job failed with non-zero exit Code.",
        "unknown",
        True,
        "managed-training-azureml-script-failed",
    ),
    # Azure/azure-cli-extensions issue 2346: the verdict, then the run's error names the program's
    # own exception, which speaks.
    (
        "https://github.com/Azure/azure-cli-extensions/issues/2346",
        '    "message": "AzureMLCompute job failed.\\nJobFailed: Submitted script failed with a non-zero exit'
        ' code; see the driver log file for details.",\n'
        '        "message": "User program failed with ModuleNotFoundError: No module named \'tensorflow\'",',
        "application",
        False,
        "py-import-error",
    ),
    # databrickslabs/ucx issue 2398: the driver died (its exit code says killed, not why).
    (
        "https://github.com/databrickslabs/ucx/issues/2398",
        'crawl_tables: "The spark driver has stopped unexpectedly and is restarting. Your notebook will be'
        " automatically reattached.\n"
        '\tat com.databricks.spark.chauffeur.Chauffeur.onDriverStateChange(Chauffeur.scala:1478)"\n'
        "\n"
        'crawl_groups: "com.databricks.backend.common.rpc.DriverStoppedException: Driver down cause: driver'
        ' state change (exit code: 137)"',
        "unknown",
        True,
        "managed-training-databricks-driver-restarting",
    ),
    # databricks-industry-solutions/customer-er issue 7: the run's life-cycle state.
    (
        "https://github.com/databricks-industry-solutions/customer-er/issues/7",
        "Job in INTERNAL_ERROR state at 331 seconds since launch.  Waiting 30 seconds before checking again",
        "system_software",
        True,
        "managed-training-databricks-internal-error",
    ),
    # argoproj/argo-workflows issue 6135: a pod stopped at its activeDeadlineSeconds.
    (
        "https://github.com/argoproj/argo-workflows/issues/6135",
        "        id: hello-world-79hgg\n"
        "        message: Pod was active on the node longer than the specified deadline\n"
        "        name: hello-world-79hgg\n"
        "        phase: Failed",
        "scheduler",
        True,
        "scheduler-k8s-pod-deadline-exceeded",
    ),
    # kubernetes/kubernetes issue 98718: the pod's status, its reason on a line of its own.
    (
        "https://github.com/kubernetes/kubernetes/issues/98718",
        "  phase: Failed\n  podIP: 10.128.2.23\n  qosClass: Burstable\n  reason: DeadlineExceeded\n"
        '  startTime: "2021-02-01T12:29:14Z"',
        "scheduler",
        True,
        "scheduler-k8s-pod-deadline-exceeded",
    ),
    # gitpod-io/gitpod pull 8463: the kubelet refused the pod at admission (YAML doubles the quote).
    (
        "https://github.com/gitpod-io/gitpod/pull/8463",
        "status:\n"
        "  message: 'Pod Node didn''t have enough resource: memory, requested: 2097152000,\n"
        "    used: 65865462583, capacity: 66388008960'\n"
        "  phase: Failed\n"
        "  reason: OutOfmemory",
        "scheduler",
        True,
        "scheduler-k8s-admission-out-of-resource",
    ),
    # kubeflow/kubeflow issue 1261: an eviction that names no container over its request.
    (
        "https://github.com/kubeflow/kubeflow/issues/1261",
        "The node was low on resource: memory.\nKilling container with id docker://notebook:Need to kill Pod",
        "scheduler",
        True,
        "scheduler-k8s-node-memory-pressure",
    ),
    # FederatedAI/KubeFATE issue 64's form of the message (the dev corpus holds the thread): the
    # container named over its request is the pod's own memory.
    (
        "https://github.com/FederatedAI/KubeFATE/issues/64",
        "4m11s       Warning   Evicted               pod/egg-1    The node was low on resource: memory."
        " Container egg was using 5053216Ki, which exceeds its request of 0.",
        "out_of_memory",
        False,
        "scheduler-k8s-evicted-memory",
    ),
    # operate-first/apps issue 1352: pods refused from a node under disk pressure (a full disk).
    (
        "https://github.com/operate-first/apps/issues/1352",
        "build-log-clustering-sklearn-default-0-classifier-56b4b9d9cqz7f   ds-ml-workflows-ws"
        "                                 Evicted   oct-03-09-compute   Pod The node had condition: [DiskPressure]. ",
        "system_software",
        False,
        "scheduler-k8s-node-disk-pressure",
    ),
    # derailed/k9s issue 174: the pod's status says Evicted; its message says why, and speaks.
    (
        "https://github.com/derailed/k9s/issues/174",
        "Status:             Failed\n"
        "Reason:             Evicted\n"
        "Message:            The node was low on resource: memory. Container proprietary-crawler was using"
        " 9402820Ki, which exceeds its request of 7G. ",
        "out_of_memory",
        False,
        "scheduler-k8s-evicted-memory",
    ),
    # kubernetes/kubernetes issue 122932: the same for the node's ephemeral storage.
    (
        "https://github.com/kubernetes/kubernetes/issues/122932",
        "Status:               Failed\n"
        "Reason:               Evicted\n"
        "Message:              The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi,"
        " available: 777784Ki.",
        "system_software",
        False,
        "scheduler-k8s-evicted-storage",
    ),
    # aws/sagemaker-python-sdk issue 35: the job's request is refused (the account id replaced).
    (
        "https://github.com/aws/sagemaker-python-sdk/issues/35",
        "E           ValueError: Error training sagemaker-mxnet-py2-cpu-2018-01-01-03-36-55-859: Failed Reason:"
        " ClientError: SageMaker was unable to assume the role 'arn:aws:iam::123456789012:role/SageMakerRole'",
        "application",
        False,
        "managed-training-sagemaker-client-error",
    ),
    # aws/amazon-sagemaker-examples issue 1224: the training toolkit's own report.
    (
        "https://github.com/aws/amazon-sagemaker-examples/issues/1224",
        "2020-05-27 12:17:39,308 sagemaker_pytorch_container.training INFO     Invoking user training script.\n"
        "2020-05-27 12:17:39,523 sagemaker-containers ERROR    Reporting training FAILURE\n"
        "2020-05-27 12:17:39,523 sagemaker-containers ERROR    framework error: ",
        "unknown",
        True,
        "managed-training-sagemaker-user-script-error",
    ),
    # kubeflow/mpi-operator issue 90: the launcher crash-loops; Horovod's mpirun.real names the
    # rank and node that died of SIGKILL.
    (
        "https://github.com/kubeflow/mpi-operator/issues/90",
        "mpi-test-2-mpijob-launcher-lv2fx                                    1/1      CrashLoopBackOff"
        "             2          1m\n"
        "--------------------------------------------------------------------------\n"
        "mpirun.real noticed that process rank 1 with PID 39 on node mpi-test-2-mpijob-worker-1 exited on"
        " signal 9 (Killed).",
        "unknown",
        True,
        "mpi-rank-signalled",
    ),
    # ray-project/ray issue 42864: Ray's exit detail names a code and guesses at memory.
    (
        "https://github.com/ray-project/ray/issues/42864",
        "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly. Worker exits with an exit"
        " code 1. The worker may have exceeded K8s pod memory limits. The process receives a SIGTERM",
        "unknown",
        True,
        "ray-worker-exit-code",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_a_platforms_end_is_read(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_the_mpi_launchers_rank_and_node_are_named() -> None:
    found = diagnose(next(t for src, t, *_ in FAILURES if src.endswith("mpi-operator/issues/90")))
    assert found.implicated.ranks == [1]
    assert found.implicated.nodes == ["mpi-test-2-mpijob-worker-1"]


# (source, excerpt, what being stuck there means)
NEVER_STARTED = [
    # NVIDIA/k8s-device-plugin issue 119: no node with a free GPU; the other is cordoned.
    (
        "https://github.com/NVIDIA/k8s-device-plugin/issues/119",
        "Events:\n Warning FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes are available:"
        " 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.",
        K8S_PENDING,
    ),
    # open-edge-platform/geti_v2 issue 1876: the same for 23 hours.
    (
        "https://github.com/open-edge-platform/geti_v2/issues/1876",
        "Warning  FailedScheduling  6m7s (x351 over 23h)  default-scheduler  0/1 nodes are available: 1"
        " Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for"
        " incoming pod.",
        K8S_PENDING,
    ),
    # volcano-sh/volcano issue 519: Volcano cannot place the job's gang.
    (
        "https://github.com/volcano-sh/volcano/issues/519",
        "  Warning  FailedScheduling  111s  volcano  10/6 tasks in gang unschedulable: job is not ready, 10"
        " minAvailable, 6 Pending.\n"
        "  Warning  FailedScheduling  104s  volcano  10/10 tasks in gang unschedulable: job is not ready, 10"
        " Pending, 10 minAvailable.",
        K8S_PENDING,
    ),
    # StatCan/jupyter-apis pull 57: the autoscaler says no new node would fit the pod's request.
    (
        "https://github.com/StatCan/jupyter-apis/pull/57",
        "  Warning  FailedScheduling   <unknown>             default-scheduler   0/41 nodes are available: 2"
        " Insufficient pods, 35 Insufficient cpu, 4 Insufficient memory.\n"
        "  Normal   NotTriggerScaleUp  12m (x3 over 14m)     cluster-autoscaler  pod didn't trigger scale-up"
        " (it wouldn't fit if a new node is added): 1 Insufficient nvidia.com/gpu, 1 Insufficient cpu,"
        " 1 Insufficient memory",
        K8S_UNFIT,
    ),
    # IBM/FfDL issue 74: the parameter server's image cannot be pulled.
    (
        "https://github.com/IBM/FfDL/issues/74",
        "Status:         Pending\n"
        "    Image:          docker.io/ffdl/parameter-server:master-97\n"
        "    State:          Waiting\n"
        "      Reason:       ImagePullBackOff\n"
        "    Ready:          False\n"
        "    Restart Count:  0",
        K8S_IMAGE,
    ),
    # kubeflow/kubeflow issue 2698: the kubelet's own log while it backs off.
    (
        "https://github.com/kubeflow/kubeflow/issues/2698",
        "> Mar 14 19:34:13 minikube kubelet[3244]: E0314 19:34:13.520901    3244 pod_workers.go:190] Error"
        ' syncing pod 4b4728cd-4620-11e9-9bf4-d409029b649b ("modeldb-backend-54f88cf869-xbnz4_kubeflow'
        '(4b4728cd-4620-11e9-9bf4-d409029b649b)"), skipping: failed to "StartContainer" for "modeldb-backend"'
        ' with ImagePullBackOff: "Back-off pulling image \\"mitdbg/modeldb-backend:kf0.4\\""',
        K8S_IMAGE,
    ),
    # kubernetes/kubernetes issue 30177: the kubelet times out mounting the pod's volumes, for an hour.
    (
        "https://github.com/kubernetes/kubernetes/issues/30177",
        "1h          1m         37        some-api-2275263275-01pq7              Pod"
        "                                             Warning   FailedMount               {kubelet"
        ' gke-cluster-1-default-pool-4399eaa3-os4v}      Unable to mount volumes for pod "some-api-2275263275-01pq7'
        '_default(afc5ae68-5b5e-11e6-afbb-42010a800105)": timeout expired waiting for volumes to attach/mount for'
        ' pod "some-api-2275263275-01pq7"/"default". list of unattached/unmounted volumes=[default-token-880jy]',
        K8S_MOUNT,
    ),
]


@pytest.mark.parametrize(("source", "text", "meaning"), NEVER_STARTED)
def test_a_pod_that_never_starts_is_stuck(source: str, text: str, meaning: Signature) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == (meaning.symptom, meaning.category, meaning.retryable)
    assert found.explanation.startswith(meaning.description), source


HEALTHY = [
    # 2i2c-org/infrastructure issue 2185: the pod cannot be placed, then triggers a scale-up.
    "2023-02-09T08:51:30Z [Warning] 0/4 nodes are available: 2 Insufficient memory, 2 node(s) didn't match"
    " Pod's node affinity/selector.\n"
    "2023-02-09T08:51:37Z [Normal] pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/"
    "two-eye-two-see/zones/us-central1-b/instanceGroups/gke-pilot-hubs-cluster-nb-user-05",
    # kubernetes/kubernetes issue 122256: a container restarted once (exit code 137) runs again.
    "    State: Running\n"
    "      Started: Mon, 13 Nov 2023 03:50:57 +0100\n"
    "    Last State: Terminated\n"
    "      Reason: Error\n"
    "      Exit Code: 137\n"
    "      Started: Mon, 13 Nov 2023 03:48:52 +0100\n"
    "      Finished: Mon, 13 Nov 2023 03:50:55 +0100\n"
    "    Ready: True\n"
    "    Restart Count: 1",
    # kubernetes/kubernetes issue 21921: an e2e pod's events, its image pulled and container started.
    "Feb 24 13:38:26.320: INFO: At 2016-02-24 13:26:31 -0800 PST - event for pod-back-off-image:"
    " {default-scheduler } Scheduled: Successfully assigned pod-back-off-image to jenkins-e2e-minion-sdss\n"
    "Feb 24 13:38:26.320: INFO: At 2016-02-24 13:26:32 -0800 PST - event for pod-back-off-image:"
    " {kubelet jenkins-e2e-minion-sdss} Started: Started container with docker id 0e6f2eae3e7f",
    # huggingface/blog pull 96: SageMaker's status lines of a job that completed.
    "2021-04-01 13:16:47 Uploading - Uploading generated training model\n"
    "2021-04-01 13:27:49 Completed - Training job completed\n"
    "Training seconds: 2882\n"
    "Billable seconds: 2882",
    # kestra-io/kestra issue 6849: a Vertex AI custom job that succeeded.
    "2025-01-21T06:25:20.050Z INFO Job projects/xxx/locations/us-central1/customJobs/3000721679224668160 ended"
    " in PT13M9.553791S with status JOB_STATE_SUCCEEDED",
    # ray-project/kuberay pull 1895: a RayJob from Initializing to SUCCEEDED.
    "$ kubectl get rayjob\n"
    "NAME                  JOB STATUS   DEPLOYMENT STATUS   START TIME             END TIME               AGE\n"
    "rayjob-sample-psgrj   SUCCEEDED    Complete            2024-02-01T17:55:49Z   2024-02-01T17:56:05Z   66s",
    # ray-project/ray pull 39393: Volcano holds a second RayCluster's gang while the first runs.
    "# test-cluster-0-head-vst5j                       1/1     Running        0          7m\n"
    "# test-cluster-1-worker-worker-6tzf7              0/1     Pending        0          2m12s\n"
    "# test-cluster-1-head-6668q                       0/1     Pending        0          2m12s",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_platform_lines_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_a_pod_placed_or_its_image_pulled_after_waiting_is_healthy() -> None:
    # The waits of NEVER_STARTED, then the scheduler assigns the pod and the kubelet starts it.
    placed = "\n  Normal   Scheduled  10s  default-scheduler  Successfully assigned default/trainer-0 to gpu-node-3"
    started = "\n  Normal   Started    2s   kubelet            Started container trainer"
    for _, text, meaning in NEVER_STARTED:
        tail = started if meaning in (K8S_IMAGE, K8S_MOUNT) else placed
        assert diagnose(text + tail).symptom == "none"


def test_a_terminated_containers_exit_code_still_speaks() -> None:
    # Not running again: the same block under a container that is waiting to be restarted.
    restarted = HEALTHY[1]
    assert diagnose(restarted.replace("State: Running", "State: Waiting")).symptom == "crash"
