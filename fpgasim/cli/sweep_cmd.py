"""`fpgasim sweep`: a grid of points to CSV or Parquet, on an executor, through the cache."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer

from fpgasim.cli.common import (
    RichProgress,
    report_written,
)
from fpgasim.cli.options import (
    accepted_option,
    algorithm_option,
    board_option,
    cluster_axes,
    cluster_options,
    contexts_option,
    design_option,
    engine_option,
    fpga_option,
    model_option,
    out_option,
    parse_contexts,
    parse_int_list,
    parse_name_list,
    vary_option,
    workers_option,
)
from fpgasim.cli.sweep_options import (
    cache_dir_option,
    cache_limit_option,
    check_executor,
    executor_option,
    no_cache_option,
    open_cache,
    scheduler_option,
)
from fpgasim.cli.terminal import after_output, warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board import Board
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.loader import source_shown
from fpgasim.config.schema import Algorithm, TargetModel, config_source
from fpgasim.dataflow.lowerings.registry import check_cluster, check_drafter
from fpgasim.errors import InputError
from fpgasim.fileio import check_out_path, write_frame
from fpgasim.simulate import MAX_BATCH, fit_warnings
from fpgasim.sweep import EXECUTORS, Grid, run_sweep
from fpgasim.sweep.grid import check_grid
from fpgasim.sweep.runner import engine_version
from fpgasim.sweep.space import parse_vary
from fpgasim.tree.draft_trees import TREE_METHODS

#: the command's flags, declared once each (the signature lists them one a line)
BOARD_FLAG = board_option("Board name(s), comma separated, or YAML paths; or --fpga with "
                          "--design.")
VARY_FLAG = vary_option(
    "Vary a field of the FPGA or design file: PATH=V1,V2 (repeatable), e.g. "
    "design.mv_lanes=1,2,4; every combination is a board."
)
CONTEXTS_FLAG = contexts_option("Context lengths, e.g. 128,256,1024 or 128-256.")
VERIFY_LENS_FLAG = typer.Option(
    "1-85", "--verify-lens", help="Verification lengths x, e.g. 1-85 or 1,2,4,8."
)
BATCH_FLAG = typer.Option(
    "1", "--batch", help="Batch sizes (requests decoded together), e.g. 1,4,16: one row "
    "per batch (docs/batching.md)."
)
OUT_FLAG = out_option(..., "Output file; .csv or .parquet decides the format.")
ALGORITHM_FLAG = algorithm_option(None, "SD algorithm whose draft phase is costed for every "
                                  "x >= 2.")
TREE_METHOD_FLAG = typer.Option(
    "optimal",
    "--tree-method",
    help="Tree of x-1 nodes per x: optimal (best tree under the algorithm's embedded acceptance model; EAGLE-3: a depth/top-k holding it), width (breadth-first fill of the maximal tree) or depth (round-robin over levels); with width/depth EAGLE-3 uses depth=min(default, x-1), top-k=min(default, x-1).",
)
ACCEPTED_FLAG = accepted_option(
    "Tokens accepted in the last iteration (floor(AAT)) for the first draft pass."
)
EXECUTOR_FLAG = executor_option(
    f"Where points run: {', '.join(EXECUTORS)} (process: a local pool, one worker per core; dask: --scheduler, else a LocalCluster)."
)
SCHEDULER_FLAG = scheduler_option(
    "Dask scheduler address, e.g. tcp://10.0.0.5:8786 (--executor dask)."
)
CHUNK_SIZE_FLAG = typer.Option(
    None,
    "--chunk-size",
    min=1,
    max=100_000,
    help="Points per task (default: about 4 tasks per worker, at most 256 points each).",
)
CACHE_DIR_FLAG = cache_dir_option(
    "Result cache folder (default: $FPGASIM_CACHE_DIR, else ~/.cache/fpgasim)."
)


@cluster_options
def sweep(
    board: str | None = BOARD_FLAG,
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    vary: list[str] = VARY_FLAG,
    model: str = model_option(),
    contexts: str = CONTEXTS_FLAG,
    verify_lens: str = VERIFY_LENS_FLAG,
    batch: str = BATCH_FLAG,
    out: Path = OUT_FLAG,
    algorithm: str | None = ALGORITHM_FLAG,
    tree_method: str = TREE_METHOD_FLAG,
    accepted: int = ACCEPTED_FLAG,
    engine: str = engine_option(),
    executor: str = EXECUTOR_FLAG,
    workers: int | None = workers_option(),
    scheduler: str | None = SCHEDULER_FLAG,
    chunk_size: int | None = CHUNK_SIZE_FLAG,
    cache_dir: Path | None = CACHE_DIR_FLAG,
    no_cache: bool = no_cache_option(),
    cache_limit_mb: int | None = cache_limit_option(),
) -> None:
    """Simulate every (board, context, x) point and write one row per point.

    Every row carries its inputs (board, model, algorithm, context, verify_len, engine,
    tree, accepted) followed by verify timing and, with --algorithm, draft timing.
    """
    check_out_path(out, "--out")
    check_executor(executor, scheduler)
    engine_version(engine)  # unknown engine: fail before loading anything
    grid = _grid(board, fpga, design, vary, model, contexts, verify_lens, batch, algorithm,
                 tree_method, accepted)
    progress = RichProgress(f"sweep ({engine}, {executor})")
    with open_cache(cache_dir, no_cache, cache_limit_mb) as cache, progress:
        result = run_sweep(grid, engine, executor, workers=workers, scheduler=scheduler,
                           cache=cache, chunk_size=chunk_size, progress=progress)
    frame = _with_provenance(result.frame, grid.boards)
    write_frame(frame, out)
    after_output(result.stats.summary())
    report_written(f"wrote {len(frame)} rows to {out}")
    _warn_fit(frame, grid.boards, grid.model, grid.algorithm)


def _grid(board: str | None, fpga: str | None, design: str | None, vary: list[str],
          model: str, contexts: str, verify_lens: str, batch: str, algorithm: str | None,
          tree_method: str, accepted: int) -> Grid:
    """The grid the flags name, every input checked before any work."""
    variation = parse_vary(cluster_axes(vary))
    if tree_method not in TREE_METHODS:  # every value checked, not only where an x >= 2 uses it
        raise InputError("--tree-method", tree_method, f"one of {', '.join(TREE_METHODS)}")
    if algorithm is None:  # the draft-tree options cost nothing without a drafter: say so
        for flag, given, value in (("--tree-method", tree_method != "optimal", tree_method),
                                   ("--accepted", accepted != 1, accepted)):
            if given:
                raise InputError(flag, value, "only with --algorithm (the draft phase)")
    if board is not None and fpga is None and design is None:
        bases = [BoardBase(name) for name in parse_name_list(board, "--board")]
    else:
        bases = [BoardBase(board, fpga, design)]
    ctxs = parse_contexts(contexts)
    lens = parse_int_list(verify_lens, "--verify-lens", 1, 65536)
    batches = parse_int_list(batch, "--batch", 1, MAX_BATCH)
    # the grid's size from its counts, before any board is built
    check_grid(len(bases) * len(variation.combinations()), len(ctxs), len(lens), len(batches))
    boards = [b for base in bases for b in variation.boards(base)]
    m = load_model(model)
    algo = load_algorithm(algorithm) if algorithm else None
    for b in boards:
        check_drafter(b, algo)
        check_cluster(b, m)  # a --vary cluster.* the board's lowering cannot split m over
    grid = Grid(boards=boards, model=m, contexts=ctxs, verify_lens=lens, algorithm=algo,
                tree_method=tree_method, accepted=accepted, batches=batches)
    for point in grid.points() if len(grid.batches) > 1 or grid.batches[0] > 1 else ():
        point.check()  # a batch's inputs, before any work (what does not fit is marked)
    return grid


def _with_provenance(frame: pd.DataFrame, boards: list[Board]) -> pd.DataFrame:
    """The rows with each board's lowering (by the engine), the file it came from and, on a
    cluster, its cluster columns (board names are distinct: Grid refuses two of one name)."""
    frame = frame.copy()
    lowering = {b.name: b.lowering for b in boards}
    frame.insert(frame.columns.get_loc("engine") + 1, "lowering", frame["board"].map(lowering))
    files = {b.name: source_shown(config_source(b)) for b in boards}
    frame.insert(frame.columns.get_loc("lowering") + 1, "board_file", frame["board"].map(files))
    if any(not b.cluster.is_single for b in boards):  # --vary cluster.*: each row's cluster
        clusters = {b.name: b.cluster.columns() for b in boards}
        for key in next(iter(clusters.values())):
            frame[key] = frame["board"].map({name: c[key] for name, c in clusters.items()})
    return frame


def _warn_fit(frame: pd.DataFrame, boards: list[Board], m: TargetModel,
              algo: Algorithm | None) -> None:
    """After the output: a warning per board with points that do not fit (every row
    carries its marks)."""
    by_name = {b.name: b for b in boards}
    for name, rows in frame.groupby("board", sort=False):
        points = [(int(r.context), int(r.verify_len), algo.drafter if algo and r.verify_len > 1
                   else None, int(r.batch)) for r in rows.itertuples()]
        warn_after_output(fit_warnings(by_name[name], m, points))
