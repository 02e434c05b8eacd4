"""Collecting a hung job's stacks: finding its ranks in /proc, the commands that reach each node,
what a failing node turns into, the activity, and how the verdict joins the diagnosis.

The node helper's answers here are built from real py-spy dumps (tests/unit/hang_stacks); the
helper itself runs against live ranks in `test_hang_stacks_live.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from recovery.activities.diagnose import with_hang_stacks
from recovery.activities.hangstacks.collect import (
    StackActivities,
    StackCollection,
    node_argv,
    parse_node_output,
    read_node,
)
from recovery.activities.hangstacks.model import NodeStacks
from recovery.activities.hangstacks.procs import Proc, by_environment, by_group, ranks
from recovery.activities.schedulers.base import SchedulerUnavailable
from recovery.activities.schedulers.slurm_commands import Completed
from recovery.client.config import WorkerConfig
from recovery.client.render import timeline
from recovery.worker.run_worker import stacks_for
from recovery.workflows.models import (
    Diagnosis,
    Evidence,
    Goodput,
    HangStacks,
    HangStacksInput,
    ImplicatedNode,
    RunState,
    RunStatus,
    RunSummary,
    Symptom,
)
from tests.unit.hang_stacks import nodes

CFG = StackCollection(python="/opt/venv/bin/python", timeout=20)


def proc(pid: int, ppid: int, exe: str = "/usr/bin/python3.11", **env: str) -> Proc:
    return Proc(pid=pid, ppid=ppid, exe=exe, cmdline=(exe, "train.py"), env=dict(env))


# --- finding the ranks ----------------------------------------------------------------------------


def test_a_slurm_steps_ranks_are_found_by_job_and_node_not_the_helpers_own_step() -> None:
    job = {"SLURM_JOB_ID": "42"}
    everything = [
        proc(10, 1, "/bin/bash", SLURMD_NODENAME="node1", SLURM_STEP_ID="4294967291", **job),  # batch script
        proc(11, 10, "/usr/bin/srun", SLURMD_NODENAME="node1", **job),
        proc(20, 2, SLURMD_NODENAME="node2", SLURM_STEP_ID="0", RANK="1", WORLD_SIZE="2", **job),
        proc(21, 20, SLURMD_NODENAME="node2", SLURM_STEP_ID="0", RANK="1", WORLD_SIZE="2", **job),  # its loader
        proc(30, 2, SLURMD_NODENAME="node1", SLURM_STEP_ID="0", RANK="0", WORLD_SIZE="2", **job),
        proc(40, 3, SLURMD_NODENAME="node2", SLURM_STEP_ID="1", **job),  # the helper's step
        proc(41, 40, SLURMD_NODENAME="node2", SLURM_STEP_ID="1", **job),
        proc(50, 1, SLURMD_NODENAME="node2", SLURM_JOB_ID="43", RANK="0"),  # another job
    ]
    mine = by_environment(everything, "42", "node2", me=41)
    assert sorted(p.pid for p in mine) == [20, 21]
    found, others = ranks(mine)
    assert [(r.proc.pid, r.rank, r.world_size) for r in found] == [(20, 1, 2)] and others == 1


def test_without_rank_variables_the_srun_task_id_is_the_rank() -> None:
    tasks = [proc(5, 1, SLURM_PROCID="3", SLURM_NTASKS="4"), proc(6, 1, "/bin/bash", SLURM_PROCID="2")]
    found, _ = ranks(tasks)
    assert [(r.rank, r.world_size) for r in found] == [(3, 4)]


def test_launchers_without_a_rank_are_left_out_when_ranks_exist() -> None:
    everything = [proc(1, 0, RANK_HINT="x"), proc(2, 1, RANK="0"), proc(3, 1, RANK="1")]
    found, others = ranks(everything)
    assert [r.rank for r in found] == [0, 1] and others == 1


def test_a_local_nodes_processes_are_its_group_and_their_descendants() -> None:
    job = {"SLURM_JOB_ID": "7"}
    everything = [
        proc(100, 1, "/bin/bash", **job),
        proc(101, 100, RANK="0", **job),
        proc(102, 101, RANK="0", **job),  # started a session of its own, still a descendant
        proc(200, 1, RANK="0", SLURM_JOB_ID="8"),  # same group id, another job: a recycled id
    ]
    groups = {100: 100, 101: 100, 102: 102, 200: 100}
    assert sorted(p.pid for p in by_group(everything, 100, "7", groups)) == [100, 101, 102]


# --- reaching the nodes -----------------------------------------------------------------------------


def test_the_slurm_command_is_a_step_of_the_hung_job_as_an_argument_list() -> None:
    argv = node_argv(CFG, "slurm", "1234", "node2")
    assert argv[:7] == ["srun", "--jobid=1234", "--overlap", "-w", "node2", "-N1", "-n1"]
    helper = argv[argv.index("/opt/venv/bin/python") :]
    assert helper[:3] == ["/opt/venv/bin/python", "-m", "recovery.activities.hangstacks.node"]
    assert "--job-id=1234" in helper and "--node=node2" in helper and "--samples=2" in helper
    local = node_argv(CFG, "local", "5", "node1", pgid=321)
    assert local[0] == "/opt/venv/bin/python" and "--pgid=321" in local


async def test_names_that_are_not_one_node_or_a_job_are_refused() -> None:
    for node in ("node[1-2]", "-w", "a b", ""):
        assert (await read_named(node)).reason.endswith("is not a node name")
    answer = await read_node(CFG, "slurm", "1;rm", "node1", timeout=5, env={}, runner=never)
    assert not answer.ok and "is not a job id" in answer.reason
    answer = await read_node(CFG, "pbs", "1", "node1", timeout=5, env={}, runner=never)
    assert not answer.ok and "scheduler 'pbs'" in answer.reason


def test_the_dump_timeout_leaves_room_in_the_whole_collection() -> None:
    assert CFG.dump_timeout() * 4 + CFG.interval < CFG.timeout
    assert StackCollection(timeout=600).dump_timeout() == 10.0


async def test_a_node_that_fails_or_hangs_is_an_answer_that_says_so() -> None:
    async def refused(argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float) -> Completed:
        return Completed(
            list(argv), 1, "", "srun: error: Unable to create step for job 1234: Job/step already completing"
        )

    async def slow(argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float) -> Completed:
        raise SchedulerUnavailable(f"srun --jobid=1234 did not answer within {timeout:g}s")

    answer = await read_node(CFG, "slurm", "1234", "node2", timeout=5, env={}, runner=refused)
    assert not answer.ok and "Unable to create step" in answer.reason and answer.reason.startswith("srun exit status 1")
    answer = await read_node(CFG, "slurm", "1234", "node2", timeout=5, env={}, runner=slow)
    assert not answer.ok and "did not answer within 5s" in answer.reason
    assert "unreadable" in parse_node_output("node2", "task prolog\n{not json").reason
    assert parse_node_output("node2", "").reason == "the helper printed nothing"


def test_the_helpers_json_is_its_last_line_and_keeps_the_asked_name() -> None:
    real = nodes("example")[1]
    answer = parse_node_output("node2", "prolog says hi\n" + real.model_dump_json(exclude_defaults=True) + "\n")
    assert answer.ok and answer.node == "node2" and answer.processes[0].rank == 1


# --- the activity ----------------------------------------------------------------------------------


class LocalStandIn:
    """The local scheduler as the activity sees it: a name, and each node's process group."""

    name = "local"

    def __init__(self, groups: dict[str, int]) -> None:
        self.groups = groups

    async def process_groups(self, job_id: str) -> dict[str, int]:
        return self.groups


