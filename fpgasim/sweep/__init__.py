"""Sweeps over grids of points, returned as DataFrames."""

from fpgasim.sweep.grid import SWEEP_COLUMNS, Grid, run_grid

__all__ = ["SWEEP_COLUMNS", "Grid", "run_grid"]
