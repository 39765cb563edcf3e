"""`fpgasim cache info|clear`: inspect or empty the result cache of `fpgasim sweep`."""

from __future__ import annotations

from pathlib import Path

import typer

from fpgasim.cli.common import console, csv_text, dumps_json
from fpgasim.cli.options import OutputFormat, format_option, json_option, resolve_format
from fpgasim.cli.sweep_options import cache_dir_option, cache_limit_option
from fpgasim.sweep import SweepCache

cache_app = typer.Typer(
    name="cache",
    help="Inspect or empty the sweep result cache ($FPGASIM_CACHE_DIR, else ~/.cache/fpgasim).",
    no_args_is_help=True,
    add_completion=False,
)

CACHE_DIR_HELP = "Cache folder (default: $FPGASIM_CACHE_DIR, else ~/.cache/fpgasim)."


@cache_app.command("info")
def info(
    cache_dir: Path | None = cache_dir_option(CACHE_DIR_HELP),
    cache_limit_mb: int | None = cache_limit_option(),
    chosen: OutputFormat = format_option(OutputFormat.table, "Output: table (text), json or "
                                         "csv (one row; points per engine as JSON)."),
    as_json: bool = json_option(),
) -> None:
    """Where the cache is, its rows (per engine), size on disk, size limit and eviction policy."""
    fmt = resolve_format(chosen, as_json)
    cache = SweepCache(cache_dir, cache_limit_mb)
    try:
        facts = cache.info()
    finally:
        cache.close()
    row = {
        "path": str(facts.path),
        "points": facts.points,
        "size_bytes": facts.size_bytes,
        "row_bytes": facts.row_bytes,
        "limit_bytes": facts.limit_bytes,
        "policy": facts.policy,
        "by_engine": facts.by_engine,
    }
    if fmt is OutputFormat.json:
        print(dumps_json(row))
        return
    if fmt is OutputFormat.csv:
        print(csv_text([row]), end="")
        return
    engines = ", ".join(f"{k}: {v}" for k, v in facts.by_engine.items()) or "none"
    lines = [
        f"cache: {facts.path}",
        f"points: {facts.points} ({engines})",
        f"size: {facts.size_bytes / 2**20:.2f} MiB on disk, {facts.row_bytes / 2**20:.2f} MiB "
        f"of rows; limit: {facts.limit_bytes / 2**20:g} MiB of rows",
        f"policy: {facts.policy}",
    ]
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


@cache_app.command("clear")
def clear(cache_dir: Path | None = cache_dir_option(CACHE_DIR_HELP)) -> None:
    """Delete every cached point."""
    cache = SweepCache(cache_dir)
    removed = cache.clear()
    console.print(
        f"removed {removed} points from {cache.directory}", highlight=False, soft_wrap=True
    )
