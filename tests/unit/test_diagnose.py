from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from recovery.activities.node_history import NodeHistoryUnavailable
from recovery.activities.node_index import NodeIndex, unusable
from recovery.activities.rules import (
    as_cluster_nodes,
    from_scheduler_facts,
    peer_node,
    with_node_facts,
    with_peer_nodes,
)
from recovery.workflows.models import (
    Attempt,
    AttributionInput,
    DiagnoseInput,
    Diagnosis,
    ImplicatedNode,
    JobObservation,
    JobState,
    NodeInfo,
    Symptom,
    TaskResult,
)
from recovery.workflows.node_history.models import SuspectQuery, SuspectRule
from recovery.workflows.policy import SuspectNodes

T = datetime(2026, 11, 29, 3, tzinfo=UTC)


def obs(state: JobState, **kw: object) -> JobObservation:
    return JobObservation.model_validate({"job_id": "7", "state": state, "nodes": ["n1", "n2"], **kw})


def test_first_failing_task_is_implicated_not_the_ones_killed_after() -> None:
    tasks = [
        TaskResult(node="n1", signal=15, ended_at=T + timedelta(seconds=1)),
        TaskResult(node="n2", exit_code=3, ended_at=T),
    ]
    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=3, tasks=tasks), 0)
    assert d.implicated_nodes == ["n2"] and d.retryable and d.category == "unknown"
    assert "exit 3" in d.explanation


def test_node_fail_implicates_the_failed_node() -> None:
    d = from_scheduler_facts(obs(JobState.NODE_FAIL, failed_nodes=["n1"]), 0)
    assert d.implicated_nodes == ["n1"] and d.category == "hardware"


def test_cancelled_outside_is_not_retried() -> None:
    assert from_scheduler_facts(obs(JobState.CANCELLED), 0).retryable is False


def test_timeout_and_preemption_are_scheduler_and_retryable() -> None:
    for state in (JobState.TIMEOUT, JobState.PREEMPTED):
        d = from_scheduler_facts(obs(state), 0)
        assert d.category == "scheduler" and d.retryable and d.implicated == []


def test_unhealthy_nodes_of_the_allocation_are_implicated_with_the_reason() -> None:
    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=1), 0)
    nodes = [
        NodeInfo(name="n1", state="idle"),
        NodeInfo(name="n2", state="drain", reason="ECC errors"),
        NodeInfo(name="n3", state="down", reason="not ours"),
    ]
    d = with_node_facts(d, obs(JobState.FAILED), nodes)
    assert d.implicated_nodes == ["n2"]
    assert "drain: ECC errors" in d.implicated[0].reason
    assert d.category == "hardware"


def test_unusable_states() -> None:
    for state in ("down", "down*", "drain", "drained", "draining", "fail", "idle*", "not_responding"):
        assert unusable(NodeInfo(name="x", state=state))
    for state in ("idle", "allocated", "mixed", "completing"):
        assert not unusable(NodeInfo(name="x", state=state))


def test_gpu_health_readings_implicate_a_bad_node_as_hardware() -> None:
    from recovery.activities.diagnose import with_gpu_health
    from recovery.activities.gpu.readings import GpuHealth, GpuReading

    d = from_scheduler_facts(obs(JobState.FAILED, exit_code=1), 0)
    bad = GpuHealth(
        node="n2", available=True, gpus=[GpuReading(index=0, pci_bus_id="0000:3b:00", ecc_uncorrected_volatile=4)]
    )
    good = GpuHealth(node="n1", available=True, gpus=[GpuReading(index=0, ecc_uncorrected_volatile=0)])
    absent = GpuHealth(node="n3", available=False, reason="no NVIDIA driver here")
    out = with_gpu_health(d, [good, bad, absent])
    assert out.implicated_nodes == ["n2"] and out.category == "hardware"
    assert "NVML" in out.implicated[0].reason
    assert any(e.source == "nvml" for e in out.evidence)
    assert with_gpu_health(d, [good, absent]).category == d.category


