"""Whose fault a hang is, judged from real py-spy dumps of real hung torch.distributed ranks.

Every stack here was captured from live gloo ranks by `tests/unit/hang_stacks/capture.py` (py-spy
0.4.3, torch 2.13.0 CPU), and the flight recorder dumps are the ones PyTorch itself wrote for
them; nothing is invented. Where a test needs a situation the capture has no dump for (a rank
that moved between samples, a rank py-spy could not read), it recombines real dumps.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from recovery.activities.hangstacks import flight, pyspy
from recovery.activities.hangstacks.evidence import compress
from recovery.activities.hangstacks.frames import collective_frame, view
from recovery.activities.hangstacks.judge import judge
from recovery.activities.hangstacks.model import Frame, NodeStacks, RankProcess, ThreadStack
from tests.unit.hang_stacks import HERE, SCENARIOS, nodes, process, samples


def culprits(scenario: str) -> list[str]:
    return [c.node for c in judge(nodes(scenario)).culprits]


# --- reading py-spy's JSON --------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_real_dumps_parse_into_threads_with_python_and_native_frames(scenario: str) -> None:
    threads = samples(scenario, 0)[0]
    main = next(t for t in threads if t.name == "MainThread")
    assert main.os_thread_id is not None and main.frames
    assert any(not f.native and f.line for f in main.frames), "Python frames keep their line"
    assert any(f.native for f in main.frames), "--native adds the C/C++ frames"
    assert not any(f.name.startswith("0x") for f in main.frames), "bare addresses are dropped"


def test_garbage_is_a_dump_failure_not_a_crash() -> None:
    with pytest.raises(pyspy.DumpFailed):
        pyspy.parse_dump("Error: Permission denied (os error 13)")
    with pytest.raises(pyspy.DumpFailed):
        pyspy.parse_dump('{"not": "a list"}')


def test_a_collective_is_recognised_in_python_and_in_native_frames() -> None:
    example_rank0 = samples("example", 0)[0][0]
    found = collective_frame(example_rank0)
    assert found is not None and found.name == "monitored_barrier" and not found.native
    ddp_rank0 = samples("ddp", 0)[0][0]
    found = collective_frame(ddp_rank0)
    assert found is not None and found.name == "c10d::Reducer::finalize_backward", "DDP waits in C++"
    assert collective_frame(samples("example", 1)[0][0]) is None


# --- the judgement ------------------------------------------------------------------------------------


def test_the_pytorch_examples_hung_rank_is_named_with_its_stack() -> None:
    verdict = judge(nodes("example"))
    (culprit,) = verdict.culprits
    assert culprit.node == "node2"
    assert "rank 1" in culprit.reason and "not in a collective" in culprit.reason
    assert "Event.wait (threading.py:629)" in culprit.reason and "Fault.maybe (train.py:" in culprit.reason
    assert "monitored_barrier" in culprit.reason, "the reason quotes where the others wait"
    assert "the same stack in every sample" in culprit.reason
    assert verdict.summary.startswith("py-spy: rank 1 on node2 is not in a collective")
    signatures = [e.signature for e in verdict.evidence]
    assert signatures[0] == "hang-culprit" and signatures.count("py-spy-stack") == 2


def test_a_rank_sleeping_in_python_among_ranks_in_all_reduce_and_barrier() -> None:
    verdict = judge(nodes("sleeper"))
    assert [c.node for c in verdict.culprits] == ["node3"]
    assert "all_reduce" in verdict.summary and "barrier" in verdict.summary
    stacks = [e.text for e in verdict.evidence if e.signature == "py-spy-stack"]
    assert stacks[0].startswith("rank 2 on node3, not in a collective"), "the culprit's stack comes first"


def test_ddp_waiting_in_backward_counts_as_waiting_with_native_frames() -> None:
    assert culprits("ddp") == ["node2"]


def test_without_native_frames_ddp_backward_looks_busy_and_nobody_is_blamed() -> None:
    """What `native: false` loses: the gradient all-reduce waits in C++ under loss.backward()."""
    python_only = []
    for n in nodes("ddp"):
        p = n.processes[0]
        kept = [[t.model_copy(update={"frames": [f for f in t.frames if not f.native]}) for t in s] for s in p.samples]
        python_only.append(n.model_copy(update={"processes": [p.model_copy(update={"samples": kept})]}))
    verdict = judge(python_only)
    assert verdict.culprits == [] and "no rank waits in a collective" in verdict.summary


def test_every_rank_in_a_collective_blames_no_one_from_the_stacks() -> None:
    verdict = judge(nodes("mismatch"))
    assert verdict.culprits == []
    assert "every rank read waits in a collective" in verdict.summary
    assert verdict.evidence[0].signature == "hang-stacks"
    (stack,) = [e for e in verdict.evidence if e.signature == "py-spy-stack"]
    assert stack.text.startswith("ranks 0-1 on node1,node2, waiting in a collective"), "one line for shared stacks"


def test_the_flight_recorder_names_the_rank_whose_collectives_lag() -> None:
    """All three ranks wait in a collective (no verdict from the stacks), but rank 2 enqueued
    only two all-reduces on the default group while the others are in their third."""
    verdict = judge(nodes("flight"))
    (culprit,) = verdict.culprits
    assert culprit.node == "node3"
    assert "rank 2's last collective on process group 0 is #2 (gloo:all_reduce)" in culprit.reason
    assert "ranks 0-1 reached #3" in culprit.reason


def test_a_majority_outside_collectives_is_a_job_wide_stall() -> None:
    sleeping = process("sleeper", 2)
    stalled = [
        NodeStacks(node="node1", processes=[process("sleeper", 0)]),
        NodeStacks(node="node2", processes=[sleeping.model_copy(update={"rank": 1})]),
        NodeStacks(node="node3", processes=[sleeping]),
    ]
    verdict = judge(stalled)
    assert verdict.culprits == [] and "no single culprit" in verdict.summary


def test_a_rank_that_moves_between_samples_is_not_stuck() -> None:
    waiting, sleeping = samples("sleeper", 0), samples("sleeper", 2)
    moving = process("sleeper", 2).model_copy(update={"samples": [waiting[0], sleeping[1]]})
    mixed = [NodeStacks(node="node1", processes=[process("sleeper", 0)]), NodeStacks(node="node3", processes=[moving])]
    assert view(moving, "node3").state == "moving"
    verdict = judge(mixed)
    assert verdict.culprits == [] and "moved in and out of collectives" in verdict.summary


def test_what_could_not_be_read_is_evidence_and_said() -> None:
    unreadable = process("example", 0).model_copy(update={"samples": [], "error": "Permission denied (os error 13)"})
    verdict = judge(
        [
            NodeStacks(node="node1", processes=[unreadable]),
            NodeStacks(node="node2", processes=[process("example", 1)]),
            NodeStacks(node="node3", ok=False, reason="srun exit status 1: Unable to create step"),
        ],
        ["node1", "node2", "node3", "node4"],
    )
    assert verdict.culprits == [], "one rank read, outside: no one waits, so no one is singled out"
    assert "no stacks from node3, node4" in verdict.summary and "rank 0 not read" in verdict.summary
    texts = [e.text for e in verdict.evidence if e.signature == "py-spy-unavailable"]
    assert "rank 0 on node1: no stack: Permission denied (os error 13)" in texts
    assert "no stacks from node3: srun exit status 1: Unable to create step" in texts


def test_ranks_missing_from_the_world_are_named() -> None:
    verdict = judge(nodes("sleeper")[:2])
    assert "rank 2 of 3 not seen" in verdict.summary


def test_many_ranks_sharing_a_stack_are_one_line() -> None:
    waiting = process("sleeper", 0)
    many = [NodeStacks(node=f"n{i // 8}", processes=[waiting.model_copy(update={"rank": i})]) for i in range(63)]
    many.append(NodeStacks(node="n7", processes=[process("sleeper", 2).model_copy(update={"rank": 63})]))
    verdict = judge(many)
    assert [c.node for c in verdict.culprits] == ["n7"]
    stacks = [e for e in verdict.evidence if e.signature == "py-spy-stack"]
    assert len(stacks) == 2 and stacks[1].text.startswith("ranks 0-62 on n0,n1,")


def test_compress() -> None:
    assert compress([5, 0, 1, 2, 3, 9, 10]) == "0-3,5,9-10"
    assert compress([]) == ""


def test_a_process_without_a_main_thread_is_judged_by_all_its_threads() -> None:
    thread = ThreadStack(
        name="worker", os_thread_id=1, frames=[Frame(name="c10d::Work::wait", file="libtorch_cpu.so", native=True)]
    )
    p = RankProcess(pid=99, rank=0, samples=[[thread], [thread]])
    assert view(p, "n1").state == "waiting"


# --- the flight recorder's dumps -------------------------------------------------------------------


def test_real_flight_recorder_dumps_are_read_without_running_their_code() -> None:
    states, note = flight.read_flight(HERE / "flight" / "fr_rank_2")
    assert note == ""
    by_group = {s.group: s for s in states}
    assert by_group["0"].last_seq == 2 and by_group["0"].op == "gloo:all_reduce"
    assert by_group["1"].last_seq == 1 and by_group["1"].op == "gloo:barrier"


def test_a_dump_that_names_code_to_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fr_rank_0"
    path.write_bytes(pickle.dumps({"entries": [], "hook": print}))
    states, note = flight.read_flight(path)
    assert states == [] and "refusing builtins.print" in note


def test_a_dump_older_than_the_process_is_an_earlier_runs() -> None:
    path = HERE / "flight" / "fr_rank_0"
    states, note = flight.read_flight(path, not_before=path.stat().st_mtime + 60)
    assert states == [] and "predates the process" in note
    missing, note = flight.read_flight(HERE / "flight" / "fr_rank_9")
    assert missing == [] and "no flight recorder dump" in note


def test_where_a_rank_writes_its_dump() -> None:
    assert not flight.enabled({})
    assert flight.enabled({"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000"})
    assert str(flight.dump_path({}, 3)) == "/tmp/nccl_trace_rank_3"
    env = {"TORCH_FR_DUMP_TEMP_FILE": "fr/dump_"}
    assert str(flight.dump_path(env, 1, "/work/run")) == "/work/run/fr/dump_1"
