"""Runs that hang while starting up: the processes announce themselves and then nothing follows.

Real lines from public threads and from the frameworks' own docs and example output (each named
here; `code index N` is a file of the search index whose thread is not shown there). What the
sources print per rank before `init_process_group` and what they print once every rank came:
lightning_fabric/utilities/distributed.py (`Initializing distributed: GLOBAL_RANK: r, MEMBER:
r+1/N`, then rank 0's `All distributed processes registered`), deepspeed/comm/comm.py (`cdb=None`
per process, rank 0's `Initializing TorchBackend in DeepSpeed with backend nccl`), torchelastic's
agent (`Rendezvous'ing worker group`, then `Rendezvous complete for workers` and `Starting worker
group`), NCCL's init.c (`Init START` / `Trees` / ring listing, then `Init COMPLETE`) and XLA's
rendezvous.cc (`... may be stuck`, then `Thread is unstuck!`)."""

from __future__ import annotations

from tests.unit.real_lines import diagnose

HANG = ("hang", "unknown", True)
HEALTHY = ("none", "none", None)
RULE = "-" * 100 + "\n"


def verdict(log: str) -> tuple[str, str, bool | None]:
    result = diagnose(log)
    return result.symptom, result.category, result.retryable


# --- every process announced itself, or some did, and nothing followed -------------------------


def test_all_ranks_announced_and_nothing_more_is_not_judged() -> None:
    # github.com/OpenDriveLab/Vista/issues/22: "Code is hanging on" these four lines. Every process
    # came, so what is left is the group's own set-up, and a healthy log cut at this point (rank
    # 0's "registered" line is info-level and may not be shown) reads the same: the log cannot
    # say it hung. A live run's watch finds such a hang by its timeout.
    log = (
        "[rank: 0] Global seed set to 23\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "[rank: 1] Global seed set to 23\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
    )
    assert verdict(log) == HEALTHY


def test_other_processes_seed_lines_between_the_announcements_are_start_up_too() -> None:
    # github.com/threestudio-project/threestudio/issues/81 (four V100s, "gets stuck as following").
    log = (
        "[INFO] GPU available: True (cuda), used: True\n"
        "[INFO] TPU available: False, using: 0 TPU cores\n"
        "[rank: 0] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
        "[rank: 1] Global seed set to 0\n"
        "[rank: 3] Global seed set to 0\n"
        "[rank: 2] Global seed set to 0\n"
        "[rank: 3] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
        "[rank: 2] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
        "[rank: 1] Global seed set to 0\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
    )
    assert verdict(log) == HEALTHY  # all four came (see the Vista test above)
    without_last = log.rsplit("Initializing", 1)[0]  # rank 1 not yet come: it is missing
    assert verdict(without_last) == HANG


def test_fewer_ranks_than_the_world_and_nothing_more_is_stuck_starting() -> None:
    # github.com/fdbtrs/IDiff-Face/issues/14: five of eight announce (then the store barrier waits).
    log = (
        "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/8\n"
        "Initializing distributed: GLOBAL_RANK: 4, MEMBER: 5/8\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8\n"
        "Initializing distributed: GLOBAL_RANK: 6, MEMBER: 7/8\n"
        "Initializing distributed: GLOBAL_RANK: 7, MEMBER: 8/8\n"
    )
    assert verdict(log) == HANG
    barrier = (
        "[2025-03-11 05:20:54,412][torch.distributed.distributed_c10d][INFO] - Added key:"
        " store_based_barrier_key:1 to store for rank: 0\n"
    )
    assert verdict(log + barrier) == HANG  # the barrier's entry is init_process_group's own line


def test_c10d_warnings_while_it_builds_the_process_group_are_start_up_output() -> None:
    # A Kaggle two-GPU run (code index 51937191845): ProcessGroupNCCL warns of a deprecated
    # variable while init_process_group builds it; rank 0's closer followed there.
    log = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "[W412 23:54:04.060794819 Utils.hpp:137] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is"
        " deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function operator())\n"
        "[W412 23:54:04.070974287 Utils.hpp:137] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is"
        " deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function operator())\n"
    )
    assert verdict(log) == HEALTHY  # both came; the warnings are start-up output, no failure
    closer = RULE + "distributed_backend=nccl\nAll distributed processes registered. Starting with 2 processes\n" + RULE
    assert verdict(log + closer) == HEALTHY


