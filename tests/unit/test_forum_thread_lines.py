"""Whole excerpts of real logs as people paste them into forum and issue threads (partial,
cut mid-line, wrapped, with a launcher's or a terminal's decorations left in), from the probe of
question-and-answer threads: the C++ terminate report whose abort is only its end (a Gloo peer
that closed the connection, then `Fatal Python error: Aborted`), shared-memory bus errors in
DataLoader workers, HIP builds without a kernel for the GPU, TensorFlow's allocator running out of
GPU memory, launchers that report a killed worker, and the warnings people ask about while
training goes on, which must stay healthy."""

from __future__ import annotations

import pytest

from recovery.activities.signatures.prefixes import line_context
from tests.unit.real_lines import diagnose

# A C++ exception no one caught ends in abort(): libstdc++'s terminate handler prints the type and
# its what(), then the process dies of SIGABRT and Python's faulthandler (or the shell) reports the
# abort. The what() line says why; the abort report is its end.
# (source, excerpt, category, retryable, signature of the first evidence line, peers)
TERMINATED = [
    # horovod gloo: rank 0's peer closed the pair, rank 4's reset it; both abort
    (
        "https://github.com/horovod/horovod/issues/1364",
        (
            'Thu Aug 29 16:41:02 2019[3]<stderr>:  File "/usr/local/lib/python3.6/dist-packages/horovod/common/basics.py", line 60 in init\n'
            'Thu Aug 29 16:41:02 2019[3]<stderr>:  File "/home/user/repos/horovod/examples/tensorflow_keras_mnist.py", line 16 in <module>\n'
            "Thu Aug 29 16:41:02 2019[0]<stderr>:terminate called after throwing an instance of 'gloo::IoException'\n"
            "Thu Aug 29 16:41:02 2019[0]<stderr>:  what():  [/tmp/pip-req-build-5w870gio/third_party/gloo/gloo/transport/tcp/pair.cc:572] Connection closed by peer [10.128.15.205]:53666\n"
            "Thu Aug 29 16:41:02 2019[0]<stderr>:Fatal Python error: Aborted\n"
            "Thu Aug 29 16:41:02 2019[0]<stderr>:\n"
            "Thu Aug 29 16:41:02 2019[0]<stderr>:Thread 0x00007f1c534b9700 (most recent call first):\n"
            'Thu Aug 29 16:41:02 2019[0]<stderr>:  File "/usr/local/lib/python3.6/dist-packages/horovod/common/basics.py", line 60 in init\n'
            'Thu Aug 29 16:41:02 2019[0]<stderr>:  File "/home/user/repos/horovod/examples/tensorflow_keras_mnist.py", line 16 in <module>\n'
            "Thu Aug 29 16:41:02 2019[4]<stderr>:terminate called after throwing an instance of 'gloo::IoException'\n"
            "Thu Aug 29 16:41:02 2019[4]<stderr>:  what():  [/tmp/pip-req-build-p31znpnj/third_party/gloo/gloo/transport/tcp/pair.cc:563] Read error [10.128.0.5]:19855: Connection reset by peer\n"
            "Thu Aug 29 16:41:02 2019[4]<stderr>:Fatal Python error: Aborted"
        ),
        "network",
        True,
        "gloo-peer-closed",
        ["10.128.15.205"],
    ),
    # the connect to the peer is refused, then the shell's abort line
    (
        "https://github.com/pytorch/pytorch/issues/15592",
        (
            "terminate called after throwing an instance of 'gloo::IoException'\n"
            "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused\n"
            "Aborted (core dumped)"
        ),
        "network",
        True,
        "torch-gloo-connect-failed",
        ["127.0.1.1"],
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature", "peers"), TERMINATED)
def test_terminate_report_speaks_through_its_what_line(
    source: str, text: str, category: str, retryable: bool, signature: str, peers: list[str]
) -> None:
    found = diagnose(text)
    assert found.evidence[0].signature == signature, source
    assert (found.symptom, found.category, found.retryable) == ("crash", category, retryable), source
    assert found.implicated.peers == peers, source


# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # after epoch-1 progress lines the DataLoader reports an unexpected bus error in a worker, insufficient shared memory (shm), and the traceback starts
    (
        "https://github.com/dxli94/WLASL/issues/15",
        (
            "...\n"
            "Epoch 1 train Loc Loss: 0.0019 Cls Loss: 0.0009 Tot Loss: 0.0014 Accu :0.8119\n"
            "Epoch 1 train Loc Loss: 0.0014 Cls Loss: 0.0006 Tot Loss: 0.0010 Accu :0.8121\n"
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 511, in _try_get_batch\n'
            "    data = self.data_queue.get(timeout=timeout)\n"
            '  File "/usr/local/lib/python3.6/multiprocessing/queues.py", line 104, in get\n'
            "    if not self._poll(timeout):\n"
            '  File "/usr/local/lib/python3.6/multiprocessing/connection.py", line 257, in poll\n'
            "    return self._poll(timeout)\n"
            '  File "/usr/local/lib/python3.6/multiprocessing/connection.py", line 414, in _poll\n'
            "    r = wait([self], timeout)\n"
            '  File "/usr/local/lib/python3.6/multiprocessing/connection.py", line 911, in wait\n'
            "    ready = selector.select(timeout)\n"
            '  File "/usr/local/lib/python3.6/selectors.py", line 376, in select\n'
            "    fd_event_list = self._poll.poll(timeout)\n"
            '  File "/usr/local/lib/python3.6/site-packages/torch/utils/data/_utils/signal_handling.py", line 63, in handle'
        ),
        "system_software",
        False,
        "shm-too-small",
    ),
    # Paddle's DataLoader reports an unexpected BUS error in a worker caused by insufficient /dev/shm; the reader thread raises
    (
        "https://github.com/PaddlePaddle/PaddleClas/issues/999",
        (
            "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm is enough\n"
            "ERROR:root:DataLoader reader thread raised an exception!\n"
            "Exception in thread Thread-11:\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/site-packages/paddle/fluid/dataloader/dataloader_iter.py", line 482, in _get_data\n'
            "    data = self._data_queue.get(timeout=self._timeout)\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/multiprocessing/queues.py", line 105, in get\n'
            "    raise Empty\n"
            "_queue.Empty\n"
            "\n"
            "During handling of the above exception, another exception occurred:\n"
            "\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/threading.py", line 926, in _bootstrap_inner\n'
            "    self.run()\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/threading.py", line 870, in run\n'
            "    self._target(*self._args, **self._kwargs)\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/site-packages/paddle/fluid/dataloader/dataloader_iter.py", line 411, in _thread_loop\n'
            "    batch = self._get_data()\n"
            '  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/site-packages/paddle/fluid/dataloader/dataloader_iter.py", line 498, in _get_data\n'
            '    "pids: {}".format(len(failed_worke'
        ),
        "system_software",
        False,
        "shm-too-small",
    ),
    # after normal batches a cuBLAS call fails (CUBLAS_STATUS_EXECUTION_FAILED) and a CUDA check fails with an illegal memory access (77): a faulting kernel, cause not in the log
    (
        "https://github.com/PaddlePaddle/Paddle/issues/346",
        (
            "I1104 11:18:44.281013 87409 TrainerInternal.cpp:165]  Batch=3000 samples=192000 AvgCost=0.136428 CurrentCost=0.100355 Eval: classification_error_evaluator=0.0541406  CurrentEval: classification_error_evaluator=0.0395312\n"
            "I1104 11:18:45.290464 87409 Tester.cpp:127]  Test samples=1000 cost=0.347865 Eval: classification_error_evaluator=0.148\n"
            "...................................................................................................\n"
            "I1104 11:19:09.124543 87409 TrainerInternal.cpp:165]  Batch=3100 samples=198400 AvgCost=0.135145 CurrentCost=0.0966748 Eval: classification_error_evaluator=0.0535938  CurrentEval: classification_error_evaluator=0.0371875\n"
            "..........F1104 11:19:11.596421 87418 hl_cuda_cublas.cc:220] Check failed: stat == CUBLAS_STATUS_SUCCESS (13 vs. 0) [cublas status]: execution failed\n"
            "*** Check failure stack trace: ***\n"
            "F1104 11:19:11.596427 87426 hl_cuda_device.cc:661] Check failed: cudaSuccess == cudaStat (0 vs. 77) Cuda Error: an illegal memory access was encountered"
        ),
        "unknown",
        True,
        "glog-check-failed",
    ),
    # on ROCm (RX 6600) the first GPU kernel fails with HIP error: invalid device function: the installed build has no kernel for this GPU architecture
    (
        "https://github.com/etched-ai/open-oasis/issues/27",
        (
            "Traceback (most recent call last):                \n"
            '  File "/home/user/Desktop/open-oasis/generate.py", line 70, in <module>                            \n'
            "    x = vae.encode(x * 2 - 1).mean * scaling_factor                                                 \n"
            "                   ~~^~~                          \n"
            "RuntimeError: HIP error: invalid device function  \n"
            "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.                                \n"
            "For debugging consider passing AMD_SERIALIZE_KERNEL=3                                               \n"
            "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions."
        ),
        "system_software",
        True,
        "cuda-invalid-device-function",
    ),
    # torch.AcceleratorError: HIP error: invalid device function on a ROCm 7 nightly build: no kernel for this GPU
    (
        "https://github.com/pytorch/pytorch/issues/164346",
        (
            "torch.AcceleratorError: HIP error: invalid device function\n"
            "Search for `hipErrorInvalidDeviceFunction' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more information.\n"
            "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
            "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions."
        ),
        "system_software",
        True,
        "cuda-invalid-device-function",
    ),
    # TensorFlow's BFC allocator runs out of GPU memory (Resource exhausted: OOM when allocating tensor) during keras model.fit
    (
        "https://github.com/tensorflow/tensor2tensor/issues/782",
        (
            "2018-05-10 09:14:16.535586: W tensorflow/core/common_runtime/bfc_allocator.cc:277] ****************************************************************************************************\n"
            "2018-05-10 09:14:16.535628: W tensorflow/core/framework/op_kernel.cc:1192] Resource exhausted: OOM when allocating tensor with shape[123008,500]\n"
            "2018-05-10 09:14:16.536752: W tensorflow/core/common_runtime/bfc_allocator.cc:217] Allocator (GPU_0_bfc) ran out of memory trying to allocate 84.60MiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory is available.\n"
            "2018-05-10 09:14:16.536782: W tensorflow/stream_executor/cuda/cuda_dnn.cc:3355]\n"
            "Traceback (most recent call last):\n"
            '  File "tryhard.py", line 194, in <module>\n'
            "    Combination = model.fit(X_train, y_train, batch_size = 10, epochs=epoch1, verbose = 1, validation_data = (X_test, y_test))\n"
            '  File "/usr/local/lib/python2.7/dist-packages/keras/models.py", line 963, in fit\n'
            "    validation_steps=validation_steps)\n"
            '  File "/usr/local/lib/python2.7/dist-packages/keras/engine/training.py", line 1705, in fit\n'
            "    validation_steps=validation_steps)"
        ),
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # the one line posted: ResourceExhaustedError OOM when allocating a tensor
    (
        "https://github.com/santi-pdp/segan/issues/42",
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[100,4096,32]",
        "out_of_memory",
        False,
        "xla-out-of-memory",
    ),
    # after training hangs, nvidia-smi cannot get the device handle for GPU 0000:62:00 (Unknown Error): the GPU dropped off
    (
        "https://github.com/stanford-cs336/assignment4-data/issues/1",
        "Unable to determine the device handle for GPU0000:62:00.0: Unknown Error",
        "hardware",
        True,
        "gpu-unreachable",
    ),
    # on one node (pdsh prefix) DeepSpeed's launcher is killing all its subprocesses: a worker failed, the log does not say why
    (
        "https://github.com/deepspeedai/DeepSpeed/issues/4510",
        (
            "10.0.83.120: [2023-10-13 11:31:28,593] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 249\n"
            "10.0.83.120: [2023-10-13 11:31:58,630] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 250\n"
            "10.0.83.120: [2023-10-13 11:31:58,641] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 251\n"
            "10.0.83.120: [2023-10-13 11:32:28,663] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 252\n"
            "10.0.83.120: [2023-10-13 11:32:28,663] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 253\n"
            "10.0.83.120: [2023-10-13 11:32:58,685] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 254\n"
            "10.0.83.120: [2023-10-13 11:33:28,706] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 255\n"
            "10.0.83.120: [2023-10-13 11:33:58,758] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 256"
        ),
        "unknown",
        True,
        "launcher-child-failed",
    ),
    # DeepSpeed's launcher reports the local_rank 7 worker exits with return code = -9 (SIGKILL)
    (
        "https://github.com/haotian-liu/LLaVA/issues/1085",
        (
            "[2024-02-06 06:23:39,510] [ERROR] [launch.py:321:sigkill_handler] ['/mnt/d/anaconda3/envs/llava2/bin/python', '-u', '/home/user/code/LLaVA-main/llava/train/train_mem.py', '--local_rank=7', '--deepspeed', './scripts/zero2.json', '--model_name_or_path', '/mnt/d/models/vicuna-7b-v1.5', '--version', 'plain', '--data_path', '/mnt/d/data/LLaVA-CC3M-Pretrain-595K/chat.json', '--image_folder', '/mnt/d/data/LLaVA-CC3M-Pretrain-595K/images', '--vision_tower', '/mnt/d/models/clip-vit-large-patch14', '--tune_mm_mlp_adapter', 'True', '--mm_vision_select_layer', '-2', '--mm_use_im_start_end', 'False', '--mm_use_im_patch_token', 'False', '--bf16', 'False', '--tf32', 'False', '--output_dir', '/mnt/d/result/exp/exp4.1/checkpoints/llava-vicuna-7b-v1.5-pretrain', '--num_train_epochs', '1', '--per_device_train_batch_size', '16', '--per_device_eval_batch_size', '4', '--gradient_accumulation_steps', '1', '--evaluation_strategy', 'no', '--save_strategy', 'steps', '--save_steps', '24000', '--save_total_limi\n"
            "t', '1', '--learning_rate', '2e-3', '--weight_decay', '0.', '--warmup_ratio', '0.03', '--lr_scheduler_type', 'cosine', '--logging_steps', '1', '--model_max_length', '2048', '--gradient_checkpointing', 'True', '--dataloader_num_workers', '4', '--lazy_preprocess', 'True', '--report_to', 'wandb'] exits with return code = -9"
        ),
        "unknown",
        True,
        "deepspeed-launcher-exit",
    ),
    # resuming from a checkpoint: state_dict size mismatch for head.kernel (checkpoint has a different number of classes)
    (
        "https://github.com/mk-minchul/AdaFace/issues/141",
        (
            "RuntimeError: Error(s) in loading state_dict for Trainer:\n"
            "        size mismatch for head.kernel: copying a param with shape torch.Size([512, 205990]) from checkpoint, the shape in current model is torch.Size([512, 85742])."
        ),
        "application",
        False,
        "state-dict-mismatch",
    ),
    # at epoch 26 the loss computation raises CUDA error: unspecified launch failure, then terminate on c10::Error from the caching allocator
    (
        "https://github.com/facebookresearch/DeepSDF/issues/40",
        (
            "Traceback (most recent call last):\n"
            '  File "train_deep_sdf.py", line 591, in <module>\n'
            "    main_function(args.experiment_directory, args.continue_from, int(args.batch_split))\n"
            '  File "train_deep_sdf.py", line 501, in main_function\n'
            "    chunk_loss = loss_l1(pred_sdf, sdf_gt[i].cuda()) / num_sdf_samples\n"
            "RuntimeError: CUDA error: unspecified launch failure\n"
            "terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: unspecified launch failure (insert_events at /opt/conda/conda-bld/pytorch_1544202130060/work/aten/src/THC/THCCachingAllocator.cpp:470)\n"
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x45 (0x7f16bc43ecc5 in /home/user/anaconda3/lib/python3.7/site-packages/torch/lib/libc10.so)\n"
            "frame #1: <unknown function> + 0x135cb20 (0x7f16bff31b20 in /home/user/anaconda3/lib/python3.7/site-packages/torch/lib/libcaffe2_gpu.so)\n"
            "frame #2: at::TensorImpl::release_resources() + 0x50 (0x7f16bca99f90 in /home/user/anaconda3/lib/python3.7/site-packages/torch/lib/libcaffe2.so)\n"
            "frame #3: <unknown function> + 0x2ad98b (0x7f16b970498b in /home/user/anaconda3/lib/python3.7/site-packages/torch/lib/libtorch.so.1)"
        ),
        "unknown",
        True,
        "cuda-launch-failure",
    ),
    # after ~9000 iterations THCudaCheck FAIL error=4 unspecified launch failure and the backward traceback (terminal border characters left as posted)
    (
        "https://github.com/pytorch/pytorch/issues/21276",
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=271 error=4 : unspecified launch failure       x\n"
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=271 error=4 : unspecified launch failure       x\n"
            "Traceback (most recent call last):                                                                                          x\n"
            '  File "model_run.py", line 464, in <module>                                                                                x\n'
            "    train(train_loader, model, criterion, optimizer, scheduler, epoch,log_file)                                             x\n"
            '  File "model_run.py", line 163, in train                                                                                   x\n'
            "    loss.backward()                                                                                                         x\n"
            '  File "/data/anaconda2/lib/python2.7/site-packages/torch/tensor.py", line 93, in backward                    x\n'
            "    torch.autograd.backward(self, gradient, retain_graph, create_graph)                                                     x\n"
            '  File "/data/home/user/anaconda2/lib/python2.7/site-packages/torch/autograd/__init__.py", line 90, in backward         x\n'
            "    allow_unreac"
        ),
        "unknown",
        True,
        "cuda-thc-launch-failure",
    ),
    # the NLL loss kernel's device assertion t >= 0 && t < n_classes fails in many threads: labels outside the class range
    (
        "https://github.com/cfzd/Ultra-Fast-Lane-Detection/issues/94",
        (
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [5,0,0], thread: [750,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [5,0,0], thread: [751,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [5,0,0], thread: [752,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [7,0,0], thread: [149,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [7,0,0], thread: [150,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [7,0,0], thread: [900,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
            "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: block: [7,0,0], thread: [901,0,0] Assertion `t >= 0 && t < n_classes` failed."
        ),
        "application",
        False,
        "cuda-device-assert",
    ),
    # accelerate's launcher raises CalledProcessError: the trainer died with SIGKILL while loading checkpoint shards
    (
        "https://github.com/huggingface/autotrain-advanced/issues/456",
        (
            "Downloading shards: 100% 2/2 [01:41<00:00, 51.00s/it]\n"
            "Loading checkpoint shards:   0% 0/2 [00:00<?, ?it/s]Traceback (most recent call last):\n"
            '  File "/usr/local/bin/accelerate", line 8, in <module>\n'
            "    sys.exit(main())\n"
            '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/accelerate_cli.py", line 47, in main\n'
            "    args.func(args)\n"
            '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 1017, in launch_command\n'
            "    simple_launcher(args)\n"
            '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 637, in simple_launcher\n'
            "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
            "subprocess.CalledProcessError: Command '['/usr/bin/python3', '-m', 'autotrain.trainers.clm', '--training_config', 'autotrain-LLM/training_params.json']' died with <Signals.SIGKILL: 9>."
        ),
        "unknown",
        True,
        "uncaught-exception",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_pasted_failures(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    found = diagnose(text)
    assert found.symptom != "none", source
    assert (found.category, found.retryable) == (category, retryable), source
    assert found.evidence[0].signature == signature, source


# Warnings asked about in the threads while training went on: healthy.
HEALTHY = [
    # yyliu01/PS-MT/issues/10: warm-up progress completes; wandb enters its network retry loop, which the maintainer says reconnects without affecting training
    (
        "ID 3 Warm (4) | Ls 0.51 |: 98%|█████████████████████████████████████████████████████████████████████▎ | 40/41 [01:04<00:00, 1.18it/s]\n"
        "ID 3 Warm (4) | Ls 0.51 |: 98%|█████████████████████████████████████████████████████████████████████▎ | 40/41 [01:14<00:00, 1.18it/s]\n"
        "ID 3 Warm (4) | Ls 0.51 |: 100%|███████████████████████████████████████████████████████████████████████| 41/41 [01:14<00:00, 3.65s/it]\n"
        "ID 3 Warm (4) | Ls 0.51 |: 100%|███████████████████████████████████████████████████████████████████████| 41/41 [01:14<00:00, 1.81s/it]\n"
        "\n"
        "0%| | 0/289 [00:00<?, ?it/s]wandb: Network error (ConnectionError), entering retry loop."
    ),
    # xuxy09/RSC-Net/issues/13: resumed run prints the lr_scheduler-before-optimizer UserWarning and keeps going
    (
        "Loading latest checkpoint [/content/drive/MyDrive/RSC_NET/RSC-Net-master/logs/RSC-Net/checkpoints/2023_05_08-22_37_47.pt]\n"
        " 75% 3/4 [00:00<?, ?it/s]\n"
        "Epoch 3:  32% 9620/30272 [00:01<?, ?it/s]\n"
        "/usr/local/lib/python3.8/site-packages/torch/optim/lr_scheduler.py:117: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate\n"
        '  warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "\n'
        "100% 4/4 [00:01<00:00,  1.03s/it]"
    ),
    # sehoffmann/dmlcloud/issues/38: TensorFlow/XLA E-level lines about registering cuFFT/cuDNN/cuBLAS factories twice when tensorboard is imported: harmless
    (
        "2025-01-06 12:46:04.065693: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:477] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT w\n"
        "hen one has already been registered\n"
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        "E0000 00:00:1736163964.084812 3415088 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
        "E0000 00:00:1736163964.090767 3415088 cuda_blas.cc:1418] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registe\n"
        "red\n"
        "2025-01-06 12:46:04.109737: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU instructions in performance-critical\n"
        " operations.\n"
        "To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags."
    ),
    # kr-colab/ReLERNN/issues/63: TensorFlow start-up noise: factory registration E lines, TF-TRT warning, NUMA node notice
    (
        "2025-02-09 09:37:32.334610: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n"
        "2025-02-09 09:37:32.334667: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:607] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered\n"
        "2025-02-09 09:37:32.335925: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered\n"
        "2025-02-09 09:37:32.343117: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.\n"
        "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.\n"
        "2025-02-09 09:37:33.337631: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT\n"
        "2025-02-09 09:37:34.496341: I external/local_xla/xla/stream_executor/cuda/cuda_executor.cc:901] successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero. See more at https://github.com/torvalds/linux/blob/v6.0/Documentation"
    ),
    # alibaba/cluster-contrast-reid/issues/27: Caffe2 thread-pool leak warnings from forked DataLoader workers between normal epoch-6 progress lines
    (
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "Epoch: [6][10/200]      Time 0.399 (0.484)      Data 0.000 (0.075)      Loss 0.296 (0.452)\n"
        "Epoch: [6][20/200]      Time 0.405 (0.447)      Data 0.000 (0.038)      Loss 0.445 (0.449)\n"
        "Epoch: [6][30/200]      Time 0.400 (0.432)      Data 0.000 (0.025)      Loss 0.228 (0.433)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "Epoch: [6][40/200]      Time 0.403 (0.457)      Data 0.001 (0.049)      Loss 2.377 (0.696)\n"
        "Epoch: [6][50/200]      Time 0.403 (0.446)      Data 0.000 (0.039)      Loss 1.873 (0.908)"
    ),
    # ray-project/ray_lightning/issues/180: epoch-0 progress under ray_lightning with a worker printing the thread-pool leak warning
    (
        "Epoch 0:  81%|████████  | 759/937 [00:05<00:01, 147.85it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  82%|████████▏ | 772/937 [00:05<00:01, 147.47it/s, loss=2.31, v_num=0]\n"
        "Epoch 0:  82%|████████▏ | 773/937 [00:05<00:01, 147.42it/s, loss=2.31, v_num=0]\n"
        "Epoch 0:  84%|████████▍ | 789/937 [00:05<00:01, 147.51it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  84%|████████▍ | 789/937 [00:05<00:01, 147.50it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  84%|████████▍ | 790/937 [00:05<00:00, 147.51it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  84%|████████▍ | 790/937 [00:05<00:00, 147.50it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  86%|████████▌ | 806/937 [00:05<00:00, 147.53it/s, loss=2.33, v_num=0]\n"
        "Epoch 0:  87%|████████▋ | 819/937 [00:05<00:00, 147.20it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  88%|████████▊ | 820/937 [00:05<00:00, 147.15it/s, loss=2.31, v_num=0]\n"
        "Epoch 0:  89%|████████▉ | 835/937 [00:05<00:00, 147.09it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  91%|█████████ | 849/937 [00:05<00:00, 146.90it/s, loss=2.31, v_num=0]\n"
        "Epoch 0:  91%|█████████ | 850/937 [00:05<00:00, 146.89it/s, loss=2.32, v_num=0]\n"
        "Epoch 0:  92%|█████████▏| 859/937 [00:05<00:00, 146.94it/s, loss=2.31, v_num=0]\n"
        "(BaseHorovodWorker pid=38267) \n"
        "(BaseHorovodWorker pid=38268) [W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)"
    ),
    # NVlabs/Deep_Object_Pose/issues/403: thread-pool warnings and tensorboardX's NaN or Inf found in input tensor warning, then epoch-6 training lines with finite losses
    (
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork. (function pthreadpool)\n"
        "WARNING:tensorboardX.x2num:NaN or Inf found in input tensor.\n"
        "Train Epoch: 6 [0/79989 (0%)]   Loss: 0.003367508295923\n"
        "Train Epoch: 6 [3200/79989 (4%)]        Loss: 0.002933200448751\n"
        "Train Epoch: 6 [6400/79989 (8%)]        Loss: 0.003118536202237\n"
        "Train Epoch: 6 [9600/79989 (12%)]       Loss: 0.003344437107444\n"
        "Train Epoch: 6 [12800/79989 (16%)]      Loss: 0.003305848920718\n"
        "Train Epoch: 6 [16000/79989 (20%)]      Loss: 0.002928101224825"
    ),
]


@pytest.mark.parametrize("text", HEALTHY)
def test_warnings_asked_about_stay_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"


# torchrun names a failed worker by its local rank (`failed (exitcode: -9) local_rank: 0`); that is
# its global rank only when the job runs on one node, as torchrun's own command line can say.
# (source, excerpt, ranks the diagnosis names)
LOCAL_RANKS = [
    # the pasted torchrun command runs one node (`--nnodes=1`), so local rank 0 is rank 0
    (
        "https://github.com/lm-sys/FastChat/issues/568",
        (
            "torchrun --nnodes=1 --nproc_per_node=1 --master_port=20001 fastchat/train/train_mem.py \\\n"
            ">     --model_name_or_path /home/work/virtual-venv/fastchat-env/data/transformer_model_7b  \\\n"
            ">     --data_path playground/data/dummy.json \\\n"
            ">     --fp16 True \\\n"
            ">     --output_dir /home/work/virtual-venv/fastchat-env/data/vicuna-dummy \\\n"
            ">     --num_train_epochs 2 \\\n"
            ">     --per_device_train_batch_size 1 \\\n"
            '>     --fsdp "full_shard auto_wrap" \\\n'
            ">     --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \\\n"
            ">     --model_max_length 2048 \\\n"
            ">     --gradient_checkpointing True \\\n"
            ">     --lazy_preprocess True\n"
            "Loading checkpoint shards:   0%|                                                                                                                             | 0/2 [00:00<?, ?it/s]\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 27657) of binary: /home/work/virtual-venv/fastchat-env/bin/"
        ),
        [0],
    ),
    # `--standalone` (the post's markdown left a backslash before each option) is one node
    (
        "https://github.com/SamsungLabs/MLI/issues/18",
        (
            "(train) user@host:~/MPI/MLI_new$ torchrun \\--standalone \\--nproc_per_node=1 \\bin/train.py \\--config configs/tblock4_train.yaml \\--output-path train_outputs\n"
            "2023-11-10 16:19:31.813855: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in performance-critical operations:  AVX2 AVX_VNNI FMA\n"
            "To enable them in other operations, rebuild TensorFlow with the appropriate compiler flags.\n"
            "Logging directory: train_outputs/outputs/tblock4_train_1gpu/log\n"
            "20it [00:00, 2088.12it/s]\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 7347) of binary: /home/user/anaconda3/envs/train/bin/python"
        ),
        [0],
    ),
    # no command line: the agent's local rank may be any node's, so no rank is named
    (
        "https://github.com/meta-llama/codellama/issues/118",
        (
            "> initializing model parallel with size 1\n"
            "> initializing ddp with size 1\n"
            "> initializing pipeline with size 1\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 29066) of binary: /home/user/miniconda3/envs/torch/bin/python\n"
            "Traceback (most recent call last):\n"
            '  File "/home/user/miniconda3/envs/torch/bin/torchrun", line 33, in <module>\n'
            "    sys.exit(load_entry_point('torch==2.0.1', 'console_scripts', 'torchrun')())\n"
            "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            '  File "/home/user/miniconda3/envs/torch/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper\n'
            "    return f(*args, **kwargs)\n"
            "           ^^^^^^^^^^^^^^^^^^\n"
            '  File "/home/user/miniconda3/envs/torch/lib/python3.11/site-packages/torch/distributed/run.py", line 794, in main\n'
            "    run(args)"
        ),
        [],
    ),
]


@pytest.mark.parametrize(("source", "text", "ranks"), LOCAL_RANKS)
def test_torchrun_command_line_says_one_node(source: str, text: str, ranks: list[int]) -> None:
    found = diagnose(text)
    assert (found.symptom, found.category, found.retryable) == ("crash", "unknown", True), source
    assert found.implicated.ranks == ranks, source


# Horovod's own runner (horovodrun with Gloo) tags each worker's line with its rank, after a time
# when asked to (horovod #1364's `Thu Aug 29 16:41:02 2019[0]<stderr>:`, #2907's `[1]<stderr>:`).
@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("Thu Aug 29 16:41:02 2019[0]<stderr>:Fatal Python error: Aborted", 0),
        (
            "Thu Aug 29 16:41:02 2019[4]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
            4,
        ),
        ("[1]<stderr>:Aborted (core dumped)", 1),
        ("[1,7]<stderr>:terminate called after throwing an instance of 'std::runtime_error'", 7),
    ],
)
def test_horovod_runner_tags_name_the_rank(line: str, rank: int) -> None:
    assert line_context(line).rank == rank
