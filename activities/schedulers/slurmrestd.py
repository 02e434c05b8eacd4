"""`RestSlurmScheduler`: the same interface over slurmrestd (httpx), where its API can do the job.

Which API version: the newest `/slurm/v0.0.NN/` that slurmrestd's own OpenAPI document
(`GET /openapi/v3`) lists, read on the first call (or the one given as `api`). Slurm 22.05 serves
v0.0.36 to v0.0.38; Slurm 25.11 serves v0.0.41 to v0.0.44 (v0.0.38 is gone).

What goes over REST, in every version: reading jobs (`GET job/{id}`, `GET jobs`), nodes
(`GET nodes`), submitting (`POST job/submit`), releasing (`POST job/{id}` with
`{"hold": false}`) and cancelling (`DELETE job/{id}`). From v0.0.39 (Slurm 23.02) on, also the
job update of exclusions (`POST job/{id}` with `{"excluded_nodes": [...]}`), draining a node
(`POST node/{name}`), and submitting with exclusions and with arguments (`argv`).

What stays on Slurm's commands (a `SlurmScheduler` inside), and why:

- requeue-hold: no version of the REST API requeues a job (25.11's v0.0.44 neither: its job
  update sets whether a job *may* be requeued, and `DELETE job` only signals);
- before v0.0.39: exclusions and draining (no such fields), and a submit with arguments
  (22.05.8's slurmrestd crashes on a job with `argv`, seen on the dev cluster);
- a script with `#SBATCH` directives: sbatch reads those on the client; slurmrestd takes the
  script as it is and would silently drop them (nodes, time limit, GPUs...). So in practice
  most submissions go through sbatch, and REST submits only directive-free scripts;
- jobs slurmctld forgot, and per-node step results: accounting over REST (slurmdb v0.0.38)
  reports exit codes as 0 in 22.05, like `sacct --json`; `sacct -P` is right.

Errors: `errors[].error_number` 2017 (invalid job id) is JobNotFound; communication errors
(1000-1999, 5000-5999) and -1 ("Unspecified error", what 22.05 answers for a job read while
slurmctld is down) are SchedulerUnavailable, as are connection failures and timeouts.

v0.0.40 and later wrap numbers as `{"set": true, "number": N}` and list job states; the readers
below accept both shapes.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from recovery.activities.schedulers import slurm_facts as facts
from recovery.activities.schedulers import slurm_parse as sp
from recovery.activities.schedulers.base import JobNotFound, SchedulerError, SchedulerUnavailable, first_sight
from recovery.activities.schedulers.slurm import SlurmScheduler, checked_node, one_line_reason, sbatch_only
from recovery.activities.schedulers.slurm_commands import SLURM_INVALID_JOB_ID
from recovery.activities.schedulers.slurm_comment import parse_comment, submission_comment
from recovery.activities.schedulers.slurm_states import map_state, node_state
from recovery.workflows.models import JobObservation, JobState, JobSubmission, NodeInfo, SubmitRequest

_PER_JOB_READS = 16  # up to this many ids: one GET per job; more: one GET of all jobs
_API_PATH = re.compile(r"^/slurm/(v0\.0\.(\d+))/")
_FIRST_WITH_UPDATES = 39  # v0.0.39 (Slurm 23.02): excluded_nodes, argv, node updates


class RestSlurmScheduler:
    name = "slurm"

    def __init__(
        self,
        *,
        socket: str | None = None,
        url: str | None = None,
        token: str | None = None,
        user: str | None = None,
        api: str | None = None,
        timeout: float = 30.0,
        commands: SlurmScheduler | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`socket` (default `SLURM_RESTD_SOCKET`) for slurmrestd on a unix socket with
        rest_auth/local, or `url` plus a JWT `token` (and `user`, for an admin token acting as a
        user). `api`: the API version (default: the newest slurmrestd offers, asked once).
        `commands` does what REST cannot (see the module doc). `transport` is for tests."""
        socket = socket or (None if url else os.environ.get("SLURM_RESTD_SOCKET"))
        if transport is None and socket:
            transport = httpx.AsyncHTTPTransport(uds=socket)
        if transport is None and not url:
            raise SchedulerError("slurmrestd: give a socket (SLURM_RESTD_SOCKET) or a URL")
        headers = {"X-SLURM-USER-TOKEN": token} if token else {}
        if token and user:
            headers["X-SLURM-USER-NAME"] = user
        self.api = api
        self._api_lock = asyncio.Lock()
        self.timeout = timeout
        self.commands = commands or SlurmScheduler(timeout=timeout)
        self._client = httpx.AsyncClient(
            base_url=url or "http://localhost", transport=transport, headers=headers, timeout=timeout
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    # --- the Scheduler protocol --------------------------------------------------------------

    async def submit(self, request: SubmitRequest) -> JobObservation:
        updates = await self._has_updates()
        if sbatch_only(request) or (not updates and (request.args or request.excluded_nodes)):
            return await self.commands.submit(request)
        body = {"script": request.script, "job": _job_properties(request, updates)}
        answer = await self._call("POST", "job/submit", json=body)
        job_id = str(answer.get("job_id", ""))
        if not job_id.isdigit():
            raise SchedulerError(f"slurmrestd submit returned no job id: {answer}")
        return await first_sight(self, job_id, request)

    async def find(self, token: str) -> JobObservation | None:
        if not token:
            return None
        mine = [j for j in await self._all_jobs() if parse_comment(str(j.get("comment") or "")).token == token]
        if mine:
            newest = max(mine, key=lambda j: int(j["job_id"]))
            return (await self._complete([newest]))[str(newest["job_id"])]
        return await self.commands.find(token)  # finished and purged: accounting

    async def observe(self, job_ids: list[str]) -> dict[str, JobObservation]:
        ids = [i for i in dict.fromkeys(job_ids) if i.isdigit()]
        if not ids:
            return {}
        if len(ids) <= _PER_JOB_READS:
            found = await asyncio.gather(*(self._job(i) for i in ids))
            raw = [job for job in found if job is not None]
        else:
            wanted = set(ids)
            raw = [j for j in await self._all_jobs() if str(j.get("job_id")) in wanted]
        result = await self._complete(raw)
        missing = [i for i in ids if i not in result]
        if missing:
            result.update(await self.commands.accounting(missing))
        return result

    async def requeue_hold(self, job_id: str) -> None:
        await self.commands.requeue_hold(job_id)  # no requeue in v0.0.38

    async def set_excluded_nodes(self, job_id: str, nodes: list[str]) -> None:
        if not await self._has_updates():
            await self.commands.set_excluded_nodes(job_id, nodes)  # no such job property in v0.0.38
            return
        # A list, not "a,b": an empty list clears them (slurmrestd turns it into "").
        body = {"excluded_nodes": [checked_node(n) for n in nodes]}
        await self._call("POST", f"job/{_checked(job_id)}", json=body)

    async def release(self, job_id: str) -> None:
        await self._call("POST", f"job/{_checked(job_id)}", json={"hold": False})

    async def cancel(self, job_id: str) -> None:
        await self._call("DELETE", f"job/{_checked(job_id)}")

    async def nodes(self) -> list[NodeInfo]:
        answer = await self._call("GET", "nodes")
        return [_node(n) for n in answer.get("nodes", [])]

    async def drain(self, node: str, reason: str) -> None:
        if not await self._has_updates():
            await self.commands.drain(node, reason)  # node updates arrive in v0.0.39 (23.02)
            return
        body = {"state": ["DRAIN"], "reason": one_line_reason(reason)}
        await self._call("POST", f"node/{checked_node(node)}", json=body)

    # --- beyond the protocol -------------------------------------------------------------------

    async def opted_in_jobs(self, partitions: list[str] | None = None) -> list[JobObservation]:
        wanted = set(partitions or [])
        jobs = [
            j
            for j in await self._all_jobs()
            if parse_comment(str(j.get("comment") or "")).opted_in
            and (not wanted or wanted & set(str(j.get("partition", "")).split(",")))
        ]
        found = await self._complete(jobs)
        return [found[str(j["job_id"])] for j in jobs]

    async def runs(self, job_id: str) -> list[JobObservation]:
        return await self.commands.runs(job_id)

    async def submission(self, job_id: str) -> JobSubmission:
        return await self.commands.submission(job_id)

    async def cluster_name(self) -> str:
        return await self.commands.cluster_name()

    def opted_in(self, observation: JobObservation) -> bool:
        return self.commands.opted_in(observation)

    # --- reading -------------------------------------------------------------------------------

    async def _job(self, job_id: str) -> dict[str, Any] | None:
        try:
            answer = await self._call("GET", f"job/{job_id}")
        except JobNotFound:
            return None
        jobs = answer.get("jobs") or []
        return next((j for j in jobs if str(j.get("job_id")) == job_id), None)

    async def _all_jobs(self) -> list[dict[str, Any]]:
        answer = await self._call("GET", "jobs")
        return list(answer.get("jobs") or [])

    async def _complete(self, raw: list[dict[str, Any]]) -> dict[str, JobObservation]:
        observations = {str(j["job_id"]): job_observation(j) for j in raw}
        failing = [o for o in observations.values() if facts.needs_failure_facts(o.state)]
        if not failing:
            return observations
        node_list = await self.nodes()
        tasks = await self.commands.tasks_of([(o.job_id, o.restart_count) for o in failing])
        for obs in failing:
            observations[obs.job_id] = obs.model_copy(
                update={
                    "tasks": tasks.get(obs.job_id, []),
                    "failed_nodes": facts.failed_nodes(obs.nodes, node_list),
                }
            )
        return observations

    async def api_version(self) -> str:
        """The API version in use: the one given, else the newest slurmrestd lists."""
        async with self._api_lock:
            if self.api is None:
                self.api = newest_api(await self._request("/openapi/v3", "slurmrestd GET /openapi/v3"))
        return self.api

    async def _has_updates(self) -> bool:
        return _version_number(await self.api_version()) >= _FIRST_WITH_UPDATES

    async def _call(self, method: str, path: str, json: Mapping[str, Any] | None = None) -> dict[str, Any]:
        api = await self.api_version()
        return await self._request(f"/slurm/{api}/{path}", f"slurmrestd {method} {path}", method, json)

    async def _request(
        self, url: str, what: str, method: str = "GET", json: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        try:
            response = await self._client.request(method, url, json=json)
        except httpx.TransportError as err:  # connection refused, timeouts, a crashed slurmrestd
            raise SchedulerUnavailable(f"{what}: {type(err).__name__}: {err}") from err
        try:
            answer = response.json()
        except ValueError as err:
            if response.status_code >= 500:
                raise SchedulerUnavailable(f"{what}: HTTP {response.status_code}") from err
            raise SchedulerError(f"{what}: HTTP {response.status_code}: {response.text[:200]}") from err
        _raise_errors(what, answer if isinstance(answer, dict) else {})
        if response.status_code >= 400:
            raise SchedulerError(f"{what}: HTTP {response.status_code}")
        return answer if isinstance(answer, dict) else {}


# --- translating ---------------------------------------------------------------------------------


def _raise_errors(what: str, answer: Mapping[str, Any]) -> None:
    """The one place REST errors become scheduler errors."""
    errors = [e for e in answer.get("errors") or [] if isinstance(e, dict)]
    if not errors:
        return
    numbers = {int(e.get("error_number", e.get("errno", 0)) or 0) for e in errors}
    text = "; ".join(" ".join(str(e.get(k, "")) for k in ("error", "description") if e.get(k)) for e in errors).replace(
        "\n", " "
    )
    if numbers & {SLURM_INVALID_JOB_ID}:
        raise JobNotFound(f"{what}: {text}")
    if any(n == -1 or 1000 <= n < 2000 or 5000 <= n < 6000 for n in numbers):
        raise SchedulerUnavailable(f"{what}: {text}")
    raise SchedulerError(f"{what}: {text}")


def newest_api(document: Mapping[str, Any]) -> str:
    """The newest `v0.0.NN` among the `/slurm/v0.0.NN/...` paths of slurmrestd's OpenAPI document."""
    versions = {m.group(1) for path in document.get("paths") or {} if (m := _API_PATH.match(str(path)))}
    if not versions:
        raise SchedulerError("slurmrestd offers no /slurm/ API (is it started with the slurmctld plugin?)")
    return max(versions, key=_version_number)


def _version_number(api: str) -> int:
    return int(api.rsplit(".", 1)[-1])


def _job_properties(request: SubmitRequest, updates: bool) -> dict[str, Any]:
    # The job gets this environment and nothing else: the worker's (as sbatch --export=ALL),
    # without the REST token, plus the request's.
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JWT"}
    env.update({k: v for k, v in request.env.items() if not k.startswith("SBATCH_")})
    job: dict[str, Any] = {
        "name": request.name,
        "nodes": request.nodes,
        "current_working_directory": request.workdir,
        "comment": submission_comment(request.script, request.token),
        "requeue": True,
        "open_mode": ["APPEND"] if updates else "append",
        "environment": env,
    }
    if request.output:  # a resubmission appends to the failed job's output
        job["standard_output"] = request.output
    if updates and request.excluded_nodes:
        job["excluded_nodes"] = [checked_node(n) for n in request.excluded_nodes]
    if updates and request.args:
        job["argv"] = ["job.sbatch", *request.args]  # slurmstepd replaces argv[0] with the script's path
    return job


def job_observation(job: Mapping[str, Any]) -> JobObservation:
    """A slurmrestd job (v0.0.36-v0.0.38, and the wrapped numbers of later versions)."""
    job_id = str(job["job_id"])
    raw_state = _state_text(job.get("job_state"))
    reason = sp.clean(str(job.get("state_reason") or ""))
    state, held = map_state(raw_state, reason, _number(job.get("priority")))
    exit_code, signal = _exit(job.get("exit_code")) if state.ended else (None, None)
    comment = str(job.get("comment") or "")
    workdir = str(job.get("current_working_directory") or "")
    out = _output_path(job, "standard_output", workdir) or f"{workdir.rstrip('/')}/slurm-{job_id}.out"
    err = _output_path(job, "standard_error", workdir) or out
    return JobObservation(
        job_id=job_id,
        name=str(job.get("name") or ""),
        state=state,
        held=held,
        reason=reason,
        nodes=sp.expand_hostlist(str(job.get("nodes") or "")) if state is not JobState.PENDING else [],
        excluded_nodes=_hosts(job.get("excluded_nodes")),
        exit_code=exit_code,
        signal=signal,
        restart_count=_number(job.get("restart_cnt")) or 0,
        submitted_at=_time(job.get("submit_time")),
        started_at=_time(job.get("start_time")) if state is not JobState.PENDING else None,
        ended_at=_time(job.get("end_time")) if state.ended else None,
        output_path=out,
        error_path=err,
        token=parse_comment(comment).token or "",
        scheduler_state=raw_state,
        comment=comment,
        partition=str(job.get("partition") or ""),
        user=str(job.get("user_name") or ""),
    )


def _output_path(job: Mapping[str, Any], key: str, workdir: str) -> str:
    return sp.expand_output_path(
        str(job.get(key) or ""),
        job_id=str(job["job_id"]),
        name=str(job.get("name") or ""),
        user=str(job.get("user_name") or ""),
        node=str(job.get("batch_host") or ""),
        workdir=workdir,
    )


def _node(node: Mapping[str, Any]) -> NodeInfo:
    flags = [str(f) for f in node.get("state_flags") or []]
    state = _state_text(node.get("state"))
    return NodeInfo(
        name=str(node.get("name", "")),
        state=node_state("+".join([state, *flags])),
        reason=sp.clean(str(node.get("reason") or "")),
        addresses=list(dict.fromkeys(str(node[k]) for k in ("address", "hostname") if node.get(k))),
    )


def _state_text(value: Any) -> str:
    """`"RUNNING"` (v0.0.38) or `["PENDING", "REQUEUE_HOLD"]` (v0.0.40+) as `PENDING+REQUEUE_HOLD`."""
    if isinstance(value, list):
        return "+".join(str(v) for v in value)
    return str(value or "")


def _number(value: Any) -> int | None:
    """An int, or v0.0.40+'s `{"set": true, "infinite": false, "number": N}`."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _time(value: Any) -> Any:
    number = _number(value)
    return sp.parse_time(str(number)) if number else None


def _exit(value: Any) -> tuple[int | None, int | None]:
    """v0.0.38 gives a raw wait status (exit 3 is 768); v0.0.40+ an object with the parts."""
    if isinstance(value, dict) and ("return_code" in value or "signal" in value):
        signal = value.get("signal") or {}
        sig = _number(signal.get("id")) if isinstance(signal, dict) else None
        return (None, sig) if sig else (_number(value.get("return_code")), None)
    number = _number(value)
    return (None, None) if number is None else sp.decode_wait_status(number)


def _hosts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return sp.expand_hostlist(str(value or ""))


def _checked(job_id: str) -> str:
    if not job_id.isdigit():
        raise JobNotFound(f"{job_id!r} is not a Slurm job id")
    return job_id


def read_token(path: str | None) -> str | None:
    """A JWT from a file (the worker config's `token_file`), never from the environment of
    Slurm's commands: `SLURM_JWT` there would change how they authenticate."""
    return Path(path).read_text().strip() if path else None