def test_lightning_1_5_and_deepspeed_strategy_formats() -> None:
    # The 1.5-1.9 wording and the DeepSpeed strategy's (lightning/pytorch/strategies/deepspeed.py),
    # with DeepSpeed's rank-0 line of comm.py (its format as github.com/RLHFlow/Online-RLHF/issues/11).
    older = (
        "initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
        "initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
        "Added key: store_based_barrier_key:1 to store for rank: 0\n"
    )
    assert verdict(older) == HANG
    deepspeed = (
        "initializing deepspeed distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "initializing deepspeed distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "[2024-06-11 00:23:36,254] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed"
        " with backend nccl\n"
    )
    assert verdict(deepspeed) == HEALTHY  # both came (see the Vista test above)


def test_deepspeed_setting_its_process_group_up_at_the_end_is_stuck_starting() -> None:
    # github.com/RLHFlow/Online-RLHF/issues/11 ("the terminal stucks when showing").
    log = (
        "[2024-06-11 00:23:36,254] [INFO] [comm.py:637:init_distributed] cdb=None\n"
        "[2024-06-11 00:23:36,254] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed"
        " with backend nccl\n"
        "[2024-06-11 00:23:36,296] [INFO] [comm.py:637:init_distributed] cdb=None\n"
    )
    assert verdict(log) == HANG
    # The same start going on: DeepSpeed's engine reports (runtime/engine.py), so it got past it.
    later = (
        "[2024-01-02 07:29:50,101] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.12.6,"
        " git-hash=unknown, git-branch=unknown\n"
        "[2024-01-02 07:29:50,200] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed Flops Optimizer: False\n"
        "[2024-01-02 07:29:50,201] [INFO] [logging.py:96:log_dist] [Rank 0] Using DeepSpeed Optimizer param name"
        " adamw as basic optimizer\n"
    )
    assert verdict(log + later) == HEALTHY
    # A world of one forms at once: a log that ends there is the program's own start, not a wait.
    # The launcher's lines as github.com/deepspeedai/DeepSpeed/issues/2176 shows them (two
    # processes there: launch.py states `dist_world_size=N`), here for one process.
    launcher = (
        "[2022-08-03 13:01:30,680] [INFO] [launch.py:156:main] dist_world_size={n}\n"
        "[2022-08-03 13:01:33,766] [INFO] [comm.py:628:init_distributed] Initializing TorchBackend in DeepSpeed"
        " with backend nccl\n"
    )
    assert verdict(launcher.format(n=1)) == HEALTHY
    assert verdict(launcher.format(n=2)) == HANG


def test_jax_processes_connecting_to_the_coordination_service_at_the_end() -> None:
    # A Kubeflow JAXJob's worker 0 (code index 4901874916): it starts the service, connects, and
    # the backends' lines follow once `client.connect()` returned.
    start = (
        "I1016 14:30:28.956959 139643066051456 distributed.py:106] Starting JAX distributed service on [::]:6666\n"
        "I1016 14:30:28.959352 139643066051456 distributed.py:119] Connecting to JAX distributed service on"
        " jaxjob-simple-worker-0:6666\n"
    )
    later = (
        "I1016 14:30:30.633651 139643066051456 xla_bridge.py:895] Unable to initialize backend 'rocm': module"
        " 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'\n"
        "I1016 14:30:30.638316 139643066051456 xla_bridge.py:895] Unable to initialize backend 'tpu': INTERNAL:"
        " Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory\n"
    )
    assert verdict(start) == HANG
    assert verdict(start + later) == HEALTHY


# --- ranks announced twice: the launch numbered its processes wrongly ---------------------------


def test_the_same_rank_from_two_nodes_is_the_launch_configuration() -> None:
    # github.com/NVIDIA-NeMo/Speech/issues/5819: srun's labels 0: and 1: show both nodes starting
    # ranks 1-3 of 8 ("the global ranks of our GPUs seem to be incorrectly initialised").
    log = (
        "0: Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8\n"
        "0: Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8\n"
        "0: Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/8\n"
        "1: Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/8\n"
        "1: Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8\n"
        "1: Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8\n"
    )
    result = diagnose(log)
    assert (result.symptom, result.category, result.retryable) == ("hang", "application", False)
    assert result.implicated.ranks == [] and result.implicated.nodes == []


