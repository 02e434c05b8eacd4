"""Real lines the node's software stack prints when it, not the program, failed a job (Slurm's
slurmstepd and munge, pyxis/enroot, Apptainer, the driver's libraries), and the lines of the same
systems that name the job's own mistake, each diagnosed by whose fault it is: the node's
(system_software, retried without the node), the job's (application, not retried)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose, verdict

# Format strings of Slurm 25.11.7 (/work/shared/vendor/slurm-25.11.7.tar.gz), as slurmstepd prints
# them into the job's output; the file each comes from is on its line.
NODE_STACK = [
    # src/slurmd/slurmstepd/task.c: the task plugins' pre-launch hook failed
    (
        "slurmstepd: error: Failed to invoke task plugins: task_p_pre_launch error",
        "slurm-step-setup-slurm-step-plugin-failed",
    ),
    # src/slurmd/slurmstepd/task.c: the switch plugin
    (
        "slurmstepd: error: Unable to attach to interconnect: Resource temporarily unavailable",
        "slurm-step-setup-slurm-step-plugin-failed",
    ),
    # src/slurmd/slurmstepd/mgr.c: proctrack (the cgroup the step's processes go in)
    ("slurmstepd: error: proctrack_g_create: No such file or directory", "slurm-step-setup-slurm-step-plugin-failed"),
    ("slurmstepd: error: proctrack_g_add: Device or resource busy", "slurm-step-setup-slurm-step-plugin-failed"),
    # src/slurmd/slurmstepd/mgr.c: the job's user could not be taken on (NSS lookup on the node)
    (
        "slurmstepd: error: _become_user setegid: Operation not permitted\n"
        "slurmstepd: error: _become_user failed: Operation not permitted",
        "slurm-step-setup-slurm-step-user-failed",
    ),
    # src/slurmd/slurmstepd/mgr.c: the namespace plugin's join
    (
        "slurmstepd: error: namespace_g_join(StepId=1234.0): No such file or directory",
        "slurm-step-setup-slurm-step-namespace-failed",
    ),
    # src/plugins/namespace/tmpfs/namespace_tmpfs.c: the job's private /dev/shm
    (
        "slurmstepd: error: _create_ns: /dev/shm mount failed: Permission denied",
        "slurm-step-setup-slurm-step-namespace-failed",
    ),
    # src/slurmd/slurmstepd/slurmstepd.c: the OCI container support
    (
        "slurmstepd: error: _prepare_job: container setup failed: No such file or directory",
        "slurm-step-setup-slurm-step-namespace-failed",
    ),
    # src/slurmd/slurmstepd/mgr.c: I/O to srun (ESLURMD_IO_ERROR's text)
    (
        "slurmstepd: error: _fork_all_tasks: IO setup failed: Slurmd could not connect IO",
        "slurm-step-setup-slurm-step-io-failed",
    ),
    # src/slurmd/slurmstepd/mgr.c: neither the job's directory nor the node's /tmp
    (
        "slurmstepd: error: couldn't chdir to `/lustre/proj/run42': No such file or directory: going to /tmp instead\n"
        "slurmstepd: error: couldn't chdir to /tmp either. dying.",
        "slurm-step-setup-slurm-step-io-failed",
    ),
    # src/plugins/auth/munge/auth_munge.c: a credential from a node whose clock is off
    (
        "slurmstepd: error: Munge decode failed: Expired credential\nslurmstepd: error: Check for out of sync clocks",
        "slurm-step-setup-slurm-munge-failed",
    ),
    # src/plugins/auth/munge/auth_munge.c: munged not running where srun ran
    (
        'srun: error: Munge encode failed: Failed to access "/run/munge/munge.socket.2": No such file or directory',
        "slurm-step-setup-slurm-munge-failed",
    ),
    # ai4d-iasc/trixie #58: after the cluster's reboot
    ("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired", "slurm-task-launch-failed"),
    # nico-bohlinger/one_policy_to_run_them_all #5 (src/common/read_config.c, fetch_config.c)
    (
        "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
        "sbatch: error: fetch_config: DNS SRV lookup failed\n"
        "sbatch: error: _establish_config_source: failed to fetch config\n"
        "sbatch: fatal: Could not establish a configuration source",
        "slurm-step-setup-slurm-config-source-missing",
    ),
]


@pytest.mark.parametrize(("text", "signature"), NODE_STACK)
def test_the_nodes_slurm_stack_is_system_software(text: str, signature: str) -> None:
    assert verdict(text) == (signature, "system_software", True)


# Lines of the same systems that name what the job asked for: every node fails it alike.
THE_JOBS_OWN = [
    # src/slurmd/slurmstepd/task.c: the user's --task-prolog, not the site's TaskProlog
    ("slurmstepd: error: --task-prolog failed status=2", "slurm-step-setup-slurm-user-task-prolog-failed"),
    # src/slurmd/slurmstepd/mgr.c: the job's --output in a directory that does not exist
    (
        "slurmstepd: error: Could not open output file /home/u/logs/run-1234.out: No such file or directory",
        "slurm-step-setup-slurm-step-output-path",
    ),
    # NVIDIA/pyxis pyxis_slurmstepd.c: a --container-mounts source missing
    (
        "slurmstepd: error: pyxis: --container-mounts: source path does not exist: /datasets/imagenet",
        "container-pyxis-request-invalid",
    ),
    # NVIDIA/pyxis pyxis_slurmstepd.c: --container-name flags that do not fit
    (
        'slurmstepd: error: pyxis: error: "exec" flag was passed to --container-name but the container is not running',
        "container-pyxis-request-invalid",
    ),
    # Apptainer's image package: the image path the job named
    (
        "FATAL:   could not open image /home/u/img/pytorch.sif: failed to retrieve path for /home/u/img/pytorch.sif:"
        " lstat /home/u/img/pytorch.sif: no such file or directory",
        "container-apptainer-image-missing",
    ),
]


@pytest.mark.parametrize(("text", "signature"), THE_JOBS_OWN)
def test_what_the_job_asked_for_is_the_application(text: str, signature: str) -> None:
    assert verdict(text) == (signature, "application", False)


# Container runtimes on the node, as issue threads show them.
CONTAINERS = [
    # NVIDIA/pyxis #12: pyxis's import could not make enroot's runtime directory
    (
        "slurmstepd: pyxis: importing docker image ...\n"
        "slurmstepd: error: pyxis: child 12004 failed with error code: 1\n"
        "slurmstepd: error: pyxis: failed to import docker image\n"
        "slurmstepd: error: pyxis: printing contents of log file ...\n"
        "slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied\n"
        "slurmstepd: pyxis: could not remove squashfs: No such file or directory\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1\n"
        "slurmstepd: error: spank_task_init_privileged failed\n"
        "slurmstepd: error: write to unblock task 0 failed: Broken pipe\n"
        "srun: error: vm-standard2-1-ad1-0001: task 0: Exited with exit code 1",
        ("container-pyxis-import-failed", "system_software", True),
    ),
    # NVIDIA/pyxis #93: ENOSPC from user-namespace creation is the node's namespace limit
    (
        "slurmstepd: error: pyxis: container start failed with error code: 1\n"
        "slurmstepd: error: pyxis: printing contents of log file ...\n"
        "slurmstepd: error: pyxis:     enroot-nsenter: failed to create user namespace: No space left on device\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "slurmstepd: error: Failed to invoke spank plugin stack\n"
        "srun: error: node001: task 0: Exited with exit code 1",
        ("container-enroot-userns-limit", "system_software", True),
    ),
    # NVIDIA/enroot #256: the same failure in slurmd's own log format
    (
        "[2025-11-06T20:36:19.163] [19.0] error: pyxis: child 70956 failed with error code: 1\n"
        "[2025-11-06T20:36:19.163] [19.0] error: pyxis: failed to import docker image\n"
        "[2025-11-06T20:36:19.163] [19.0] error: pyxis: printing enroot log file:\n"
        "[2025-11-06T20:36:19.163] [19.0] error: pyxis: couldn't start container\n"
        "[2025-11-06T20:36:19.163] [19.0] error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "[2025-11-06T20:36:19.163] [19.0] error: Failed to invoke spank plugin stack",
        ("container-pyxis-import-failed", "system_software", True),
    ),
    # NVIDIA/pyxis #41: the node's /run tmpfs too small for the image (a full disk: not retried)
    (
        "slurmstepd: error: pyxis:     Write failed because No space left on device\n"
        "slurmstepd: error: pyxis:     FATAL ERROR:Failed to write to output filesystem\n"
        "slurmstepd: error: pyxis:     Parallel mksquashfs: Using 2 processors",
        ("fs-no-space", "system_software", False),
    ),
    # pyxis's runtime directory on the node (pyxis_slurmstepd.c "couldn't mkdir %s: %s")
    (
        "slurmstepd: error: pyxis: couldn't mkdir /run/pyxis/1000: Permission denied",
        ("container-pyxis-node-setup-failed", "system_software", True),
    ),
    # gglyptodon/helixer-docker #5: Apptainer --nvccli on a node without nvidia-container-cli
    (
        "INFO:    Setting --writable-tmpfs (required by nvidia-container-cli)\n"
        'FATAL:   container creation failed: exec: "/usr/bin/nvidia-container-cli": stat'
        " /usr/bin/nvidia-container-cli: no such file or directory",
        ("container-apptainer-creation-failed", "system_software", True),
    ),
    # pangenome/pggb #373: the node has no /etc/resolv.conf to bind
    (
        "FATAL:   container creation failed: open /etc/resolv.conf: no such file or directory",
        ("container-apptainer-creation-failed", "system_software", True),
    ),
    # biocorecrg/MOP2 #49: no squashfuse on the node to mount the SIF
    (
        "  INFO:    squashfuse not found, will not be able to mount SIF\n"
        "  FATAL:   container creation failed: mount hook function failure: mount /proc/self/fd/3->/usr/local/biotools/"
        "apptainer/apptainer-1.1.4/var/apptainer/mnt/session/rootfs error: while mounting image /proc/self/fd/3:"
        " squashfuse not found",
        ("container-apptainer-creation-failed", "system_software", True),
    ),
    # getumbrel/llama-gpt #132: NVML failed on the host during the toolkit's detection
    (
        "Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime"
        " create failed: runc create failed: unable to start container process: error during container init: error"
        " running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: detection error: nvml error: unknown error: unknown",
        ("container-nvidia-cli-error", "system_software", True),
    ),
    # mudler/LocalAGI #49: the image's own NVIDIA_REQUIRE_* expression does not parse
    (
        "Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime"
        " create failed: runc create failed: unable to start container process: error during container init: error"
        " running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: requirement error: invalid expression: unknown",
        ("container-nvidia-cli-requirement-invalid", "application", False),
    ),
    # glibc's loader: the container's C library needs a newer kernel than the node's
    ("FATAL: kernel too old", ("container-glibc-kernel-too-old", "system_software", True)),
]


@pytest.mark.parametrize(("text", "labels"), CONTAINERS)
def test_container_runtime_failures_on_the_node(text: str, labels: tuple[str, str, bool]) -> None:
    assert verdict(text) == labels


def test_a_plugins_own_error_speaks_before_slurmstepds_summary() -> None:
    # NVIDIA/pyxis #127: pyxis's import failure, then slurmstepd's "Failed to invoke spank plugin stack"
    found = diagnose(
        "pyxis: importing docker image: hello-world.sqsh\n"
        "slurmstepd: error: pyxis: child 10028 failed with error code: 1\n"
        "slurmstepd: error: pyxis: failed to import docker image\n"
        "slurmstepd: error: pyxis: couldn't start container\n"
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "slurmstepd: error: Failed to invoke spank plugin stack\n"
        "srun: error: compute-0: task 0: Exited with exit code 1"
    )
    assert found.evidence[0].signature == "container-pyxis-import-failed"
    # alone, slurmstepd's summary still says the node's stack failed
    assert verdict("slurmstepd: error: Failed to invoke spank plugin stack") == (
        "slurm-step-setup-slurm-step-plugin-failed",
        "system_software",
        True,
    )


# Driver libraries: every library libnvidia-container lists as the driver's (src/nvc_info.c
# compute_libs, utility_libs) is the node's; libcudnn and libnccl come with the job's environment.
LIBRARIES = [
    (
        "OSError: libnvidia-ptxjitcompiler.so.1: cannot open shared object file: No such file or directory",
        ("driver-library-missing", "system_software", True),
    ),
    (
        "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
        ("py-import-error", "application", False),
    ),
    # Chia-Network/bladebit #431: the node's driver older than the program's CUDA runtime
    (
        " CUDA error: 35 (0x23) cudaErrorInsufficientDriver : CUDA driver version is insufficient for CUDA runtime version",
        ("cuda-driver-mismatch", "system_software", True),
    ),
]


@pytest.mark.parametrize(("text", "labels"), LIBRARIES)
def test_libraries_by_who_ships_them(text: str, labels: tuple[str, str, bool]) -> None:
    assert verdict(text) == labels


@pytest.mark.parametrize(
    "text",
    [
        # src/slurmd/slurmstepd/mgr.c: TaskEpilog runs after the tasks ended; the step goes on
        "slurmstepd: error: TaskEpilog failed status=1",
        # src/slurmd/slurmstepd/task.c: Slurm replaces a TMPDIR it cannot create and goes on
        "slurmstepd: error: Unable to create TMPDIR [/scratch/1504221]: Permission denied\n"
        "slurmstepd: error: Setting TMPDIR to /tmp",
        # NVIDIA/pyxis pyxis_slurmstepd.c: its progress notes
        "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.05-py3\n"
        "pyxis: creating container filesystem: pyxis_1234.0\n"
        "pyxis: completed container setup in 5100 ms",
        # pyxis_slurmstepd.c: an info line after a successful run
        "slurmstepd: pyxis: could not remove squashfs: No such file or directory",
        # src/slurmd/slurmstepd/mgr.c: setpgid refused for a task; the launch goes on
        "slurmstepd: error: Unable to put task 0 (pid 12345) into pgrp 12345: Operation not permitted",
        # src/slurmd/slurmstepd/slurmstepd.c: a debug option refused, the step goes on
        "slurmstepd: error: Use of --slurmd-debug is allowed only for root and SlurmUser(slurm), ignoring it",
    ],
)
def test_notices_slurmstepd_and_pyxis_go_on_from_are_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
