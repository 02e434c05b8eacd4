"""structlog set-up: JSON lines when not on a terminal (services), readable lines on one.

The standard library's logging (the Temporal SDK's own messages) goes through the same
processors, so a service writes nothing but JSON lines, and lines logged while an activity runs
carry its `activity`, `run_id`, `attempt` and `job_id` (bound by `worker.activity_context`).
"""

from __future__ import annotations

import io
import logging
import sys
from typing import TextIO, cast

import structlog

from recovery.client.console import colour_wanted

SHARED: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


class _CurrentStderr(io.TextIOBase):
    """`sys.stderr` as it is when a line is written, not as it was when logging was set up: the
    CLI sets logging up on every call, and a caller that swaps stderr (a test's capture, a
    program embedding the CLI) may close the one it swapped in."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


STDERR = cast(TextIO, _CurrentStderr())


def configure(level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor = (
        # structlog colours a terminal even with NO_COLOR set: we decide, as for every output.
        structlog.dev.ConsoleRenderer(colors=colour_wanted(sys.stderr))
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[*SHARED, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=STDERR),
        cache_logger_on_first_use=True,
    )
    _route_stdlib(level, renderer)


def _route_stdlib(level: int, renderer: structlog.types.Processor) -> None:
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*SHARED, structlog.stdlib.add_logger_name],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(STDERR)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
