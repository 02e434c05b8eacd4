"""What the command line writes: JSON for scripts, and for people tables and colour, where
colour is used only on a terminal and never when NO_COLOR is set (https://no-color.org)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from pydantic import BaseModel

JSON_HELP = "print the result as one JSON object on stdout"


def print_json(value: Any) -> None:
    """One JSON document on stdout (models as their JSON form)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, list):
        value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    sys.stdout.write(json.dumps(value) + "\n")


WIDE = 10_000  # not a terminal: one row a line, whatever its length, for grep and scripts
GAP = 2  # spaces between columns
FIT_MIN = 10  # the narrowest a `fit` column gets on a narrow terminal (then the rows wrap)


@dataclass(frozen=True)
class Column:
    """A table column. `fit` marks the one column that gives way, cut with an ellipsis, when the
    table is wider than the terminal; the others keep their width."""

    header: str
    fit: bool = False
    style: Callable[[str], str | None] = field(default=lambda _cell: None)  # a rich style by value


def colour_wanted(stream: TextIO) -> bool:
    """Colour on a terminal only, never with NO_COLOR set to anything (https://no-color.org),
    nor on a dumb terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def terminal_width(stream: TextIO) -> int | None:
    """The terminal's width (COLUMNS first, as shells set it), or None when not a terminal."""
    return shutil.get_terminal_size().columns if stream.isatty() else None


def table(columns: Sequence[Column], rows: Iterable[Sequence[str]], stream: TextIO | None = None) -> str:
    """Rows under a header, columns two spaces apart, sized for `stream` (stdout by default):
    on a terminal the table fits its width and may be coloured; elsewhere it is plain."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = stream or sys.stdout
    colour = colour_wanted(out)
    cells = [list(row) for row in rows]
    widths = _widths(columns, cells, terminal_width(out))
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style="bold" if colour else None)
    for column, width in zip(columns, widths, strict=True):
        grid.add_column(column.header, no_wrap=True, width=width, overflow="ellipsis")
    for row in cells:
        texts = [
            Text(cell, style=c.style(cell) or "", no_wrap=True, overflow="ellipsis")
            for c, cell in zip(columns, row, strict=True)
        ]
        grid.add_row(*texts)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=WIDE,  # the columns are sized already
        force_terminal=colour,
        color_system="standard" if colour else None,
        no_color=not colour,
        highlight=False,
        markup=False,
        emoji=False,
    )
    console.print(grid)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def _widths(columns: Sequence[Column], rows: list[list[str]], terminal: int | None) -> list[int]:
    """Each column as wide as its widest cell; on a terminal too narrow for that, the `fit`
    column takes what the others leave (at least FIT_MIN), and its cells end in an ellipsis."""
    widths = [max([len(c.header), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    if terminal is None:
        return widths
    gaps = GAP * (len(columns) - 1)
    for i, column in enumerate(columns):
        if column.fit:
            rest = sum(widths) - widths[i] + gaps
            widths[i] = min(widths[i], max(terminal - rest, FIT_MIN))
    return widths


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    """`text` in a rich style (`bold red`) where `stream` takes colour; else `text` as it is."""
    if not colour_wanted(stream or sys.stdout):
        return text
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=WIDE)
    console.print(Text(text, style=style), end="")
    return buffer.getvalue()


# Colours by meaning, the same in every command: trouble red, waiting yellow, fine green.
SYMPTOM_STYLES = {"crash": "red", "hang": "yellow", "straggler": "magenta", "none": "green"}
