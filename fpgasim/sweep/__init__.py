"""Sweeps over grids of points, returned as DataFrames; executors and the result cache."""

from fpgasim.sweep.cache import CacheError, SweepCache, default_cache_dir, point_key
from fpgasim.sweep.executors import DEFAULT_EXECUTOR, EXECUTORS, make_executor
from fpgasim.sweep.grid import SWEEP_COLUMNS, Grid, finish_row, rows_to_frame, run_grid
from fpgasim.sweep.runner import SweepResult, SweepStats, run_points, run_sweep
from fpgasim.sweep.space import BoardBase, Variation, parse_vary

__all__ = [
    "BoardBase",
    "DEFAULT_EXECUTOR",
    "EXECUTORS",
    "SWEEP_COLUMNS",
    "CacheError",
    "Grid",
    "SweepCache",
    "SweepResult",
    "SweepStats",
    "Variation",
    "default_cache_dir",
    "finish_row",
    "make_executor",
    "parse_vary",
    "point_key",
    "rows_to_frame",
    "run_grid",
    "run_points",
    "run_sweep",
]
