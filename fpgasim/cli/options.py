"""Options shared by several commands, defined once, and the checks of their values.

Each factory returns a fresh `typer.Option` that keeps the flag, its short name, its range
and (where commands agree) its help the same in every command; arguments carry what
differs between commands, usually the help text. The output-format enums live here too:
their member order is the order `--help` lists the choices in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from fpgasim.cli.common import parse_int_list
from fpgasim.engine import DEFAULT_ENGINE
from fpgasim.errors import InputError
from fpgasim.sweep import DEFAULT_EXECUTOR, EXECUTORS, SweepCache

#: Largest context length L an argument accepts.
MAX_CONTEXT = 10_000_000


# ---------------------------------------------------------------- output formats


class JsonTable(StrEnum):
    """--format json|table."""

    json = "json"
    table = "table"


class TableJsonCsv(StrEnum):
    """--format table|json|csv."""

    table = "table"
    json = "json"
    csv = "csv"


class TableCsvJson(StrEnum):
    """--format table|csv|json."""

    table = "table"
    csv = "csv"
    json = "json"


class JsonTableMarkdown(StrEnum):
    """--format json|table|markdown."""

    json = "json"
    table = "table"
    markdown = "markdown"


class TableMdCsv(StrEnum):
    """--format table|md|csv."""

    table = "table"
    md = "md"
    csv = "csv"


def format_option(default: StrEnum, help_text: str) -> Any:
    """--format/-f: one of the enums above, `default` when not given."""
    return typer.Option(default, "--format", "-f", help=help_text)


def json_option(help_text: str) -> Any:
    """--json: a flag that prints JSON instead of the human-readable output."""
    return typer.Option(False, "--json", help=help_text)


# ---------------------------------------------------------------- inputs


def board_option(help_text: str = "Board name (see `fpgasim boards`) or YAML path.") -> Any:
    """--board/-b (required)."""
    return typer.Option(..., "--board", "-b", help=help_text)


def model_option(example: str | None = None) -> Any:
    """--model/-m (required): a target model name, e.g. `example`, or YAML path."""
    shown = f" (e.g. {example})" if example else ""
    return typer.Option(..., "--model", "-m", help=f"Target model name{shown} or YAML path.")


def algorithm_option(default: Any, help_text: str) -> Any:
    """--algorithm/-a: required when `default` is `...`, else optional (None)."""
    return typer.Option(default, "--algorithm", "-a", help=help_text)


def contexts_option(help_text: str) -> Any:
    """--contexts (required): a list of context lengths; read it with `parse_contexts`."""
    return typer.Option(..., "--contexts", help=help_text)


def parse_contexts(text: str) -> list[int]:
    """The value of --contexts: sorted unique context lengths, each in [1, MAX_CONTEXT]."""
    return parse_int_list(text, "--contexts", 1, MAX_CONTEXT)


def context_option(default: Any, help_text: str, maximum: int | None = MAX_CONTEXT) -> Any:
    """--context/-L: one context length, at least 1 and at most `maximum` (None: no bound)."""
    return typer.Option(default, "--context", "-L", min=1, max=maximum, help=help_text)


def prompt_len_option(default: Any, help_text: str) -> Any:
    """--prompt-len/-P: prompt tokens of a prefill, 1 to MAX_CONTEXT."""
    return typer.Option(default, "--prompt-len", "-P", min=1, max=MAX_CONTEXT, help=help_text)


def accepted_option(help_text: str) -> Any:
    """--accepted: tokens accepted in the last iteration (floor(AAT)), 1 to 4096."""
    return typer.Option(1, "--accepted", min=1, max=4096, help=help_text)


def engine_option(help_text: str = "Engine: analytic, event or fast.") -> Any:
    """--engine/-e: a registered engine, the default engine when not given."""
    return typer.Option(DEFAULT_ENGINE, "--engine", "-e", help=help_text)


def aat_dir_option(help_text: str) -> Any:
    """--aat-dir: measured AAT tables (default None: the embedded acceptance model)."""
    return typer.Option(None, "--aat-dir", help=help_text)


# ---------------------------------------------------------------- outputs


def out_option(default: Any, help_text: str) -> Any:
    """--out/-o: where results are written."""
    return typer.Option(default, "--out", "-o", help=help_text)


def check_writable(out: Path) -> None:
    """Fail before any work when the output's folder cannot be created or written."""
    folder = out.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("--out", str(out), f"a writable path ({exc.strerror})") from None
    if out.is_dir():
        raise InputError("--out", str(out), "a file path, not a folder")
    if not os.access(folder, os.W_OK):
        raise InputError("--out", str(out), f"a path in a writable folder ({folder})")


def plot_option(help_text: str) -> Any:
    """--plot: a PNG figure to write (default None: no figure); check it with `check_png`."""
    return typer.Option(None, "--plot", help=help_text)


def check_png(path: Path | None) -> None:
    """The --plot file, when given, must end in .png."""
    if path is not None and path.suffix.lower() != ".png":
        raise InputError("--plot", str(path), "a file ending in .png")


# ---------------------------------------------------------------- executors and the cache


def executor_option(help_text: str) -> Any:
    """--executor: where sweep points run (a name of the EXECUTORS registry)."""
    return typer.Option(DEFAULT_EXECUTOR, "--executor", help=help_text)


def workers_option() -> Any:
    """--workers: worker processes, 1 to 4096 (default: all cores)."""
    return typer.Option(
        None, "--workers", min=1, max=4096, help="Worker processes (default: all cores)."
    )


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


@contextmanager
def open_cache(cache_dir: Path | None, no_cache: bool) -> Iterator[SweepCache | None]:
    """The result cache at `cache_dir` (None with --no-cache), closed on the way out.

    The cache connects on first use, as the runner reads it, not here.
    """
    cache = None if no_cache else SweepCache(cache_dir)
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()
