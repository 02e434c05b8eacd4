"""Whole excerpts of real job logs where the workload manager or its node-side plugins end the job:
Flux's shell and its Fluxion scheduler (a task it cannot start, a request no resource can meet, a
match that failed, the doom plugin's early-exit line of 2024-25 without the word "task"), srun
refusing the job's --mpi type, a process of enroot's container setup crashing under pyxis, HTCondor
holding a job over its memory, the kubelet refusing a pod the node's unhealthy GPUs; and the
alarming but harmless lines the same systems print (Cray PMI's ALPS warnings, PMIx lock errors at
startup, an HTCondor job rescheduled after its execute host went away), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # flux-framework/flux-core issue 4195: the command does not exist on the nodes; the
    # allocation's expiry afterwards is not the cause.
    (
        "https://github.com/flux-framework/flux-core/issues/4195",
        "$ flux mini run -N5 -n5 -t 5s stress --cpu=1\n"
        "0.778s: flux-shell[1]: FATAL: task 0: start failed: stress: No such file or directory\n"
        "0.779s: flux-shell[0]: FATAL: task 0: start failed: stress: No such file or directory\n"
        "0.784s: job.exception type=exec severity=0 task 0: start failed: stress: No such file or directory\n"
        "0.791s: job.exception type=exec severity=0 task 0: start failed: stress: No such file or directory\n"
        "5.488s: job.exception type=timeout severity=0 resource allocation expired",
        "application",
        False,
        "scheduler-flux-task-start-failed",
    ),
    # flux-framework/flux-sched issue 1229: Fluxion's matcher failed and denied the allocation.
    (
        "https://github.com/flux-framework/flux-sched/issues/1229",
        "Jun 26 22:00:10.967952 PDT sched-fluxion-resource.err[0]: match_multi_request_cb: match failed due to"
        " match error (id=791666491392): Invalid argument\n"
        '0.043s: job.exception type=alloc severity=0 alloc denied due to type="match error"',
        "scheduler",
        True,
        "scheduler-flux-alloc-match-error",
    ),
    # ExaWorks/psij-python issue 52: the job's request can never be met, as psij reports it.
    (
        "https://github.com/ExaWorks/psij-python/issues/52",
        "$ ./tests/run_job.py flux\n"
        "Job submitted\n"
        "Job done: JobStatus[FAILED, time=1629979974.6525922, meta={'type': 'alloc', 'severity': 0, 'userid': -1,"
        " 'note': 'alloc denied due to type=\"unsatisfiable\"', 'exit_code': None,"
        " 'message': 'alloc denied due to type=\"unsatisfiable\"'}]",
        "application",
        False,
        "scheduler-flux-alloc-unsatisfiable",
    ),
    # flux-framework/flux-core issue 7037: doom's exit-timeout line as flux-core 0.73 printed it.
    (
        "https://github.com/flux-framework/flux-core/issues/7037",
        "flux-shell[0]: FATAL: doom: sh: rank 3 on host frontier10490 exited and exit-timeout=30s has expired",
        "unknown",
        True,
        "scheduler-flux-task-failed",
    ),
    # geoschem/geos-chem issue 822: the cluster's Slurm has no pmix plugin for --mpi=pmix.
    (
        "https://github.com/geoschem/geos-chem/issues/822",
        "+ srun -m plane=30 --mpi=pmix ./gchp\n"
        "srun: error: Couldn't find the specified plugin name for mpi/pmix looking at all files\n"
        "srun: error: cannot find mpi plugin for mpi/pmix\n"
        "srun: error: cannot create mpi context for mpi/pmix\n"
        'srun: error: "--mpi=pmix" -- long invalid MPI type, --mpi=list for acceptable types.',
        "application",
        False,
        "scheduler-slurm-invalid-mpi-type",
    ),
    # NVIDIA/pyxis issue 122: pwck crashed inside enroot's shadow hook on some nodes, as the
    # enroot log pyxis prints shows it (srun --label's task 22).
    (
        "https://github.com/NVIDIA/pyxis/issues/122",
        "22: slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "22: slurmstepd: error: pyxis: printing enroot log file:\n"
        "22: slurmstepd: error: pyxis:     /etc/enroot/hooks.d/10-shadow.sh: line 70: 3474706 Broken pipe"
        "             yes 2> /dev/null\n"
        "22: slurmstepd: error: pyxis:          3474707 Segmentation fault      (core dumped) | pwck -R"
        ' "${ENROOT_ROOTFS}" "${pwddb#${ENROOT_ROOTFS}}" /etc/shadow > /dev/null 2>&1',
        "system_software",
        True,
        "container-enroot-setup-process-crashed",
    ),
    # openpmix/openpmix issue 3559: slurmstepd's PMIx messages fail and srun reports the node lost.
    (
        "https://github.com/openpmix/openpmix/issues/3559",
        "slurmstepd: error:  mpi/pmix_v5: pmixp_p2p_send: ccexe0094 [4]: pmixp_utils.c:469: send failed,"
        " rc=1001, exceeded the retry limit\n"
        "slurmstepd: error:  mpi/pmix_v5: _slurm_send: ccexe0094 [4]: pmixp_server.c:1581: Cannot send message"
        " to /var/spool/slurmd/stepd.slurm.pmix.656.0, size = 46979, hostlist:\n"
        "(null)\n"
        "srun: error: Node failure on ccexe0091",
        "hardware",
        True,
        "srun-node-failure",
    ),
    # CHTC/templates-GPUs pull 7: HTCondor holds the GPU job whose Docker container ran out of memory.
    (
        "https://github.com/CHTC/templates-GPUs/pull/7",
        "Hold reason: Error from slot1_7@gpulab2002.chtc.wisc.edu: Docker job has gone over memory limit of 1024 Mb",
        "out_of_memory",
        False,
        "scheduler-htcondor-memory-limit",
    ),
    # trueforge-org/truecharts issue 19201: the kubelet's message alone, the AMD device plugin
    # reporting the node's GPU unhealthy for every replica.
    (
        "https://github.com/trueforge-org/truecharts/issues/19201",
        "2024-03-14 14:22:04\n"
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices amd.com/gpu,"
        " which is unexpected\n"
        "2024-03-14 14:22:03\n"
        "Successfully assigned ix-homarr/homarr-54b6f78c78-82wsn to ix-truenas\n"
        "2024-03-14 14:22:03\n"
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices amd.com/gpu,"
        " which is unexpected",
        "hardware",
        True,
        "scheduler-k8s-gpu-unhealthy",
    ),
    # Project-HAMi/HAMi issue 71: the device plugin's allocate RPC broke off.
    (
        "https://github.com/Project-HAMi/HAMi/issues/71",
        "  Warning  UnexpectedAdmissionError  10s   kubelet  Allocate failed due to rpc error: code = Unavailable"
        " desc = error reading from server: EOF, which is unexpected",
        "system_software",
        True,
        "scheduler-k8s-admission-error",
    ),
    # wheaton5/souporcell issue 20: LSF's job report after its memory limit.
    (
        "https://github.com/wheaton5/souporcell/issues/20",
        "------------------------------------------------------------\n"
        "# LSBATCH: User input\n"
        "./souporAg.sh\n"
        "------------------------------------------------------------\n"
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\n"
        "Exited with exit code 143.",
        "out_of_memory",
        False,
        "scheduler-lsf-term-memlimit",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_workload_manager_endings(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_flux_doom_names_the_task_and_its_host() -> None:
    # flux-core 2024-06 to 2025-04 printed a task's rank without the word "task".
    found = diagnose(
        "flux-shell[0]: FATAL: doom: sh: rank 3 on host frontier10490 exited and exit-timeout=30s has expired"
    )
    assert (found.implicated.nodes, found.implicated.ranks) == (["frontier10490"], [3])


def test_enroot_setup_crash_keeps_the_labelled_task() -> None:
    found = diagnose(
        "22: slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "22: slurmstepd: error: pyxis:          3474707 Segmentation fault      (core dumped) | pwck -R x /etc/shadow"
    )
    assert (found.evidence[0].signature, found.implicated.ranks) == ("container-enroot-setup-process-crashed", [22])


def test_the_shadow_hooks_broken_pipe_alone_is_no_crash() -> None:
    # The `yes` feeding pwck gets SIGPIPE when pwck exits; bash reports it, and enroot goes on.
    found = diagnose(
        "slurmstepd: error: pyxis:     /etc/enroot/hooks.d/10-shadow.sh: line 70: 3474706 Broken pipe"
        "             yes 2> /dev/null"
    )
    assert found.symptom == "none"


HEALTHY = [
    # ComputationalRadiationPhysics/picongpu pull 2581: Cray PMI's ALPS warnings once per srun,
    # harmless per CSCS and Cray.
    "Mon Apr  9 19:34:23 2018: [unset]:_pmi_alps_get_apid:alps response not OKAY\n"
    "Mon Apr  9 19:34:23 2018: [unset]:_pmi_init:_pmi_alps_init returned -1\n"
    "Mon Apr  9 19:35:49 2018: [unset]:_pmi_alps_get_apid:alps response not OKAY\n"
    "Mon Apr  9 19:35:49 2018: [unset]:_pmi_init:_pmi_alps_init returned -1",
    # karpathy/llm.c pull 426: PMIx lock errors at startup, then two-node training starts.
    "srun: lua: Submitted job 12168\n"
    "[qbd487:400139] PMIX ERROR: ERROR in file ../../../../../../src/mca/gds/ds12/gds_ds12_lock_pthread.c at line 169\n"
    "[qbd488:616078] PMIX ERROR: ERROR in file ../../../../../../src/mca/gds/ds12/gds_ds12_lock_pthread.c at line 169\n"
    "Started Multi Node training managed by Slurm: ProcessID:0, NumProcess::4, DeviceId:0\n"
    "| train data pattern    | /home/user/work/10b/fineweb_train_*.bin           |",
    # gwastro/pycbc pull 2596: HTCondor reschedules a job whose execute host went away.
    "022 (6509789.000.000) 03/27 15:12:43 Job disconnected, attempting to reconnect\n"
    "    Socket between submit and execute hosts closed unexpectedly\n"
    "...\n"
    "024 (6509789.000.000) 03/27 15:12:51 Job reconnection failed\n"
    "    Job not found at execution machine\n"
    "    Can not reconnect to slot1@CRUSH-SUGWG-OSG-10-5-137-88, rescheduling job\n"
    "...\n"
    "001 (6509789.000.000) 03/27 15:16:47 Job executing on host: <10.5.137.88:9618?addrs=10.5.137.88-9618>",
    # ExaWorks/psij-python issue 52: the same job run locally completes.
    "$ ./tests/run_job.py local\nJob submitted\nJob done: JobStatus[COMPLETED, time=1629979965.2759883, exit_code=0]",
    # lightly-ai/lightly-train pull 148: Lightning's hint that srun is available but unused.
    "/home/user/lightly-train/.venv/lib/python3.11/site-packages/lightning_fabric/plugins/environments/slurm.py:204:"
    " The `srun` command is available on your system but is not used. HINT: If your intention is to run Lightning"
    " on SLURM, prepend your python command with `srun` like so: srun python run_train.py ...",
    # ROCm/rccl pull 2078: a two-node allreduce test ends with no wrong values.
    "  8589934592    2147483648     float     sum      -1    44734  192.02  360.04      0    44670  192.30  360.56      0\n"
    "# Errors with asterisks indicate errors that have exceeded the maximum threshold.\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 142.652 \n"
    "#\n"
    "# Collective test concluded: all_reduce_perf",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_workload_manager_notices_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