def test_duplicates_among_sixteen_without_a_label() -> None:
    # github.com/NVIDIA-NeMo/Speech/issues/4338 (its member lines, before the error it ended in).
    ranks = (0, 1, 1, 2, 3, 2, 4, 5, 4, 5, 3, 6, 7, 7, 6)
    log = "".join(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/16\n" for r in ranks)
    assert verdict(log) == ("hang", "application", False)


def test_a_second_start_appended_to_the_log_is_no_duplicate() -> None:
    # A requeued job appending to its output (sbatch --open-mode=append): every rank of the world
    # announces itself again, so more announcements than the world size. The lines are Vista's
    # (github.com/OpenDriveLab/Vista/issues/22); the second start is stuck like the first.
    start = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\nInitializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
    )
    assert verdict(start + start) == HEALTHY  # every rank came, twice: no duplicate, no wait


def test_one_record_printed_by_two_handlers_is_no_duplicate() -> None:
    # github.com/Lightning-AI/pytorch-lightning/issues/17228: each line twice, once by the plain
    # handler and once by absl's (another format), ranks 6, 1, 4 of 32 so far.
    log = (
        "INFO: Initializing distributed: GLOBAL_RANK: 6, MEMBER: 7/32\n"
        "I0411 01:28:10.345892 140656298329920 distributed.py:244] Initializing distributed: GLOBAL_RANK: 6,"
        " MEMBER: 7/32\n"
        "INFO: Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/32\n"
        "I0411 01:28:10.348047 140492815607616 distributed.py:244] Initializing distributed: GLOBAL_RANK: 1,"
        " MEMBER: 2/32\n"
        "INFO: Initializing distributed: GLOBAL_RANK: 4, MEMBER: 5/32\n"
    )
    assert verdict(log) == HANG
    # The same handler twice in a row (one format, back to back) is one record, not two processes.
    twice = "".join(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4\n" * 2 for r in (0, 1))
    assert verdict(twice) == HANG


# --- healthy starts ------------------------------------------------------------------------------


def test_every_rank_registered_and_training_is_healthy() -> None:
    # Lightning's examples/fabric/tensor_parallel README output (code index 55351576619).
    log = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
        "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
        "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
        + RULE
        + "distributed_backend=nccl\nAll distributed processes registered. Starting with 4 processes\n"
        + RULE
        + "\nNumber of model parameters: 3.5 B\nStarting training ...\n"
    )
    assert verdict(log) == HEALTHY


def test_registered_ends_the_start_even_at_the_logs_end() -> None:
    # A NeMo reward-model log (code index 30836247073): the barrier completes, rank 0 registers.
    log = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "/usr/local/lib/python3.8/dist-packages/requests/__init__.py:102: RequestsDependencyWarning: urllib3"
        " (1.26.15) or chardet (5.2.0)/charset_normalizer (2.0.12) doesn't match a supported version!\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "Added key: store_based_barrier_key:1 to store for rank: 1\n"
        "Added key: store_based_barrier_key:1 to store for rank: 0\n"
        "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.\n"
        + RULE
        + "distributed_backend=nccl\nAll distributed processes registered. Starting with 2 processes\n"
        + RULE
    )
    assert verdict(log) == HEALTHY
    # Without Lightning's closer, the completed barrier says every rank came.
    assert verdict(log.split(RULE)[0]) == HEALTHY


def test_one_process_waits_for_nobody() -> None:
    # Vista's single-GPU run (github.com/OpenDriveLab/Vista/issues/22) and a NeMo notebook's
    # restore (code index 10752966356): a world of one starts at once, whatever follows.
    single = "[rank: 0] Global seed set to 23\ninitializing deepspeed distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n"
    nemo = (
        "[NeMo I 2023-11-03 18:35:44 save_restore_connector:249] Model MegatronGPTPromptLearningModel was"
        " successfully restored from /workspace/p_tuning.nemo.\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n"
    )
    assert verdict(single) == HEALTHY
    assert verdict(nemo) == HEALTHY


def test_a_per_rank_log_shows_only_its_own_announcement() -> None:
    # Lightning prints each rank's line in that rank's process; rank 0's closer is in rank 0's file.
    assert verdict("[rank: 3] Seed set to 42\nInitializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n") == HEALTHY


def test_program_output_after_the_announcements_shows_the_start_went_on() -> None:
    # An EGL multi-GPU guide's expected output (code index 53329802844), no closer shown.
    log = (
        "=== Starting Training =====\n"
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "Local rank: 0 → EGL GPU 0\n"
        "Local rank: 1 → EGL GPU 1\n"
        "GPU OCIO processor initialized on GPU 0\n"
    )
    assert verdict(log) == HEALTHY
    # Lightning 1.0 (`initializing ddp:`) printed no closer at all; the model summary follows.
    old = (
        "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "\n  | Name    | Type     | Params\n-------------------------------------\n"
        "0 | encoder | Encoder  | 1.2 M\n"
    )
    assert verdict(old) == HEALTHY


