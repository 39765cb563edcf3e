"""`fpgasim sweep`: a grid of points to CSV or Parquet, on an executor, through the cache."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from fpgasim.cli.common import console, err_console, parse_int_list, parse_name_list
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import DEFAULT_ENGINE
from fpgasim.errors import InputError
from fpgasim.fileio import check_out_path, write_frame
from fpgasim.sweep import DEFAULT_EXECUTOR, EXECUTORS, Grid, SweepCache, run_sweep
from fpgasim.sweep.runner import engine_version


class RichProgress:
    """A transient rich progress bar on stderr (a terminal only), started when workers are up."""

    def __init__(self, description: str) -> None:
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

    def start(self, total: int, done: int) -> None:
        self.task = self.bar.add_task(self.description, total=total, completed=done)
        if self.shown:
            self.bar.start()

    def advance(self, points: int) -> None:
        self.bar.advance(self.task, points)

    def stop(self) -> None:
        if self.shown:
            self.bar.stop()


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


def sweep(
    board: str = typer.Option(
        ..., "--board", "-b", help="Board name(s), comma separated, or YAML paths."
    ),
    model: str = typer.Option(..., "--model", "-m", help="Target model name or YAML path."),
    contexts: str = typer.Option(
        ..., "--contexts", help="Context lengths, e.g. 128,256,1024 or 128-256."
    ),
    verify_lens: str = typer.Option(
        "1-85", "--verify-lens", help="Verification lengths x, e.g. 1-85 or 1,2,4,8."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Output file; .csv or .parquet decides the format."
    ),
    algorithm: str | None = typer.Option(
        None, "--algorithm", "-a", help="SD algorithm whose draft phase is costed for every x >= 2."
    ),
    tree_method: str = typer.Option(
        "optimal",
        "--tree-method",
        help="Tree of x-1 nodes per x: optimal (best tree under the algorithm's embedded acceptance model; EAGLE-3: a depth/top-k holding it), width (breadth-first fill of the maximal tree) or depth (round-robin over levels); with width/depth EAGLE-3 uses depth=min(default, x-1), top-k=min(default, x-1).",
    ),
    accepted: int = typer.Option(
        1,
        "--accepted",
        min=1,
        max=4096,
        help="Tokens accepted in the last iteration (floor(AAT)) for the first draft pass.",
    ),
    engine: str = typer.Option(
        DEFAULT_ENGINE, "--engine", "-e", help="Engine: analytic, event or fast."
    ),
    executor: str = typer.Option(
        DEFAULT_EXECUTOR,
        "--executor",
        help=f"Where points run: {', '.join(EXECUTORS)} (process: a local pool, one worker per core; dask: --scheduler, else a LocalCluster).",
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=1, max=4096, help="Worker processes (default: all cores)."
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (--executor dask).",
    ),
    chunk_size: int | None = typer.Option(
        None,
        "--chunk-size",
        min=1,
        max=100_000,
        help="Points per task (default: about 4 tasks per worker, at most 256 points each).",
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        help="Result cache folder (default: $FPGASIM_CACHE_DIR, else ~/.cache/fpgasim).",
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Neither read nor write the result cache."
    ),
) -> None:
    """Simulate every (board, context, x) point and write one row per point.

    Every row carries its inputs (board, model, algorithm, context, verify_len, engine,
    tree, accepted) followed by verify timing and, with --algorithm, draft timing.
    """
    check_out_path(out)
    check_writable(out)
    if executor not in EXECUTORS:
        raise InputError("--executor", executor, f"one of {', '.join(EXECUTORS)}")
    if scheduler and executor != "dask":
        raise InputError("--scheduler", scheduler, "only with --executor dask")
    engine_version(engine)  # unknown engine: fail before loading anything
    boards = [load_board(b) for b in parse_name_list(board)]
    if not boards:
        raise InputError("--board", board, "at least one board name or YAML path")
    m = load_model(model)
    algo = load_algorithm(algorithm) if algorithm else None
    grid = Grid(
        boards=boards,
        model=m,
        contexts=parse_int_list(contexts, "--contexts", 1, 10_000_000),
        verify_lens=parse_int_list(verify_lens, "--verify-lens", 1, 65536),
        algorithm=algo,
        tree_method=tree_method,
        accepted=accepted,
    )
    progress = RichProgress(f"sweep ({engine}, {executor})")
    cache = None if no_cache else SweepCache(cache_dir)
    try:
        result = run_sweep(
            grid,
            engine,
            executor,
            workers=workers,
            scheduler=scheduler,
            cache=cache,
            chunk_size=chunk_size,
            progress=progress,
        )
    finally:
        progress.stop()
        if cache is not None:
            cache.close()
    try:
        write_frame(result.frame, out)
    except OSError as exc:
        raise InputError("--out", str(out), f"a writable path ({exc.strerror})") from None
    err_console.print(result.stats.summary(), highlight=False, soft_wrap=True)
    console.print(f"wrote {len(result.frame)} rows to {out}", highlight=False, soft_wrap=True)
