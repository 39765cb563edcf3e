"""Solving (docs/method.md): rooflines, the solver, decisions, schedules, the accounting's
cross-check."""

from fpgasim.solving.dynamic_schedule import (
    build_schedule,
    lookup,
    schedule_yaml,
)
from fpgasim.solving.roofline import (
    RooflineFit,
    effective,
    fit_roofline,
    primary_roofline,
)
from fpgasim.solving.solver import (
    CURVE_COLUMNS,
    NAIVE_THRESHOLD,
    SUMMARY_COLUMNS,
    BestSet,
    Solution,
    SolveOptions,
    Timer,
    best_set,
    best_summary,
    classify_regime,
    solve,
    solve_best_curves,
    solve_curve,
    solve_curves,
)
from fpgasim.solving.tasks import (
    unified_table,
)

__all__ = [
    "BestSet",
    "CURVE_COLUMNS",
    "NAIVE_THRESHOLD",
    "RooflineFit",
    "SUMMARY_COLUMNS",
    "Solution",
    "SolveOptions",
    "Timer",
    "best_set",
    "best_summary",
    "build_schedule",
    "classify_regime",
    "effective",
    "fit_roofline",
    "lookup",
    "primary_roofline",
    "schedule_yaml",
    "solve",
    "solve_best_curves",
    "solve_curve",
    "solve_curves",
    "unified_table",
]
