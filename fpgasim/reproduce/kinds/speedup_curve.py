"""Fig. 1: the speedup over AD against x, with the AAT."""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Figure


def speedup_curve(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (context, x): AAT and the speedup over AD (x = 1 is AD itself)."""
    rows, summaries = solved_curves(exp, ctx)
    for r in rows:
        r["tokens_per_s"] = r["p_eff_tokens_per_s"]
    notes = (
        *embedded_task_note(exp, ctx),
        "speedup = P_eff(x) / P(1) = AAT(x) / (T_v(x) + T_d(x)) / AD tokens/s; below 1, SD "
        "is slower than AD; x = 1 is AD (AAT = 1 by definition)",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"summary": pd.concat(summaries)})


def speedup_curve_figure(result: ExperimentOutput) -> Figure:
    """Left: speedup over AD vs x per context, best marked; right: AAT vs x."""
    full, summary = result.full, result.plot_data["summary"]
    fig = style.new_figure(12, 4.8)
    ax_s, ax_a = fig.subplots(1, 2)
    for color, (context, part) in zip(style.COLORS * 4, full.groupby("context"), strict=False):
        part = part.sort_values("verify_len")
        ax_s.plot(
            part["verify_len"],
            part["speedup"],
            color=color,
            lw=1.8,
            marker=".",
            ms=4,
            label=style.label_ctx(context),
        )
        style.overlay(ax_s, result, part["verify_len"], "speedup", color)
        s = summary[summary["context"] == context].iloc[0]
        ax_s.plot(
            s["best_verify_len"],
            s["best_speedup"],
            marker="*",
            ms=15,
            color=color,
            mec="black",
            mew=0.7,
            ls="none",
        )
        ax_a.plot(
            part["verify_len"],
            part["aat"],
            color=color,
            lw=1.8,
            marker=".",
            ms=4,
            label=style.label_ctx(context),
        )
    ax_s.axhline(1.0, color="black", lw=1.2, ls="-.", label="AD (speedup 1)")
    ax_s.fill_between(
        [0, full["verify_len"].max() + 2], 0, 1, color="red", alpha=0.06, label="SD slower than AD"
    )
    ori = summary["ori_verify_len"].dropna()
    if not ori.empty:
        x_ori = int(ori.iloc[0])
        for ax in (ax_s, ax_a):
            ax.axvline(x_ori, color="gray", lw=1, ls=":", label=f"GPU default tree (x = {x_ori})")
    ax_s.plot(
        [],
        [],
        marker="*",
        ms=12,
        color="white",
        mec="black",
        ls="none",
        label="best x (max speedup; use SD only above 1)",
    )
    style.overlay_legend(ax_s, result)
    ax_s.set(
        xlabel=style.X_LABEL,
        ylabel="speedup over AD (×)",
        ylim=(0, None),
        xlim=(0, full["verify_len"].max() + 2),
        title=f"Speedup over AD: {style.one_workload(full)}",
    )
    ax_a.set(
        xlabel=style.X_LABEL,
        ylabel="AAT (accepted tokens per iteration)",
        title="Average accepted tokens (AAT)",
        xlim=(0, full["verify_len"].max() + 2),
    )
    for ax in (ax_s, ax_a):
        ax.grid(alpha=0.3)
    ax_s.legend(fontsize=8, loc="upper right")
    ax_a.legend(fontsize=8, loc="lower right")
    style.suptitle(fig, result)
    return fig


KIND = register_kind(ExperimentKind(
    name="speedup_curve",
    doc="speedup over AD vs x, and AAT (Fig. 1)",
    columns=(
        *("context", "verify_len", "aat", "speedup", "board", "model", "algorithm", "task"),
        *("tree", "tokens_per_s", "ar_tokens_per_s", *TIMED_COLUMNS),
    ),
    decision=None,
    beside=BesideSpec(("verify_len",), ("speedup", "tokens_per_s"), "speedup",
                      ("verify_len", "tree", "aat")),
    compare=EngineComparison(("context",), (("best_verify_len", "best_speedup"),),
                             best_of_curve=True, breakdown=False),
    render=speedup_curve,
    plot=speedup_curve_figure,
    external=None,
))  # fmt: skip
