"""Whole excerpts of real logs of training on Kubernetes, as users paste them: Kueue's preemption
of a workload (the Workload's Evicted condition, its pods' TerminationTarget reason), `kubectl get`
rows of a training job whose state is Failed (Kubeflow's job kinds, KubeRay's RayJob), the NVIDIA
GPU Operator's validators (the CUDA samples' "(error code <message>)!" check, the toolkit's
`nvidia-container-cli.real`), and dcgm-exporter ending at start-up; and the alarming but harmless
lines of the same systems (a Kueue requeue that is admitted again, dcgm-exporter skipping the
profiling metrics, pods starting, a pod restarted and Ready again), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # NVIDIA/gpu-operator/issues/1043: the GPU Operator's cuda-validation (CUDA samples' vectorAdd check) reports CUDA 802.
    (
        "https://github.com/NVIDIA/gpu-operator/issues/1043",
        "Failed to allocate device vector A (error code system not yet initialized)! [Vector addition of 5000 elements]\n"
        "\n"
        "$ kubectl get po -n gpu-operator\n"
        "NAME                                                          READY   STATUS       RESTARTS        AGE\n"
        "gpu-feature-discovery-dzmlj                                   1/1     Running      0               15m\n"
        "gpu-feature-discovery-pwks6                                   1/1     Running      0               15m\n"
        "gpu-feature-discovery-q992c                                   1/1     Running      0               15m\n"
        "gpu-feature-discovery-qzsm4                                   1/1     Running      0               15m\n"
        "gpu-operator-7bbf8bb6b7-9tw4v                                 1/1     Running      0               15m",
        "system_software",
        True,
        "cuda-system-not-ready",
    ),
    # NVIDIA/gpu-operator/issues/133: the toolkit's wrapped nvidia-container-cli.real fails in the OCI hook.
    (
        "https://github.com/NVIDIA/gpu-operator/issues/133",
        "Runtime sanity check passed.\n"
        "\n"
        "Installation of the kernel module for the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version 460.32.03) is now complete.\n"
        "\n"
        "Loading ipmi and i2c_core kernel modules...\n"
        "Loading NVIDIA driver kernel modules...\n"
        "Starting NVIDIA persistence daemon...\n"
        "Mounting NVIDIA driver rootfs...\n"
        "Done, now waiting for signal\n"
        "--------\n"
        'Error: failed to start container "cuda-vector-add": Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container process caused: process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli.real: initialization error: driver error: failed to process request: unknown',
        "system_software",
        True,
        "container-nvidia-cli-error",
    ),
    # marin-community/marin/issues/7806: Kueue's pod condition reason and its older preemption message.
    (
        "https://github.com/marin-community/marin/issues/7806",
        "| attempt | state | terminal_reason | error |\n"
        "|---|---|---|---|\n"
        "| 0 | 10 `PREEMPTED` | `WorkloadEvictedDueToPreempted: Preempted to accommodate a higher priority Workload` | Pod not found |\n"
        "| 1 | 7 `WORKER_FAILED` | `PodDeleted: pod was deleted while the attempt was active` | Pod not found |\n"
        "| 2 | 6 `KILLED` | | Terminated by user (probe stopped) |",
        "scheduler",
        True,
        "scheduler-kueue-preempted",
    ),
    # kubernetes-sigs/kueue/issues/7350: the Workload's Evicted condition, message wrapped over lines.
    (
        "https://github.com/kubernetes-sigs/kueue/issues/7350",
        "conditions:\n"
        '  - lastTransitionTime: "2025-10-23T06:33:17Z"\n'
        "   message: Quota reserved in ClusterQueue q1\n"
        "   observedGeneration: 1\n"
        "   reason: QuotaReserved\n"
        '   status: "True"\n'
        "   type: QuotaReserved\n"
        '  - lastTransitionTime: "2025-10-23T06:33:18Z"\n'
        "   message: 'Preempted to accommodate a workload (UID: 9f542104-a9e2-4344-ad2e-9c136204da18,\n"
        "    JobUID: a20d0a6a-64a3-46ce-9b95-8cfb3bf6e675) due to prioritization in the\n"
        "    ClusterQueue'\n"
        "   observedGeneration: 1\n"
        "   reason: Preempted\n"
        '   status: "True"\n'
        "   type: Evicted",
        "scheduler",
        True,
        "scheduler-kueue-preempted",
    ),
    # NVIDIA/gpu-monitoring-tools/issues/141: dcgm-exporter's fatal watch error.
    (
        "https://github.com/NVIDIA/gpu-monitoring-tools/issues/141",
        'time="2020-12-15T11:28:40Z" level=info msg="Starting dcgm-exporter"\n'
        'time="2020-12-15T11:28:40Z" level=info msg="DCGM successfully initialized!"\n'
        'time="2020-12-15T11:28:40Z" level=fatal msg="Error watching fields: This request is serviced by a module of DCGM that is not currently loaded"',
        "system_software",
        True,
        "dcgm-exporter-watch-failed",
    ),
    # NVIDIA/gpu-monitoring-tools/issues/96: dcgm-exporter's embedded host engine does not start on GKE.
    (
        "https://github.com/NVIDIA/gpu-monitoring-tools/issues/96",
        'time="2020-07-21T18:49:33Z" level=info msg="Starting dcgm-exporter"\n'
        "Error: Failed to initialize NVML\n"
        'time="2020-07-21T18:49:33Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"',
        "system_software",
        True,
        "dcgm-exporter-hostengine-failed",
    ),
    # kubeflow/trainer/issues/1579: kubectl get pytorchjob shows STATE Failed.
    (
        "https://github.com/kubeflow/trainer/issues/1579",
        "# kubectl get pytorchjob -n kubeflow\n"
        "NAME         STATE    AGE\n"
        "pytorchjob   Failed   12m\n"
        "\n"
        "# kubectl get pod -n kubeflow | grep pytorch\n"
        "pytorchjob-master-0                                      1/1     Running   0          12m\n"
        "pytorchjob-worker-0                                      0/1     Error     0          12m",
        "unknown",
        True,
        "scheduler-k8s-training-job-state-failed",
    ),
    # ray-project/kuberay/pull/2192: kubectl get rayjob -w ends FAILED / Failed.
    (
        "https://github.com/ray-project/kuberay/pull/2192",
        "$ kubectl get rayjob -w\n"
        "NAME            JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME                 START TIME             END TIME   AGE\n"
        "rayjob-sample                Initializing        rayjob-sample-raycluster-qhdx2   2024-06-13T14:42:08Z              6s\n"
        "rayjob-sample                Running             rayjob-sample-raycluster-qhdx2   2024-06-13T14:42:08Z              76s\n"
        "rayjob-sample   PENDING      Running             rayjob-sample-raycluster-qhdx2   2024-06-13T14:42:08Z              78s\n"
        "rayjob-sample   FAILED       Failed              rayjob-sample-raycluster-qhdx2   2024-06-13T14:42:08Z   2024-06-13T14:43:32Z   84s",
        "unknown",
        True,
        "scheduler-k8s-training-job-state-failed",
    ),
    # NVIDIA/gpu-operator/issues/1947: cuda-validation's driver too old for its CUDA runtime.
    (
        "https://github.com/NVIDIA/gpu-operator/issues/1947",
        "% oc logs nvidia-cuda-validator-qx58z  -c cuda-validation -n nvidia-gpu-operator\n"
        "[Vector addition of 50000 elements]\n"
        "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!\n"
        "\n"
        "% oc get pods\n"
        "NAME                                                  READY   STATUS                  RESTARTS         AGE\n"
        "gpu-feature-discovery-mx2bk                           1/1     Running                 4 (62m ago)      62m\n"
        "gpu-operator-559b66bcbd-f9tmz                         1/1     Running                 0                80m\n"
        "nvidia-container-toolkit-daemonset-h66x7              1/1     Running                 0                62m\n"
        "nvidia-cuda-validator-q6m4x                           0/1     Init:CrashLoopBackOff   5 (115s ago)     4m51s\n"
        "nvidia-dcgm-exporter-6qzkf                            1/1     Running                 0                62m",
        "system_software",
        True,
        "cuda-driver-mismatch",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_kubernetes_training_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    assert verdict(text) == (signature, category, retryable), source


# (source, excerpt)
HEALTHY = [
    # kubernetes-sigs/kueue/pull/2376: Kueue's PodsReady eviction, then the workload is admitted again.
    (
        "https://github.com/kubernetes-sigs/kueue/pull/2376",
        "Events:\n"
        "  Type    Reason                        Age                  From                       Message\n"
        "  ----    ------                        ----                 ----                       -------\n"
        "  Normal  Pending                       3m5s (x5 over 3m5s)  kueue-admission            couldn't assign flavors to pod set main: flavor spot doesn't match node affinity, insufficient unused quota for cpu in flavor on-demand, 1 more needed. Pending the preemption of 1 workload(s)\n"
        "  Normal  QuotaReserved                 3m5s                 kueue-admission            Quota reserved in ClusterQueue cluster-queue, wait time since queued was 1s\n"
        "  Normal  EvictedDueToPodsReadyTimeout  2m5s                 kueue-workload-controller  Exceeded the PodsReady timeout e2e-gsj4m/job-high-67543\n"
        "  Normal  Admitted                      65s (x2 over 3m5s)   kueue-admission            Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s",
    ),
    # NVIDIA/gpu-monitoring-tools/issues/180: dcgm-exporter skips the profiling metrics it cannot read and goes on.
    (
        "https://github.com/NVIDIA/gpu-monitoring-tools/issues/180",
        'time="2021-04-29T12:35:59Z" level=info msg="Starting dcgm-exporter"\n'
        'time="2021-04-29T12:35:59Z" level=info msg="DCGM successfully initialized!"\n'
        'time="2021-04-29T12:35:59Z" level=info msg="Not collecting DCP metrics: Error getting supported metrics: This request is serviced by a module of DCGM that is not currently loaded"\n'
        'time="2021-04-29T12:35:59Z" level=warning msg="Skipping line 55 (\'DCGM_FI_PROF_GR_ENGINE_ACTIVE\'): DCP metrics not enabled"\n'
        'time="2021-04-29T12:35:59Z" level=warning msg="Skipping line 58 (\'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE\'): DCP metrics not enabled"\n'
        'time="2021-04-29T12:35:59Z" level=warning msg="Skipping line 59 (\'DCGM_FI_PROF_DRAM_ACTIVE\'): DCP metrics not enabled"\n'
        'time="2021-04-29T12:35:59Z" level=warning msg="Skipping line 63 (\'DCGM_FI_PROF_PCIE_TX_BYTES\'): DCP metrics not enabled"\n'
        'time="2021-04-29T12:35:59Z" level=warning msg="Skipping line 64 (\'DCGM_FI_PROF_PCIE_RX_BYTES\'): DCP metrics not enabled"\n'
        'time="2021-04-29T12:35:59Z" level=info msg="Kubernetes metrics collection enabled!"',
    ),
    # ray-project/kuberay/issues/4356: RayCluster pods going from Init to Running.
    (
        "https://github.com/ray-project/kuberay/issues/4356",
        "~  k get raycluster -A\n"
        "NAMESPACE       NAME                       DESIRED WORKERS   AVAILABLE WORKERS   CPUS   MEMORY   GPUS   STATUS   AGE\n"
        "test-ns-5msxm   raycluster-auth-token      1                                     600m   2G       0               9s\n"
        "test-ns-5q7cf   fail-jbgwb                 1                 1                   600m   2G       0               3m49s\n"
        "test-ns-7r5v9   raycluster-embed-grafana   1                 1                   2      3G       0               175m\n"
        "~  k get po -n test-ns-5msxm\n"
        "NAME                                             READY   STATUS     RESTARTS   AGE\n"
        "raycluster-auth-token-head-vbjrq                 0/1     Running    0          15s\n"
        "raycluster-auth-token-small-group-worker-ksgpt   0/1     Init:0/1   0          15s\n"
        "~  k get po -n test-ns-5msxm\n"
        "NAME                                             READY   STATUS    RESTARTS   AGE\n"
        "raycluster-auth-token-head-vbjrq                 0/1     Running   0          19s\n"
        "raycluster-auth-token-small-group-worker-ksgpt   0/1     Running   0          19s",
    ),
    # kubernetes/kubernetes/issues/14307: a Succeeded pod whose container reason says Error with exit code 0.
    (
        "https://github.com/kubernetes/kubernetes/issues/14307",
        "$ kubectl describe pods/succeeder.yaml\n"
        "...\n"
        "Status:\t\t\t\tSucceeded\n"
        "...\n"
        "Containers:\n"
        "  c:\n"
        "    State:\t\tTerminated\n"
        "      Reason:\t\tError\n"
        "      Exit Code:\t0\n"
        "      Started:\t\tMon, 21 Sep 2015 13:55:06 -0700\n"
        "      Finished:\t\tMon, 21 Sep 2015 13:55:06 -0700",
    ),
    # spinframework/runtime-class-manager/issues/140: a Job complete 1/1 beside a pod left Unknown.
    (
        "https://github.com/spinframework/runtime-class-manager/issues/140",
        "kubectl get job\n"
        "NAME                            COMPLETIONS   DURATION   AGE\n"
        "kwasm-worker-spin-v2-install    1/1           28s        21m\n"
        "\n"
        "kubectl get po\n"
        "NAME                                  READY   STATUS      RESTARTS   AGE\n"
        "kwasm-worker-spin-v2-install-n82d9    0/1     Unknown     0          7m25s\n"
        "kwasm-worker-spin-v2-install-rq78d    0/1     Completed   0          7m3s\n"
        "\n"
        "kubectl logs kwasm-worker-spin-v2-install-n82d9 -c downloader\n"
        "2024-05-20T20:49:40     INFO    start downloading shim from  https://github.com/spinkube/containerd-shim-spin/releases/download/v0.14.1/containerd-shim-spin-v2-linux-aarch64.tar.gz...\n"
        "2024-05-20T20:49:42     INFO    download successful:",
    ),
    # kubernetes/kubernetes/issues/68286: a container that restarted once and is Ready again.
    (
        "https://github.com/kubernetes/kubernetes/issues/68286",
        "Containers:\n"
        "  static:\n"
        "    Container ID:   <my-container-id>\n"
        "    Image:          localhost:5000/static:v1\n"
        "    Image ID:       <my-image-id>\n"
        "    Port:           80/TCP\n"
        "    State:          Running\n"
        "      Started:      Tue, 04 Sep 2018 22:04:01 +0000\n"
        "    Last State:     Terminated\n"
        "      Reason:       Error\n"
        "      Exit Code:    2\n"
        "      Started:      Wed, 20 Dec 2017 20:07:22 +0000\n"
        "      Finished:     Tue, 04 Sep 2018 21:25:16 +0000\n"
        "    Ready:          True\n"
        "    Restart Count:  1\n"
        "    Requests:\n"
        "      cpu:        100m",
    ),
]


@pytest.mark.parametrize(("source", "text"), HEALTHY)
def test_kubernetes_training_notices_stay_healthy(source: str, text: str) -> None:
    assert diagnose(text).symptom == "none", source
