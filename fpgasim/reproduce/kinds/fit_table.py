"""Fig. 5: the AAT model A + B·ln(x − C) fitted on a few points, and its R²."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

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
    tasks_of,
)
from fpgasim.reproduce.workloads import RunContext, curves, source_name

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Figure


def fit_table(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per context: A, B, C of AAT(x) = A + B·ln(x − C) fitted on a few points, R² on all."""
    rows, points = [], []
    for w, _board, model, algorithm in each_workload(exp):
        for c in curves(exp, ctx, algorithm, model, w.contexts, tasks_of(w, ctx)):
            fit = c.fit
            common = {
                "context": c.context,
                "algorithm": algorithm.id,
                "model": model.id,
                "task": c.task,
                "aat_source": source_name(exp, ctx),
                "aat_file": c.aat_file,
            }
            rows.append(
                {
                    **common,
                    "A": fit.a,
                    "B": fit.b,
                    "C": fit.c,
                    "r2": fit.r2_all,
                    "n_fit_points": len(fit.fit_verify_lens),
                    "r2_fit": fit.r2_fit,
                    "fit_points": ",".join(map(str, fit.fit_verify_lens)),
                    "n_points": len(c.measured),
                }
            )
            pts = c.measured.copy()
            pts["fitted_on"] = pts["verify_len"].isin(fit.fit_verify_lens)
            points.append(pts.assign(**common))
    notes = (
        *embedded_task_note(exp, ctx),
        "r2: R² of the fitted model on every point of the curve; r2_fit: on the fitted points",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"points": pd.concat(points)})


def fit_table_figure(result: ExperimentOutput) -> Figure:
    """Per context: every AAT point, the fitted points highlighted, the fitted curve, R²."""
    full, points = result.full, result.plot_data["points"]
    rows, cols = style.grid_shape(len(full))
    fig = style.new_figure(3.6 * cols, 3.1 * rows + 0.6)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, r in zip(axes, full.to_dict("records"), strict=False):
        pts = points[(points["context"] == r["context"]) & (points["model"] == r["model"])]
        other, used = pts[~pts["fitted_on"]], pts[pts["fitted_on"]]
        ax.plot(other["verify_len"], other["aat"], "o", color="0.6", ms=4, label="AAT, other sizes")
        ax.plot(
            used["verify_len"],
            used["aat"],
            "o",
            color="tab:red",
            ms=6,
            mec="black",
            mew=0.6,
            label=f"fitted points ({r['n_fit_points']})",
        )
        xs = np.linspace(max(pts["verify_len"].min(), r["C"] + 1e-3), pts["verify_len"].max(), 300)
        sign = "−" if r["C"] >= 0 else "+"
        ax.plot(
            xs,
            r["A"] + r["B"] * np.log(xs - r["C"]),
            color="tab:blue",
            lw=1.8,
            label=f"fit {r['A']:.2f} + {r['B']:.2f}·ln(x {sign} {abs(r['C']):.2f})",
        )
        ax.set_title(
            f"{style.label_ctx(r['context'])}\nR² = {r['r2']:.3f} on all {r['n_points']} sizes",
            fontsize=9.5,
        )
        ax.set(xlabel="x (tokens per verification)", ylabel="AAT (tokens / iteration)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    for ax in axes[len(full) :]:
        ax.set_visible(False)
    style.suptitle(fig, result)
    return fig


KIND = register_kind(ExperimentKind(
    name="fit_table",
    doc="AAT model fitted on a few points, R² (Fig. 5)",
    columns=(
        *("context", "A", "B", "C", "r2", "n_fit_points", "r2_fit", "fit_points", "n_points"),
        *("algorithm", "model", "task", *SOURCE_COLUMNS),
    ),
    decision=None,
    beside=None,
    compare=None,
    render=fit_table,
    plot=fit_table_figure,
    external=None,
))  # fmt: skip
