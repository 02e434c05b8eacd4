"""Real excerpts of training jobs outside torchrun: JAX/XLA on TPUs and GPUs, Ray, Kubernetes and
Kubeflow's training operator, MPI launchers and Horovod, TensorFlow's distributed runtime. Each is
diagnosed as the system's own message says it means, with the public thread it comes from (public
addresses replaced by 10.x ones). Warnings and chatter of healthy runs must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

FAILURES = [
    # github.com/adda-team/adda/issues/151: Open MPI's help text is wrapped, the signal on the next line
    (
        "[proton:10319] *** End of error message ***\n"
        "--------------------------------------------------------------------------\n"
        "mpiexec noticed that process rank 0 with PID 10313 on node proton exited on \n"
        "signal 6 (Aborted).\n"
        "--------------------------------------------------------------------------\n"
        "8 total processes killed (some possibly by mpiexec during cleanup)",
        "unknown",
        True,
    ),
    # github.com/horovod/horovod/issues/100: Horovod's stall warning before 0.13 listed ready ranks
    (
        "This may indicate that different ranks are trying to submit different tensors or that only subset"
        " of ranks is submitting tensors, which will cause deadlock.\n\nStalled ops: \n"
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllgather_model_model_gradients_concat_0"
        " [ready ranks: 1], \n"
        "model/model/DistributedAdamOptimizer_Allreduce/HorovodAllreduce_model_model_gradients_AddN_58_0"
        " [ready ranks: 1], ",
        "unknown",
        True,
    ),
    # github.com/openpmix/prrte/issues/1493: ssh to the node failed first (ORTE era wording)
    (
        "ssh_exchange_identification: Connection closed by remote host\n\n"
        "--------------------------------------------------------------------------\n"
        "ORTE was unable to reliably start one or more daemons.\n"
        "This usually is caused by:\n\n"
        "* not finding the required libraries and/or binaries on\n"
        "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
        "network",
        True,
    ),
    # github.com/ray-project/ray/issues/3628: Ray before 1.0 marked a node dead by its client ID
    (
        "The node with client ID 581656f84659be9bba58da993729644cfb554836 has been marked dead because the"
        " monitor has missed too many heartbeats from it.\n\n"
        "> Traceback (most recent call last):\n"
        '>   File "mnist_main.py", line 154, in <module>\n'
        ">     train()\n"
        "> ray.worker.RayGetError: Could not get objectid ObjectID(0100000008623a3fd1946a9132866d6f6113876e)."
        " It was created by remote function <unknown> which failed with:",
        "hardware",
        True,
    ),
    # github.com/ray-project/ray/issues/43751: Ray Train's worker lost with its node
    (
        '  File "/root/miniconda/envs/main-env/lib/python3.10/site-packages/ray/train/_internal/utils.py",'
        " line 43, in check_for_failure\n"
        "    ray.get(object_ref)\n"
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"
        "\tclass_name: RayTrainWorker\n"
        "\tactor_id: 4473bb2424de8ebfec88acc402000000\n"
        "\tpid: 6420\n"
        "\tip: 10.72.56.3\n"
        "The actor is dead because its node has died. Node Id:"
        " 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0",
        "hardware",
        True,
    ),
    # github.com/ray-project/ray/pull/58638: the NODE_DIED task error
    (
        "Task failed because the node it was running on is dead or unavailable. Node IP: 127.0.0.1, node ID:"
        " e55b8ca03ebf3f7418f51533d8d55abeaab75fa9b29e2e6282b47646. This can happen if the node was preempted,"
        " had a hardware failure, or its raylet crashed unexpectedly.",
        "hardware",
        True,
    ),
    # github.com/ray-project/ray/pull/27716: the memory monitor's first wording
    (
        "(raylet) [2022-08-29 15:18:33,592 E 30307 30344] (raylet) node_manager.cc:2963: System memory low at"
        " node with IP 172.17.0.2. Used memory (23.63GB) / total capacity (33.28GB) (0.709971) exceeds"
        " threshold 0.7, killing latest task with name the_real_oom_actor:Leaker.__init__ and actor ID"
        " dc0d34f19836a07b46222dbc01000000 to avoid running out of memory.\n"
        "(raylet) This may indicate a memory leak in a task or actor, or that too many tasks are running in"
        " parallel.",
        "out_of_memory",
        False,
    ),
    # github.com/pytorch/xla/issues/2569: TensorFlow 1's "Resource exhausted" spelling on a TPU
    (
        "2020-10-22 02:48:58 10.128.0.33 [3]   (1) Resource exhausted: Attempting to allocate 180.59M. That"
        " was not possible. There are 142.58M free.; (0x3x0_HBM1)",
        "out_of_memory",
        False,
    ),
    # github.com/pytorch/xla/issues/1735: the TPU allocator's report under a generic RuntimeError
    (
        "RuntimeError: Resource exhausted: From /job:tpu_worker/replica:0/task:0:\n"
        "Attempting to reserve 3.95G at the bottom of memory. That was not possible. There are 1.92G free, 0B"
        " reserved, and 1.92G reservable.; \n"
        "HBM capacity 8.00G:\n"
        "       Top-of-Memory reserved:  529.00M (     554,696,704 bytes)",
        "out_of_memory",
        False,
    ),
    # github.com/google/paxml/issues/77: a task could not register with the JAX coordinator
    (
        "> > Additional GRPC error information from remote target unknown_target_for_coordination_leader while"
        " calling /tensorflow.CoordinationService/RegisterTask:\n"
        '> :{"created":"@1712965181.656280441","description":"Deadline Exceeded","file":"external/'
        'com_github_grpc_grpc/src/core/ext/filters/deadline/deadline_filter.cc","file_line":69,"grpc_status":4}\n'
        "> 2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination service"
        " agent in error status: DEADLINE_EXCEEDED: Deadline Exceeded",
        "network",
        True,
    ),
    # github.com/sql-machine-learning/elasticdl/issues/1494: grpcio before 1.26 raised _Rendezvous
    (
        "grpc._channel._Rendezvous: <_Rendezvous of RPC that terminated with:\n"
        "\tstatus = StatusCode.UNAVAILABLE\n"
        '\tdetails = "failed to connect to all addresses"',
        "network",
        True,
    ),
    # github.com/kubeflow/trainer/issues/1661: runc could not even start the container's init
    (
        'Warning  Failed  113s   kubelet  Error: container create failed: time="2022-09-14T11:35:13Z"'
        ' level=error msg="runc create failed: unable to start container process: container init was'
        ' OOM-killed (memory limit too low?)"',
        "out_of_memory",
        False,
    ),
    # github.com/kubeflow/trainer/issues/2044: the training operator reports the replica's exit
    (
        "INFO[0289] Pod: default.kfto-01-master-0 exited with code 1  job=default.kfto-01 replica-type=master"
        " uid=4acaf99e-c0e0-424e-b6fe-9cbb2e303f3b\n"
        "INFO[0289] PyTorchJob=kfto-01, ReplicaType=Master expected=1, running=0, succeeded=0, failed=1,"
        " Replicas=1",
        "unknown",
        True,
    ),
    # github.com/kubeflow/trainer/issues/2008: the same as an event
    (
        "1.708507856644096e+09\tDEBUG\tevents\tError pod pytorch-simple-worker-0 container pytorch exitCode: 1"
        ' terminated message: \t{"type": "Warning", "object": {"kind":"PyTorchJob","namespace":"kubeflow",'
        '"name":"pytorch-simple"}, "reason": "Error"}',
        "unknown",
        True,
    ),
    # github.com/hiyouga/EasyR1/issues/324: the actor's owner went away with its node
    (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "        class_name: Runner\n"
        "        ip: 10.21.160.9\n"
        "The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff"
        " Owner Ip address: 10.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has"
        " crashed.",
        "hardware",
        True,
    ),
    # github.com/minimaxir/gpt-2-simple/issues/282: TensorFlow's class by its short name, in a notebook
    (
        "ResourceExhaustedError                    Traceback (most recent call last)\n"
        "/usr/local/lib/python3.7/dist-packages/tensorflow/python/client/session.py in _do_call(self, fn, *args)\n"
        "-> 1380       return fn(*args)\n\n"
        "ResourceExhaustedError: failed to allocate memory\n"
        "\t [[{{node model/h18/ln_2/add_1}}]]",
        "out_of_memory",
        False,
    ),
    # github.com/pytorch/xla/issues/6700: TF_CHECK_OK aborts on a failed status; its code decides
    (
        "> t1 @ t2\n"
        "Non-OK-status: status.status() status: UNIMPLEMENTED: While rewriting computation to not contain X64"
        " element types, XLA encountered an HLO for which this rewriting is not implemented: %dot.3 = s64[]"
        " dot(s64[3]{0} %p1.2, s64[3]{0} %p0.1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
        "application",
        False,
    ),
]

HEALTHY = [
    # github.com/open-mpi/ompi/issues/6517: Open MPI 4 skips openib for UCX and says so
    "--------------------------------------------------------------------------\n"
    "WARNING: There was an error initializing an OpenFabrics device.\n\n"
    "  Local host:   c36a-s39\n"
    "  Local device: mlx4_0\n"
    "--------------------------------------------------------------------------\n"
    "[c36a-s39.ufhpc:252551] common_ucx.c:108 using OPAL memory hooks as external events\n"
    "[c36a-s39.ufhpc:252551] pml_ucx.c:134 mca_pml_ucx_open",
    # github.com/horovod/horovod/issues/308: Open MPI's subnet warning and optional components absent
    "WARNING: There are more than one active ports on host 'login3', but the\n"
    "default subnet GID prefix was detected on more than one of these\n"
    "ports.  If these ports are connected to different physical IB\n"
    "networks, this configuration will fail in Open MPI.\n"
    "[login3:29852] mca_base_component_repository_open: unable to open mca_pml_pami: libpami.so.3: cannot"
    " open shared object file: No such file or directory (ignored)",
    # github.com/horovod/horovod/issues/3333: libibverbs probing absent devices, NCCL bootstrapping
    "[1,3]<stderr>:libibverbs: Warning: couldn't stat '/sys/class/infiniband/mlx5_13'.\n"
    "[1,4]<stdout>:tensorflow-mnist-worker-0:8366:8910 [4] NCCL INFO Bootstrap : Using [0]eth1:10.0.0.74<0>\n"
    "[1,4]<stdout>:tensorflow-mnist-worker-0:8366:8910 [4] NCCL INFO NET/Plugin : No plugin found"
    " (libnccl-net.so), using internal implementation",
    # github.com/tensorflow/tensorflow/issues/49980: MirroredStrategy's start-up warning
    "WARNING:tensorflow:Collective ops is not configured at program startup. Some performance features may"
    " not be enabled.",
    # github.com/tensorflow/tensorflow/pull/31961: reinitialising a TPU system
    "WARNING:tensorflow:TPU system %s has already been initialized. Reinitializing the TPU can cause"
    " previously created variables on TPU to be lost.",
    # github.com/tensorflow/tensorflow/issues/30284: MultiWorkerMirroredStrategy's collective chatter
    "I0716 09:31:00.398242 139695682893632 cross_device_ops.py:1053] Collective batch_all_reduce: 10"
    " all-reduces, num_workers = 2\n"
    "I0716 09:31:00.764759 139695682893632 basic_session_run_hooks.py:541] Create CheckpointSaverHook.",
    # github.com/huggingface/transformers/issues/27294: tcmalloc reporting a large allocation on a TPU VM
    "cmalloc: large alloc 13261799424 bytes == 0x53d90000 @  0x7efe22acb680 0x7efe22aec824 0x7efe22aecb8a",
    # github.com/ray-project/ray/issues/6369: a Tune status table with no errored trial
    "Number of trials: 1000 ({'TERMINATED': 252, 'RUNNING': 63, 'PENDING': 685})\n"
    "| PG_CartPole-v0_61e5eca8 | TERMINATED |       |      1 |          20.0927 |         200 |  21.125  |",
    # github.com/kubeflow/trainer/issues/2044: a replica that finished, and a restart that is not an end
    "INFO[0512] Pod: default.kfto-01-master-0 exited with code 0  job=default.kfto-01 replica-type=master",
    "PyTorchJob kfto-01 is restarting because 1 Master replica(s) failed.",
    # OpenSSH's client adding a host key: not a failed connection
    "Warning: Permanently added 'gpu-node-7,10.0.0.7' (ECDSA) to the list of known hosts.",
]


@pytest.mark.parametrize(("text", "category", "retryable"), FAILURES)
def test_a_cluster_stack_excerpt_reads_as_its_source_means(text: str, category: str, retryable: bool) -> None:
    assert verdict(text)[1:] == (category, retryable)


@pytest.mark.parametrize("text", HEALTHY)
def test_cluster_stack_chatter_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)


def test_a_wrapped_launcher_line_still_names_the_rank_and_node() -> None:
    # github.com/adda-team/adda/issues/151
    found = diagnose(
        "mpiexec noticed that process rank 0 with PID 10313 on node proton exited on \nsignal 6 (Aborted)."
    )
    assert (found.implicated.ranks, found.implicated.nodes) == ([0], ["proton"])


def test_the_ssh_failure_outranks_the_launch_notice_it_causes() -> None:
    # github.com/openpmix/prrte/issues/1493 quotes the ssh line above ORTE's notice
    found = diagnose(
        "ssh: connect to host gpu-node-7 port 22: Connection timed out\n"
        "ORTE was unable to reliably start one or more daemons."
    )
    assert found.evidence[0].signature == "ssh-connect-failed"
    assert found.implicated.nodes == ["gpu-node-7"]
