"""The slurmrestd backend's reading and error mapping, with httpx's mock transport in place of
slurmrestd. Job documents as 22.05's v0.0.38 returns them (trimmed captures from the dev
cluster), and as v0.0.40+ shape them (wrapped numbers, state lists, exit code objects)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from recovery.activities.schedulers.base import JobNotFound, SchedulerError, SchedulerUnavailable
from recovery.activities.schedulers.slurm import SlurmScheduler
from recovery.activities.schedulers.slurmrestd import RestSlurmScheduler, job_observation
from recovery.workflows.models import JobState, SubmitRequest

META = {"plugin": {"type": "openapi/v0.0.38"}, "Slurm": {"release": "22.05.8"}}

JOB_0038_RUNNING: dict[str, Any] = {
    "job_id": 21,
    "name": "wrap",
    "job_state": "RUNNING",
    "state_reason": "None",
    "priority": 4294901737,
    "restart_cnt": 1,
    "exit_code": 0,
    "nodes": "node[3-4]",
    "excluded_nodes": "",
    "batch_host": "node3",
    "submit_time": 1795948767,
    "start_time": 1795948779,
    "end_time": 1827484779,
    "standard_output": "/tmp/sx/nf.out",
    "standard_error": "",
    "current_working_directory": "/tmp/sx",
    "comment": "recovery:token=recovery:r1:0",
    "partition": "debug",
    "user_name": "root",
}

JOB_0038_FAILED: dict[str, Any] = JOB_0038_RUNNING | {
    "job_id": 29,
    "job_state": "FAILED",
    "state_reason": "NonZeroExitCode",
    "exit_code": 3328,  # raw wait status: exit 13
    "end_time": 1795948790,
    "standard_output": "",
    "excluded_nodes": "node[1-2]",
}

JOB_0040_HELD: dict[str, Any] = {
    "job_id": 1234,
    "name": "train",
    "job_state": ["PENDING", "REQUEUE_HOLD"],
    "state_reason": "job_requeued_in_held_state",
    "priority": {"set": True, "infinite": False, "number": 0},
    "restart_cnt": 2,
    "exit_code": {"status": ["SUCCESS"], "return_code": {"set": True, "number": 0}, "signal": {}},
    "nodes": "",
    "excluded_nodes": "gpu[02,07]",
    "submit_time": {"set": True, "infinite": False, "number": 1717232400},
    "start_time": {"set": True, "infinite": False, "number": 0},
    "end_time": {"set": False, "infinite": False, "number": 0},
    "standard_output": "/home/alice/%x-%j.out",
    "current_working_directory": "/home/alice",
    "comment": "recovery:policy=big",
    "partition": "gpu",
    "user_name": "alice",
}


def test_v0038_running_job() -> None:
    obs = job_observation(JOB_0038_RUNNING)
    assert (obs.state, obs.held, obs.restart_count, obs.nodes) == (
        JobState.RUNNING,
        False,
        1,
        ["node3", "node4"],
    )
    assert obs.started_at == datetime.fromtimestamp(1795948779, UTC)
    assert obs.ended_at is None  # end_time of a running job is its time limit
    assert obs.error_path == obs.output_path == "/tmp/sx/nf.out"
    assert obs.token == "recovery:r1:0"


def test_v0038_failed_job_decodes_the_wait_status() -> None:
    obs = job_observation(JOB_0038_FAILED)
    assert (obs.state, obs.exit_code, obs.signal) == (JobState.FAILED, 13, None)
    assert obs.output_path == "/tmp/sx/slurm-29.out"  # default name when slurmrestd says ""
    assert obs.excluded_nodes == ["node1", "node2"]


def test_v0040_wrapped_numbers_and_state_lists() -> None:
    obs = job_observation(JOB_0040_HELD)
    assert (obs.state, obs.held, obs.restart_count) == (JobState.PENDING, True, 2)
    assert obs.excluded_nodes == ["gpu02", "gpu07"]
    assert obs.submitted_at == datetime.fromtimestamp(1717232400, UTC)
    assert obs.started_at is None and obs.ended_at is None
    assert obs.output_path == "/home/alice/train-1234.out"
    killed = job_observation(
        JOB_0040_HELD
        | {
            "job_state": ["FAILED"],
            "exit_code": {
                "status": ["SIGNALED"],
                "return_code": {},
                "signal": {"id": {"set": True, "number": 9}},
            },
        }
    )
    assert (killed.state, killed.exit_code, killed.signal) == (JobState.FAILED, None, 9)


Handler = Callable[[httpx.Request], httpx.Response]


def rest(handler: Handler, api: str | None = "v0.0.38") -> RestSlurmScheduler:
    return RestSlurmScheduler(
        transport=httpx.MockTransport(handler), commands=SlurmScheduler(conf="/nonexistent", timeout=1), api=api
    )


def answer(body: dict[str, Any], status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"meta": META, "errors": []} | body)


async def test_observe_reads_each_job_and_leaves_unknown_ones_to_accounting() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return answer({"jobs": [JOB_0038_RUNNING]})

    found = await rest(handler).observe(["21"])
    assert list(found) == ["21"] and seen == ["GET /slurm/v0.0.38/job/21"]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"error_number": 2017, "error": "Invalid job id specified"}, JobNotFound),
        (
            {"error_number": -1, "error": "Unspecified error", "description": "Unable to find JobId=29"},
            SchedulerUnavailable,
        ),
        ({"error_number": 1000, "error": "Unexpected message received"}, SchedulerUnavailable),
        ({"error_number": 2009, "error": "Access/permission denied"}, SchedulerError),
    ],
)
async def test_errors(error: dict[str, Any], kind: type[SchedulerError]) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"meta": META, "errors": [error]})

    with pytest.raises(kind) as caught:
        await rest(handler).cancel("29")
    assert type(caught.value) is kind


async def test_slurmrestd_down_is_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(SchedulerUnavailable):
        await rest(handler).nodes()


async def test_release_and_cancel_are_one_request_each() -> None:
    seen: list[tuple[str, str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.content.decode()))
        return answer({})

    scheduler = rest(handler)
    await scheduler.release("7")
    await scheduler.cancel("7")
    assert seen == [
        ("POST", "/slurm/v0.0.38/job/7", '{"hold":false}'),
        ("DELETE", "/slurm/v0.0.38/job/7", ""),
    ]


async def test_submit_of_a_plain_script_goes_over_rest() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            bodies.append(json.loads(request.content))
            return answer({"job_id": 21, "step_id": "BATCH"})
        return answer({"jobs": [JOB_0038_RUNNING]})

    req = SubmitRequest(script="#!/bin/bash\nsrun train\n", name="n", nodes=2, workdir="/w", token="t", env={"A": "1"})
    obs = await rest(handler).submit(req)
    assert obs.job_id == "21"
    job = bodies[0]["job"]
    assert (job["nodes"], job["comment"], job["requeue"], job["open_mode"]) == (
        2,
        "recovery:token=t",
        True,
        "append",
    )
    assert job["environment"]["A"] == "1" and "SLURM_JWT" not in job["environment"]


def test_nodes_state_with_flags() -> None:
    from recovery.activities.schedulers.slurmrestd import _node

    node = _node({"name": "node2", "state": "down", "state_flags": ["NOT_RESPONDING"], "reason": "Not responding"})
    assert (node.name, node.state, node.reason) == ("node2", "down+not_responding", "Not responding")
    assert node.addresses == []
    assert _node({"name": "node2", "state": "idle", "address": "10.1.0.2"}).addresses == ["10.1.0.2"]


# --- Slurm 25.11: the version slurmrestd offers, and the job updates v0.0.39+ have -------------

OPENAPI_2511 = {
    "openapi": "3.0.3",
    "paths": {
        "/openapi/v3": {},
        "/slurm/v0.0.41/jobs/": {},
        "/slurm/v0.0.44/job/{job_id}": {},
        "/slurm/v0.0.43/node/{node_name}": {},
        "/slurmdb/v0.0.44/jobs/": {},
        "/slurm/v0.0.44/jobs/": {},
    },
}


def test_newest_api_is_taken_from_the_openapi_paths() -> None:
    from recovery.activities.schedulers.slurmrestd import newest_api

    assert newest_api(OPENAPI_2511) == "v0.0.44"
    assert newest_api({"paths": {"/slurm/v0.0.38/jobs": {}, "/slurm/v0.0.36/jobs": {}}}) == "v0.0.38"
    with pytest.raises(SchedulerError, match="no /slurm/ API"):
        newest_api({"paths": {"/slurmdb/v0.0.44/jobs/": {}}})


async def test_2511_exclusions_and_release_are_job_updates_over_rest() -> None:
    seen: list[tuple[str, str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.content.decode()))
        if request.url.path == "/openapi/v3":
            return httpx.Response(200, json=OPENAPI_2511)
        return answer({})

    scheduler = rest(handler, api=None)
    await scheduler.set_excluded_nodes("7", ["node1", "node3"])
    await scheduler.set_excluded_nodes("7", [])
    await scheduler.release("7")
    await scheduler.drain("node2", "recovery: bad\nGPU")
    assert seen == [
        ("GET", "/openapi/v3", ""),  # asked once
        ("POST", "/slurm/v0.0.44/job/7", '{"excluded_nodes":["node1","node3"]}'),
        ("POST", "/slurm/v0.0.44/job/7", '{"excluded_nodes":[]}'),
        ("POST", "/slurm/v0.0.44/job/7", '{"hold":false}'),
        ("POST", "/slurm/v0.0.44/node/node2", '{"state":["DRAIN"],"reason":"recovery: bad GPU"}'),
    ]


async def test_2511_submit_with_exclusions_and_arguments_goes_over_rest() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            bodies.append(json.loads(request.content))
            return answer({"job_id": 21, "step_id": "batch"})
        return answer({"jobs": [JOB_0040_HELD | {"job_id": 21}]})

    req = SubmitRequest(
        script="#!/bin/bash\nsrun train\n", args=["--lr", "0.1"], name="n", nodes=2, workdir="/w", token="t",
        excluded_nodes=["node2"],
    )  # fmt: skip
    obs = await rest(handler, api="v0.0.44").submit(req)
    job = bodies[0]["job"]
    assert obs.job_id == "21"
    assert (job["excluded_nodes"], job["argv"][1:], job["open_mode"]) == (["node2"], ["--lr", "0.1"], ["APPEND"])
