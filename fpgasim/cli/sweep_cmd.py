"""`fpgasim sweep`: a grid of points to CSV or Parquet, with a progress bar."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from fpgasim.cli.common import (
    check_out_path,
    console,
    err_console,
    parse_int_list,
    parse_name_list,
    write_frame,
)
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import DEFAULT_ENGINE, get_engine
from fpgasim.sweep import Grid, run_grid


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
        "width",
        "--tree-method",
        help="Tree of x-1 nodes per x: width (breadth-first fill of the maximal tree) or depth (round-robin over levels). EAGLE-3: depth=min(default, x-1), top-k=min(default, x-1).",
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
) -> None:
    """Simulate every (board, context, x) point and write one row per point.

    Every row carries its inputs (board, model, algorithm, context, verify_len, engine,
    tree, accepted) followed by verify timing and, with --algorithm, draft timing.
    """
    check_out_path(out)
    boards = [load_board(b) for b in parse_name_list(board)]
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
    grid.points()  # validate trees before starting
    eng = get_engine(engine)
    total = len(boards) * len(grid.contexts) * len(grid.verify_lens)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        task = progress.add_task(f"sweep ({engine})", total=total)
        frame = run_grid(eng, grid, on_point=lambda: progress.advance(task))
    write_frame(frame, out)
    console.print(f"wrote {len(frame)} rows to {out}")
