"""Whole excerpts of real logs where a training job's fabric or sockets failed, as the transport
printed it: NCCL before 2.10 reporting a socket a peer closed or reset without naming the peer
(and NCCL 2.3's proxy thread reporting the failed operation after it), UCX's verbs transport
logging a failed send completion at its FATAL level, and the current forms around them (a socket
connect failure, Gloo's full-mesh connect, a c10d store connect timeout); and a healthy
nccl-tests result table, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # pytorch/pytorch issue 17703: NCCL 2.3 on two pods; the socket write and recv fail with a
    # reset connection and the proxy thread reports the failed operation after each.
    (
        "https://github.com/pytorch/pytorch/issues/17703",
        "On on pod:\n"
        "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Connection reset  by peer.\n"
        "worker0-0d9gnb:15:91 [3] transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread error]\n"
        "On the other pod:\n"
        "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to recv failed : Connection reset  by peer.\n"
        "worker0-0d9gnb:15:91 [3] transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread error]",
        "network",
        True,
        "nccl-socket-failed-unnamed-peer",
    ),
    # openucx/ucx issue 2322: Open MPI over UCX's rc_verbs transport on RoCE; with no error
    # handler the failed send completion is logged at FATAL level, in lower case.
    (
        "https://github.com/openucx/ucx/issues/2322",
        "Tue Feb 27 20:11:36 2018[1,312]<stderr>:[jazz22:93644:0:93644] rc_verbs_iface.c:63   FATAL: send completion"
        " with error: transport retry counter exceeded\n"
        "Tue Feb 27 20:11:36 2018[1,276]<stderr>:[jazz18:122053:0:122053] rc_verbs_iface.c:63   FATAL: send completion"
        " with error: transport retry counter exceededTue Feb 27 20:11:36 2018[1,387]<stderr>:\n"
        "Tue Feb 27 20:11:36 2018[1,387]<stderr>:/hpc/local/benchmarks/hpcx_install_2018-02-27/src/hpcx-gcc-redhat7.4"
        "/ucx-hpcx-v2.1/src/ucs/debug/log.c: [ ucs_log_dispatch() ]\n"
        "Tue Feb 27 20:11:36 2018[1,275]<stderr>:      ...",
        "network",
        True,
        "ucx-transport-error",
    ),
    # wenet-e2e/wenet issue 1891: NCCL's socket transport cannot reach a peer's link-local address.
    (
        "https://github.com/wenet-e2e/wenet/issues/1891",
        "voicec105:90736:90736 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "voicec105:90736:90736 [0] NCCL INFO NET/Socket : Using [0]eno1:172.16.20.105<0>\n"
        "voicec105:90736:90736 [0] NCCL INFO Using network Socket\n"
        "voicec105:90736:91655 [0] NCCL INFO Channel 00 : 1[89000] -> 2[b1000] [send] via NET/Socket/0\n"
        "\n"
        "voicec105:90736:91655 [0] include/socket.h:403 NCCL WARN Connect to fe80::c4eb:49ff:fe04:e32d%6<57335>"
        " failed : Network is unreachable",
        "network",
        True,
        "nccl-socket-connect-failed",
    ),
    # vllm-project/vllm issue 15537: the worker's CPU (Gloo) group cannot connect its full mesh.
    (
        "https://github.com/vllm-project/vllm/issues/15537",
        'ERROR 03-26 09:15:56 [worker_base.py:620]   File "/opt/venv/lib/python3.12/site-packages/torch/distributed'
        '/distributed_c10d.py", line 1953, in _new_process_group_helper\n'
        "ERROR 03-26 09:15:56 [worker_base.py:620]     backend_class = ProcessGroupGloo(\n"
        "ERROR 03-26 09:15:56 [worker_base.py:620] RuntimeError: Gloo connectFullMesh failed with"
        " [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/opt/venv/bin/vllm", line 10, in <module>\n'
        "[rank0]:     sys.exit(main())",
        "network",
        True,
        "torch-gloo-connect-full-mesh-failed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_fabric_and_socket_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_store_connect_timeout_wins_over_the_watchdog_timeout_it_causes() -> None:
    # OpenRLHF/OpenRLHF issue 265: the vLLM worker cannot reach the c10d store; the actor's
    # collective then times out waiting for it.
    found = diagnose(
        "(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after 1800s"
        " while trying to connect to (172.17.0.2\n"
        ", 44737).\n"
        "(CriticModelRayActor pid=489290) \n"
        "Loading checkpoint shards: 100%|██████████| 38/38 [00:33<00:00,  1.69it/s]\n"
        "Loading checkpoint shards: 100%|██████████| 38/38 [00:33<00:00,  1.15it/s] [repeated 2x across cluster]\n"
        "(CriticModelRayActor pid=489162) Some weights of LLMForSequenceRegression were not initialized from the model"
        " checkpoint at Qwen/Qwen1.5-72B-Chat and\n"
        " are newly initialized: ['value_head.weight'] [repeated 3x across cluster]\n"
        "(CriticModelRayActor pid=489162) You should probably TRAIN this model on a down-stream task to be able to use"
        " it for predictions and inference. [repe\n"
        "ated 3x across cluster]\n"
        "(CriticModelRayActor pid=489162) Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root..."
        " [repeated 3x across cluster]\n"
        "(CriticModelRayActor pid=489290) Loading extension module cpu_adam... [repeated 3x across cluster]\n"
        "(ActorModelRayActor pid=207260, ip=10.0.1.75) [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective"
        " operation timeout: WorkNCCL(SeqNum=385\n"
        "6, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800268 milliseconds before timing out."
    )
    assert (found.symptom, found.category, found.retryable) == ("crash", "network", True)
    assert found.evidence[0].signature == "c10d-store-connect-timeout"


HEALTHY = [
    # aws/aws-k8s-tester pull 503: a multi-node nccl-tests run's result table.
    "[1,0]<stdout>:#                                                              out-of-place                     in-place\n"
    "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw  #wrong\n"
    "[1,0]<stdout>:           8             2     float     sum      -1    12.90    0.00    0.00      0    12.87    0.00"
    "    0.00      0\n"
    "[1,0]<stdout>:          16             4     float     sum      -1    12.88    0.00    0.00      0    12.83    0.00"
    "    0.00      0",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_fabric_output_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