def test_lightning_lines_after_the_start_are_not_start_up_lines_when_registered() -> None:
    # A CoVAE README's four-GPU start (code index 68296565424): LOCAL_RANK lines after the closer.
    log = (
        "".join(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4\n" for r in range(4))
        + "distributed_backend=nccl\nAll distributed processes registered. Starting with 4 processes\n"
        + "".join(f"LOCAL_RANK: {r} - CUDA_VISIBLE_DEVICES: [0,1,2,3]\n" for r in range(4))
    )
    assert verdict(log) == HEALTHY


def test_lightning_2_local_rank_lines_come_after_the_process_group_is_up() -> None:
    # lightning/pytorch/accelerators/cuda.py logs `LOCAL_RANK: r - CUDA_VISIBLE_DEVICES` in the
    # accelerator's `setup`, after `setup_environment` formed the group (the CoVAE README's lines,
    # code index 68296565424): with rank 0's closer on another logger, they still show the start
    # went on.
    log = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
        "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
        "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
        "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]\n"
    )
    assert verdict(log) == HEALTHY


def test_a_new_start_after_progress_is_read_afresh() -> None:
    # A rank's progress bar (Lightning's TQDM format) ends any start before it.
    log = (
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "Epoch 0:  10%|█         | 10/100 [00:05<00:45,  2.00it/s, v_num=0]\n"
        "Epoch 0:  20%|██        | 20/100 [00:10<00:40,  2.00it/s, v_num=0]\n"
    )
    assert verdict(log) == HEALTHY


# --- torchelastic's rendezvous, NCCL's communicator setup, XLA's rendezvous ---------------------


def test_torchelastic_agent_waiting_in_its_rendezvous_at_the_end() -> None:
    # github.com/huggingface/accelerate/issues/1645 (torchrun on two nodes).
    log = (
        "INFO:torch.distributed.elastic.agent.server.api:[default] starting workers for entrypoint: python\n"
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n"
        "[I socket.cpp:566] [c10d] The server socket has started to listen on [::]:17333.\n"
        "[I socket.cpp:787] [c10d] The client socket has connected to [10-198-34-55]:17333 on"
        " [10-198-34-55]:57764.\n"
    )
    assert verdict(log) == HANG
    # agent/server/api.py: the result and `Starting worker group` once every agent came.
    done = (
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n"
        "  restart_count=0\n  group_rank=0\n  group_world_size=2\n"
        "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group\n"
    )
    assert verdict(log + done) == HEALTHY


def test_rendezvous_backends_joining_and_joined() -> None:
    # A torch 1.9 torchrun log with the c10d backend (code index 9387141023) and the etcd backend's
    # restart (code index 8436331815): each says when this node joined.
    c10d = (
        "[INFO] 2021-06-29 12:04:55,398 api: [default] starting workers for entrypoint: python\n"
        "[INFO] 2021-06-29 12:04:55,398 api: [default] Rendezvous'ing worker group\n"
        "[INFO] 2021-06-29 12:04:55,398 dynamic_rendezvous: The node 'master1_21848_0' attempts to join the next"
        " round of the rendezvous '11'.\n"
    )
    joined = (
        "[INFO] 2021-06-29 12:05:25,632 dynamic_rendezvous: The node 'master1_21848_0' has joined round 0 of the"
        " rendezvous '11' as rank 0 in a world of size 1.\n"
        "[INFO] 2021-06-29 12:05:25,634 api: [default] Rendezvous complete for workers. Result:\n"
        "  restart_count=0\n  master_addr=master1\n  master_port=43923\n  group_rank=0\n  group_world_size=1\n"
        "[INFO] 2021-06-29 12:05:25,634 api: [default] Starting worker group\n"
    )
    assert verdict(c10d) == HANG
    assert verdict(c10d + joined) == HEALTHY
    etcd = (
        "INFO 2021-05-21 23:18:16,264 Attempting to join next rendezvous\n"
        "INFO 2021-05-21 23:18:16,285 New rendezvous state created: {'status': 'joinable', 'version': '10',"
        " 'participants': []}\n"
        "INFO 2021-05-21 23:18:16,327 Joined rendezvous version 10 as rank 0. Full state: {'status': 'joinable',"
        " 'version': '10', 'participants': [0]}\n"
        "INFO 2021-05-21 23:18:46,390 Waiting for remaining peers.\n"
    )
    done = (
        "INFO 2021-05-21 23:18:46,391 All peers arrived. Confirming membership.\n"
        "INFO 2021-05-21 23:18:46,489 Rendezvous version 10 is complete. Final state: {'status': 'final',"
        " 'version': '10', 'participants': [0], 'num_workers_waiting': 0}\n"
    )
    assert verdict(etcd) == HANG
    assert verdict(etcd + done) == HEALTHY


