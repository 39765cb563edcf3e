"""Analysis (docs/method.md): AAT tables and the AAT log model, rooflines, the solver, schedules.

Entry point: `solve(board, model, algorithm, contexts, ...) -> Solution` (tidy DataFrames).
"""

from fpgasim.analysis.aat import BUILTIN_AAT, AatTables, load_aat_tables
from fpgasim.analysis.aat_curve_fits import (
    AAT_SOURCES,
    AatCurve,
    OriPoint,
    acceptance_curves,
    embedded_curves,
    mean_curve,
    measured_curves,
)
from fpgasim.analysis.aat_model import AatFit, fit_aat, fit_curve, naive_verify_len, r_squared
from fpgasim.analysis.acceptance_rule import AcceptanceSource, acceptance_source
from fpgasim.analysis.dynamic_schedule import build_schedule, lookup, schedule_yaml
from fpgasim.analysis.roofline import RooflineFit, effective, fit_roofline, primary_roofline
from fpgasim.analysis.solver import (
    CURVE_COLUMNS,
    NAIVE_THRESHOLD,
    SUMMARY_COLUMNS,
    BestSet,
    Solution,
    Timer,
    best_set,
    best_summary,
    classify_regime,
    solve,
    solve_best_curves,
    solve_curve,
    solve_curves,
)
from fpgasim.analysis.tasks import unified_table

__all__ = [
    "AAT_SOURCES",
    "BUILTIN_AAT",
    "AatCurve",
    "AcceptanceSource",
    "AatFit",
    "AatTables",
    "BestSet",
    "CURVE_COLUMNS",
    "NAIVE_THRESHOLD",
    "OriPoint",
    "RooflineFit",
    "SUMMARY_COLUMNS",
    "Solution",
    "Timer",
    "best_set",
    "best_summary",
    "acceptance_curves",
    "acceptance_source",
    "build_schedule",
    "classify_regime",
    "effective",
    "embedded_curves",
    "fit_aat",
    "fit_curve",
    "fit_roofline",
    "load_aat_tables",
    "lookup",
    "mean_curve",
    "measured_curves",
    "naive_verify_len",
    "primary_roofline",
    "r_squared",
    "schedule_yaml",
    "solve",
    "solve_curve",
    "solve_best_curves",
    "solve_curves",
    "unified_table",
]
