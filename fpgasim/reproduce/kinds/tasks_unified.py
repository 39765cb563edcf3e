"""Table II: each task's best x against the unified x of the tasks' mean AAT curve."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import (
    TIMED_COLUMNS,
    BesideSpec,
    Decision,
    EngineComparison,
    ExperimentKind,
    register_kind,
)
from fpgasim.reproduce.rendered import (
    Rendered,
    base,
    frame,
    solved_workloads,
    unavailable,
)
from fpgasim.reproduce.workloads import RunContext

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    pass


def tasks_unified(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per task: its own best x and speedup, and its speedup at the unified x."""
    if not ctx.measured:
        return unavailable(exp, exp.aat.embedded_reason or "it needs measured per-task AAT")
    rows = []
    for *_, sol in solved_workloads(exp, ctx):
        by_task = sol.summary.set_index(["task", "context"])
        for u in sol.unified.to_dict("records"):
            s = by_task.loc[(u["task"], u["context"])].to_dict() | {
                "task": u["task"],
                "context": u["context"],
            }
            rows.append(
                {
                    **base(exp, ctx, s),
                    "context": u["context"],
                    "best_verify_len": u["best_verify_len"],
                    "best_speedup": u["best_speedup"],
                    "best_tree": s["best_tree"],
                    "best_aat": s["best_aat"],
                    "unified_verify_len": u["unified_verify_len"],
                    "unified_speedup": u["unified_speedup"],
                    "mean": u["mean"],
                    "unified_vs_best": u["unified_vs_best"],
                }
            )
    note = (
        f"unified x: argmax of P_eff on the {exp.mean} mean of the tasks' AAT curves at "
        "their common x; unified_vs_best = unified_speedup / best_speedup"
    )
    return Rendered(frame(exp.kind, rows), (note,))


KIND = register_kind(ExperimentKind(
    name="tasks_unified",
    doc="each task's best x vs the unified x (Table II)",
    columns=(
        *("task", "best_verify_len", "best_speedup", "unified_verify_len", "unified_speedup"),
        *("context", "board", "model", "algorithm", "mean", "unified_vs_best", "best_tree"),
        *("best_aat", "decision", *TIMED_COLUMNS),
    ),
    decision=Decision("best_speedup", "best_verify_len"),
    beside=BesideSpec(
        (),
        ("decision", "best_verify_len", "best_speedup", "unified_verify_len", "unified_speedup"),
        "best_speedup",
        ("best_verify_len", "best_tree", "best_aat"),
    ),
    compare=EngineComparison(
        ("task", "context"),
        (("best_verify_len", "best_speedup"), ("unified_verify_len", "unified_speedup")),
        best_of_curve=False, breakdown=False,
    ),
    render=tasks_unified,
    plot=None,
    external=None,
))  # fmt: skip
