"""Client-side operations on runs: start, find, query, signal. Shared by the CLI and the demo."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import (
    Client,
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from recovery import settings
from recovery.workflows import search_attributes as sa
from recovery.workflows.models import (
    TRAINING_RUN,
    CancelRequest,
    RunInput,
    RunSpec,
    RunState,
    RunStatus,
    RunSummary,
    SubmitRequest,
)
from recovery.workflows.pipeline_models import PIPELINE

WORKFLOW = TRAINING_RUN


class RunError(RuntimeError):
    """A run that cannot be found or acted on; the message is one line."""


async def start_run(
    client: Client,
    spec: RunSpec,
    task_queue: str | None = None,
    reuse: WorkflowIDReusePolicy = WorkflowIDReusePolicy.ALLOW_DUPLICATE,
) -> WorkflowHandle[object, RunStatus]:
    attrs = sa.at_start(spec.scheduler, spec.owner)
    try:
        return await client.start_workflow(
            WORKFLOW,
            RunInput(spec=spec),
            id=spec.run_id,
            task_queue=task_queue or settings.task_queue(),
            id_reuse_policy=reuse,
            search_attributes=attrs,
            memo=memo(spec),
            static_summary=summary_line(spec),
            static_details=details(spec),
            result_type=RunStatus,
        )
    except RPCError as e:
        raise_namespace_problem(e, client.namespace)
        raise


def raise_namespace_problem(error: RPCError, namespace: str) -> None:
    """RunError saying what the namespace lacks, when that is why a start was refused."""
    problem = namespace_problem(error, namespace)
    if problem is not None:
        raise RunError(problem) from None


def memo(spec: RunSpec) -> dict[str, str]:
    return {
        "name": spec.name,
        "script": spec.script_path,
        "owner": spec.owner,
        "policy": spec.policy.name,
        "nodes": str(spec.nodes),
        # The run's own start: visibility's StartTime is its latest execution's, which a
        # continue-as-new moves on (the memo goes along unchanged).
        "submitted": spec.submitted_at.isoformat(),
    }


def summary_line(spec: RunSpec) -> str:
    """The UI's one-line summary of the run (a name may hold newlines: the summary may not)."""
    name = " ".join(spec.name.split()) or spec.run_id
    return f"{name}: {spec.script_path} by {spec.owner}, policy {spec.policy.name}"


def details(spec: RunSpec) -> str:
    """The UI's fixed details of the run, one `key: value` line each."""
    fields = {**memo(spec), "scheduler": spec.scheduler}
    return "\n".join(f"{key}: {' '.join(value.split())}" for key, value in fields.items())


# Temporal's words when a start names a search attribute the namespace has not registered.
_UNREGISTERED = re.compile(r"no mapping defined for search attribute (\w+)")
_HOW_TO_REGISTER = (
    "start the embedded server with `recovery dev-server start` (it registers them), or register them "
    "with the `temporal operator search-attribute create` commands in docs/operations.md"
)


def _lacks(namespace: str, names: list[str]) -> str:
    return f"namespace {namespace!r} lacks recovery's search attributes ({', '.join(names)}); {_HOW_TO_REGISTER}"


def namespace_problem(error: RPCError, namespace: str) -> str | None:
    """One line saying what the namespace lacks and how to fix it; None for any other error."""
    found = _UNREGISTERED.search(error.message)
    if error.status == RPCStatusCode.INVALID_ARGUMENT and found:
        return _lacks(namespace, [found.group(1)])
    if error.status == RPCStatusCode.NOT_FOUND and "namespace" in error.message.lower():
        return (
            f"namespace {namespace!r} does not exist; create it with `temporal operator namespace create "
            f"--namespace {namespace}` and register recovery's search attributes in it (docs/operations.md)"
        )
    return None


async def check_namespace(client: Client) -> None:
    """Before a run's job is submitted outside Temporal (Slurm): fail if the namespace lacks our
    search attributes, so a refused start leaves no job behind. Says nothing when the server
    will not list them (a restricted operator API): the start itself then tells."""
    request = ListSearchAttributesRequest(namespace=client.namespace)
    try:
        listed = await client.operator_service.list_search_attributes(request)
    except RPCError as e:
        problem = namespace_problem(e, client.namespace)
        if problem is not None:
            raise RunError(problem) from None
        if e.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED):
            return
        raise
    missing = [name for name in sa.ALL if name not in listed.custom_attributes]
    if missing:
        raise RunError(_lacks(client.namespace, missing))


async def sbatch_for(spec: RunSpec) -> str:
    """On Slurm the job is submitted here, as the user and with the user's environment (as
    plain sbatch would); the run then adopts it. Its token lets discovery tell it is taken."""
    from recovery.activities.schedulers.slurm import SlurmScheduler

    request = SubmitRequest(
        script=spec.script,
        args=spec.args,
        name=spec.name,
        nodes=spec.nodes,
        workdir=spec.workdir,
        token=f"recovery:{spec.run_id}:0",
        sbatch_options=spec.sbatch_options,
    )
    observation = await SlurmScheduler().submit(request)
    spec.adopt_job_id = observation.job_id
    return observation.job_id


