"""Real logs of runs that cannot start on their node's software stack (NVML and the driver, a
PyTorch built without CUDA, a GPU too old for the dtype asked for, CUDA checks of libraries
built on CTranslate2), and healthy logs that only warn about the stack, each with its source."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

# NVML's return codes by the text nvmlErrorString gives them (tables/nvml.yaml, from NVIDIA DCGM's
# sdk/nvidia/nvml/nvml_error_strings.h), in the print forms of the tools that stop without NVML.
NVML = [
    # NVIDIA/nvidia-docker#584: after `yum update` upgraded the driver's libraries, nvidia-smi ...
    ("Failed to initialize NVML: Function Not Found", "nvml-function-not-found"),
    # ... and nvidia-docker 1.0 (Go's nvml package: "nvml: <text>") on the same node
    (
        "nvidia-docker | 2017/12/21 05:04:46 Error: nvml: Driver/library version mismatch",
        "nvml-lib-rm-version-mismatch",
    ),
]


@pytest.mark.parametrize(("line", "signature"), NVML)
def test_nvml_return_codes_in_each_tools_form(line: str, signature: str) -> None:
    assert verdict(line) == (signature, "system_software", True)
    assert diagnose(line).exclude


def test_the_commonest_nvml_lines_keep_their_own_signatures() -> None:
    # intel/llvm#17614: CI nodes left between driver versions
    assert verdict("Failed to initialize NVML: Driver/library version mismatch") == (
        "container-nvml-version-mismatch",
        "system_software",
        True,
    )
    # NVIDIA/nvidia-docker#1451: the prestart hook on an AWS g4dn instance
    line = 'docker: Error response from daemon: OCI runtime create failed: container_linux.go:349: starting container process caused "process_linux.go:449: container init caused \\"process_linux.go:432: running prestart hook 1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch\\\\\\\\n\\\\\\"\\"": unknown.'
    assert verdict(line) == ("container-nvidia-cli-version-mismatch", "system_software", True)


@pytest.mark.parametrize(
    "text",
    [
        # open-edge-platform/geti_v2#1291: torch's warning when NVML will not start, the job goes on
        "/interactive_ai/workflows/train/trainer/.venv/lib/python3.10/site-packages/torch/cuda/__init__.py:789:"
        " UserWarning: Can't initialize NVML\n"
        '  warnings.warn("Can\'t initialize NVML")\n'
        "Could not find wandb. To use this feature, ensure that you have wandb installed.\n"
        "Downloading shard files: 100%|██████████| 1/1 [00:00<00:00, 185.00it/s]",
        # intel/llvm#17614: the version line nvidia-smi prints after its error, alone
        "NVML library version: 550.144",
    ],
)
def test_nvml_warnings_and_version_lines_are_not_failures(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_a_pytorch_built_without_cuda_is_the_software_not_the_node() -> None:
    # locuslab/TCN#67: `model.cuda()` with a CPU-only torch (torch/cuda/__init__.py _lazy_init)
    found = diagnose(
        TRACEBACK + '  File "D:\\anaconda3\\envs\\script\\lib\\site-packages\\torch\\cuda\\__init__.py",'
        " line 210, in _lazy_init\n"
        '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
        "AssertionError: Torch not compiled with CUDA enabled"
    )
    assert found.evidence[0].signature == "torch-not-compiled-with-cuda"
    assert (found.category, found.retryable) == ("system_software", True)
    # no node runs a build without CUDA: leaving this one out of the restart would not help
    assert not found.exclude


def test_bf16_autocast_on_a_gpu_without_it_reads_like_the_other_too_old_gpu_errors() -> None:
    # karpathy/nanoGPT#277: torch.amp.autocast(dtype=bfloat16) on a V100 (torch/amp/autocast_mode.py)
    found = diagnose(
        TRACEBACK + '  File "/usr/local/lib64/python3.10/site-packages/torch/amp/autocast_mode.py", line 234,'
        " in __init__\n"
        "    raise RuntimeError('Current CUDA Device does not support bfloat16. Please switch dtype to float16.')\n"
        "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16."
    )
    assert found.evidence[0].signature == "torch-autocast-bf16-unsupported"
    assert (found.category, found.retryable) == ("system_software", True)


def test_ctranslate2s_cuda_check_names_the_runtime_error() -> None:
    # SYSTRAN/faster-whisper#653: a CUDA 12 build on driver 470 (CTranslate2 src/cuda/utils.h CUDA_CHECK)
    line = "RuntimeError: CUDA failed with error forward compatibility was attempted on non supported HW"
    assert verdict(line) == ("cuda-compat-not-supported-on-device", "system_software", True)


def test_nccl_names_a_container_host_that_begins_with_a_digit() -> None:
    # NVIDIA/nccl#496: an R460 driver under mpirun --tag-output, in a container named by its id
    found = diagnose(
        "[1,0]<stdout>:8470dd07de42:174:239 [0] enqueue.cc:802 NCCL WARN Cuda failure"
        " 'API call is not supported in the installed CUDA driver'\n"
        "[1,0]<stdout>:8470dd07de42:174:239 [0] misc/argcheck.cc:39 NCCL WARN Broadcast : invalid root 0"
        " (root should be in the 0..-1 range)\n"
        "[1,0]<stdout>:8470dd07de42:174:239 [0] init.cc:895 NCCL WARN Cuda failure 'invalid device ordinal'"
    )
    assert found.evidence[0].signature == "cuda-call-requires-newer-driver"
    assert (found.category, found.retryable) == ("system_software", True)
    assert "8470dd07de42" in found.implicated.nodes


@pytest.mark.parametrize(
    "text",
    [
        # StanfordMIMI/DDM2#19: the GPU's sm_89 is not in the build's list, the run goes on loading data
        "24-01-18 01:07:23.001 - INFO: Initial Dataset Finished\n"
        "/home/user/mambaforge-pypy3/envs/ddm2_image/lib/python3.8/site-packages/torch/cuda/__init__.py:104:"
        " UserWarning: \n"
        "NVIDIA RTX 6000 Ada Generation with CUDA capability sm_89 is not compatible with the current PyTorch"
        " installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.\n"
        "If you want to use the NVIDIA RTX 6000 Ada Generation GPU with PyTorch, please check the instructions"
        " at https://pytorch.org/get-started/locally/\n"
        "\n"
        '  warnings.warn(incompatible_device_warn.format(device_name, capability, " ".join(arch_list),'
        " device_name))\n"
        "24-01-18 01:07:23.542 - INFO: Noise Model is created.\n"
        "24-01-18 01:07:23.542 - INFO: Initial Model Finished",
        # ROCm/pytorch#627: the old-GPU warning, then the tensor is made on the GPU all the same
        "/home/user/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:87: UserWarning: \n"
        "    Found GPU0 Ellesmere [Radeon RX 470/480/570/570X/580/580X] which is of cuda capability 3.0.\n"
        "    PyTorch no longer supports this GPU because it is too old.\n"
        "    The minimum cuda capability that we support is 3.5.\n"
        "    \n"
        "  warnings.warn(old_gpu_warn % (d, name, major, capability[1]))\n"
        "tensor([9], device='cuda:0')",
        # CompVis/stable-diffusion#850: SDPA falls back from flash attention and sampling completes
        "  0%|          | 0/50 [00:00<?, ?it/s]D:\\ProgramData\\envs\\pytorch\\Lib\\site-packages\\diffusers\\models"
        "\\attention_processor.py:1279: UserWarning: 1Torch was not compiled with flash attention. (Triggered"
        " internally at C:\\cb\\pytorch_1000000000000\\work\\aten\\src\\ATen\\native\\transformers\\cuda\\sdp_utils"
        ".cpp:455.)\n"
        "  hidden_states = F.scaled_dot_product_attention(\n"
        "100%|██████████| 50/50 [00:05<00:00,  8.44it/s]",
        # facebookresearch/xformers#800: xFormers' extensions do not fit the installed torch; it goes on
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cu118)\n"
        "    Python  3.8.18 (you have 3.8.5)\n"
        "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n"
        "  Memory-efficient attention, SwiGLU, sparse and more won't be available.\n"
        "  Set XFORMERS_MORE_DETAILS=1 for more details\n"
        "10/15/2023 14:46:49 - INFO - __main__ - Distributed environment: NO",
        # pytorch/pytorch#126605: cuDNN v8 API refuses one plan and PyTorch takes another
        "site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with a cudnnException:"
        " CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status:"
        " CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n"
        "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
        # NVIDIA/nccl#1059: no external network plugin, NCCL uses its own
        "MLVM2: MLVM2:10792:10792 [0] NCCL INFO cudaDriverVersion 12030\n"
        "MLVM2: MLVM2:10792:10792 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 :"
        " libnccl-net.so: cannot open shared object file: No such file or directory\n"
        "MLVM2: MLVM2:10792:10792 [0] NCCL INFO NET/Plugin : No plugin found, using internal implementation",
    ],
)
def test_stack_warnings_the_run_survives_are_not_failures(text: str) -> None:
    assert diagnose(text).symptom == "none"


# torch/backends/cudnn/__init__.py _init (and Caffe2's common_cudnn.h): the cuDNN found at run time
# does not fit the build; the wording changed over the releases.
CUDNN_MISMATCH = [
    # YoungSeng/SRD-VC#16: an RNN's flatten_parameters asks cuDNN first
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 3, 2) but found runtime"
    " version (8, 2, 1). PyTorch already comes bundled with cuDNN.",
    # jwyang/faster-rcnn.pytorch#662: torch 0.4's wording
    "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
    # facebookresearch/Detectron#574: Caffe2's enforce
    "RuntimeError: [enforce fail at common_cudnn.h:108] version_match || backwards_compatible_7 ||"
    " patch_compatible. cuDNN compiled (7102) and runtime (7005) versions mismatch",
    # bmaltais/kohya_ss#1096: the GUI's launcher logs the same RuntimeError and stops
    "17:22:50-122539 ERROR    Could not load torch: cuDNN version incompatibility: PyTorch was compiled  against"
    " (8, 7, 0) but found runtime version (8, 2, 4). PyTorch already comes bundled with cuDNN. One option",
]


@pytest.mark.parametrize("line", CUDNN_MISMATCH)
def test_a_cudnn_the_build_cannot_use_is_the_software_stack(line: str) -> None:
    assert verdict(line) == ("torch-cudnn-version-incompatible", "system_software", True)


@pytest.mark.parametrize(
    "text",
    [
        # jax-ml/jax#20722: JAX warns that CUDA would not start and lists the CPU it went on with
        ">>> jax.devices()\n"
        "CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:90: operation gpuDeviceGetAttribute("
        " &major, GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) failed: CUDA_ERROR_NOT_INITIALIZED"
        " (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        "[CpuDevice(id=0)]",
        # RosettaCommons/RFdiffusion#208: the same warning, the pipeline goes on
        "CUDA backend failed to initialize: Found CUDA version 12010, but JAX was built against version 12020,"
        " which is newer. The copy of CUDA that is installed must be at least as new as the version against"
        " which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        "running proteinMPNN...\n"
        "running AlphaFold...",
    ],
)
def test_jaxs_cuda_backend_warning_is_a_fallback_not_a_failure(text: str) -> None:
    assert diagnose(text).symptom == "none"


def test_jaxs_backend_that_must_start_and_cannot_is_still_a_failure() -> None:
    # rgommers/pixi-dev-scipystack#1: with the cuda platform required, JAX raises instead
    found = diagnose(
        "E   RuntimeError: Backend 'cuda' failed to initialize: Unable to use CUDA because of the following"
        " issues with CUDA components:\n"
        "E   Outdated cuDNN installation found.\n"
        "E   Version JAX was built against: 8907"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "jax-backend-init-failed",
        "system_software",
        True,
    )


def test_nccl_names_the_host_whatever_device_number_a_failed_cuda_left() -> None:
    # NVIDIA/cuml#5961: NCCL before 2.19 printed an uninitialised cudaDev when cudaGetDevice failed
    found = diagnose(
        "VM-192-150-centos:2871:2871 [32523] misc/cudawrap.cc:182 NCCL WARN Cuda failure"
        " 'CUDA driver version is insufficient for CUDA runtime version'"
    )
    assert (found.category, found.retryable) == ("system_software", True)
    assert found.implicated.nodes == ["VM-192-150-centos"]


def test_nccl_info_about_absent_plugins_on_several_nodes_is_not_a_failure() -> None:
    # horovod/horovod#639: three nodes set up NCCL over InfiniBand, then train
    text = (
        "c4140-01:147406:148900 [0] NCCL INFO NET/IB : Using interface ib0 for sideband communication\n"
        "c4140-01:147406:148900 [0] NCCL INFO Using internal Network IB\n"
        "NCCL version 2.3.5+cuda10.0\n"
        "c4140-01:147406:148900 [0] NCCL INFO rank 0 nranks 3\n"
        "c4140-02:226881:226933 [0] NCCL INFO NET : Using interface ib0:192.168.1.36<0>\n"
        "c4140-03:5345:5397 [0] NCCL INFO NET/IB : Using interface ib0 for sideband communication\n"
        "c4140-02:226881:226933 [0] NCCL INFO Using internal Network IB"
    )
    assert diagnose(text).symptom == "none"


# torchvision/extension.py: _check_cuda_version and _assert_has_ops
TORCHVISION = [
    # deforum/deforum-stable-diffusion#348
    (
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions."
        " PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision"
        " that matches your PyTorch install.",
        ("torchvision-cuda-mismatch", "system_software", True),
    ),
    # geocine/sd-easy-mode#18: a notebook wraps the message at 80 columns
    (
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different\n"
        "CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA \n"
        "Version=11.8. Please reinstall the torchvision that matches your PyTorch \n"
        "install.",
        ("torchvision-cuda-mismatch", "system_software", True),
    ),
    # Engineer-of-Stuff/stable-diffusion-paperspace#111: the ops do not load at all
    (
        "RuntimeError: Couldn't load custom C++ ops. \n"
        "This can happen if your PyTorch and torchvision versions are incompatible, or if you had errors while"
        " compiling torchvision from source.",
        ("torchvision-ops-unloadable", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "labels"), TORCHVISION)
def test_torchvision_that_does_not_fit_the_installed_torch(text: str, labels: tuple[str, str, bool]) -> None:
    assert verdict(text) == labels


# cuDNN's own loader aborts the process when a sub-library will not load; the library its
# dlerror names says whose it is (the driver's libcuda, or what the job brought).
CUDNN_LOADER = [
    # sjtuplayer/anomalydiffusion#76: the first epoch, no driver library in the environment
    (
        "Epoch: 0\n"
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file:"
        " No such file or directory\n"
        "Please make sure libcudnn_cnn_infer.so.8 is in your library path!\n"
        "Aborted",
        ("driver-library-missing", "system_software", True),
    ),
    # jhj0517/Whisper-WebUI#294: faster-whisper without cuDNN 8's libraries
    (
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object"
        " file: No such file or directory\n"
        './start-webui.sh: línea 4:  6516 Abortado                (`core\' generado) python3.10 app.py "$@"',
        ("cudnn-library-unloadable", "application", False),
    ),
    # facefusion/facefusion-docker#9: NVRTC missing from the image
    (
        "facefusion-docker-facefusion-cuda-1  | Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so:"
        " cannot open shared object file: No such file or directory\n"
        "facefusion-docker-facefusion-cuda-1 exited with code 139",
        ("cudnn-library-unloadable", "application", False),
    ),
    # daswer123/xtts-finetune-webui#18 (a comment): cuDNN 9's wording
    (
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n"
        "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor",
        ("cudnn-library-unloadable", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "labels"), CUDNN_LOADER)
def test_cudnns_loader_names_the_library_that_would_not_load(text: str, labels: tuple[str, str, bool]) -> None:
    assert verdict(text) == labels


# NCCL's CUDACHECK (include/checks.h) wraps NCCL's own CUDA calls; users' pointers are checked
# before them (misc/argcheck.cc), so an argument-class CUDA error there is NCCL's and the driver's.
NCCL_OWN_CUDA_CALLS = [
    # pytorch/pytorch#150852: NVLS set-up on a 12.2 driver with a nightly torch
    "[2025-04-08 08:39:46] devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN Cuda failure 1 'invalid argument'\n"
    "devgpu263:589012:591652 [0] NCCL INFO transport/nvls.cc:409 -> 1\n"
    "devgpu263:589012:591652 [0] NCCL INFO init.cc:1141 -> 1",
    # NVIDIA/nccl#1528: NCCL's kernels are not in the loaded module
    "c76d92cccb6e:72:456 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n"
    "\n"
    "c76d92cccb6e:72:456 [0] enqueue.cc:47 NCCL WARN Cuda failure 'named symbol not found'",
]


@pytest.mark.parametrize("text", NCCL_OWN_CUDA_CALLS)
def test_a_cuda_call_of_nccls_own_refused_is_the_stack(text: str) -> None:
    found = diagnose(text)
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "nccl-own-cuda-call-refused",
        "system_software",
        True,
    )
    assert found.implicated.nodes


def test_the_same_cuda_error_outside_nccl_stays_the_programs() -> None:
    # the cuda table's reading of a program's own call is unchanged (PyTorch's c10 CUDA check form)
    assert verdict("RuntimeError: CUDA error: invalid argument") == ("cuda-invalid-value", "application", False)


def test_a_kernel_image_the_nodes_driver_refuses_is_the_stack() -> None:
    # MzeroMiko/VMamba#153: Triton's load_binary of the cubin its ptxas built; triton-lang/triton#4390
    # says the same setup ran on other servers, #2971 that a driver upgrade cured it
    found = diagnose(
        '  File "/home/user/.conda/envs/vmamba-4-14/lib/python3.8/site-packages/triton/compiler.py", line 1672,'
        " in _init_handles\n"
        '    mod, func, n_regs, n_spills = cuda_utils.load_binary(self.metadata["name"], self.asm["cubin"],'
        " self.shared, device)\n"
        "RuntimeError: Triton Error [CUDA]: device kernel image is invalid"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "cuda-invalid-kernel-image",
        "system_software",
        True,
    )
    assert found.exclude


def test_apexs_build_check_is_the_nodes_cuda_toolkit() -> None:
    # NVIDIA/apex#579: apex's setup.py compares the node's nvcc with torch.version.cuda
    found = diagnose(
        "    Traceback (most recent call last):\n"
        '      File "/tmp/pip-req-build-5xkn4nh8/setup.py", line 77, in check_cuda_torch_binary_vs_bare_metal\n'
        '        "https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  "\n'
        "    RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version"
        " used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.0.130.\n"
        "    In some cases, a minor-version mismatch will not cause later errors:"
        "  https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  You can try commenting out this check"
        " (at your own risk).\n"
        "    Running setup.py install for apex ... error"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "torch-extension-cuda-mismatch",
        "system_software",
        True,
    )


def test_flash_attentions_sm80_check_without_a_message_is_the_gpu_generation() -> None:
    # bmaltais/kohya_ss#2720: training Flux on an RTX 2060 (sm75) through PyTorch's SDPA
    line = (
        "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be"
        " improved?  If so, please report an enhancement request to PyTorch.)"
    )
    assert verdict(line) == ("flash-attn-gpu-too-old", "system_software", True)


def test_cudnns_optional_library_it_goes_on_without_is_not_a_failure() -> None:
    # critical88/TCA4Rec#1: cuDNN tries NVRTC before each step and the epoch carries on
    text = (
        "Could not load library libnvrtc.so.11.2. Error: libnvrtc.so.11.2: cannot open shared object file:"
        " No such file or directory\n"
        "Epoch 0:   0%|          | 2/2500 [00:04<1:36:38,  0.43it/s, loss=1.540, lr=0.000]Could not load library"
        " libnvrtc.so.11.2. Error: libnvrtc.so.11.2: cannot open shared object file: No such file or directory\n"
        "Epoch 0:   0%|          | 3/2500 [00:06<1:35:47,  0.43it/s, loss=1.760, lr=0.000]Could not load library"
        " libnvrtc.so.11.2. Error: libnvrtc.so.11.2: cannot open shared object file: No such file or directory\n"
        "Epoch 0:   0%|▏         | 4/2500 [00:09<1:36:22,  0.43it/s, loss=1.940, lr=0.000]"
    )
    assert diagnose(text).symptom == "none"
