"""What the diagnosis makes of a real log excerpt, for the tests built from real lines."""

from __future__ import annotations

from recovery.activities.signatures.diagnosis import LogDiagnoser, LogDiagnosis

# The head of a Python traceback, for an exception line quoted without its frames.
TRACEBACK = 'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n'


def diagnose(text: str, whole: bool = True) -> LogDiagnosis:
    """As `recovery diagnose` reads a finished log (`whole`), or as a run's watch reads a live one."""
    diagnoser = LogDiagnoser(whole=whole)
    diagnoser.feed((text + "\n").encode())
    diagnoser.finish()
    return diagnoser.diagnosis()


def verdict(text: str) -> tuple[str | None, str, bool | None]:
    """The winning signature (the first evidence line's), the category and whether to retry."""
    found = diagnose(text)
    return (found.evidence[0].signature if found.evidence else None, found.category, found.retryable)
