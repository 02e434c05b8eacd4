"""Whole excerpts of real logs where the dynamic loader refused a program or an extension: a
library the job brings (its MPI, its conda environment's libstdc++, a wheel built for a newer
system) missing or too old, which a rerun on another node meets again, against the driver's own
libraries missing on the node, which is the node's software; and the loader's and TensorFlow's
notices that go on, which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

# (source, excerpt, signature of the first evidence line, category, retryable)
FAILURES = [
    # horovod/horovod issue 400: mpirun over ssh to a second node, whose Open MPI runtime library
    # is not on the remote library path.
    (
        "https://github.com/horovod/horovod/issues/400",
        "mpirun --allow-run-as-root -np 8 \\\n"
        "       -H localhost:4,10.34.0.81:4 \\\n"
        "       -bind-to none -map-by slot \\\n"
        "       -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -x PATH \\\n"
        '       -mca plm_rsh_args "-p 10001 -v"  \\\n'
        "       python test.py\n"
        "OpenSSH_7.2p2 Ubuntu-4ubuntu2.4, OpenSSL 1.0.2g  1 Mar 2016\n"
        "debug1: Reading configuration data /etc/ssh/ssh_config\n"
        "debug1: /etc/ssh/ssh_config line 19: Applying options for *\n"
        "error while loading shared libraries: libopen-rte.so.40: cannot open shared object file: No such file or directory",
        "shared-library-not-loaded",
        "application",
        False,
    ),
    # horovod/horovod pull 59 (its troubleshooting guide): MPI's compiler wrapper cannot start.
    (
        "https://github.com/horovod/horovod/pull/59",
        "mpicxx: error while loading shared libraries: libopen-pal.so.40: cannot open shared object file: No such file or directory\n"
        "error: mpicxx -show failed (see error below), is MPI in $PATH?",
        "shared-library-not-loaded",
        "application",
        False,
    ),
    # apptainer/singularity issue 4783: the same loader line for the driver's libcuda is the node's.
    (
        "https://github.com/apptainer/singularity/issues/4783",
        "./test/slc7_amd64_gcc820/test_detid: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory",
        "driver-library-missing",
        "system_software",
        True,
    ),
    # ai4d-iasc/trixie issue 97: the loader's version line pasted without its "(required by ...)".
    (
        "https://github.com/ai4d-iasc/trixie/issues/97",
        "/gpfs/home/xxx/anaconda3/envs/xxx/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.29' not found",
        "native-undefined-symbol",
        "application",
        False,
    ),
    # DeepLabCut/DeepLabCut issue 2456: the same with an editor's typographic closing quote.
    (
        "https://github.com/DeepLabCut/DeepLabCut/issues/2456",
        "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.29\u2019 not found (required by "
        "/crnldata/xxx/Deeplabcut/lib/python3.9/site-packages/zmq/backend/cython/\u2026/\u2026/\u2026/\u2026/\u2026/libzmq.so.5)",
        None,
        "application",
        False,
    ),
    # sophgo/LLM-TPU issue 166: a torch wheel built against a newer libstdc++ than the system's.
    (
        "https://github.com/sophgo/LLM-TPU/issues/166",
        '  File "/usr/local/lib64/python3.11/site-packages/torch/__init__.py", line 290, in <module>\n'
        "    from torch._C import *  # noqa: F403\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^\n"
        "ImportError: /lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by "
        "/usr/local/lib64/python3.11/site-packages/torch/lib/libtorch_python.so)",
        None,
        "application",
        False,
    ),
]


@pytest.mark.parametrize(("source", "text", "signature", "category", "retryable"), FAILURES)
def test_loader_failures(source: str, text: str, signature: str | None, category: str, retryable: bool) -> None:
    found_signature, found_category, found_retryable = verdict(text)
    assert (found_category, found_retryable) == (category, retryable), source
    if signature is not None:
        assert found_signature == signature, source


HEALTHY = [
    # TheLastBen/fast-stable-diffusion issue 1591: TensorFlow's optional TensorRT libraries.
    "Training the text encoder...\n"
    "2023-02-14 11:32:00.672806: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
    "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: "
    "No such file or directory; LD_LIBRARY_PATH: /usr/local/lib/python3.8/dist-packages/cv2/../../lib64:/usr/lib64-nvidia",
    # effusiveperiscope/so-vits-svc issue 38: the TF-TRT warning between epochs that go on.
    "INFO:44k:====> Epoch: 16, cost 49.20 s\n"
    "2023-06-16 08:09:25.068286: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT\n"
    "INFO:44k:====> Epoch: 17, cost 49.26 s",
    # sylabs/singularity issue 776: no NVIDIA libraries bound, the program goes on on the CPU.
    "INFO:    Could not find any NVIDIA binaries on this host!\n"
    "WARNING: Could not find any NVIDIA libraries on this host!\n"
    "WARNING: You may need to edit /usr/local/etc/singularity/nvliblist.conf\n"
    "No GPU automatically detected. Setting SETTINGS.GPU to 0, and SETTINGS.NJOBS to cpu_count.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_loader_notices_stay_healthy(text: str) -> None:
    assert verdict(text)[1] == "none"
