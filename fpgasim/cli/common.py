"""Shared CLI helpers: consoles, tables, JSON, the progress bar (list parsers: options.py)."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleDimensions
from rich.table import Table

from fpgasim.cli.options import parse_int_list, parse_name_list  # noqa: F401 (re-exported)
from fpgasim.errors import printable
from fpgasim.fileio import after_commit, json_text

if TYPE_CHECKING:  # pandas (0.3-0.7 s) is imported by the commands that build frames
    import pandas as pd

#: The width of output to a pipe or a file: tables are data there, never squeezed.
PIPED_WIDTH = 10_000
#: The narrowest terminal a table is fitted to; a COLUMNS below it (0, negative, not a
#: number) is ignored for the terminal's own size, else 80.
MIN_WIDTH = 20
#: The narrowest a table column gets on a narrow screen (its cells fold onto more lines).
MIN_COLUMN_WIDTH = 6


class OutputConsole(Console):
    """rich's Console, sized for where its output goes: a terminal's width (a nonsense
    COLUMNS ignored: COLUMNS=0 printed nothing), or `PIPED_WIDTH` for a pipe or a file,
    so `fpgasim boards | cat` holds the same numbers as the screen.

    Every text it prints is data: names read from files and paths reach it (a model id
    from a folder's name, a board's `name:`), so no markup (`[/]` in a name raised
    MarkupError, `[bold]` vanished), no emoji codes, and control characters escaped
    (`errors.printable`; line breaks and tabs kept) in every string it renders: lines,
    table cells and titles."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Any:
        """rich's Text of `text`, its control characters but line breaks and tabs escaped
        first."""
        return super().render_str(printable(text, keep_lines=True), **kwargs)

    @property
    def size(self) -> ConsoleDimensions:
        """(width, height) of the output, decided at each print (the stream may change)."""
        if not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, 25)
        width, height = Console.size.fget(self)
        if width < MIN_WIDTH:
            try:
                width = os.get_terminal_size(self.file.fileno()).columns
            except (AttributeError, ValueError, OSError):
                width = 0
            width = width if width >= MIN_WIDTH else 80
        return ConsoleDimensions(width, height)

    def print(self, *objects: Any, crop: bool = False, **kwargs: Any) -> None:
        """rich's print, but lines wider than the screen are not cut (`crop`): a table
        whose columns cannot narrow further runs past the edge and the terminal wraps it."""
        super().print(*objects, crop=crop, **kwargs)


console = OutputConsole()
err_console = OutputConsole(stderr=True)


#: The tree notation, printed under a table that shows a LongSpec/Falcon tree ending in 0.
TRAILING_ZERO = (
    "tree '1 0': draft nodes per level below the root; a trailing 0 is a level the drafter "
    "drafted and the tree kept none of (one more draft pass than '1'; docs/formats.md, "
    '"Tree notation")'
)


def wide_console() -> Console:
    """The shared console (it never squeezes a table written to a pipe or a file)."""
    return console


def rich_table(
    rows: list[dict],
    title: str | None = None,
    columns: list[str] | None = None,
    floatfmt: str = "{:.4g}",
) -> Table:
    """A rich Table from a list of dicts."""
    columns = columns or (list(rows[0]) if rows else [])
    table = Table(title=title)
    for c in columns:  # a cell too wide for the screen folds onto more lines, never cut
        justify = "right" if rows and _is_num(rows[0].get(c)) else "left"
        table.add_column(c, justify=justify, overflow="fold", min_width=MIN_COLUMN_WIDTH)
    for r in rows:
        table.add_row(*[_fmt(r.get(c), floatfmt) for c in columns])
    return table


def _is_num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _fmt(v, floatfmt: str) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return floatfmt.format(v)
    return str(v)


def report_written(line: str, to: Console | None = None) -> None:
    """Say what was written ("wrote ... to FILE") once the files are (`after_commit`), on
    `to` (default: stdout): as plain text with control characters escaped, so neither
    rich markup nor a file name's escape bytes can change or break the line."""
    out = to or console
    after_commit(functools.partial(out.print, printable(line), markup=False, highlight=False,
                                   soft_wrap=True))


def dumps_json(obj: object) -> str:
    """The command's JSON output (`fileio.json_text`: numpy values converted, inf and NaN
    refused)."""
    return json_text(obj)


def csv_text(rows: list[dict], columns: list[str] | None = None) -> str:
    """Rows as CSV text, a header of `columns` (default: every key, in first-seen order):
    None as an empty cell, a list as its items joined by spaces (a tree's parents), a
    mapping as JSON. The one CSV writer of the commands that print rows without a frame."""
    import csv
    import io

    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_csv_cell(r.get(c)) for c in columns])
    return out.getvalue()


def _csv_cell(v: object) -> object:
    if v is None:
        return ""
    if isinstance(v, list | tuple):
        return " ".join(map(str, v))
    if isinstance(v, dict):
        return json_text(v, compact=True)
    return v


def json_value(v: object) -> object:
    """A cell with NaN, pd.NA and None as None (valid JSON, an empty rich_table cell)."""
    import pandas as pd  # loaded already by whoever built the cell's frame

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    return v


def json_row(row: dict) -> dict:
    """A row with every missing value as None."""
    return {k: json_value(v) for k, v in row.items()}


def json_records(frame: pd.DataFrame | None) -> list[dict]:
    """Rows as dicts with NaN/NA as None (valid JSON); none for a missing or empty frame."""
    if frame is None or frame.empty:
        return []
    return [json_row(r) for r in frame.to_dict("records")]


class RichProgress:
    """A transient rich progress bar on stderr (a terminal only), started when workers are up.

    As a context manager it stops the bar on the way out.
    """

    def __init__(self, description: str) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.description = description
        self.shown = err_console.is_terminal
        self.bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
        self.task = None

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, total: int, done: int) -> None:
        """Add the task of `total` units, `done` finished; the bar shows on a terminal only."""
        self.task = self.bar.add_task(self.description, total=total, completed=done)
        if self.shown:
            self.bar.start()

    def advance(self, points: int) -> None:
        """Mark `points` more units finished."""
        self.bar.advance(self.task, points)

    def stop(self) -> None:
        """Take the bar down (it is transient: nothing stays on the terminal)."""
        if self.shown:
            self.bar.stop()