async def test_probing_on_this_machine_carries_on_without_a_gpu() -> None:
    from recovery.activities.diagnose import DiagnoseActivities, HealthProbing
    from recovery.workflows.models import Attempt, DiagnoseInput, Symptom
    from tests.fakes import ScriptedScheduler

    failed = obs(JobState.FAILED, exit_code=1, tasks=[TaskResult(node="n1", exit_code=1, ended_at=T)])
    activities = DiagnoseActivities(ScriptedScheduler(["fail:n1"]), health=HealthProbing(enabled=True, timeout=20))
    symptom = Symptom(attempt_index=0, kind="crash", detected_at=T)
    result = await activities.diagnose(
        DiagnoseInput(run_id="r", attempt=Attempt(index=0, job_id="7"), observation=failed, symptom=symptom)
    )
    assert result.diagnosis.implicated_nodes == ["n1"]  # NVML absent here: the rules' answer stands


# --- peers the log names ------------------------------------------------------------------------


def peers_diagnosis(*peers: str) -> Diagnosis:
    return Diagnosis(
        attempt_index=0,
        category="network",
        retryable=True,
        explanation="an NCCL socket connection to a peer was closed",
        provider="log",
        peers=list(peers),
    )


CLUSTER = [
    NodeInfo(name="n1", state="idle", addresses=["10.0.0.1"]),
    NodeInfo(name="n2", state="idle", addresses=["n2.cluster.example"]),
    NodeInfo(name="n3", state="idle", addresses=["10.0.0.3"]),  # not in the allocation
]


def test_a_peer_named_by_address_or_host_name_implicates_its_node() -> None:
    d = with_peer_nodes(peers_diagnosis("10.0.0.1", "n2.cluster.example"), obs(JobState.FAILED), CLUSTER)
    assert d.implicated_nodes == ["n1", "n2"]
    assert "failed peer (10.0.0.1)" in d.implicated[0].reason


def test_peer_spellings_compare_alike() -> None:
    assert peer_node("[10.0.0.1]", CLUSTER) == "n1"
    assert peer_node("::ffff:10.0.0.1", CLUSTER) == "n1"
    assert peer_node("N2.Cluster.Example", CLUSTER) == "n2"
    assert peer_node("n2", CLUSTER) == "n2"  # the short name a scheduler uses


def test_a_peer_outside_the_allocation_or_on_a_shared_address_implicates_nothing() -> None:
    assert with_peer_nodes(peers_diagnosis("10.0.0.3"), obs(JobState.FAILED), CLUSTER).implicated == []
    shared = [NodeInfo(name=n, state="idle", addresses=["127.0.0.1"]) for n in ("n1", "n2")]
    assert with_peer_nodes(peers_diagnosis("127.0.0.1"), obs(JobState.FAILED), shared).implicated == []


async def test_rules_map_the_logs_peer_to_a_node_and_keep_the_first_failed_task() -> None:
    from recovery.activities.attribution import RulesProvider
    from recovery.workflows.models import Attempt, AttributionInput, Symptom

    failed = obs(JobState.FAILED, exit_code=1, tasks=[TaskResult(node="n2", exit_code=1, ended_at=T)])
    facts = AttributionInput(
        run_id="r",
        attempt=Attempt(index=0, job_id="7"),
        observation=failed,
        symptom=Symptom(attempt_index=0, kind="crash", detected_at=T),
        log_diagnosis=peers_diagnosis("10.0.0.1"),
        nodes=CLUSTER,
    )
    d = await RulesProvider().attribute(facts)
    assert d.category == "network" and d.implicated_nodes == ["n2", "n1"], d
    assert d.peers == ["10.0.0.1"]


