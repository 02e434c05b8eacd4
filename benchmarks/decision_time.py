"""Decision time per failure for a long run: the attribution step (built-in rules, with the
log's account and every node's state) and the pure `decide`, on a run with 1,000 attempts of
history and a 10,000-node cluster, against the issue's targets (decide < 10 ms, attribution
< 50 ms).

    .venv/bin/python benchmarks/decision_time.py [--attempts 1000] [--nodes 10000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from datetime import UTC, datetime, timedelta

from recovery.activities.attribution import RulesProvider
from recovery.activities.diagnose import usable_nodes
from recovery.activities.node_index import NodeIndex
from recovery.activities.rules import as_cluster_nodes
from recovery.workflows.decide import DecisionInput, decide, no_progress_streak
from recovery.workflows.models import (
    Attempt,
    AttributionInput,
    DiagnoseInput,
    Diagnosis,
    Evidence,
    ImplicatedNode,
    JobObservation,
    JobState,
    NodeInfo,
    Symptom,
    TaskResult,
)
from recovery.workflows.policy import Policy

T0 = datetime(2026, 11, 29, tzinfo=UTC)


def history(attempts: int) -> list[Attempt]:
    return [
        Attempt(index=i, job_id="7", restart_count=i, last_step=i * 10, state=JobState.FAILED) for i in range(attempts)
    ]


def cluster(nodes: int) -> list[NodeInfo]:
    return [NodeInfo(name=f"gpu{i:05d}", state="down" if i % 997 == 0 else "allocated") for i in range(nodes)]


def facts(attempt: Attempt, nodes: list[NodeInfo]) -> AttributionInput:
    allocation = [n.name for n in nodes[:64]]
    ended = T0 + timedelta(hours=1)
    tasks = [
        TaskResult(node=n, exit_code=1, ended_at=ended + timedelta(milliseconds=i)) for i, n in enumerate(allocation)
    ]
    log = Diagnosis(
        attempt_index=attempt.index,
        category="hardware",
        retryable=True,
        # As logs name hosts: fully qualified, and a peer, both to be mapped to node names.
        implicated=[ImplicatedNode(node=f"{allocation[3]}.cluster.example", reason="Xid 79 at slurm-7.out:1234")],
        peers=[allocation[5]],
        explanation="Xid 79: the GPU has fallen off the bus",
        provider="log",
        evidence=[Evidence(source="slurm-7.out", line=1234, text="NVRM: Xid 79", signature="xid-79")],
    )
    return AttributionInput(
        run_id="bench",
        attempt=attempt,
        observation=JobObservation(job_id="7", state=JobState.FAILED, nodes=allocation, tasks=tasks, exit_code=1),
        symptom=Symptom(attempt_index=attempt.index, kind="crash", detected_at=ended, evidence=log.evidence),
        log_diagnosis=log,
        # What the diagnose activity gives the built-in rules: the failed run's own nodes.
        nodes=NodeIndex.of(nodes).allocation(allocation),
    )


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def report(name: str, samples: list[float], target: float) -> None:
    ordered = sorted(samples)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    print(f"{name:34} {statistics.median(samples):8.3f} ms {p95:8.3f} ms   target < {target:g} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    attempts, nodes = history(args.attempts), cluster(args.nodes)
    failed = attempts[-1]
    inp = facts(failed, nodes)
    provider = RulesProvider()
    loop = asyncio.new_event_loop()
    diagnosis = loop.run_until_complete(provider.attribute(inp))
    usable = [n.name for n in nodes if n.state != "down"]
    policy = Policy(max_restarts=10_000)

    def decide_once() -> None:
        ctx = DecisionInput(
            generation=args.attempts,
            attempt_index=failed.index,
            job_id="7",
            restarts_done=args.attempts - 1,
            excluded_nodes=[f"gpu{i:05d}" for i in range(3)],
            nodes_needed=64,
            usable_nodes=usable,
            spent={"hardware": 2},
            no_progress_streak=no_progress_streak(attempts),
        )
        decide(ctx, diagnosis, policy, T0)

    print(f"run with {args.attempts} attempts of history, {args.nodes} nodes; {args.repeat} repeats")
    print(f"{'step':34} {'median':>11} {'p95':>11}")

    index = NodeIndex.of(nodes)  # one per read of the nodes, shared by the diagnoses of a burst
    request = DiagnoseInput(
        run_id="bench",
        attempt=failed,
        observation=inp.observation,
        symptom=inp.symptom,
        log_diagnosis=inp.log_diagnosis,
        excluded_nodes=[f"gpu{i:05d}" for i in range(3)],
    )

    def attribute_once() -> None:  # what the diagnose activity does around the provider
        found = as_cluster_nodes(loop.run_until_complete(provider.attribute(inp)), inp.observation.nodes, index)
        usable_nodes(request, found, index, request.suspect_nodes)

    report("attribution (rules, names, usable)", timed(attribute_once, args.repeat), 50)
    report("index of every node (once a read)", timed(lambda: NodeIndex.of(nodes), args.repeat), 50)
    report("decide (incl. no-progress streak)", timed(decide_once, args.repeat), 10)


if __name__ == "__main__":
    main()
