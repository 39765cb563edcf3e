"""The registry of experiment kinds: each kind's renderer (table) and figure (if any)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fpgasim.reproduce import curve_renderers, figures, tables
from fpgasim.reproduce.rendered import Rendered
from fpgasim.reproduce.schema import Experiment
from fpgasim.reproduce.workloads import RunContext


@dataclass(frozen=True)
class ExperimentKind:
    """A renderer (experiment, run) -> Rendered, its figure (or None) and what it shows."""

    render: Callable[[Experiment, RunContext], Rendered]
    plot: Callable | None
    doc: str


EXPERIMENT_KINDS: dict[str, ExperimentKind] = {
    "context_sets": ExperimentKind(
        tables.context_sets, None, "AD / Ori / Naive / Best sets per context (Table I)"
    ),
    "tasks_unified": ExperimentKind(
        tables.tasks_unified, None, "each task's best x vs the unified x (Table II)"
    ),
    "tree_methods": ExperimentKind(
        tables.tree_methods, None, "best x per tree-construction method (Table III)"
    ),
    "boards_grid": ExperimentKind(
        tables.boards_grid, figures.boards_grid, "best x and speedup per board (Table IV)"
    ),
    "sparse_fit_models": ExperimentKind(
        tables.sparse_fit_models,
        figures.sparse_fit_models,
        "best x per model on the AAT fitted from sparse points (Fig. 4)",
    ),
    "speedup_curve": ExperimentKind(
        curve_renderers.speedup_curve,
        figures.speedup_curve,
        "speedup over AD vs x, and AAT (Fig. 1)",
    ),
    "rooflines": ExperimentKind(
        curve_renderers.rooflines, figures.rooflines, "P, P_disc, AAT/AR and P_eff vs x (Fig. 2)"
    ),
    "fit_table": ExperimentKind(
        curve_renderers.fit_table,
        figures.fit_table,
        "AAT model fitted on a few points, R² (Fig. 5)",
    ),
    "aat_curves": ExperimentKind(
        curve_renderers.aat_curves,
        figures.aat_curves,
        "AAT vs x per tree-construction method (Fig. 6)",
    ),
}
