"""Whole excerpts of real logs where the cluster's side ended a job: Torque's server aborting a job
at its limits, Slurm's step daemon refused by the node's cgroups, a Ray node's raylet dying (in the
older wording that names its address, and with its agent), a FUSE mount gone from under the
program; and the alarming but harmless lines of the same systems (Ray's warning that a worker
died, printed at a finished program's teardown), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # cBio/cbio-cluster issue 256: Torque's mail for a job it aborted at its walltime limit.
    (
        "https://github.com/cBio/cbio-cluster/issues/256",
        "PBS Job Id: 3264864.mskcc-fe1.local\n"
        "Job Name:   smufin_NYGC.8c.128g\n"
        "Exec host:  gpu-1-12/2+gpu-2-10/17+gpu-1-8/17+gpu-1-13/17+gpu-2-5/17+gpu-1-7/18+gpu-1-10/18+gpu-1-16/18\n"
        "Aborted by PBS Server\n"
        "Job exceeded its walltime limit. Job was aborted\n"
        "See Administrator for help\n"
        "Exit_status=-11\n"
        "resources_used.cput=71:50:33\n"
        "resources_used.mem=60916kb\n"
        "resources_used.walltime=72:00:25",
        "scheduler",
        True,
        "scheduler-torque-walltime-aborted",
    ),
    # Azure/cyclecloud-slurm issue 388: the kernel refused the batch step's pid in its cpuset
    # cgroup (ENOSPC from a cgroup, not a disk) and slurmstepd gave the step up.
    (
        "https://github.com/Azure/cyclecloud-slurm/issues/388",
        "  slurmstepd: error: common_file_write_uints: write value '39981' to "
        "'/sys/fs/cgroup/cpuset/slurm/uid_20006/job_6457/step_batch/cgroup.procs' failed: No space left on device\n"
        "  slurmstepd: error: unable to add pids to '/sys/fs/cgroup/cpuset/slurm/uid_20006/job_6457/step_batch'\n"
        "  slurmstepd: error: task_g_set_affinity: File exists\n"
        "  slurmstepd: error: _exec_wait_child_wait_for_parent: failed: Interrupted system call\n"
        "  slurmstepd: error: job_manager: exiting abnormally: Slurmd could not execve job",
        "system_software",
        True,
        "slurm-step-setup-slurm-step-cgroup-failed",
    ),
    # GoogleCloudPlatform/gcs-fuse-csi-driver issue 50: mkdir on a gcsfuse volume whose daemon died.
    (
        "https://github.com/GoogleCloudPlatform/gcs-fuse-csi-driver/issues/50",
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.11/pathlib.py", line 1116, in mkdir\n'
        "    os.mkdir(self, mode)\n"
        "OSError: [Errno 107] Transport endpoint is not connected: "
        "'/opt/airflow/logbucket/dag_id=xxx/run_id=scheduled__2023-07-31T00:00:00+00:00/task_id=begin_drop_day_driving_table'\"",
        "system_software",
        True,
        "uncaught-exception",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_cluster_ends(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_older_raylet_termination_names_its_node() -> None:
    # ray-project/ray issue 29412: Ray 2.0-2.2 put the node's address in the message; its list of
    # possible signals (SIGSEGV among them) names none that happened.
    found = diagnose(
        "2022-11-02 02:42:14,808 WARNING worker.py:1849 -- Raylet is terminated: ip=172.29.58.133, "
        "id=6ad361c6d67a3180a1a9ce9e00b1b6f371aab0dd0bd32052ebbaac63. Termination is unexpected. Possible "
        "reasons include: (1) SIGKILL by the user or system OOM killer, (2) Invalid memory access from Raylet "
        "causing SIGSEGV or SIGBUS, (3) Other termination signals. Last 20 lines of the Raylet logs:\n"
        "    [state-dump]        NodeManager.deadline_timer.debug_state_dump - 306 total (1 active), CPU time: "
        "mean = 1.470 ms, total = 449.737 ms"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == ("ray-raylet-terminated", "unknown", True)
    assert found.implicated.nodes == ["172.29.58.133"]


def test_raylet_exiting_with_its_agent_names_the_node_of_its_prefix() -> None:
    # ray-project/ray issue 41343: a remote node's raylet lines carry `(raylet, ip=...)`; the
    # raylet died because its dashboard agent did, and the driver's call failed after it.
    found = diagnose(
        "    (raylet, ip=10.244.0.7) [2023-11-22 13:47:00,634 E 24 59] (raylet) agent_manager.cc:70: The raylet "
        "exited immediately because one Ray agent failed, agent_name = dashboard_agent/1015601482.\n"
        "    (raylet, ip=10.244.0.7) The raylet fate shares with the agent. This can happen because\n"
        "    (raylet, ip=10.244.0.7) - The agent is killed by the OS (e.g., out of memory).\n"
        "    Traceback (most recent call last):\n"
        '      File "samples/test_detached_actor_2.py", line 32, in <module>\n'
        "        val = retry_with_timeout(lambda: ray.get(tc.increment.remote()))"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "ray-raylet-agent-failed",
        "unknown",
        True,
    )
    assert found.implicated.nodes == ["10.244.0.7"]


def test_open_mpi_names_the_peer_that_hung_up() -> None:
    # horovod/horovod issue 1950: Open MPI's TCP BTL names the host of the peer that disconnected
    # at the end of its help text; that peer failed, this rank only lost it.
    found = diagnose(
        "An MPI communication peer process has unexpectedly disconnected.  This\n"
        "usually indicates a failure in the peer process (e.g., a crash or\n"
        "otherwise exiting without calling MPI_FINALIZE first).\n"
        "\n"
        "  Local host: reco-zl-c4-reco313\n"
        "  Local PID:  7720\n"
        "  Peer host:  reco-zl-c4-reco316\n"
        "--------------------------------------------------------------------------\n"
        "[1,7]<stderr>:*** Aborted at"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == ("mpi-peer-disconnected", "network", True)
    assert found.implicated.peers == ["reco-zl-c4-reco316"]


def test_a_socket_that_is_not_connected_stays_the_network() -> None:
    # Python's ssl module checks the peer of a socket it wraps (ssl.py _check_connected): the
    # same errno without a file name is a connection's, not a filesystem's.
    found = diagnose(
        TRACEBACK + '  File "/usr/lib/python3.8/ssl.py", line 1088, in _check_connected\n'
        "    self.getpeername()\n"
        "OSError: [Errno 107] Transport endpoint is not connected"
    )
    assert (found.category, found.retryable) == ("network", True)


HEALTHY = [
    # ray-project/ray issue 8000: RaySGD's training and validation finished; Ray warns that a
    # worker died at teardown, then the script prints its own success line.
    "100%|██████████| 18/18 [01:35<00:00,  5.32s/batch, loss=2.11]\n"
    "{'num_samples': 50028, 'batch_count': 18, 'val_loss': 2.35442571170307, 'last_val_loss': 2.343980312347412, "
    "'val_accuracy': 0.11257695690413369, 'last_val_accuracy': 0.10204081632653061}\n"
    "2020-04-13 15:35:00,032 WARNING worker.py:1072 -- A worker died or was killed while executing task "
    "ffffffffffffffff45b95b1c0100.\n"
    "success!",
    # lyulyul/shine-cluster issue 29: the old task/cgroup plugin's complaints; the jobs ran.
    "slurmstepd-eureka: error: task/cgroup: hwloc_get_obj_below_by_type() failing, task/affinity plugin may be "
    "required to address bug fixed in HWLOC version 1.11.5\n"
    "slurmstepd-eureka: error: task/cgroup: task[0] unable to set taskset '0x0'",
    # open-mpi/ompi issue 4131: the TCP BTL's handshake warning; the ring program still completes.
    "[rhc002][[16379,1],2][btl_tcp.c:556:mca_btl_tcp_recv_blocking] remote peer unexpectedly closed connection "
    "while I was waiting for blocking message\n"
    "--------------------------------------------------------------------------\n"
    "WARNING: Open MPI failed to handshake with a connecting peer MPI\n"
    "process over TCP.  This should not happen.\n"
    "\n"
    "Your Open MPI job may now fail.\n"
    "\n"
    "  Local host: rhc002\n"
    "  PID:        209028\n"
    "  Message:    did not receive entire connect ACK from peer\n"
    "--------------------------------------------------------------------------",
    # The same help text's last lines alone (a log cut there) say nothing failed.
    "  Local host: gold03\n  Local PID:  17467\n  Peer host:  gold00",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_cluster_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