async def wait_for_job_id(client: Client, run_id: str, timeout: float) -> str | None:
    """The first attempt's job id once a worker has submitted it, or None after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = await query_status(client, run_id, rpc_timeout=2.0)
        except RunError:
            status = None
        if status and status.attempts:
            return status.attempts[0].job_id
        await asyncio.sleep(0.2)
    return None


async def get_status(client: Client, run_id: str) -> RunStatus:
    """The run's status: its result when it has finished, else a live query to a worker."""
    return (await poll_status(client, run_id)).status


class StatusPoll(NamedTuple):
    status: RunStatus
    open: bool  # the workflow still runs: more may happen to the run


async def poll_status(client: Client, run_id: str) -> StatusPoll:
    """The run's status and whether its workflow still runs (a terminated one never says
    `finished` in its state, yet nothing more happens to it)."""
    handle, description = await _describe(client, run_id)
    if description.status == WorkflowExecutionStatus.COMPLETED:
        result: RunStatus = await handle.result()
        return StatusPoll(result, open=False)
    still = description.status in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW)
    return StatusPoll(await query_status(client, run_id), open=still)


async def query_status(client: Client, run_id: str, rpc_timeout: float = 10.0) -> RunStatus:
    handle = client.get_workflow_handle(run_id, result_type=RunStatus)
    try:
        status: RunStatus = await handle.query(
            "status", result_type=RunStatus, rpc_timeout=timedelta(seconds=rpc_timeout)
        )
        return status
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            raise RunError(f"no run {run_id!r}") from None
        raise RunError(
            f"run {run_id!r} did not answer the status query ({e.message}); is `recovery worker` running?"
        ) from None


# Runs and pipelines (a pipeline's row comes before its stages', which name it in `pipeline`).
RUNS_QUERY = f'(WorkflowType="{WORKFLOW}" OR WorkflowType="{PIPELINE}") AND ExecutionStatus != "ContinuedAsNew"'


async def list_runs(client: Client) -> list[RunSummary]:
    return [run async for run in iter_runs(client)]


async def iter_runs(client: Client, where: str = "") -> AsyncIterator[RunSummary]:
    """Runs from Temporal visibility, in its order; `where` narrows the query (ANDed)."""
    query = f"{RUNS_QUERY} AND {where}" if where else RUNS_QUERY
    try:
        async for wf in client.list_workflows(query):
            yield await _summary(wf)
    except RPCError as e:
        problem = namespace_problem(e, client.namespace)
        raise RunError(problem or f"Temporal refused the list query ({e.message})") from None


async def _summary(wf: WorkflowExecution) -> RunSummary:
    memo_data = await wf.memo()
    attrs = wf.typed_search_attributes
    state = attrs.get(sa.STATE) or RunState.PENDING.value
    job_ids = attrs.get(sa.JOB_IDS) or []
    submitted = memo_data.get("submitted")
    return RunSummary(
        id=wf.id,
        name=str(memo_data.get("name", wf.id)),
        state=RunState(state),
        paused=state == RunState.PAUSED.value,
        owner=str(memo_data.get("owner", "")),
        policy=str(memo_data.get("policy", "")),
        attempts=attrs.get(sa.ATTEMPTS) or 0,
        scheduler=attrs.get(sa.SCHEDULER) or "",
        job_id=job_ids[-1] if job_ids else None,
        last_symptom=attrs.get(sa.LAST_SYMPTOM) or None,
        # Runs started before the memo held it show their latest execution's start.
        created_at=datetime.fromisoformat(str(submitted)) if submitted else wf.start_time,
        kind="pipeline" if wf.workflow_type == PIPELINE else "run",
        pipeline=wf.parent_id if wf.parent_id else None,
    )


async def signal_run(client: Client, run_id: str, name: str, kill_job: bool = False) -> None:
    handle, description = await _describe(client, run_id)
    if description.status != WorkflowExecutionStatus.RUNNING:
        raise RunError(f"run {run_id!r} has already ended")
    if name == "cancel":
        await handle.signal(name, CancelRequest(kill_job=kill_job))
    else:
        await handle.signal(name)


async def wait_result(client: Client, run_id: str) -> RunStatus | None:
    handle = client.get_workflow_handle(run_id, result_type=RunStatus)
    try:
        result: RunStatus = await handle.result()
        return result
    except WorkflowFailureError:
        return None


async def _describe(
    client: Client, run_id: str
) -> tuple[WorkflowHandle[object, RunStatus], WorkflowExecutionDescription]:
    handle = client.get_workflow_handle(run_id, result_type=RunStatus)
    try:
        return handle, await handle.describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            raise RunError(f"no run {run_id!r}") from None
        raise


def visibility_time(at: datetime) -> str:
    """A time as Temporal's visibility queries take it (`StartTime >= "2026-12-01T10:00:00Z"`)."""
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
