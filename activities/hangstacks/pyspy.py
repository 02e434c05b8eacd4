"""Running `py-spy dump` on one process and reading its JSON.

py-spy (PyPI `py-spy`, a dependency of this package, so it sits beside the Python that runs the
node helper) attaches with ptrace, reads the interpreter's memory and prints every Python thread's
stack; with `--native` it unwinds the C/C++ frames too, which is where a collective's wait shows
when Python called into it from C++ (DDP's gradient all-reduce under `loss.backward()`). Native
unwinding can fail where plain dumps work, so a failed native dump is retried without it.

It needs the right to ptrace the process: the same user and a `kernel.yama.ptrace_scope` of 0, or
CAP_SYS_PTRACE (root). Without it py-spy says "Permission denied", and that is what is reported.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from recovery.activities.hangstacks.model import Frame, ThreadStack

MAX_FRAMES = 96  # a deep stack keeps its innermost frames: that is where it waits
MAX_NAME = 160  # C++ template instantiations can be kilobytes long
_ADDRESS = re.compile(r"^0x[0-9a-f]+$")


class DumpFailed(Exception):
    """py-spy could not dump the process; the message is py-spy's own reason."""


def find_py_spy(configured: str | None = None) -> str | None:
    """The py-spy to run: the configured path, else the one installed beside this Python (the
    package's own dependency), else the first on PATH."""
    if configured:
        return configured
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


def dump_argv(py_spy: str, pid: int, native: bool) -> list[str]:
    return [py_spy, "dump", "--json", *(["--native"] if native else []), "--pid", str(pid)]


async def dump(py_spy: str, pid: int, *, native: bool, timeout: float) -> list[ThreadStack]:
    """The process's threads now. Raises DumpFailed with py-spy's reason (or the timeout)."""
    try:
        return parse_dump(await _run(dump_argv(py_spy, pid, native), timeout))
    except DumpFailed:
        if not native:
            raise
    return parse_dump(await _run(dump_argv(py_spy, pid, False), timeout))


async def _run(argv: list[str], timeout: float) -> str:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    except OSError as err:
        raise DumpFailed(f"cannot run {argv[0]}: {err.strerror or err}") from err
    try:
        async with asyncio.timeout(timeout):
            out, err_out = await proc.communicate()
    except TimeoutError as err:
        raise DumpFailed(f"py-spy did not answer within {timeout:g}s") from err
    finally:
        if proc.returncode is None:  # timed out or cancelled: never leave py-spy attached
            proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        raise DumpFailed(_reason(err_out.decode(errors="replace") or out.decode(errors="replace"), proc.returncode))
    return out.decode(errors="replace")


def _reason(text: str, returncode: int | None) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reason = "; ".join(lines[:3]) or f"exit status {returncode}"
    return reason[:300]


def parse_dump(text: str) -> list[ThreadStack]:
    """py-spy's `dump --json` output: a list of threads, each with its frames, innermost first."""
    try:
        data = json.loads(text)
    except ValueError as err:
        raise DumpFailed(f"py-spy printed something that is not JSON: {text[:120]!r}") from err
    if not isinstance(data, list):
        raise DumpFailed("py-spy's JSON is not a list of threads")
    return [_thread(item) for item in data if isinstance(item, dict)]


def _thread(item: dict[str, Any]) -> ThreadStack:
    frames = [_frame(f) for f in item.get("frames") or [] if isinstance(f, dict)]
    known = [f for f in frames if not _ADDRESS.match(f.name)]  # bare addresses say nothing
    tid = item.get("os_thread_id")
    return ThreadStack(
        name=str(item.get("thread_name") or ""),
        os_thread_id=tid if isinstance(tid, int) else None,
        frames=known[:MAX_FRAMES],
    )


def _frame(item: dict[str, Any]) -> Frame:
    """py-spy gives Python frames a line number and a package-relative `short_filename`; native
    frames have line 0 and the shared library as their file."""
    line = item.get("line")
    number = line if isinstance(line, int) and line > 0 else None
    name = str(item.get("name") or "?")
    file = str(item.get("short_filename") or item.get("filename") or "")
    python = file.endswith(".py") or file.startswith("<")  # `<frozen importlib._bootstrap>`
    return Frame(
        name=name if len(name) <= MAX_NAME else name[: MAX_NAME - 3] + "...",
        file=file,
        line=number,
        native=number is None and not python,
    )
