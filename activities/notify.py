"""Telling people: a webhook (POST over httpx) and/or a command, with the advice as JSON.

Both are retried by Temporal; a failing receiver never stops a recovery. The command is an
argument list from the policy and gets the JSON on stdin: nothing is ever passed to a shell.
"""

from __future__ import annotations

import asyncio

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from recovery.workflows.models import NotifyInput

TIMEOUT_SECONDS = 10.0


class NotifyActivities:
    @activity.defn
    async def notify(self, inp: NotifyInput) -> None:
        payload = inp.model_dump_json().encode()
        if inp.webhook:
            await _post(inp.webhook, payload)
        if inp.command:
            await _run(inp.command, payload)


async def _post(url: str, payload: bytes) -> None:
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
            answer = await client.post(url, content=payload, headers={"content-type": "application/json"})
    except httpx.HTTPError as e:
        raise ApplicationError(f"webhook {url}: {e}", type="NotifyFailed") from e
    if answer.is_error:
        raise ApplicationError(f"webhook {url} answered {answer.status_code}", type="NotifyFailed")


async def _run(command: list[str], payload: bytes) -> None:
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
    except OSError as e:
        raise ApplicationError(f"notify command {command[0]}: {e.strerror}", type="NotifyFailed") from e
    try:
        _, err = await asyncio.wait_for(proc.communicate(payload), TIMEOUT_SECONDS)
    except TimeoutError:
        proc.kill()
        raise ApplicationError(
            f"notify command {command[0]} took over {TIMEOUT_SECONDS:g}s", type="NotifyFailed"
        ) from None
    if proc.returncode:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise ApplicationError(f"notify command {command[0]} exited {proc.returncode}: {last[0]}", type="NotifyFailed")
