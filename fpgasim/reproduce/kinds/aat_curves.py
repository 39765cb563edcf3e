"""Fig. 6: the AAT against x per tree-construction method."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fpgasim.engine import DEFAULT_ENGINE
from fpgasim.figures import style
from fpgasim.figures.style import ExperimentOutput
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import (
    SOURCE_COLUMNS,
    ExperimentKind,
    register_kind,
)
from fpgasim.reproduce.rendered import (
    Rendered,
    each_workload,
    embedded_task_note,
    frame,
    method_curves,
    task_contexts,
)
from fpgasim.reproduce.workloads import RunContext, source_name

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Figure


def aat_curves(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (tree-construction method, x): the AAT of that method's tree."""
    rows = []
    for w, board, model, algorithm in each_workload(exp):
        for task, context in task_contexts(w, ctx):
            for m, c in method_curves(exp, ctx, algorithm, model, context, task, board).items():
                for p in c.points.to_dict("records"):
                    rows.append(
                        {
                            "method": m,
                            "verify_len": p["verify_len"],
                            "aat": p["aat"],
                            "context": context,
                            "algorithm": algorithm.id,
                            "model": model.id,
                            "task": c.task,
                            "tree": p["tree"].describe(),
                            "aat_source": "embedded"
                            if c.aat_source == "embedded"
                            else source_name(exp, ctx),
                            "aat_file": c.aat_file,
                        }
                    )
    notes = list(embedded_task_note(exp, ctx))
    if "throughput" in (exp.tree_methods or []):
        engine_name = ctx.engine.name if ctx.engine is not None else DEFAULT_ENGINE
        notes.append(
            "throughput: per x the tree of highest tokens/s on the workload's board (embedded "
            f"acceptance model; costs from the {engine_name} engine)"
        )
    if not ctx.measured:
        notes.append(
            "embedded: exact expected AAT of each method's tree under the positional model "
            f"(prior-score from 100000 simulated iterations, seed {exp.seed})"
        )
    return Rendered(frame(exp.kind, rows), tuple(notes))


def aat_curves_figure(result: ExperimentOutput) -> Figure:
    """AAT vs x, one line per tree-construction method (one panel per context)."""
    full = result.full
    contexts = sorted(full["context"].unique())
    fig = style.new_figure(7.6 * len(contexts), 5.0)
    axes = np.atleast_1d(fig.subplots(1, len(contexts), squeeze=False)).ravel()
    for ax, context in zip(axes, contexts, strict=True):
        part = full[full["context"] == context]
        for method, rows in part.groupby("method", sort=False):
            label, color, ls = style.METHOD_STYLE.get(method, (method, None, "-"))
            rows = rows.sort_values("verify_len")
            ax.plot(
                rows["verify_len"],
                rows["aat"],
                color=color,
                ls=ls,
                lw=2,
                marker=".",
                ms=5,
                label=label,
            )
        ax.set(
            xlabel=style.X_LABEL,
            ylabel="AAT (accepted tokens per iteration)",
            title=f"{style.one_workload(part)}, {style.label_ctx(context)}",
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9, loc="lower right")
    costed = " ".join(n for n in result.notes if n.startswith("throughput:"))
    if costed:  # the one curve that is neither measured nor untimed says so
        measured = [style.METHOD_STYLE.get(m, (m,))[0] for m in dict.fromkeys(full["method"])]
        measured = [m for m in measured if "embedded" not in m]
        costed = f"engine: none for {', '.join(measured)} (AAT only) · {costed}"
    style.suptitle(fig, result, costed)
    return fig


KIND = register_kind(ExperimentKind(
    name="aat_curves",
    doc="AAT vs x per tree-construction method (Fig. 6)",
    columns=(
        *("method", "verify_len", "aat", "context", "algorithm", "model", "task", "tree"),
        *SOURCE_COLUMNS,
    ),
    decision=None,
    beside=None,
    compare=None,
    render=aat_curves,
    plot=aat_curves_figure,
    external=None,
))  # fmt: skip
