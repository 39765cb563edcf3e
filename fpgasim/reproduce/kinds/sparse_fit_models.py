"""Fig. 4: the best x per model on the AAT fitted from a few measured points."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fpgasim.figures import style
from fpgasim.figures.style import ExperimentOutput
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
    best_of_workloads,
    frame,
)
from fpgasim.reproduce.workloads import RunContext

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Figure


def sparse_fit_models(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (algorithm, model, context): the best x on the AAT model fitted to sparse points."""
    rows = []
    for *_, summary in best_of_workloads(exp, ctx):
        for s in summary.to_dict("records"):
            row = {**base(exp, ctx, s), "context": s["context"]}
            row["ar_tokens_per_s"] = s["ad_tokens_per_s"]
            row["speedup"] = s["best_speedup"]
            for k in ("best_verify_len", "best_tokens_per_s", "best_tree", "best_aat"):
                row[k] = s[k]
            for name in ("ori", "naive"):
                for k in ("verify_len", "tokens_per_s", "speedup"):
                    row[f"{name}_{k}"] = s[f"{name}_{k}"]
            for k in ("aat_a", "aat_b", "aat_c", "aat_r2_fit", "aat_n_fit_points"):
                row[k] = s[k]
            rows.append(row)
    if ctx.measured and exp.aat.source == "fitted":
        notes = (
            "AAT at every x = A + B·ln(x − C) fitted to the measured sparse points; the draft at "
            "each x is costed with the per-x tree of tree_shapes_by_verify_len.csv; Ori AAT from "
            "the fit at the default x",
        )
    elif ctx.measured:
        notes = ("AAT at the measured x only",)
    else:
        notes = (
            "embedded: the acceptance model is per algorithm (task- and model-agnostic); only "
            "the timing differs between models",
        )
    return Rendered(frame(exp.kind, rows), notes)


def sparse_fit_models_figure(result: ExperimentOutput) -> Figure:
    """Per algorithm: best speedup vs context per model (top) and best x (bottom)."""
    full = result.full
    algorithms = list(dict.fromkeys(full["algorithm"]))
    n = len(algorithms)
    fig = style.new_figure(5.8 * n, 8.4)
    axes = np.atleast_2d(fig.subplots(2, n, squeeze=False))
    for j, algorithm in enumerate(algorithms):
        part = full[full["algorithm"] == algorithm]
        contexts = sorted(part["context"].unique())
        for color, (model, rows) in zip(
            style.COLORS * 4, part.groupby("model", sort=False), strict=False
        ):
            rows = rows.sort_values("context")
            axes[0, j].plot(
                rows["context"],
                rows["speedup"],
                marker="o",
                color=color,
                lw=1.8,
                label=f"{model}, best x",
            )
            style.overlay(axes[0, j], result, rows["context"], "speedup", color)
            style.overlay(axes[1, j], result, rows["context"], "best_verify_len", color)
            style.mark_ad(axes[0, j], result, rows, "speedup")
            style.mark_ad(axes[1, j], result, rows, "best_verify_len")
            if rows["ori_speedup"].notna().any():
                axes[0, j].plot(
                    rows["context"],
                    rows["ori_speedup"],
                    marker="x",
                    color=color,
                    lw=1,
                    ls=":",
                    label=f"{model}, GPU default x",
                )
            axes[1, j].plot(
                rows["context"],
                rows["best_verify_len"].astype(float),
                marker="o",
                color=color,
                lw=1.8,
                label=model,
            )
        axes[0, j].axhline(1.0, color="black", lw=1, ls="-.", label="AD (speedup 1)")
        style.overlay_legend(axes[0, j], result)
        style.overlay_legend(axes[1, j], result)
        style.ad_legend(axes[0, j], result)
        style.ad_legend(axes[1, j], result)
        axes[0, j].set(
            title=f"{algorithm}: speedup over AD on {style.boards_of(part)}",
            ylabel="speedup over AD (×)",
            ylim=(0, None),
        )
        axes[1, j].set(
            title=f"{algorithm}: best verification length x",
            ylabel="best x (tokens per verification)",
            ylim=(0, None),
        )
        for ax in axes[:, j]:
            style.context_ticks(ax, contexts)
            ax.set_xlabel("context length L (tokens, log scale)")
            ax.grid(alpha=0.3)
        axes[0, j].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)
        axes[1, j].legend(fontsize=8, loc="upper left")
    style.suptitle(fig, result)
    return fig


KIND = register_kind(ExperimentKind(
    name="sparse_fit_models",
    doc="best x per model on the AAT fitted from sparse points (Fig. 4)",
    columns=(
        *("algorithm", "model", "context", "ar_tokens_per_s", "best_verify_len"),
        *("best_tokens_per_s", "speedup", "ori_verify_len", "ori_tokens_per_s", "ori_speedup"),
        *("naive_verify_len", "naive_tokens_per_s", "naive_speedup", "board", "task"),
        *("best_tree", "best_aat", "aat_a", "aat_b", "aat_c", "aat_r2_fit", "aat_n_fit_points"),
        *("decision", *TIMED_COLUMNS),
    ),
    decision=Decision("speedup", "best_verify_len"),
    beside=BesideSpec(
        (),
        ("decision", "ar_tokens_per_s", "best_verify_len", "best_tokens_per_s", "speedup"),
        "speedup",
        ("best_verify_len", "best_tree", "best_aat"),
    ),
    compare=EngineComparison(("algorithm", "model", "context"),
                             (("best_verify_len", "speedup"),), best_of_curve=False,
                             breakdown=False),
    render=sparse_fit_models,
    plot=sparse_fit_models_figure,
    external=None,
))  # fmt: skip
