"""Write a reproduced experiment: NAME.csv (full precision), NAME.md, NAME.png (figures).

Markdown and the terminal table show floats to 4 significant digits; the CSV keeps every
digit (golden tests compare it with a 1e-9 relative tolerance).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd

from fpgasim.fileio import atomic_write_bytes
from fpgasim.reproduce.experiment_runner import ExperimentResult
from fpgasim.reproduce.kind import experiment_kind

FLOAT_FMT = "{:.4g}"


def csv_text(result: ExperimentResult) -> str:
    """The CSV: header and rows, full precision (or the doc table's float format), empty
    cells for missing values."""
    return result.table.to_csv(index=False, lineterminator="\n",
                               float_format=result.float_format)


def cell(value: object) -> str:
    """One value as shown in Markdown and the terminal."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else FLOAT_FMT.format(value)
    return str(value)


def source_line(result: ExperimentResult) -> str:
    """'AAT: ... · engine: ... · lowering: ...' (which source, engines and lowering of the
    boards produced the numbers)."""
    engine = result.engine or "none (no timing)"
    lowering = ""
    if result.engine and "lowering" in result.table.columns:
        names = sorted({str(v) for v in result.table["lowering"].dropna()})
        lowering = f" · lowering: {', '.join(names)}" if names else ""
    if result.sim_engine:
        return (
            f"AAT: {result.aat_source} · engine: {engine} (the study's accounting) beside "
            f"{result.sim_engine} (the cycle-level simulator: NAME_sim columns){lowering}"
        )
    return f"AAT: {result.aat_source} · engine: {engine}{lowering}"


def markdown(result: ExperimentResult, figure_name: str | None = None) -> str:
    """The .md: title, source line, description, table, notes, figure link."""
    out = io.StringIO()
    out.write(f"# {result.name}: {result.title}\n\n")
    out.write(f"{source_line(result)}\n\n")
    if result.description:
        out.write(f"{' '.join(result.description.split())}\n\n")
    if result.doc_block:  # a doc table: the block the doc holds, verbatim
        out.write(f"The table of {result.doc}:\n\n{result.doc_block.rstrip()}\n\n")
    elif result.available:
        out.write(markdown_table(result.table))
        out.write("\n")
    for note in result.notes:
        out.write(f"- {note}\n")
    if result.notes:
        out.write("\n")
    if figure_name:
        out.write(f"![{result.name}]({figure_name})\n")
    return out.getvalue()


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table of a DataFrame (numbers right-aligned)."""
    cols = list(frame.columns)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in cols]
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(
    result: ExperimentResult, out_dir: Path, png_bytes: bytes | None = None
) -> list[Path]:
    """Write NAME.csv, NAME.md and (figures) NAME.png into out_dir; the paths written.

    png_bytes: the figure already drawn (`figure_png`, e.g. on a pool worker); else drawn here.
    """

    out_dir = Path(out_dir)
    written = []
    png = None
    if result.figure:
        png = out_dir / f"{result.name}.png"
        data = png_bytes if png_bytes is not None else figure_png(result)
        if data is not None:
            atomic_write_bytes(png, data)
            written.append(png)
        else:
            png = None
    csv_path = out_dir / f"{result.name}.csv"
    atomic_write_bytes(csv_path, csv_text(result).encode())
    md_path = out_dir / f"{result.name}.md"
    atomic_write_bytes(md_path, markdown(result, png.name if png else None).encode())
    return [csv_path, md_path, *written]


def figure_png(result: ExperimentResult) -> bytes | None:
    """The experiment's figure as PNG bytes (None when its kind draws none). Pure: it can
    run on a pool worker while the next experiment is computed."""

    plot = experiment_kind(result.kind).plot
    if plot is None or not result.figure:
        return None
    fig = plot(result)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()

