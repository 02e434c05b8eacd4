"""Whole excerpts of real logs from a training node's software stack at start: a JIT build of a
CUDA extension whose traceback a paste starts in the middle of (no header, no `raise` frame)
and then cuts inside the traceback raised from it, Triton's launcher that does not find the
driver's libcuda (its own assertion, or the linker's), Lmod's unknown module and its missing
command on a node, and the warnings Python's `warnings` module
shows for optional extensions a program goes on without (torchvision's image extension that does
not load, with the loader's `undefined symbol` quoted in it), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # deepspeedai/DeepSpeed issue 694: FusedAdam's JIT build; the paste starts inside
    # _run_ninja_build's frames and ends inside the traceback raised from its CalledProcessError.
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/694",
        '  File "/home/user/VirtualEnvs/dspeed/lib/python3.6/site-packages/torch/utils/cpp_extension.py",'
        " line 1539, in _run_ninja_build\n"
        "    env=env)\n"
        '  File "/usr/lib/python3.6/subprocess.py", line 438, in run\n'
        "    output=stdout, stderr=stderr)\n"
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "cifar10_deepspeed.py", line 144, in <module>\n'
        "    args=args, model=net, model_parameters=parameters, training_data=trainset)\n"
        '  File "/home/user/VirtualEnvs/dspeed/lib/python3.6/site-packages/deepspeed/runtime/engine.py",'
        " line 583, in _configure_basic_optimizer\n"
        "    optimizer = FusedAdam(model_parameters, **optimizer_parameters)",
        "application",
        False,
        "torch-extension-build-failed",
    ),
    # THUDM/SwissArmyTransformer issue 184: the same build under torchrun's rank prefix.
    (
        "https://github.com/THUDM/SwissArmyTransformer/issues/184",
        "[rank0]:     raise CalledProcessError(retcode, process.args,\n"
        "[rank0]: subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        "\n"
        "[rank0]: The above exception was the direct cause of the following exception:\n"
        "\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/home/user/Tora/sat/train_video.py", line 413, in <module>\n'
        "[rank0]:     training_main(",
        "application",
        False,
        "torch-extension-build-failed",
    ),
    # MAGICS-LAB/DNABERT_2 issue 56: Triton's launcher build finds no libcuda in the linker cache
    # (a notebook's traceback, as IPython prints it).
    (
        "https://github.com/MAGICS-LAB/DNABERT_2/issues/56",
        "/usr/local/lib/python3.10/dist-packages/triton/common/build.py in libcuda_dirs()\n"
        "     28         msg += 'Possible files are located at %s.' % str(locs)\n"
        "     29         msg += 'Please create a symlink of libcuda.so to any of the file.'\n"
        "---> 30     assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n"
        "     31     return dirs\n"
        "     32 \n"
        "\n"
        "AssertionError: libcuda.so cannot found!",
        "system_software",
        True,
        "driver-library-missing",
    ),
    # triton-lang/triton pull 1981: the lookup found a directory, the link of the stub did not
    # find the library; Triton's cache lookup fails after it.
    (
        "https://github.com/triton-lang/triton/pull/1981",
        "/usr/bin/ld: cannot find -lcuda\n"
        "collect2: error: ld returned 1 exit status\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 21, in add_kernel',
        "system_software",
        True,
        "driver-library-missing",
    ),
    # dhcode-cpp/X-R1 issue 68: another library the build links (the toolkit's curand) is the
    # job's environment: the build failure, not the driver.
    (
        "https://github.com/dhcode-cpp/X-R1/issues/68",
        "FAILED: cpu_adam.so\n"
        "c++ cpu_adam.o cpu_adam_impl.o -shared -lcurand -L/opt/conda/lib -o cpu_adam.so\n"
        "/usr/bin/ld: cannot find -lcurand: No such file or directory\n"
        "collect2: error: ld returned 1 exit status\n"
        "ninja: build stopped: subcommand failed.\n"
        "Loading extension module cpu_adam...",
        "application",
        False,
        "native-build-failed",
    ),
    # hpcugent/vsc_user_docs issue 440: the job script loads a module Lmod does not know, then
    # the program it should have provided is missing.
    (
        "https://github.com/hpcugent/vsc_user_docs/issues/440",
        "Lmod has detected the following error: The following module(s) are unknown:\n"
        '"MODULENAME"\n'
        "\n"
        "\n"
        'Please check the spelling or version number. Also try "module spider ..."\n'
        "It is also possible your cache file is out-of-date; it may help to try:\n"
        '$ module --ignore-cache load "MODULENAME"\n'
        "\n"
        "/var/spool/slurm/slurmd/jobXXXXXX/slurm_script: line 36: /bin/MODULENAME: No such file or directory",
        "application",
        False,
        "lmod-module-unknown",
    ),
    # access-ci-org/Jetstream_Cluster issue 18: the compute node has no Lmod where the site's
    # shell setup runs it, and the MPI launcher a module would have provided is not found.
    (
        "https://github.com/access-ci-org/Jetstream_Cluster/issues/18",
        "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory\n"
        "environment: line 17: /usr/share/lmod/lmod/libexec/lmod: No such file or directory\n"
        "/tmp/slurmd/job00001/slurm_script: line 8: mpirun: command not found",
        "system_software",
        True,
        "lmod-command-missing",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_jit_build_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_a_raised_warning_is_still_an_exception() -> None:
    # A warning raised (`-W error`) ends its traceback without a file and line before the class:
    # the loader's message in it is then the failure (mpi4py/mpi4py issue 570's import, as raised).
    found = diagnose(
        "Traceback (most recent call last):\n"
        '  File "/home/user/sekitoba/last_passing_rank/main.py", line 26, in main\n'
        "    from mpi4py import MPI\n"
        "ImportError: /home/user/.pyenv/versions/3.10.1/lib/python3.10/site-packages/mpi4py/"
        "MPI.cpython-310-x86_64-linux-gnu.so: undefined symbol: ompi_mpi_errors_abort"
    )
    assert (found.symptom, found.category, found.retryable) == ("crash", "application", False)


HEALTHY = [
    # xuhuisheng/rocm-gfx803 issue 15: torchvision's image extension built against another torch.
    "/home/user/.local/lib/python3.8/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load"
    " image Python extension: /home/user/.local/lib/python3.8/site-packages/torchvision/image.so:"
    " undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE",
    # casperg92/MaSIF_colab issue 7: the same warning with its advice, then warnings' source line.
    "/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image"
    " Python extension: '/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol:"
    " _ZN3c104impl8GPUTrace13gpuTraceStateE'If you don't plan on using image functionality from"
    " `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your"
    " environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?\n"
    "  warn(",
    # bmaltais/kohya_ss issue 2018: on Windows, beside xformers' missing-Triton notice.
    "E:\\kohya_ss\\venv\\lib\\site-packages\\torchvision\\io\\image.py:13: UserWarning: Failed to load image"
    " Python extension: '[WinError 127] The specified procedure could not be found'\n"
    "  warn(\n"
    "A matching Triton is not available, some optimizations will not be enabled.\n"
    "Error caught was: No module named 'triton'",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_optional_extension_warnings_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_container_gpu_hook_failure_names_the_node_srun_reports() -> None:
    # SlinkyProject/containers pull 2: enroot's NVIDIA hook fails inside pyxis on the node, whose
    # lines name no node; srun's report of the failed task says which node it was.
    found = diagnose(
        "[2025-07-18T15:06:29.684] error: pyxis: container start failed with error code: 1\n"
        "[2025-07-18T15:06:29.684] error: pyxis: printing enroot log file:\n"
        "[2025-07-18T15:06:29.684] error: pyxis:     nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig.\n"
        "real failed with error code: 1\n"
        "[2025-07-18T15:06:29.684] error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code\n"
        " 1\n"
        "[2025-07-18T15:06:29.684] error: pyxis: couldn't start container\n"
        "[2025-07-18T15:06:29.684] error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
        "[2025-07-18T15:06:29.684] error: Failed to invoke spank plugin stack\n"
        "srun: error: gpu-1-0: task 0: Exited with exit code 1"
    )
    assert (found.category, found.retryable) == ("system_software", True)
    assert found.implicated.nodes == ["gpu-1-0"]