def test_srun_waiting_to_create_its_step_at_the_end() -> None:
    # Slurm 25.11 src/srun/launch.c: the retry lines while the allocation's resources are held,
    # then `Step created for` once they are free (its `%ps` prints `StepId=j.s`).
    waiting = (
        "srun: Job 1234 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
        "srun: Job 1234 step creation still disabled, retrying (Requested nodes are busy)\n"
    )
    assert verdict(waiting) == HANG
    assert verdict(waiting + "srun: Step created for StepId=1234.1\n") == HEALTHY


def test_an_older_nccl_process_that_never_completes_its_communicator() -> None:
    # github.com/NVIDIA/nccl/issues/566 (NCCL 2.10: no Init START, the log ends in the ring setup).
    log = (
        "lassen206:23224:23224 [0] NCCL INFO Bootstrap : Using enP5p1s0f0:192.168.64.206<0>\n"
        "lassen206:23224:23224 [0] NCCL INFO Using network IB\n"
        "NCCL version 2.10.3+cuda10.2\n"
        "lassen206:23224:23224 [0] NCCL INFO Channel 00/06 :    0   1\n"
        "lassen206:23225:23225 [1] NCCL INFO Trees [0] -1/-1/-1->1->0 [1] -1/-1/-1->1->0 [2] 0/-1/-1->1->-1\n"
        "lassen206:23224:23224 [0] NCCL INFO Channel 01/06 :    0   1\n"
        "lassen206:23225:23225 [1] NCCL INFO Setting affinity for GPU 1 to 110000\n"
    )
    assert verdict(log) == HANG
    # Each process's own Init COMPLETE (the old format of github.com/NVIDIA/nccl/issues/429).
    done = (
        "lassen206:23224:23224 [0] NCCL INFO comm 0x7f4b3c006640 rank 0 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE\n"
        "lassen206:23225:23225 [1] NCCL INFO comm 0x7f4b34006640 rank 1 nranks 2 cudaDev 1 busId 1b000 - Init COMPLETE\n"
    )
    assert verdict(log + done) == HEALTHY
    # One process done says nothing of the other, still connecting.
    assert verdict(log + done.splitlines(keepends=True)[0]) == HANG


def test_nccl_setup_lines_after_init_are_no_new_start() -> None:
    # NCCL 2.29 with nccl-tests (code index 52252324001): the ring listing in the new format, each
    # process's COMPLETE, then a p2p connection's `Channel 00/0 : 1[0] -> 0[0]` (not a listing).
    log = (
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO [Rank 0] ncclCommInitRank comm 0x630259b432a0 rank 0 nranks 2"
        " cudaDev 0 nvmlDev 0 busId 30000 commId 0xc3d9a10350effd4f - Init START\n"
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO Channel 00/02 : 0 1\n"
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1\n"
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO ncclCommInitRank comm 0x630259b432a0 rank 0 nranks 2 cudaDev 0"
        " nvmlDev 0 busId 30000 commId 0xc3d9a10350effd4f - Init COMPLETE\n"
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Libfabric/0\n"
        "gpu-st-ml-1:50292:50292 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] via NET/Libfabric/0\n"
    )
    assert verdict(log) == HEALTHY


def test_xla_threads_waiting_in_a_rendezvous_at_the_end() -> None:
    # github.com/jax-ml/jax/issues/22740, and rendezvous.cc's own all-clear after such a warning.
    line = (
        "2024-07-29 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has been"
        " waiting for `initialize clique for rank 6; clique=devices=[0,1,2,3,4,5,6,7]; stream=0;"
        " run_id=724296073` for 10 seconds and may be stuck. Expected 8 threads to join the rendezvous,"
        " but not all of them arrived on time.\n"
    )
    assert verdict(line * 2) == HANG
    unstuck = (
        "E0501 12:00:12.000000 4242 rendezvous.cc:42] Thread is unstuck! Warning above was a false-positive."
        " Perhaps the timeout is too short.\n"
    )
    assert verdict(line + unstuck) == HEALTHY