def crashed_on_two_nodes(**fields: object) -> DiagnoseInput:
    """The diagnose activity's input for job 7, failed on node1 and node2."""
    failed = JobObservation(job_id="7", state=JobState.FAILED, exit_code=1, nodes=["node1", "node2"])
    return DiagnoseInput.model_validate(
        {
            "run_id": "r",
            "attempt": Attempt(index=0, job_id="7"),
            "observation": failed,
            "symptom": Symptom(attempt_index=0, kind="crash", detected_at=T),
            **fields,
        }
    )


async def test_the_diagnose_activity_maps_a_peer_host_name_to_the_allocations_node() -> None:
    from recovery.activities.diagnose import DiagnoseActivities
    from tests.fakes import ScriptedScheduler

    # The IP resolves to no node.
    inp = crashed_on_two_nodes(log_diagnosis=peers_diagnosis("node2.cluster.example", "10.9.9.9"))
    result = await DiagnoseActivities(ScriptedScheduler([])).diagnose(inp)
    assert result.diagnosis.implicated_nodes == ["node2"], result.diagnosis


def test_the_usable_nodes_are_counted_and_only_those_decide_may_exclude_named() -> None:
    """Every usable name of a 10,000-node cluster went back to the workflow with each diagnosis
    (into its history, 100 at once in a burst); now the count, and the names decide may exclude."""
    from recovery.activities.diagnose import usable_nodes

    nodes = [NodeInfo(name=f"node{i}", state="down" if i == 3 else "idle") for i in range(1, 10_001)]
    inp = crashed_on_two_nodes(suspect_nodes=["node3", "node9"], excluded_nodes=["node5"])
    found = usable_nodes(inp, implicating("node2"), NodeIndex.of(nodes), inp.suspect_nodes)
    assert (found.usable_count, found.usable_nodes) == (9_999, ["node2", "node5", "node9"])
    # Scheduled by a workflow from before the run's exclusions were sent: every name, as then.
    old_inp = inp.model_copy(update={"excluded_nodes": None})
    old = usable_nodes(old_inp, implicating("node2"), NodeIndex.of(nodes), inp.suspect_nodes)
    assert old.usable_count is None and old.usable_nodes is not None and len(old.usable_nodes) == 9_999


class History:
    """A node history that answers after `delay` (or refuses), and remembers what it was asked."""

    def __init__(self, suspects: list[str], delay: float = 0.0, refuse: bool = False) -> None:
        self.answer, self.delay, self.refuse = suspects, delay, refuse
        self.asked: list[SuspectQuery] = []

    async def suspects(self, query: SuspectQuery) -> list[str]:
        self.asked.append(query)
        await asyncio.sleep(self.delay)
        if self.refuse:
            raise NodeHistoryUnavailable("the node history of cluster 'local' did not answer")
        return self.answer


class SeeingSuspects:
    """An attribution provider that reads the suspects (as the `http` one does)."""

    name = "seeing"
    every_node = False
    reads_suspects = True

    def __init__(self) -> None:
        self.seen: list[str] | None = None

    async def attribute(self, facts: AttributionInput) -> Diagnosis:
        self.seen = facts.suspect_nodes
        return implicating("node2")


async def test_diagnose_asks_the_suspects_itself_and_names_them_among_the_usable() -> None:
    from recovery.activities.diagnose import DiagnoseActivities
    from tests.fakes import ScriptedScheduler

    history = History(["node9"])
    rule = SuspectNodes(failures=3, window=timedelta(days=1))
    inp = crashed_on_two_nodes(excluded_nodes=[], suspect_rule=rule)
    result = await DiagnoseActivities(ScriptedScheduler([]), suspects=history.suspects).diagnose(inp)
    assert result.suspect_nodes == ["node9"]
    assert history.asked == [SuspectQuery(rule=SuspectRule(failures=3, window=timedelta(days=1)), now=T)]
    # Not asked (a workflow from before, which asked them itself): none returned, the input's used.
    before = crashed_on_two_nodes(excluded_nodes=[], suspect_nodes=["node4"])
    old = await DiagnoseActivities(ScriptedScheduler([]), suspects=history.suspects).diagnose(before)
    assert old.suspect_nodes is None and len(history.asked) == 1


