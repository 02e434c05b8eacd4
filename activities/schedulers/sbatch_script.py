"""What a batch script asks of sbatch, read as sbatch reads it: only the leading block of
`#SBATCH` lines counts (it ends at the first line that is neither a comment nor blank), each
line holds one or more options split like a shell would, and a later option wins.

    option(script, "--nodes", "-N")     # "2-4" for `#SBATCH --nodes=2-4`, None when absent
"""

from __future__ import annotations

import re
import shlex

_DIRECTIVE = re.compile(r"^#SBATCH\s+(.*)$")
_MIN_NODES = re.compile(r"^(\d+)(?:[-:]\d+)?$")


def directives(script: str) -> list[str]:
    """Every option word of the leading `#SBATCH` block, in order."""
    words: list[str] = []
    lines = script.splitlines()
    for line in lines[1:] if script.startswith("#!") else lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if match := _DIRECTIVE.match(stripped):
            words += _split(match.group(1))
    return words


def option(script: str, long: str, short: str | None = None) -> str | None:
    """The value of the last `--long=V`, `--long V`, `-sV` or `-s V` among the directives."""
    words, found = directives(script), None
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else None
        if word.startswith(f"{long}="):
            found = word.removeprefix(f"{long}=")
        elif word == long or (short is not None and word == short):
            found = following if following is not None else found
        elif short is not None and word.startswith(short) and not word.startswith("--"):
            found = word.removeprefix(short).removeprefix("=")
    return found


def min_nodes(script: str) -> int | None:
    """The node count the script asks for (the minimum of a `2-4` range)."""
    value = option(script, "--nodes", "-N")
    match = _MIN_NODES.match(value.strip()) if value else None
    return int(match.group(1)) if match else None


def _split(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote: sbatch would complain; read the plain words
        words = text.split()
    # A `#` word starts a remark (`#SBATCH -N 2   # two nodes`).
    return next((words[:i] for i, w in enumerate(words) if w.startswith("#")), words)
