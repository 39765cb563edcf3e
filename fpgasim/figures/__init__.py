"""Figures: every plot fpgasim draws (one plotting module,
tests/house/test_one_plotting_module.py)."""