async def test_a_history_that_cannot_answer_leaves_the_diagnosis_without_suspects() -> None:
    from recovery.activities.diagnose import DiagnoseActivities
    from tests.fakes import ScriptedScheduler

    inp = crashed_on_two_nodes(excluded_nodes=[], suspect_rule=SuspectNodes())
    refusing = History(["node9"], refuse=True)
    result = await DiagnoseActivities(ScriptedScheduler([]), suspects=refusing.suspects).diagnose(inp)
    assert result.suspect_nodes == [] and result.diagnosis.category == "unknown"
    alone = await DiagnoseActivities(ScriptedScheduler([])).diagnose(inp)  # no node history at all
    assert alone.suspect_nodes == []


async def test_a_provider_that_reads_the_suspects_gets_them_before_it_attributes() -> None:
    from recovery.activities.diagnose import DiagnoseActivities
    from tests.fakes import ScriptedScheduler

    history, provider = History(["node9"], delay=0.05), SeeingSuspects()
    inp = crashed_on_two_nodes(excluded_nodes=[], suspect_rule=SuspectNodes())
    result = await DiagnoseActivities(ScriptedScheduler([]), provider, suspects=history.suspects).diagnose(inp)
    assert provider.seen == ["node9"] and result.suspect_nodes == ["node9"]


# --- implicated names as the cluster's node names -----------------------------------------------


def implicating(*names: str) -> Diagnosis:
    implicated = [ImplicatedNode(node=n, reason="named by the log") for n in names]
    return Diagnosis(attempt_index=0, category="hardware", retryable=True, explanation="xid 79", provider="log",
                     implicated=implicated)  # fmt: skip


DGX = [
    NodeInfo(name="n7", state="idle", addresses=["10.0.0.7", "dgx-07.cluster.example"]),
    NodeInfo(name="n8", state="idle", addresses=["10.0.0.8", "dgx-08.cluster.example"]),
    NodeInfo(name="gpu9", state="idle"),
]


def test_logged_host_names_become_node_names() -> None:
    d = as_cluster_nodes(implicating("dgx-07", "gpu9.cluster.example", "n8"), ["n7", "n8"], NodeIndex.of(DGX))
    assert d.implicated_nodes == ["n7", "gpu9", "n8"]
    assert d.implicated[0].reason == "named by the log (logged as dgx-07)"


def test_a_host_that_is_no_node_is_not_excluded_and_the_explanation_says_so() -> None:
    d = as_cluster_nodes(implicating("n7", "nfs-server", "dgx-07"), ["n7", "n8"], NodeIndex.of(DGX))
    assert d.implicated_nodes == ["n7"]
    assert d.explanation == "xid 79; not excluded, no node of this cluster: nfs-server"


def test_node_names_pass_unchanged() -> None:
    d = implicating("n7")
    assert as_cluster_nodes(d, ["n7"], NodeIndex.of(DGX)) is d
    assert as_cluster_nodes(d, [], NodeIndex.of([])) is d  # nothing known about the cluster: nothing to check


def test_a_cancelled_job_stays_cancelled_whatever_its_ranks_said_while_dying() -> None:
    from recovery.activities.rules import combine

    dying = Diagnosis(attempt_index=0, category="network", retryable=True, provider="log", peers=["10.0.0.2"],
                      implicated=[ImplicatedNode(node="n2", reason="its rank wrote the error")],
                      explanation="an NCCL socket connection to a peer was closed")  # fmt: skip
    d = combine(dying, from_scheduler_facts(obs(JobState.CANCELLED), 0))
    assert (d.category, d.retryable) == ("scheduler", False)
    assert d.implicated == [] and d.peers == []  # nothing to avoid on a resume
    assert "the log shows: an NCCL socket" in d.explanation
    timed_out = combine(dying, from_scheduler_facts(obs(JobState.TIMEOUT), 0))
    assert (timed_out.category, timed_out.retryable) == ("scheduler", True)  # resumed, for free
