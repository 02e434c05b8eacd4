"""Options every command that talks to Temporal shares: `--address`, `--namespace`,
`--task-queue`, as the `temporal` CLI has them (before or after the subcommand).

A flag beats the environment (`RECOVERY_TEMPORAL_ADDRESS`, `RECOVERY_NAMESPACE`,
`RECOVERY_TASK_QUEUE`), which beats the config file. The flags are applied by setting those
variables for this process: every part of the command (and a worker or dev server it starts)
reads its connection from there already (recovery.settings, client/connection.py).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, MutableMapping

# Flag -> the environment variable it overrides, and its help text.
CONNECTION_FLAGS: dict[str, tuple[str, str]] = {
    "--address": (
        "RECOVERY_TEMPORAL_ADDRESS",
        "Temporal frontend HOST:PORT (default: $RECOVERY_TEMPORAL_ADDRESS, else 127.0.0.1:7233)",
    ),
    "--namespace": ("RECOVERY_NAMESPACE", "Temporal namespace (default: $RECOVERY_NAMESPACE, else default)"),
    "--task-queue": ("RECOVERY_TASK_QUEUE", "Temporal task queue (default: $RECOVERY_TASK_QUEUE, else recovery)"),
}

# The commands that talk to Temporal. The others (cluster, diagnose, signatures, ...) do not.
CLIENT_COMMANDS = frozenset(
    {
        "submit",
        "list",
        "status",
        "logs",
        "pause",
        "resume",
        "cancel",
        "release",
        "nodes",
        "worker",
        "demo",
        "dev-server",
    }
)


class OptionError(ValueError):
    """A connection flag given an unusable value; the message is one line."""


def add_connection_options(
    parser: argparse.ArgumentParser, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
) -> None:
    """Give the top-level parser and every client command (and their own subcommands) the flags.

    Below the top level the flags default to SUPPRESS: a subcommand's default would otherwise
    overwrite `recovery --address X list` (argparse copies subparser defaults over the parent's).
    """
    _add(parser, None)
    for name, command in subparsers.choices.items():
        if name in CLIENT_COMMANDS:
            for each in _with_subcommands(command):
                _add(each, argparse.SUPPRESS)


def _add(parser: argparse.ArgumentParser, default: str | None) -> None:
    group = parser.add_argument_group("Temporal connection")
    for flag, (_, text) in CONNECTION_FLAGS.items():
        group.add_argument(flag, metavar=flag[2:].replace("-", "_").upper(), default=default, help=text)


def _with_subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _with_subcommands(child)


def apply_connection_options(args: argparse.Namespace, environ: MutableMapping[str, str] | None = None) -> None:
    """Export the flags given on the command line over the environment (OptionError if empty)."""
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    for flag, (variable, _) in CONNECTION_FLAGS.items():
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is None:
            continue
        if not value.strip():
            raise OptionError(f"{flag} needs a value")
        env[variable] = value.strip()


def whole_number(flag: str, value: str, minimum: int, expected: str) -> int:
    """An option's whole-number value, at least `minimum`; OptionError (one line) otherwise."""
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"{flag} {value!r}: expected {expected}") from None
    if number < minimum:
        raise OptionError(f"{flag} {value!r}: expected at least {minimum}")
    return number
