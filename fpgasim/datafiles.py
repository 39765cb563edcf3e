"""Data tables (CSV, Parquet) read within stated limits, sizes checked before reading.

A table's cost in memory is its rows times its columns, not its size on disk: a Parquet
file of 1.4 MB can hold 200 million nulls (RLE-encoded), which pandas expands to gigabytes.
`read_table` is the one reader of the AAT tables, the per-x tree tables and the acceptance
traces: it checks the file's bytes, then its rows and cells (and, for Parquet, the
uncompressed bytes), from the Parquet footer or by counting a CSV's lines, and only then
reads it. Every refusal is one `ConfigError` naming the file, what was counted and the
limit; a file or folder the OS refuses is named with the OS's reason.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpgasim.errors import ConfigError

if TYPE_CHECKING:  # pandas is imported by the readers that build frames
    import pandas as pd

#: Largest table file read (bytes on disk).
MAX_FILE_BYTES = 256 << 20
#: Most rows of one table (ten million: a trace of as many iterations, docs/trees.md).
MAX_ROWS = 10_000_000
#: Most cells (rows x columns) of one table: about 60 bytes each once read as text by
#: pandas, so about 1.2 GB at most.
MAX_CELLS = 20_000_000
#: Most bytes a Parquet table holds once decompressed (its footer says).
MAX_PARQUET_BYTES = 1 << 30
#: Bytes read at a time when counting a CSV's lines.
_BLOCK = 1 << 20


def read_table(path: Path, what: str, **csv_options: Any) -> pd.DataFrame:
    """A CSV (read with `csv_options`) or Parquet table, after its bytes, rows and cells are
    checked against the limits above; `what` ("AAT table", "trace file") says what the
    file must be in an error."""
    import pandas as pd

    path = Path(path)
    parquet = path.suffix.lower() in (".parquet", ".pq")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(str(path), "file", f"{size} bytes", f"at most {MAX_FILE_BYTES} bytes")
        with path.open("rb") as handle:
            if parquet:
                _check_parquet(path, handle)
                handle.seek(0)
                return pd.read_parquet(handle)
            _check_csv(path, handle)
            handle.seek(0)
            return pd.read_csv(handle, **csv_options)
    except pd.errors.EmptyDataError:
        raise ConfigError(str(path), "file", "empty file", f"a header line and rows ({what})") \
            from None
    except (UnicodeDecodeError, pd.errors.ParserError, csv.Error) as exc:
        problem = " ".join(str(exc).split())[:120]
        raise ConfigError(str(path), "file", problem, f"a comma-separated UTF-8 {what}") \
            from None
    except OSError as exc:
        raise ConfigError(str(path), "file", str(path), f"a readable {what} "
                          f"({exc.strerror or type(exc).__name__})") from None
    except ValueError as exc:  # pyarrow's ArrowInvalid is a ValueError
        problem = " ".join(str(exc).split())[:120]
        kind = "Parquet" if parquet else "CSV"
        raise ConfigError(str(path), "file", problem, f"a readable {kind} {what}") from None


def _check_parquet(path: Path, handle: io.BufferedReader) -> None:
    """Rows, cells and uncompressed bytes from the Parquet footer, nothing else read."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(handle).metadata
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    check_shape(path, meta.num_rows, meta.num_columns)
    if unpacked > MAX_PARQUET_BYTES:
        raise ConfigError(str(path), "uncompressed bytes", unpacked,
                          f"at most {MAX_PARQUET_BYTES} (checked from the file's metadata "
                          "before reading)")


def _check_csv(path: Path, handle: io.BufferedReader) -> None:
    """Rows (lines after the header: quoted line breaks count too, so an upper bound) and
    columns (the header's fields) of a CSV file, counted without parsing it."""
    header = handle.readline(_BLOCK)
    try:
        columns = len(next(csv.reader([header.decode("utf-8", "replace")]), [])) or 1
    except csv.Error:  # a lone carriage return or NUL: the reader below names the problem
        columns = header.count(b",") + 1
    breaks, last = header.count(b"\n"), header[-1:]
    while block := handle.read(_BLOCK):
        breaks += block.count(b"\n")
        last = block[-1:]
    lines = breaks + (last not in (b"\n", b""))  # a last line without its line break
    check_shape(path, max(0, lines - 1), columns)


def check_shape(path: Path, rows: int, columns: int) -> None:
    """Refuse a table of more than MAX_ROWS rows or MAX_CELLS cells, before reading it."""
    if rows > MAX_ROWS:
        raise ConfigError(str(path), "rows", rows, f"at most {MAX_ROWS} rows (checked "
                          "before reading)")
    if rows * columns > MAX_CELLS:
        raise ConfigError(str(path), "cells", rows * columns, f"at most {MAX_CELLS} cells "
                          f"({rows} rows x {columns} columns; checked before reading)")


def folder_entries(folder: Path, argument: str = "") -> list[Path]:
    """The entries of a folder, sorted; a folder the OS will not list is a ConfigError
    naming it with the OS's reason (`Path.iterdir` and `rglob` raise or skip it)."""
    try:
        return sorted(folder.iterdir())
    except OSError as exc:
        raise ConfigError(str(folder), "folder", str(folder), f"a readable folder "
                          f"({exc.strerror or type(exc).__name__})", argument=argument) \
            from None
