"""Fig. 2: the primary and discounted rooflines, AAT/AR and P_eff against x."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fpgasim.figures import style
from fpgasim.figures.style import ExperimentOutput
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import (
    TIMED_COLUMNS,
    BesideSpec,
    EngineComparison,
    ExperimentKind,
    register_kind,
)
from fpgasim.reproduce.rendered import (
    Rendered,
    embedded_task_note,
    frame,
    solved_curves,
)
from fpgasim.reproduce.workloads import RunContext
from fpgasim.solving.decision import decision_of

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Axes, Figure


def rooflines(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (context, x): P, P_disc, AAT, AR and P_eff (tokens/s), x = 1 being AD."""
    rows, summaries = solved_curves(exp, ctx)
    for r in rows:
        r["p"] = r["p_tokens_per_s"]
        r["p_disc"] = r["p_disc_tokens_per_s"]
        r["p_eff"] = r["p_eff_tokens_per_s"]
    notes = (
        *embedded_task_note(exp, ctx),
        "p = x / T_v (primary roofline), p_disc = x / (T_v + T_d) (discounted), ar = AAT / x, "
        "p_eff = AAT / (T_v + T_d) = p_disc · ar (generated tokens/s); x = 1 is AD",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"summary": pd.concat(summaries)})


def rooflines_figure(result: ExperimentOutput) -> Figure:
    """Per context: P, P_disc, P_eff (best marked) on top; AAT and AR below."""
    full, summary = result.full, result.plot_data["summary"]
    contexts = sorted(full["context"].unique())
    n = len(contexts)
    fig = style.new_figure(4.6 * n, 8.2)
    axes = np.atleast_2d(fig.subplots(2, n, squeeze=False))
    for j, context in enumerate(contexts):
        part = full[full["context"] == context].sort_values("verify_len")
        s = summary[summary["context"] == context].iloc[0]
        top: Axes = axes[0, j]
        x = part["verify_len"]
        style.draw_rooflines(top, x, part["p"], part["p_disc"], part["p_eff"], s["ad_tokens_per_s"])
        style.overlay(top, result, x, "p", "tab:blue")
        style.overlay(top, result, x, "p_disc", "tab:orange")
        style.overlay(top, result, x, "p_eff", "tab:green")
        if j == 0:
            style.overlay_legend(top, result)
        bx, by = int(s["best_verify_len"]), float(s["best_tokens_per_s"])
        top.plot(
            bx,
            by,
            marker="*",
            ms=16,
            color="tab:green",
            mec="black",
            mew=0.8,
            ls="none",
            label="best x (max P_eff)",
        )
        top.annotate(
            f"{decision_of(float(s['best_speedup']))}: best x = {bx}\n"
            f"{by:.1f} tok/s = {s['best_speedup']:.2f}× AD",
            (bx, by),
            xytext=(10, -30),
            textcoords="offset points",
            fontsize=8,
        )
        top.set_title(style.label_ctx(context))
        bottom: Axes = axes[1, j]
        right = style.draw_aat_ar(bottom, x, part["aat"], part["ar"])
        bottom.axvline(bx, color="tab:green", lw=1, ls=":", label=f"best x = {bx}")
        style.legend_with_twin(bottom, right, fontsize=8, loc="center right")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, n), fontsize=9)
    style.suptitle(fig, result)
    return fig


KIND = register_kind(ExperimentKind(
    name="rooflines",
    doc="P, P_disc, AAT/AR and P_eff vs x (Fig. 2)",
    columns=(
        *("context", "verify_len", "p", "p_disc", "aat", "ar", "p_eff", "board", "model"),
        *("algorithm", "task", "tree", "verify_s", "draft_s", "speedup", *TIMED_COLUMNS),
    ),
    decision=None,
    beside=BesideSpec(("verify_len",), ("p", "p_disc", "p_eff", "verify_s", "draft_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("context",), (("best_verify_len", "best_speedup"),),
                             best_of_curve=True, breakdown=False),
    render=rooflines,
    plot=rooflines_figure,
    external=None,
))  # fmt: skip
