"""Atomic file output: results are written whole or not at all (a kill never tears a file)."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pandas as pd

from fpgasim.errors import InputError

FRAME_SUFFIXES = {".csv", ".parquet", ".pq"}


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file via a temporary file and rename, so a kill never leaves a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write a DataFrame as CSV or Parquet, chosen by the extension, atomically."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        atomic_write_bytes(path, frame.to_csv(index=False).encode())
    elif suffix in {".parquet", ".pq"}:
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        atomic_write_bytes(path, buf.getvalue())
    else:
        raise InputError("--out", str(path), "a file ending in .csv or .parquet")


def check_out_path(path: Path) -> None:
    """Fail early (before any work) on an output path with an unsupported extension."""
    if path.suffix.lower() not in {".csv", ".parquet", ".pq"}:
        raise InputError("--out", str(path), "a file ending in .csv or .parquet")
