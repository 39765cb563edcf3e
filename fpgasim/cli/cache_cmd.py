"""`fpgasim cache info|clear`: inspect or empty the result cache of `fpgasim sweep`."""

from __future__ import annotations

from pathlib import Path

import typer

from fpgasim.cli.common import console, dumps_json
from fpgasim.cli.options import cache_dir_option, json_option
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
    as_json: bool = json_option("Print JSON instead of text."),
) -> None:
    """Where the cache is, how many points it holds (per engine) and its size on disk."""
    cache = SweepCache(cache_dir)
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
                    "by_engine": facts.by_engine,
                }
            )
        )
        return
    engines = ", ".join(f"{k}: {v}" for k, v in facts.by_engine.items()) or "none"
    console.print(f"cache: {facts.path}", highlight=False, soft_wrap=True)
    console.print(
        f"points: {facts.points} ({engines}); size: {facts.size_bytes / 2**20:.2f} MiB",
        highlight=False,
        soft_wrap=True,
    )


@cache_app.command("clear")
def clear(cache_dir: Path | None = cache_dir_option(CACHE_DIR_HELP)) -> None:
    """Delete every cached point."""
    cache = SweepCache(cache_dir)
    removed = cache.clear()
    console.print(
        f"removed {removed} points from {cache.directory}", highlight=False, soft_wrap=True
    )
