"""Acceptance traces: the accepted path of each SD iteration, and their CSV/Parquet file format.

File format (CSV or Parquet, one row per draft/verify iteration; docs/trees.md):

- `ranks` (required): sibling ranks of the accepted draft tokens from the root down,
  space separated. `0 2 0` = the root's rank-0 child, then its rank-2 child, then that
  node's rank-0 child were accepted; empty = no draft token accepted (only the bonus
  token). Parquet may also hold a list of ints.
- `context` (optional): context length of the iteration; `--context` keeps matching rows.
- any other column (`iteration`, `task`, `model`, ...) is ignored.

Ranks are the drafter's candidate order under each node (0 = most likely). A path ends
where the target rejected every drafted child or where the logging tree had no deeper node.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fpgasim.datafiles import read_table
from fpgasim.errors import ConfigError
from fpgasim.fileio import write_frame

if TYPE_CHECKING:  # pandas (0.3-0.7 s to import) only when a trace file is read or written:
    import pandas as pd  # every command touching fpgasim.tree would pay for it otherwise

#: Deepest path and largest rank a trace file may hold.
MAX_DEPTH = 64
MAX_RANK = 4096
MAX_ROWS = 10**7


@dataclass(frozen=True, eq=False)
class Traces:
    """Accepted rank paths: ranks[i, d] = rank accepted at depth d+1 in iteration i, else -1."""

    ranks: np.ndarray

    @property
    def iterations(self) -> int:
        """Number of logged iterations (rows of `ranks`)."""
        return int(self.ranks.shape[0])

    @property
    def accepted(self) -> np.ndarray:
        """Accepted tokens per iteration, bonus included."""
        return 1 + (self.ranks >= 0).sum(axis=1)

    def mean_aat(self) -> float:
        """Mean accepted tokens per iteration in the tree the traces were logged with."""
        return float(self.accepted.mean())

    def to_frame(self) -> pd.DataFrame:
        """One row per iteration: `iteration`, `ranks` (space-separated text)."""
        import pandas as pd

        text = [" ".join(str(int(r)) for r in row if r >= 0) for row in self.ranks]
        return pd.DataFrame({"iteration": np.arange(self.iterations), "ranks": text})


def traces_from_paths(paths: list[list[int]], source: str = "traces") -> Traces:
    """Traces from a list of rank paths."""
    depth = max((len(p) for p in paths), default=0)
    if depth > MAX_DEPTH:
        raise ConfigError(source, "ranks", f"a path of {depth} tokens", f"at most {MAX_DEPTH}")
    ranks = np.full((len(paths), max(depth, 1)), -1, dtype=np.int16)
    for i, path in enumerate(paths):
        if path:
            ranks[i, : len(path)] = path
    return Traces(ranks)


def load_traces(path: Path, context: int | None = None) -> Traces:
    """Read a trace file (.csv, .parquet); every problem is a ConfigError naming the row."""
    import pandas as pd

    source = str(path)
    frame = _read_frame(Path(path))
    if "ranks" not in frame.columns:
        cols = ", ".join(map(str, frame.columns)) or "none"
        raise ConfigError(
            source, "ranks", f"columns: {cols}", "a `ranks` column (see docs/trees.md)"
        )
    if context is not None:
        if "context" not in frame.columns:
            raise ConfigError(source, "context", None, "a context column to filter by `context`")
        frame = frame[pd.to_numeric(frame["context"], errors="coerce") == context]
        if frame.empty:
            raise ConfigError(source, "context", context, "rows with this context (none found)")
    if frame.empty:
        raise ConfigError(source, "ranks", "no rows", "at least one iteration")
    if len(frame) > MAX_ROWS:
        raise ConfigError(source, "rows", len(frame), f"at most {MAX_ROWS} iterations")
    paths = [_parse_path(v, source, i) for i, v in enumerate(frame["ranks"].tolist())]
    return traces_from_paths(paths, source)


def write_traces(traces: Traces, path: Path) -> None:
    """Write traces in the documented format (.csv or .parquet)."""
    write_frame(traces.to_frame(), Path(path))


def _read_frame(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".parquet", ".pq"}:
        raise ConfigError(str(path), "file", path.name, "a .csv or .parquet trace file")
    if not path.is_file():
        raise ConfigError(str(path), "file", str(path), "file not found")
    return read_table(path, "trace file", dtype={"ranks": str}, keep_default_na=False)


def _parse_path(value: object, source: str, row: int) -> list[int]:
    field = f"row {row + 1}.ranks"
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        parts = value.replace(",", " ").split()
    elif isinstance(value, list | tuple | np.ndarray):
        parts = list(value)
    else:
        parts = [value]
    try:
        ranks = [int(p) for p in parts]
        if any(float(p) != int(p) for p in parts):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(source, field, value, "whole-number ranks, e.g. '0 2 0'") from None
    if any(r < 0 or r > MAX_RANK for r in ranks):
        raise ConfigError(source, field, value, f"ranks between 0 and {MAX_RANK}")
    if len(ranks) > MAX_DEPTH:
        raise ConfigError(source, field, value, f"at most {MAX_DEPTH} accepted tokens")
    return ranks
