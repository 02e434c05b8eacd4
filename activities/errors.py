"""Scheduler errors become Temporal activity errors here, and nowhere else.

Temporary trouble (the scheduler unreachable) is retried by Temporal with backoff; a refusal is
retried too, because the next try observes the world first and may find the work already done;
only `PermanentActionError` stops the retries at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from temporalio.exceptions import ApplicationError

from recovery.activities import metrics
from recovery.activities.schedulers.base import (
    JobNotFound,
    JobNotRequeueable,
    SchedulerError,
    SchedulerUnavailable,
)


class PermanentActionError(ApplicationError):
    """The action cannot succeed however often it is tried (the job is gone, or refuses).

    `kind` is the error type the workflow sees: `JobNotFound` and `NotRequeueable` send a
    restart down the resubmission path instead of giving up.
    """

    def __init__(self, message: str, kind: str = "PermanentActionError") -> None:
        super().__init__(message, type=kind, non_retryable=True)


@contextmanager
def scheduler_errors() -> Iterator[None]:
    """Translate scheduler errors; each is counted (`recovery_scheduler_errors_total`) first."""
    try:
        yield
    except SchedulerUnavailable as e:
        metrics.scheduler_error("SchedulerUnavailable")
        raise ApplicationError(f"scheduler unavailable: {e}", type="SchedulerUnavailable") from e
    except JobNotFound as e:
        metrics.scheduler_error("JobNotFound")
        raise PermanentActionError(f"job not found: {e}", "JobNotFound") from e
    except JobNotRequeueable as e:
        metrics.scheduler_error("NotRequeueable")
        raise PermanentActionError(f"job cannot be requeued: {e}", "NotRequeueable") from e
    except SchedulerError as e:
        metrics.scheduler_error("SchedulerRefused")
        raise ApplicationError(f"scheduler refused: {e}", type="SchedulerRefused") from e
