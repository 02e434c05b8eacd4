"""The `recovery` argument parser: usage errors are one line with the same prefix as every
other error (`recovery: ...`), naming the subcommand and where its help is."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

PREFIX = "recovery: "
USAGE_ERROR = 2  # as argparse, and as bad input to `diagnose`


class RecoveryParser(argparse.ArgumentParser):
    """argparse prints its usage and `PROG: error: MESSAGE` on two lines; here it is one line.
    Subparsers are made of the same class (argparse uses the parent's type)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.partition(" ")[2]
        where = f"{command}: " if command else ""
        self.exit(USAGE_ERROR, f"{PREFIX}{where}{message} (see `{self.prog} --help`)\n")


def fail(message: str, status: int = 1) -> int:
    """Report an error as the one line every command uses; returns the exit status."""
    print(f"{PREFIX}{message}", file=sys.stderr)
    return status