def answering(argv: Sequence[str]) -> str:
    """The node helper's answer for the node in `argv`, from the PyTorch example's real dumps."""
    node = next(a.removeprefix("--node=") for a in argv if a.startswith("--node="))
    return next(n for n in nodes("example") if n.node == node).model_dump_json()


async def helper(argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float) -> Completed:
    return Completed(list(argv), 0, answering(argv), "")


async def never(argv: Sequence[str], *, input: bytes | None, env: Mapping[str, str], timeout: float) -> Completed:
    raise AssertionError(f"nothing should run: {argv}")


INPUT = HangStacksInput(run_id="r", attempt_index=0, job_id="3", nodes=["node1", "node2"])


async def test_the_activity_reads_every_node_and_names_the_culprit() -> None:
    acts = StackActivities(LocalStandIn({"node1": 11, "node2": 22}), CFG, runner=helper, env={})  # type: ignore[arg-type]
    found = await acts.collect_hang_stacks(INPUT)
    assert found.collected and [c.node for c in found.culprits] == ["node2"]
    assert found.evidence[0].signature == "hang-culprit"


async def test_a_node_the_local_job_no_longer_runs_on_is_said_not_tried() -> None:
    acts = StackActivities(LocalStandIn({"node1": 11}), CFG, runner=helper, env={})  # type: ignore[arg-type]
    found = await acts.collect_hang_stacks(INPUT)
    assert found.culprits == [] and "no stacks from node2" in found.summary


