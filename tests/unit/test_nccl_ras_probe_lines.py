"""Whole excerpts of real logs with NCCL's newer messages (2.19 to 2.30) as other projects' users
paste them: its verbs, NVLS, sysfs and bootstrap failures, the watchdog's remote error, and the
reports of NCCL's RAS subsystem (2.24+, `ncclras`): a job process declared dead, a process that
no longer answers; and the alarming but harmless NCCL chatter (no IB device, no tuner or net
plugin, libibverbs missing, the proxy's set-up lines, a healthy RAS report), which must stay
healthy. RAS's outputs are quoted from NCCL's own guide (docs/userguide/source/troubleshooting/
ras.rst), which prints them from a job where one process was stopped."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

RAS_GUIDE = "https://github.com/NVIDIA/nccl/blob/master/docs/userguide/source/troubleshooting/ras.rst"

# (source, excerpt, symptom, category, retryable, signature of the first evidence line)
FAILURES = [
    # deepseek-ai/DeepEP issue 143: verbs cannot create a completion queue (ENOMEM) while IB connections are set up; the proxy's Connect fails after it.
    (
        "https://github.com/deepseek-ai/DeepEP/issues/143",
        (
            "msm-h200-2:4016:4653 [7] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory\n"
            "msm-h200-2:4016:4653 [7] NCCL INFO transport/net_ib.cc:659 -> 2\n"
            "msm-h200-2:4016:4653 [7] NCCL INFO transport/net_ib.cc:795 -> 2\n"
            "msm-h200-2:4016:4653 [7] NCCL INFO transport/net.cc:683 -> 2\n"
            "\n"
            "msm-h200-2:4009:4658 [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory\n"
            "msm-h200-2:4009:4658 [0] NCCL INFO transport/net_ib.cc:659 -> 2\n"
            "msm-h200-2:4009:4658 [0] NCCL INFO transport/net_ib.cc:795 -> 2\n"
            "msm-h200-2:4009:4658 [0] NCCL INFO transport/net.cc:683 -> 2\n"
            "msm-h200-2:4011:4581 [2] NCCL INFO transport/net.cc:304 -> 2\n"
            "msm-h200-2:4011:4581 [2] NCCL INFO transport.cc:165 -> 2\n"
            "msm-h200-2:4011:4581 [2] NCCL INFO init.cc:1222 -> 2\n"
            "msm-h200-2:4011:4581 [2] NCCL INFO init.cc:1501 -> 2\n"
            "msm-h200-2:4011:4581 [2] NCCL INFO group.cc:64 -> 2 [Async thread]\n"
            "\n"
            "msm-h200-2:4011:4650 [2] proxy.cc:1533 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n"
            "\n"
            "msm-h200-2:4011:4650 [2] proxy.cc:1567 NCCL WARN [Proxy Service 10] Failed to execute operation Connect from rank 10, retcode 3\n"
            "msm-h200-2:4011:4011 [2] NCCL INFO group.cc:418 -> 2\n"
            "msm-h200-2:4011:4011 [2] NCCL INFO init.cc:1876 -> 2\n"
            "msm-h200-2:4013:4577 [4] NCCL INFO transport/net.cc:304 -> 2\n"
        ),
        "crash",
        "network",
        True,
        "ib-verbs-failed",
    ),
    # vllm-project/vllm issue 2521: the watchdog dies on a CUDA call made while vLLM captures CUDA graphs.
    (
        "https://github.com/vllm-project/vllm/issues/2521",
        (
            "(RayWorkerVllm pid=117639) INFO 01-20 19:51:03 model_runner.py:501] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.\n"
            "(RayWorkerVllm pid=117639) INFO 01-20 19:51:03 model_runner.py:505] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode.\n"
            "[E ProcessGroupNCCL.cpp:915] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: operation not permitted when stream is capturing\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
            "\n"
            "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44\n"
        ),
        "crash",
        "application",
        False,
        "cuda-stream-capture-unsupported",
    ),
    # vllm-project/vllm issue 6732: NCCL's NVLS set-up gets CUDA 'invalid argument' on every GPU of the pod.
    (
        "https://github.com/vllm-project/vllm/issues/6732",
        (
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:843:843 [5] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:774:774 [0] NCCL INFO transport/nvls.cc:328 -> 1\n"
            "\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:842:842 [4] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:839:839 [1] NCCL INFO transport/nvls.cc:328 -> 1\n"
            "\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:840:840 [2] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:844:844 [6] NCCL INFO transport/nvls.cc:328 -> 1\n"
            "\n"
            "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:841:841 [3] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'\n"
        ),
        "crash",
        "system_software",
        True,
        "nccl-own-cuda-call-refused",
    ),
    # dmlc/xgboost issue 7994: in a container NCCL cannot resolve the GPU's PCI path under /sys.
    (
        "https://github.com/dmlc/xgboost/issues/7994",
        (
            "0d2e39cf9b5e:201:268 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.5<0>\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
            "\n"
            "0d2e39cf9b5e:201:268 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.5<0>\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO Using network Socket\n"
            "NCCL version 2.8.3+cuda11.0\n"
            "\n"
            "0d2e39cf9b5e:201:268 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:0b/../../0000:0b:00.0\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO graph/xml.cc:469 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO graph/xml.cc:660 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO graph/topo.cc:522 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO init.cc:627 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO init.cc:878 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO init.cc:914 -> 2\n"
            "0d2e39cf9b5e:201:268 [0] NCCL INFO init.cc:926 -> 2\n"
        ),
        "crash",
        "system_software",
        True,
        "nccl-gpu-pci-path-missing",
    ),
    # EasonXiao-888/MambaTree issue 14: the first barrier's ncclInternalError names the bootstrap's missing interface.
    (
        "https://github.com/EasonXiao-888/MambaTree/issues/14",
        (
            "/home/user/anaconda3/envs/grootv/lib/python3.9/site-packages/mmcv/__init__.py:20: UserWarning: On January 1, 2023, MMCV will release v2.0.0, in which it will remove components related to the training process and add a data transformation module. In addition, it will rename the package names mmcv to mmcv-lite and mmcv-full to mmcv. See https://github.com/open-mmlab/mmcv/blob/master/docs/en/compatibility.md for more details.\n"
            "  warnings.warn(\n"
            "=> merge config from GrootV/classification/config/grootv_t_1k_224.yaml\n"
            "RANK and WORLD_SIZE in environ: 0/1\n"
            "Traceback (most recent call last):\n"
            '  File "/home/user/MambaTree-main/GrootV/classification/main.py", line 627, in <module>\n'
            "    torch.distributed.barrier()\n"
            '  File "/home/user/anaconda3/envs/grootv/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 3145, in barrier\n'
            "    work = default_pg.barrier(opts=opts)\n"
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1201, internal error, NCCL version 2.14.3\n"
            "ncclInternalError: Internal check failed.\n"
            "Last error:\n"
            "Bootstrap : no socket interface found\n"
        ),
        "crash",
        "system_software",
        True,
        "nccl-no-socket-interface",
    ),
    # hiyouga/LlamaFactory issue 6849: the watchdog's ncclRemoteError; its last error is a broken pipe from a peer.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/6849",
        (
            "pt-gbcg65vy-worker-0:4288:4521 [1] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\n"
            "pt-gbcg65vy-worker-0:4287:4512 [0] NCCL INFO [Service thread] Connection closed by localRank 0\n"
            "pt-gbcg65vy-worker-0:4288:4516 [1] NCCL INFO [Service thread] Connection closed by localRank 1\n"
            "pt-gbcg65vy-worker-0:4288:4421 [1] NCCL INFO comm 0x5649149de2c0 rank 5 nranks 8 cudaDev 1 busId a7000 - Abort COMPLETE\n"
            "[rank5]:[E207 19:37:09.983540349 ProcessGroupNCCL.cpp:681] [Rank 5] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
            "[rank5]:[E207 19:37:09.983555114 ProcessGroupNCCL.cpp:695] [Rank 5] To avoid data inconsistency, we are taking the entire process down.\n"
            "[rank5]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 5] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
            "Last error:\n"
            "socketProgressOpt: Call to recv from 10.119.24.53<49901> failed : Broken pipe\n"
            "Exception raised from checkForNCCLErrorsInternal at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2363 (most recent call first):\n"
            "frame #0: c10::Error::Error(c10::Source\n"
        ),
        "crash",
        "network",
        True,
        "nccl-remote-error",
    ),
    # google-deepmind/mujoco_warp issue 425: Warp unloads a module while XLA captures a CUDA graph;
    # the capture is invalidated and training fails.
    (
        "https://github.com/google-deepmind/mujoco_warp/issues/425",
        (
            "Warp CUDA error 900: operation not permitted when stream is capturing (in function wp_cuda_unload_module, /builds/omniverse/warp/warp/native/warp.cu:3947)\n"
            "Warp CUDA error 900: operation not permitted when stream is capturing (in function wp_cuda_unload_module, /builds/omniverse/warp/warp/native/warp.cu:3947)\n"
            "Warp CUDA error 900: operation not permitted when stream is capturing (in function wp_cuda_unload_module, /builds/omniverse/warp/warp/native/warp.cu:3947)\n"
            "2025-06-27 14:26:46.635982: E external/xla/xla/stream_executor/cuda/[cuda_command_buffer.cc:772](http://cuda_command_buffer.cc:772/)] CUDA error: Failed to destroy CUDA graph: CUDA_ERROR_INVALID_VALUE: invalid argument\n"
            "E0627 14:26:46.636043  681062 [pjrt_stream_executor_client.cc:2916](http://pjrt_stream_executor_client.cc:2916/)] Execution of replica 0 failed: INTERNAL: CUDA error: Failed to end stream capture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation failed due to a previous error during capture\n"
            "ERROR:__main__:Training failed with error: INTERNAL: CUDA error: Failed to end stream capture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation failed due to a previous error during capture\n"
            "ERROR:__main__:Full traceback:\n"
            "Traceback (most recent call last):\n"
        ),
        "crash",
        "application",
        False,
        "cuda-stream-capture-unsupported",
    ),
    # NCCL's RAS guide: the report after RAS gave up reconnecting to the stopped process.
    (
        RAS_GUIDE,
        (
            "Errors\n"
            "======\n"
            "\n"
            "DEAD\n"
            "  1 job process is considered dead (unreachable via the RAS network)\n"
            "  Process 3487984 on node 172.16.64.213 managing GPU 5\n"
            "\n"
            "#0-0 (cf264af53edbe986) INCOMPLETE\n"
            "  Missing communicator data from 1 rank\n"
            "  The missing rank: 21\n"
        ),
        "crash",
        "unknown",
        True,
        "nccl-ras-process-dead",
    ),
    # NCCL's RAS guide: the report while the process is stopped but not yet declared dead.
    (
        RAS_GUIDE,
        (
            "Communicators... (2.05s)\n"
            "=============\n"
            "\n"
            "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
            "    #  in group  per comm  per node  per comm  in group\n"
            "    0         1         4       7-8        32        32   RUNNING  INCOMPLETE\n"
            "\n"
            "Errors\n"
            "======\n"
            "\n"
            "INCOMPLETE\n"
            "  Missing communicator data from 1 job process\n"
            "  Process 3487984 on node 172.16.64.213 managing GPU 5\n"
            "\n"
            "#0-0 (cf264af53edbe986) INCOMPLETE\n"
            "  Missing communicator data from 1 rank\n"
            "  The missing rank: 21\n"
            "\n"
            "Warnings\n"
            "========\n"
            "\n"
            "TIMEOUT\n"
            "  Encountered 2 communication timeouts while gathering communicator data\n"
        ),
        "hang",
        "unknown",
        True,
        "nccl-ras-process-unanswered",
    ),
]


@pytest.mark.parametrize(("source", "text", "symptom", "category", "retryable", "signature"), FAILURES)
def test_newer_nccl_failures(
    source: str, text: str, symptom: str, category: str, retryable: bool, signature: str
) -> None:
    found = diagnose(text)
    assert found.symptom == symptom, source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable), source


def test_ras_monitor_names_the_dead_process_node() -> None:
    # NCCL's RAS guide: the monitoring mode (2.29+) prints one line per event, with the host.
    found = diagnose(
        "RAS Monitor Mode - watching for peer changes (Ctrl+C to exit)...\n"
        "================================================================\n"
        "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1"
    )
    assert (found.evidence[0].signature, found.implicated.nodes) == ("nccl-ras-process-dead", ["172.16.64.245"])


def test_ras_report_names_the_node_of_the_dead_process() -> None:
    # NCCL's RAS guide: the DEAD block's next line says which process on which node is gone.
    found = diagnose(
        "Errors\n"
        "======\n"
        "\n"
        "DEAD\n"
        "  1 job process is considered dead (unreachable via the RAS network)\n"
        "  Process 3487984 on node 172.16.64.213 managing GPU 5\n"
    )
    assert (found.evidence[0].signature, found.implicated.nodes) == ("nccl-ras-process-dead", ["172.16.64.213"])


HEALTHY = [
    # Oneflow-Inc/oneflow pull 9115: no IB device, NCCL falls back to sockets.
    (
        "oneflow-15:3907318:3907604 [1] NCCL INFO Bootstrap : Using eno1:192.168.1.15<0>\n"
        "oneflow-15:3907317:3907562 [0] NCCL INFO Bootstrap : Using eno1:192.168.1.15<0>\n"
        "oneflow-15:3907318:3907604 [1] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
        "oneflow-15:3907317:3907562 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
        "oneflow-15:3907318:3907604 [1] NCCL INFO NET/IB : No device found.\n"
        "oneflow-15:3907317:3907562 [0] NCCL INFO NET/IB : No device found.\n"
        "oneflow-15:3907318:3907604 [1] NCCL INFO NET/Socket : Using [0]eno1:192.168.1.15<0> [1]veth2ea2288:fe80::78d8:4eff:fe15:8fed%veth2ea2288<0> [2]vethae2223a:fe80::b43d:18ff:fee2:b08f%vethae2223a<0>\n"
        "oneflow-15:3907318:3907604 [1] NCCL INFO Using network Socket\n"
        "oneflow-15:3907317:3907562 [0] NCCL INFO NET/Socket : Using [0]eno1:192.168.1.15<0> [1]veth2ea2288:fe80::78d8:4eff:fe15:8fed%veth2ea2288<0> [2]vethae2223a:fe80::b43d:18ff:fee2:b08f%vethae2223a<0>\n"
        "oneflow-15:3907317:3907562 [0] NCCL INFO Using network Socket\n"
    ),
    # vllm-project/vllm issue 28901: no tuner plugin, the internal tuner's table, symmetric all-reduces.
    (
        "10-64-29-12:21151:21151 [0] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO  Max NThreads |            512 |            640 |            512 |            512 |            640 |            512 |              0 |              0 |            640 |\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     7.2/  80.0 |    15.9/ 147.2 |    11.8/ 160.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO        Reduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     7.2/  80.0 |    15.9/ 147.2 |    11.8/ 160.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO AllReduce: 2097152 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO AllReduce: 2097152 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO register comm 0xb67a800 buffer 0x7f1a1c600000 size 20971520\n"
        "10-64-29-12:21152:21152 [1] NCCL INFO register comm 0xcfce840 buffer 0x7f1fc4600000 size 20971520\n"
        "10-64-29-12:21151:21151 [0] NCCL INFO AllReduce [Symmetric]: 2097152 Bytes -> Kernel AllReduce_RSxLD_AGxST nchannels 7 nthreads 512 nWorks 1\n"
    ),
    # pytorch/pytorch issue 14870: NCCL cannot open libibverbs and uses sockets.
    (
        "python3.7 main.py -a resnet50 --lr 0.01 --multiprocessing-distributed --world-size 2 --rank 0 data\n"
        "Use GPU: 1 for training\n"
        "Use GPU: 2 for training\n"
        "Use GPU: 3 for training\n"
        "Use GPU: 0 for training\n"
        "=> creating model 'resnet50'\n"
        "=> creating model 'resnet50'\n"
        "=> creating model 'resnet50'\n"
        "=> creating model 'resnet50'\n"
        "\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] NCCL INFO Using internal Network Socket\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] NCCL INFO NET : Using interface eth1:9.73.128.149<0>\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] NCCL INFO NET/Socket : 2 interfaces found\n"
        "NCCL version 2.3.7+cuda9.0\n"
        "b8b857cb-e016-457b-8d8b-c5b1403413b6:39358:39358 [0] NCCL INFO rank 0 nranks 8\n"
    ),
    # huggingface/accelerate issue 2183: the proxy's set-up chatter (operations answered res=0).
    (
        "axon:5020:5091 [1] NCCL INFO Connection to proxy localRank 1 -> connection 0x7f4ee0005010\n"
        "axon:5020:5093 [1] NCCL INFO Received and initiated operation=Init res=0\n"
        "axon:5020:5093 [1] NCCL INFO transport/p2p.cc:204 Cuda Alloc Size 2097152 pointer 0x7f4ee9c00000\n"
        "axon:5020:5093 [1] NCCL INFO Allocated shareable buffer 0x7f4ee9c00000 size 2097152 ipcDesc 0x7f4ee000a050\n"
        "axon:5020:5093 [1] NCCL INFO proxyProgressAsync opId=0x7f4eef4aa710 op.type=3 op.reqBuff=0x7f4ee000a020 op.respSize=80 done\n"
        "axon:5020:5091 [1] NCCL INFO ncclPollProxyResponse Received new opId=0x7f4eef4aa710\n"
        "axon:5020:5091 [1] NCCL INFO recvOpId=0x7f4eef4aa710 matches expected opId=0x7f4eef4aa710\n"
        "axon:5020:5093 [1] NCCL INFO Received and initiated operation=Setup res=0\n"
        "axon:5019:5088 [0] NCCL INFO Imported shareable buffer device 0 size 2097152 ptr 0x7f94f3400000\n"
        "axon:5020:5091 [1] NCCL INFO Imported shareable buffer device 1 size 10485760 ptr 0x7f4ede000000\n"
        "axon:5019:5088 [0] NCCL INFO Imported shareable buffer device 0 size 2097152 ptr 0x7f94f3600000\n"
        "axon:5019:5088 [0] NCCL INFO Connected all trees\n"
        "axon:5019:5088 [0] NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |                   CollNetDirect                  |\n"
    ),
    # sgl-project/sglang issue 17402: TP workers finish their distributed init, skip an optional
    # model module's import error and load weights.
    (
        "[2026-01-20 02:40:10 DP0 TP0] Init torch distributed ends. mem usage=0.29 GB\n"
        "[2026-01-20 02:40:10 DP0 TP1] Init torch distributed ends. mem usage=0.29 GB\n"
        "[2026-01-20 02:40:10 DP0 TP0] MOE_RUNNER_BACKEND is not initialized, the backend will be automatically selected\n"
        "[2026-01-20 02:40:10 DP0 TP1] Initializing MLIR with module: _site_initialize_0\n"
        "[2026-01-20 02:40:10 DP0 TP1] Registering dialects from initializer <module 'cutlass._mlir._mlir_libs._site_initialize_0' from '/opt/conda/lib/python3.10/site-packages/nvidia_cutlass_dsl/python_packages/cutlass/_mlir/_mlir_libs/_site_initialize_0.cpython-310-x86_64-linux-gnu.so'>\n"
        "[2026-01-20 02:40:10 DP0 TP0] Initializing MLIR with module: _site_initialize_0\n"
        "[2026-01-20 02:40:10 DP0 TP0] Registering dialects from initializer <module 'cutlass._mlir._mlir_libs._site_initialize_0' from '/opt/conda/lib/python3.10/site-packages/nvidia_cutlass_dsl/python_packages/cutlass/_mlir/_mlir_libs/_site_initialize_0.cpython-310-x86_64-linux-gnu.so'>\n"
        "[2026-01-20 02:40:11 DP0 TP1] Ignore import error when loading sglang.srt.models.mindspore: name 'ms' is not defined\n"
        "[2026-01-20 02:40:11 DP0 TP0] Ignore import error when loading sglang.srt.models.mindspore: name 'ms' is not defined\n"
        "[2026-01-20 02:40:11 DP0 TP0] Load weight begin.\n"
    ),
    # NCCL's RAS guide: a job progressing normally (every communicator RUNNING and OK).
    (
        "Job summary\n"
        "===========\n"
        "\n"
        "  Nodes  Processes         GPUs  Processes     GPUs\n"
        "(total)   per node  per process    (total)  (total)\n"
        "      4          8            1         32       32\n"
        "\n"
        "Communicators... (0.00s)\n"
        "=============\n"
        "\n"
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
        "    #  in group  per comm  per node  per comm  in group\n"
        "    0         8         4         1         4        32   RUNNING      OK\n"
    ),
    # NCCL's RAS guide: a query racing the collectives; the counts differ by one (a warning only).
    (
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
        "    #  in group  per comm  per node  per comm  in group\n"
        "    0         1         4         8        32        32   RUNNING  MISMATCH\n"
        "\n"
        "Warnings\n"
        "========\n"
        "\n"
        "#0-0 (27a079b828ff1a75) MISMATCH\n"
        "  Communicator ranks have different collective operation counts\n"
        "  26 ranks have launched up to operation 6650\n"
        "  6 ranks have launched up to operation 6649\n"
        "  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210\n"
        "  Rank 2 -- GPU 2 managed by process 483074 on node 172.16.64.210\n"
    ),
]


@pytest.mark.parametrize("text", HEALTHY)
def test_nccl_chatter_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
