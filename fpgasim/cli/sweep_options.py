"""Options of the commands that run sweeps: the executor and the result cache.

Apart from `options.py` because they need `fpgasim.sweep` (and so pandas), which commands
that run one point, like `simulate`, do not import.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from fpgasim.errors import InputError
from fpgasim.sweep import DEFAULT_EXECUTOR, EXECUTORS, SweepCache
from fpgasim.sweep.cache import DEFAULT_LIMIT_MB, LIMIT_ENV, MAX_LIMIT_MB


def executor_option(help_text: str) -> Any:
    """--executor: where sweep points run (a name of the EXECUTORS registry)."""
    return typer.Option(DEFAULT_EXECUTOR, "--executor", help=help_text)


def scheduler_option(help_text: str) -> Any:
    """--scheduler: a Dask scheduler address (only with --executor dask)."""
    return typer.Option(None, "--scheduler", help=help_text)


def check_executor(executor: str, scheduler: str | None) -> None:
    """--executor must be registered; --scheduler needs --executor dask."""
    if executor not in EXECUTORS:
        raise InputError("--executor", executor, f"one of {', '.join(EXECUTORS)}")
    if scheduler and executor != "dask":
        raise InputError("--scheduler", scheduler, "only with --executor dask")


def cache_dir_option(help_text: str) -> Any:
    """--cache-dir: the result cache folder (default None: $FPGASIM_CACHE_DIR, else ~/.cache)."""
    return typer.Option(None, "--cache-dir", help=help_text)


def no_cache_option() -> Any:
    """--no-cache: neither read nor write the result cache."""
    return typer.Option(False, "--no-cache", help="Neither read nor write the result cache.")


def cache_limit_option() -> Any:
    """--cache-limit-mb: the cache's size limit (default $FPGASIM_CACHE_LIMIT_MB, else 1024)."""
    return typer.Option(
        None,
        "--cache-limit-mb",
        min=1,
        max=MAX_LIMIT_MB,
        help=f"Result cache size limit in MiB of stored rows; least recently used rows are evicted (default: ${LIMIT_ENV}, else {DEFAULT_LIMIT_MB}).",
    )


@contextmanager
def open_cache(
    cache_dir: Path | None, no_cache: bool, limit_mb: float | None = None
) -> Iterator[SweepCache | None]:
    """The result cache at `cache_dir` (None with --no-cache), closed on the way out.

    The cache connects on first use, as the runner reads it; its folder is checked here.
    """
    if no_cache:  # a cache option beside --no-cache would be ignored without a word
        for flag, value in (("--cache-dir", cache_dir), ("--cache-limit-mb", limit_mb)):
            if value is not None:
                raise InputError(flag, str(value), "not with --no-cache (no cache is used)")
    cache = None if no_cache else SweepCache(cache_dir, limit_mb)
    if cache is not None:
        cache.check_layout()
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()