async def test_switched_off_or_out_of_reach_nothing_runs() -> None:
    off = StackActivities(LocalStandIn({}), StackCollection(enabled=False), runner=never)  # type: ignore[arg-type]
    assert await off.collect_hang_stacks(INPUT) == HangStacks(
        collected=False, summary="stack collection is off (worker config hang_stacks.enabled)"
    )
    other = LocalStandIn({})
    other.name = "fake"
    found = await StackActivities(other, CFG, runner=never).collect_hang_stacks(INPUT)  # type: ignore[arg-type]
    assert not found.collected and "scheduler fake" in found.summary


def test_the_worker_config_key_turns_it_off_and_sets_the_timeout() -> None:
    config = WorkerConfig.model_validate({"hang_stacks": {"enabled": False, "timeout": "90s"}})
    assert stacks_for(config).enabled is False and stacks_for(config).timeout == 90.0
    assert stacks_for(WorkerConfig()).enabled is True


# --- into the diagnosis, status and UI ----------------------------------------------------------------


def test_the_culprit_joins_the_diagnosis_with_the_stacks_as_evidence() -> None:
    hang = Diagnosis(
        attempt_index=0,
        category="unknown",
        retryable=True,
        explanation="no progress for 21s (>20s training timeout)",
        provider="watch",
        evidence=[Evidence(source="slurm-7.out", text="no progress for 21s (>20s training timeout)", line=40)],
    )
    stacks = HangStacks(
        collected=True,
        summary="py-spy: rank 1 on node2 is not in a collective while rank 0 waits in monitored_barrier",
        culprits=[ImplicatedNode(node="node2", reason="hung rank 1: not in a collective")],
        evidence=[Evidence(source="py-spy", text="rank 1 on node2, not in a collective: MainThread: x (a.py:1)")],
    )
    merged = with_hang_stacks(hang, stacks)
    assert merged.implicated_nodes == ["node2"]
    assert merged.explanation == f"{hang.explanation}; {stacks.summary}"
    assert [e.source for e in merged.evidence] == ["slurm-7.out", "py-spy"]
    again = with_hang_stacks(merged, stacks)
    assert again.implicated_nodes == ["node2"] and len(again.evidence) == 2


async def test_status_shows_each_distinct_stack_one_frame_a_line() -> None:
    verdict_evidence = StackActivities(LocalStandIn({"node1": 1, "node2": 2}), CFG, runner=helper, env={})  # type: ignore[arg-type]
    found = await verdict_evidence.collect_hang_stacks(INPUT)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    symptom = Symptom(
        attempt_index=0,
        kind="hang",
        detected_at=now,
        evidence=[Evidence(source="out", text="no progress for 21s (>20s training timeout)"), *found.evidence],
    )
    status = RunStatus(
        run=RunSummary(
            id="r", name="n", state=RunState.RECOVERING, paused=False, owner="o", policy="p", attempts=1,
            scheduler="local", job_id="3",
        ),
        attempts=[], symptoms=[symptom], diagnoses=[], advice=[], actions=[], milestones=[], goodput=Goodput(),
    )  # fmt: skip
    text = timeline(status)
    assert "    no progress for 21s (>20s training timeout)" in text
    assert "    rank 1 on node2, not in a collective: MainThread: Condition.wait (threading.py:327)" in text
    assert "        < Event.wait (threading.py:629)\n        < Fault.maybe (train.py:" in text
    assert "    rank 0 on node1, waiting in a collective: MainThread: monitored_barrier (" in text


# --- helpers ------------------------------------------------------------------------------------------


async def read_named(node: str) -> NodeStacks:
    return await read_node(CFG, "slurm", "1", node, timeout=5, env={}, runner=never)
