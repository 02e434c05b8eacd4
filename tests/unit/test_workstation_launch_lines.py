"""Whole excerpts of real logs from training launched on a workstation, mostly Windows: a
PyTorch build that lacks what the launch asks for (the libuv TCPStore that torch 2.4+ requests
by default and the Windows wheels do not have, the NCCL backend) stops the job before any
connection is tried, and a rerun repeats it; Windows out of commit memory (WinError 1455, the
paging file too small) when spawned workers load torch's CUDA DLLs; a Rust io::Error (safetensors
saving a checkpoint) read by its ErrorKind, since its code is the OS's own; and the alarming but harmless lines the same
setups print (c10d's Windows connect warning for an unresolvable host name, torchelastic's
redirects note, Triton missing on Windows), which must stay healthy."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.structure import errno_fact
from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # cocktailpeanut/fluxgym issue 302: torchrun's static rendezvous builds its TCPStore on a
    # Windows wheel of torch 2.5.1, which has no libuv.
    (
        "https://github.com/cocktailpeanut/fluxgym/issues/302",
        '      File "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\torch\\'
        'distributed\\elastic\\rendezvous\\static_tcp_rendezvous.py", line 67, in next_rendezvous\n'
        "        self._store = TCPStore(  # type: ignore[call-arg]\n"
        "                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "application",
        False,
        "torch-tcpstore-libuv-not-built",
    ),
    # cocktailpeanut/fluxgym issue 82: the same under the Pinokio launcher, whose runner then
    # reports the command's exit code: the exit is the error's, not a cause of its own.
    (
        "https://github.com/cocktailpeanut/fluxgym/issues/82",
        "39] [INFO] self._store = TCPStore (# type: ignore [call-arg]\n"
        "39] [INFO] RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n"
        "41] [ERROR] Command exited with code 1\n"
        "41] [INFO] Runner: <LogsViewRunner nb_logs",
        "application",
        False,
        "torch-tcpstore-libuv-not-built",
    ),
    # OFA-Sys/Chinese-CLIP issue 279: a Windows build has no NCCL; torchelastic reports rank 0's
    # exit and the spawned child's EOFError after it.
    (
        "https://github.com/OFA-Sys/Chinese-CLIP/issues/279",
        "RuntimeError: Distributed package doesn't have NCCL built in\n"
        "EOFError: Ran out of input\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27316) "
        "of binary: C:\\anaconda\\envs\\clip\\python.exe",
        "application",
        False,
        "torch-backend-not-built",
    ),
    # WongKinYiu/yolov7 issue 1036: Windows cannot commit memory to load torch's DLL.
    (
        "https://github.com/WongKinYiu/yolov7/issues/1036",
        "python train.py --weights runs\\train\\B20E300_0211\\weights\\best.pt --cfg cfg\\training\\yolov7-custom.yaml "
        "--device 0 --batch-size 20 --epoch 300\n"
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
        '"E:\\Yolov7\\yolov7training\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops_gpu.dll" or one of its dependencies.',
        "out_of_memory",
        False,
        "windows-commitment-limit",
    ),
    # zbf1991/WeCLIP issue 5: a spawned child's `import torch` fails; Windows prints the message
    # in the machine's language.
    (
        "https://github.com/zbf1991/WeCLIP/issues/5",
        'File "D:\\PycharmProject\\WeCLIP\\scripts\\dist_clip_voc.py", line 10, in <module>\n'
        "    import torch\n"
        '  File "D:\\Anaconda3\\envs\\wssam\\lib\\site-packages\\torch\\__init__.py", line 124, in <module>\n'
        "    raise err\n"
        "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "  # noqa: RUF001
        '"D:\\Anaconda3\\envs\\wssam\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
        "out_of_memory",
        False,
        "windows-commitment-limit",
    ),
    # iperov/DeepFaceLab issue 737: five DataLoader-like workers fail at once, their tracebacks
    # interleaved, the exception's name and message split across lines.
    (
        "https://github.com/iperov/DeepFaceLab/issues/737",
        "Loading samples: 100%|####| 72787/72787 [01:24<00:00, 858.30it/s]\n"
        "Traceback (most recent call last):\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "multiprocessing\\spawn.py", line 105, in spawn_main\n'
        '  File "multiprocessing\\spawn.py", line 115, in _main\n'
        'OSError  File "multiprocessing\\heap.py", line 55, in __setstate__\n'
        '  File "multiprocessing\\heap.py", line 55, in __setstate__\n'
        ": [WinError 1455] The paging file is too small for this operation to",
        "out_of_memory",
        False,
        "windows-commitment-limit",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_workstation_launch_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.evidence[0].signature, found.category, found.retryable) == (signature, category, retryable)


def test_windows_connect_warning_before_a_program_error_is_noise() -> None:
    # voicepaw/so-vits-svc-fork issue 501: c10d's 10049 warning is Windows noise; the spawn
    # failure after it is the program's.
    found = diagnose(
        "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:601] [c10d] The client socket has failed to connect to "
        "[DESKTOP]:50067 (system error: 10049 - The requested address is not valid in its context.).\n"
        "\n"
        "C:\\Users\\user\\.conda\\envs\\svc\\python.exe: Error while finding module specification for "
        "'__main__' (ValueError: __main__.__spec__ is None)"
    )
    assert (found.category, found.retryable) == ("application", False)


def test_commitment_limit_wins_over_the_orphaned_child_after_it() -> None:
    # babysor/MockingBird issue 486: after the DLL load fails for lack of commit memory, a spawned
    # child cannot duplicate its parent's handle (PermissionError): the memory is the cause.
    found = diagnose(
        "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "  # noqa: RUF001
        '"D:\\Anaconda3\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.\n'
        "Traceback (most recent call last):\n"
        '  File "D:\\Anaconda3\\lib\\multiprocessing\\reduction.py", line 131, in detach\n'
        "    return _winapi.DuplicateHandle(\n"
        "PermissionError: [WinError 5] 拒绝访问。"
    )
    assert (found.evidence[0].signature, found.category, found.retryable) == (
        "windows-commitment-limit",
        "out_of_memory",
        False,
    )


def test_safetensors_disk_full_is_the_storage_by_its_kind() -> None:
    # hiyouga/LlamaFactory issue 5155: two 4090s save a LoRA checkpoint onto a full disk.
    found = diagnose(
        "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, "
        'message: "No space left on device" })'
    )
    assert (found.category, found.retryable) == ("system_software", False)


def test_rust_io_error_kind_wins_over_a_windows_code() -> None:
    # Rust's Debug form names the OS's own code and the kind it decodes to; on Windows code 112 is
    # ERROR_DISK_FULL (rust-lang/rust pull 79965 maps it to the storage-full kind), where Linux's
    # 112 is EHOSTDOWN. A Windows CI shard printed it bare (soldr's notes on run 33065541438).
    assert [f.name for f in [errno_fact("Os { code: 112, kind: StorageFull }")] if f] == ["ENOSPC"]
    # lum3on/ComfyUI-ModelQuantizer issue 4: the same kind on Linux, with its message
    fact = errno_fact(
        'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'
    )
    assert fact is not None and (fact.name, fact.category, fact.retryable) == ("ENOSPC", "system_software", False)
    # d8ahazard/sd_dreambooth_extension issue 1262: a kind that names no errno leaves the code,
    # and Windows' 1224 is no Linux errno: nothing is read from it
    assert (
        errno_fact(
            'Error while serializing: IoError(Os { code: 1224, kind: Uncategorized, message: "请求的操作无法在使用用户映射区域打开的文件上执行。" })'
        )
        is None
    )


HEALTHY = [
    # YYuX-1145/Bert-VITS2-Integration-package issue 80: a single-process run on Windows warns that
    # the store host does not resolve, logs a missing embedding, and goes on loading.
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [www.wondershare.net]:10086 "
    "(system error: 10049 - 在其上下文中，该请求的地址无效。).\n"  # noqa: RUF001
    "05-25 15:21:28 INFO     | data_utils.py:63 | Init dataset...\n"
    "INFO:models:Loaded checkpoint 'Data\\linra\\models\\DUR_0.pth' (iteration 0)\n"
    "ERROR:models:emb_g.weight is not in the checkpoint\n"
    "INFO:models:Loaded checkpoint 'Data\\linra\\models\\G_0.pth' (iteration 0)",
    # bmaltais/kohya_ss issue 2430: Triton is missing on Windows; settings load and training goes on.
    "2024-05-01 22:07:09 WARNING  A matching Triton is not available, some optimizations will not be enabled.  "
    "__init__.py:55                             Error caught was: No module named 'triton'\n"
    "2024-05-01 22:07:14 INFO     Loading settings from ./outputs/config_lora-20240501-220656.toml...      "
    "train_util.py:3744",
    # awslabs/sockeye pull 990 (the maintainers: the note does not affect training).
    "NOTE: Redirects are currently not supported in Windows or MacOs.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_workstation_noise_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
