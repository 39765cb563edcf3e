"""Table I: AD and the Ori / Naive / Best sets per context."""

from __future__ import annotations

import math
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
    embedded_task_note,
    frame,
    set_row,
    solved_workloads,
)
from fpgasim.reproduce.workloads import RunContext

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    pass


SETS = ("ori", "naive", "best")


def _x(v: object) -> int | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def context_sets(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per context: AD, Ori, Naive and Best sets (verify_len, tokens/s, speedup over AD)."""
    rows, notes = [], list(embedded_task_note(exp, ctx))
    for _board, _model, algorithm, sol in solved_workloads(exp, ctx):
        for s in sol.summary.to_dict("records"):
            common = {"context": s["context"], **base(exp, ctx, s)}
            rows.append(ad_row(common, s))
            for name in SETS:
                if _x(s[f"{name}_verify_len"]) is None:
                    notes.append(f"{name} set undefined for {algorithm.id} (no default x)")
                    continue
                rows.append(set_row(common, s, name, name))
        ori = sol.summary["ori_aat_source"].iloc[0]
        notes.append(
            f"{algorithm.id}: Ori set = the GPU default tree (x = {algorithm.ori_verify_len}), "
            f"AAT from {ori}; Naive set = smallest x whose fitted slope dAAT/dx < "
            f"{exp.naive_threshold} tokens per extra token; Best set = argmax P_eff"
        )
    return Rendered(frame(exp.kind, rows), tuple(dict.fromkeys(notes)))


KIND = register_kind(ExperimentKind(
    name="context_sets",
    doc="AD / Ori / Naive / Best sets per context (Table I)",
    columns=(
        *("context", "method", "verify_len", "tokens_per_s", "speedup"),
        *("board", "model", "algorithm", "task", "aat", "tree", "decision", *TIMED_COLUMNS),
    ),
    decision=Decision("speedup", "verify_len"),
    beside=BesideSpec(("method",), ("decision", "verify_len", "tokens_per_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("board", "context", "method"), (("verify_len", "speedup"),),
                             best_of_curve=False, breakdown=False),
    render=context_sets,
    plot=None,
    external=None,
))  # fmt: skip
