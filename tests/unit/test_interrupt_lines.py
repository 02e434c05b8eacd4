"""A job stopped from its terminal (Ctrl-C, a closed session) is neither the scheduler's doing nor
a cause: real lines from issue threads where users interrupted a stuck job, with their sources."""

from __future__ import annotations

from tests.unit.real_lines import verdict


def test_ctrl_c_on_a_stuck_job_is_unknown_not_the_scheduler() -> None:
    # open-mmlab/mmdetection#6534: multi-GPU training stuck after loading the checkpoint; the user's ^C
    log = (
        "2021-11-21 09:34:37,477 - mmdet - INFO - load checkpoint from http path:"
        " https://download.openmmlab.com/mmdetection/v2.0/faster_rcnn/faster_rcnn_r50_fpn_1x_coco/"
        "faster_rcnn_r50_fpn_1x_coco_20200130-047c8118.pth\n"
        "^CWARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4006362 closing signal SIGINT"
    )
    assert verdict(log) == ("torchelastic-interrupted", "unknown", True)


def test_the_agents_newer_wording_of_the_same_interrupt() -> None:
    # huggingface/lerobot#3818: multi-GPU training stuck at stage 3, stopped with Ctrl-C
    line = (
        "^CW0616 16:14:04.056000 3791882 site-packages/torch/distributed/elastic/agent/server/api.py:739]"
        " Received 2 death signal, shutting down workers"
    )
    assert verdict(line) == ("torchelastic-interrupted", "unknown", True)


def test_a_closed_session_is_unknown_too() -> None:
    # GanjinZero/RRHF#35: training started without nohup; the ssh session closed (SIGHUP)
    log = (
        "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2920926 closing signal SIGHUP\n"
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 2920830 got signal: 1"
    )
    assert verdict(log) == ("torchelastic-interrupted", "unknown", True)


def test_a_termination_signal_is_still_the_schedulers() -> None:
    # determined-ai/determined#8915: the agent told to stop with SIGTERM, as a cancel, time limit
    # or preemption reaches it
    line = (
        "[2024-02-27T21:35:32.106313Z] fa88a9df || WARNING: torch.distributed.elastic.agent.server.api:"
        "Received 15 death signal, shutting down workers"
    )
    assert verdict(line) == ("torchelastic-signalled", "scheduler", True)
