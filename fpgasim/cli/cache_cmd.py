"""`fpgasim cache info|clear`: inspect or empty the result cache of `fpgasim sweep`."""

from __future__ import annotations

from pathlib import Path

import typer

from fpgasim.cli.common import console, dumps_json
from fpgasim.cli.options import json_option
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
    as_json: bool = json_option("Print JSON instead of text."),
) -> None:
    """Where the cache is, its rows (per engine), size on disk, size limit and eviction policy."""
    cache = SweepCache(cache_dir, cache_limit_mb)
    try:
        facts = cache.info()
    finally:
        cache.close()
    if as_json:
        print(
            dumps_json(
                {
                    "path": str(facts.path),
                    "points": facts.points,
                    "size_bytes": facts.size_bytes,
                    "row_bytes": facts.row_bytes,
                    "limit_bytes": facts.limit_bytes,
                    "policy": facts.policy,
                    "by_engine": facts.by_engine,
                }
            )
        )
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
