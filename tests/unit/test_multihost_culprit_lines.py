"""Whole excerpts of real multi-host logs where the line that ends the run names the node it was
raised on in the message rather than in a prefix: Ray's RayTaskError, whose remote traceback is
headed by the process that ran the task (`ray::W.f() (pid=.., ip=..)`; when one task re-raises
another's error, the last header is where it was raised, the wrappers only passed it on), and
DeepSpeed's launcher, whose failed ssh check quotes the host it could not reach. The alarming
but harmless lines of the same launchers (Ray's worker prefixes on startup lines, pdsh-prefixed
NCCL setup, Open MPI's tagged NCCL warnings) must stay healthy."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.prefixes import line_context
from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line, nodes implicated)
FAILURES = [
    # ray-project/ray issue 13953: a Tune trial's trainable raised on 172.31.1.180.
    (
        "https://github.com/ray-project/ray/issues/13953",
        "Failure # 1 (occurred at 2021-02-22_08-53-47)\n"
        "Traceback (most recent call last):\n"
        '  File "/home/ray/anaconda3/lib/python3.7/site-packages/ray/worker.py", line 1419, in get\n'
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(RuntimeError): ray::TorchTrainable.train_buffered() (pid=881, ip=172.31.1.180)\n"
        '  File "python/ray/_raylet.pyx", line 450, in ray._raylet.execute_task\n'
        '  File "python/ray/_raylet.pyx", line 483, in ray._raylet.execute_task',
        "unknown",
        True,
        "uncaught-exception",
        ["172.31.1.180"],
    ),
    # ray-project/ray issue 40758: Ray Train's trainer actor (10.0.0.78) re-raises the error of the
    # RayTrainWorker on 10.0.0.19; only the worker's node is where it was raised.
    (
        "https://github.com/ray-project/ray/issues/40758",
        '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/_private/worker.py", line 2547, in get\n'
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(DistBackendError): ray::_Inner.train() (pid=249, ip=10.0.0.78,"
        " actor_id=37a2771439edeb1576a519a301000000, repr=TorchTrainer)\n"
        '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/tune/trainable/trainable.py", line 400, in train\n'
        "    raise skipped from exception_cause(skipped)\n"
        '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/train/_internal/utils.py", line 54, in check_for_failure\n'
        "    ray.get(object_ref)\n"
        "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() (pid=192, ip=10.0.0.19,"
        " actor_id=a3e4eb7bfa5c10d44e303ba301000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at"
        " 0x7fbfd5e7a100>)\n"
        '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/train/_internal/worker_group.py", line 33, in __execute\n'
        "    raise skipped from exception_cause(skipped)",
        "unknown",
        True,
        "uncaught-exception",
        ["10.0.0.19"],
    ),
    # deepspeedai/DeepSpeed issue 4907: the launcher's ssh check of the first host fails; the log
    # is cut before the RuntimeError that says so.
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/4907",
        "[2024-01-06 11:41:34,489] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda"
        " (auto detect)\n"
        "Traceback (most recent call last):\n"
        '  File "/root/anaconda3/envs/DS/lib/python3.9/site-packages/deepspeed/launcher/runner.py", line 437, in main\n'
        "    subprocess.check_call(ssh_check_cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, shell=True)\n"
        '  File "/root/anaconda3/envs/DS/lib/python3.9/subprocess.py", line 373, in check_call\n'
        "    raise CalledProcessError(retcode, cmd)\n"
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned"
        " non-zero exit status 255.\n"
        "\n"
        "During handling of the above exception, another exception occurred:",
        "network",
        True,
        "deepspeed-ssh-check-failed",
        ["192.168.3.100"],
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature", "nodes"), FAILURES)
def test_the_node_the_message_names(
    source: str, text: str, category: str, retryable: bool, signature: str, nodes: list[str]
) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)
    assert found.implicated.nodes == nodes


def test_two_ray_task_errors_of_their_own_keep_both_nodes() -> None:
    # The headers of ray-project/ray issues 13953 and 40850, each after its own `Traceback`: two
    # errors, not a chain of re-raises, so neither node stands for the other.
    found = diagnose(
        "Traceback (most recent call last):\n"
        '  File "/home/ray/anaconda3/lib/python3.7/site-packages/ray/worker.py", line 1419, in get\n'
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(RuntimeError): ray::TorchTrainable.train_buffered() (pid=881, ip=172.31.1.180)\n"
        "Traceback (most recent call last):\n"
        '  File "/home/user/.local/lib/python3.9/site-packages/ray/_private/worker.py", line 2547, in get\n'
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute.get_next() (pid=83501,"
        " ip=192.168.0.107, actor_id=1233961e30eb797677364e690b000000, repr=<ray.train._internal.worker_group."
        "RayTrainWorker object at 0x7f6d38468490>)"
    )
    assert sorted(found.implicated.nodes) == ["172.31.1.180", "192.168.0.107"]


def test_a_ray_actor_with_an_unspecified_address_names_no_node() -> None:
    # OpenRLHF's vLLM actor reports its creation-task error with `ip=0.0.0.0`: no node to name.
    found = diagnose(
        "(LLMRayActor pid=433508) Exception raised in creation task: The actor died because of an error raised in"
        " its creation task, ray::LLMRayActor.__init__() (pid=433508, ip=0.0.0.0,"
        " actor_id=308f1877a62944c81acf867002000000, repr=<openrlhf.trainer.ray.vllm_engine.LLMRayActor object at"
        " 0x7edc5858a7a0>)"
    )
    assert found.symptom == "crash"
    assert "0.0.0.0" not in found.implicated.nodes


def test_a_ray_prefix_keeps_its_node_when_a_paste_dropped_the_escapes() -> None:
    # AWS Neuron's Ray Train tutorial for Llama 3 on Trn1 (its troubleshooting section) quotes the
    # worker lines with the ESC of Ray's colour codes gone and the rest of each code kept.
    lines = [
        "[36m(RayTrainWorker pid=3462, ip=100.64.83.225)[0m [nltk_data] '/root/nltk_data/tokenizers/punkt_tab.zip'",
        "[36m(RayTrainWorker pid=3483, ip=100.64.83.225)[0m Bad CRC-32 for file 'punkt_tab/czech/ortho_context.tab'",
    ]
    assert [line_context(line).host for line in lines] == ["100.64.83.225", "100.64.83.225"]


HEALTHY = [
    # ray-project/ray issue 33290: Ray Lightning registers its two processes and NCCL starts.
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
    "(RayExecutor pid=423719, ip=172.16.0.2) Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
    "(RayExecutor pid=508760) distributed_backend=nccl\n"
    "(RayExecutor pid=508760) All distributed processes registered. Starting with 2 processes\n"
    "(RayExecutor pid=508760) hostssh:508760:508760 [0] NCCL INFO Bootstrap : Using enp3s0:172.16.96.59<0>\n"
    "(RayExecutor pid=508760) hostssh:508760:508760 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so),"
    " using internal implementation",
    # huggingface/transformers issue 22363: DeepSpeed's pdsh prefixes on NCCL's topology lines.
    "gpu1505: gpu1505:22060:22171 [0] NCCL INFO Setting affinity for GPU 0 to 04\n"
    "gpu1505: gpu1505:22060:22171 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 1, bw 12.000000/12.000000,"
    " type LOC/PHB, sameChannels 1\n"
    "gpu1505: gpu1505:22060:22171 [0] NCCL INFO  0 : NET/1 GPU/1 NET/1",
    # horovod/horovod issue 1122: Open MPI's tags on NCCL's lines; NCCL cannot open libibverbs and
    # goes on over sockets.
    "[1,0]<stdout>:mlc-cluster-22:7617:7635 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "[1,0]<stdout>:mlc-cluster-22:7617:7635 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    "[1,0]<stdout>:NCCL version 2.4.2+cuda10.0",
    # deepspeedai/DeepSpeedExamples issue 845: the launcher names the workers it starts over pdsh.
    "[2024-01-08 16:13:56,462] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers:"
    " 192.168.3.100,192.168.3.101",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_launcher_lines_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
