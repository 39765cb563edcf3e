"""Table III (and tree_design): the best x per tree-construction method."""

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
    ad_row,
    base,
    each_workload,
    embedded_task_note,
    frame,
    method_curves,
    set_row,
    task_contexts,
)
from fpgasim.reproduce.workloads import RunContext, solve
from fpgasim.solving.tree_design import MODEL_TREE_METHODS

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    pass


def tree_methods(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per tree-construction method: the best x, tokens/s and speedup, after an AD row."""
    rows, notes = [], list(embedded_task_note(exp, ctx))
    for w, board, model, algorithm in each_workload(exp):
        for task, context in task_contexts(w, ctx):
            by_method = method_curves(exp, ctx, algorithm, model, context, task, board)
            first = True
            for m, curve in by_method.items():
                s = solve(exp, ctx, board, model, algorithm, [curve]).summary.iloc[0].to_dict()
                common = {"context": context, **base(exp, ctx, s)}
                if first:
                    rows.append(ad_row(common, s))
                    first = False
                row = set_row(common, s, "best", m)
                if ctx.measured and m in MODEL_TREE_METHODS:
                    row["aat_source"], row["aat_file"] = "embedded", ""
                rows.append(row)
    if ctx.measured and any(m in MODEL_TREE_METHODS for m in exp.tree_methods or []):
        notes.append(
            "optimal/throughput rows: trees and AAT from the embedded acceptance model (no "
            "table measures them), so they compare with each other, not with measured rows"
        )
    if not ctx.measured:
        notes.append(
            "embedded: AAT of each method's tree is the positional model's exact expectation; "
            f"prior-score trees come from 100000 simulated iterations (seed {exp.seed})"
        )
    return Rendered(frame(exp.kind, rows), tuple(notes))


KIND = register_kind(ExperimentKind(
    name="tree_methods",
    doc="best x per tree-construction method (Table III)",
    columns=(
        *("method", "verify_len", "tokens_per_s", "speedup"),
        *("context", "board", "model", "algorithm", "task", "aat", "tree", "decision"),
        *TIMED_COLUMNS,
    ),
    decision=Decision("speedup", "verify_len"),
    beside=BesideSpec(("method",), ("decision", "verify_len", "tokens_per_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("board", "algorithm", "context", "method"),
                             (("verify_len", "speedup"),), best_of_curve=False, breakdown=False),
    render=tree_methods,
    plot=None,
    external=None,
))  # fmt: skip
