"""Whole excerpts of real logs where a resource manager or runtime outside the GPU stack ended a
job for its memory (YARN's container limit, the JVM's heap, Ray's memory monitor, Dask's nanny,
Slurm's cgroup),
their look-alikes that do not say memory (a bare SIGKILL exit code, a worker's segfault), and the
memory chatter of the same systems that leaves the run going (healthy)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

FAILURES = [
    # yahoo/TensorFlowOnSpark#134: Spark's YarnAllocator reports the NodeManager's kill of an
    # executor over its memory limit, then the lost task's reason repeats it
    (
        "17/11/25 18:23:24 ERROR YarnClusterScheduler: Lost executor 9 on node-h1.cs.example.edu: Container killed"
        " by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used. Consider boosting"
        " spark.yarn.executor.memoryOverhead.\n"
        "17/11/25 18:23:24 WARN TaskSetManager: Lost task 3.0 in stage 1.0 (TID 10, node-h1.cs.example.edu,"
        " executor 9): ExecutorLostFailure (executor 9 exited caused by one of the running tasks) Reason: Container"
        " killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used. Consider boosting"
        " spark.yarn.executor.memoryOverhead.",
        "scheduler-yarn-container-memory-limit",
        "out_of_memory",
        False,
    ),
    # redsanket/spark (Hadoop's YARN troubleshooting guide): the NodeManager's own wording
    (
        "    Application application_1409135750325_48141 failed 2 times due to AM Container for\n"
        "    appattempt_1409135750325_48141_000002 exited with exitCode: 143 due to: Container\n"
        "    [pid=4733,containerID=container_1409135750325_48141_02_000001] is running beyond physical memory limits.\n"
        "    Current usage: 2.0 GB of 2 GB physical memory used; 6.0 GB of 4.2 GB virtual memory used. Killing container",
        None,
        "out_of_memory",
        False,
    ),
    # google-deepmind/alphafold#1023: XLA's allocator
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate"
        " 7406166528 bytes.",
        None,
        "out_of_memory",
        False,
    ),
    # ray-project/ray#28778: the actor died because Ray's memory monitor killed its task
    (
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"
        "        class_name: monitor_memory_usage.<locals>.MemoryMonitorActor\n"
        "        actor_id: 5b7297472c9a580c171cc15602000000\n"
        "        pid: 1412\n"
        "        ip: 172.31.41.244\n"
        "The actor is dead because its worker process has died. Worker exit type: USER_ERROR Worker exit detail:"
        " Task was killed due to the node running low on memory.",
        None,
        "out_of_memory",
        False,
    ),
    # snakemake/snakemake-executor-plugin-slurm#371: the step's cgroup OOM kills and srun's task
    (
        "slurmstepd: error: Detected 2 oom_kill events in StepId=JOBID.13. Some of the step tasks have been OOM"
        " Killed.\nsrun: error: NODE: task 0: Out Of Memory\n[Wed Nov 12 11:41:01 2025]\nError in rule use_ram:\n"
        "    message: None",
        None,
        "out_of_memory",
        False,
    ),
    # dask/distributed#1829: the nanny kills worker after worker over its memory budget
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget.  Restarting\n"
        "distributed.nanny - WARNING - Worker process 22204 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Restarting worker\n"
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget.  Restarting\n"
        "distributed.nanny - WARNING - Worker process 22200 was killed by unknown signal\n"
        "distributed.nanny - WARNING - Restarting worker\n"
        "--------------------------------------------------",
        "dask-nanny-memory-budget",
        "out_of_memory",
        False,
    ),
    # mozilla/jetstream#336: after the nanny's memory kill the analysis fails gathering its
    # results (the traceback is cut before its exception line)
    (
        "distributed.nanny - WARNING - Restarting worker\n"
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.nanny - WARNING - Restarting worker\n"
        "ERROR:2020-11-20 04:09:51,165:jetstream.cli:('counts-6ec2db25-426a-482d-b186-7ed8c6a9aeaa', <Work\n"
        "er 'tcp://127.0.0.1:34589', name: 2, memory: 0, processing: 3>)\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.8/site-packages/jetstream/cli.py", line 141, in execute\n'
        "    self.analysis_class(self.project_id, self.dataset_id, config).run(date)\n"
        '  File "/usr/local/lib/python3.8/site-packages/distributed/client.py", line 1986, in gather\n'
        "    return self.sync(\n"
        '  File "/usr/local/lib/python3.8/site-packages/tornado/gen.py", line 762, in run\n'
        "    value = future.result()",
        "dask-nanny-memory-budget",
        "out_of_memory",
        False,
    ),
    # prlz77/ResNeXt.pytorch#5: fork(2) of a DataLoader worker fails with ENOMEM
    (
        '  File "/usr/lib/python3.5/multiprocessing/popen_fork.py", line 67, in _launch\n'
        "    self.pid = os.fork()\n"
        "OSError: [Errno 12] Cannot allocate memory",
        None,
        "out_of_memory",
        False,
    ),
    # JVM: the default uncaught-exception handler's form (java.lang.ThreadGroup.uncaughtException)
    (
        'Exception in thread "main" java.lang.OutOfMemoryError: GC overhead limit exceeded',
        "uncaught-exception",
        "out_of_memory",
        False,
    ),
    # MhLiao/DB#94: a worker's segfault says nothing of memory running out
    (
        "RuntimeError: DataLoader worker (pid 25902) is killed by signal: Segmentation fault",
        None,
        "unknown",
        True,
    ),
    # flyteorg/flyte#2376: exit code 137 with reason Error, not OOMKilled: a SIGKILL, sender unknown
    (
        "[1/1] currentAttempt done. Last Error: USER::Pod failed. No message received from kubernetes.\n"
        "[f8107735c673549d7acd-n0-0] terminated with exit code (137). Reason [Error]. Message: \n.",
        None,
        "unknown",
        True,
    ),
]


@pytest.mark.parametrize(("text", "signature", "category", "retryable"), FAILURES)
def test_memory_limits_and_their_look_alikes(text: str, signature: str | None, category: str, retryable: bool) -> None:
    found = verdict(text)
    assert found[1:] == (category, retryable)
    if signature is not None:
        assert found[0] == signature


HEALTHY = [
    # PSLmodels/OG-USA#108: Dask pauses a worker near its limit and goes on
    "2024-05-08 16:43:36,648 - distributed.worker.memory - WARNING - Worker is at 89% memory usage. Pausing worker."
    "  Process memory: 2.09 GiB -- Worker memory limit: 2.33 GiB\n"
    "2024-05-08 16:43:51,880 - distributed.worker.memory - WARNING - Unmanaged memory use is high. This may indicate"
    " a memory leak or the memory may not be released to the OS; see"
    " https://distributed.dask.org/en/latest/worker-memory.html#memory-not-released-back-to-the-os for more"
    " information. -- Unmanaged memory: 1.72 GiB -- Worker memory limit: 2.33 GiB",
    # equinor/ert#2831: Dask's older warning
    "distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other"
    " process is leaking memory?  Process memory: 3.76 GB -- Worker memory limit: 4.00 GB",
    # raster-foundry/raster-foundry#246: Spark's block manager reports memory it stored into
    "15/10/26 16:12:04 INFO storage.BlockManagerInfo: Added broadcast_0_piece0 in memory on 172.31.11.158:36327"
    " (size: 11.2 KB, free: 1088.0 MB)",
    # ildoonet/tf-pose-estimation#225: BFC's not-a-failure warning, hard-wrapped
    "2018-06-19 02:49:08.322732: W tensorflow/core/common_runtime/bfc_allocator.cc:219] Allocator (GPU_0_bfc) ran"
    " out of memory\ntrying to allocate 2.19GiB. The caller indicates that this is not a failure, but may mean that"
    " there\ncould be performance gains if more memory were available.",
    # Python's threading module prints this header for a thread's exception; no class on the line
    "Exception in thread Thread-1:",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_memory_chatter_stays_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
