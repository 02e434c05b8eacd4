"""Shortening text that is recorded or shown: a cut line ends in an ellipsis, so that a reader
(or a script comparing it with the log) knows the line went on."""

from __future__ import annotations

ELLIPSIS = "\u2026"


def clip(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its start and `…`, `limit` in all."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 0)] + ELLIPSIS
