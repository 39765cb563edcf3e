"""Sweeps over grids of points, returned as DataFrames; executors and the result cache."""

from fpgasim.sweep.cache import CacheError, SweepCache, default_cache_dir, point_key
from fpgasim.sweep.executors import DEFAULT_EXECUTOR, EXECUTORS, make_executor
from fpgasim.sweep.grid import SWEEP_COLUMNS, Grid, finish_row, rows_to_frame, run_grid
from fpgasim.sweep.runner import SweepResult, SweepStats, run_points, run_sweep
from fpgasim.sweep.space import derive_board, derive_boards, parse_pe_arrays

__all__ = [
    "DEFAULT_EXECUTOR",
    "EXECUTORS",
    "SWEEP_COLUMNS",
    "CacheError",
    "Grid",
    "SweepCache",
    "SweepResult",
    "SweepStats",
    "default_cache_dir",
    "derive_board",
    "derive_boards",
    "finish_row",
    "make_executor",
    "parse_pe_arrays",
    "point_key",
    "rows_to_frame",
    "run_grid",
    "run_points",
    "run_sweep",
]
