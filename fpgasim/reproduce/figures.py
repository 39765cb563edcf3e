"""Figures of the curve kinds (matplotlib, no pyplot state): titles, units, legends.

Each function takes an `ExperimentResult` (its `full` table and `plot_data`) and returns a
`matplotlib.figure.Figure`; `output.write_outputs` saves it as NAME.png.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fpgasim.analysis.plot import draw_aat_ar, draw_rooflines, legend_with_twin

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from fpgasim.reproduce.runner import ExperimentResult

X_LABEL = "verification length x (tokens per verification)"
TOKS = "tokens/s"
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
METHOD_STYLE = {
    "prior_score": ("prior-score (tree search)", "tab:green", "-"),
    "width": ("width-based", "tab:blue", "--"),
    "depth": ("depth-based", "tab:orange", "-."),
    "eagle3_dynamic": ("EAGLE-3 dynamic", "tab:purple", "-"),
    "chain": ("chain", "tab:gray", ":"),
}


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _suptitle(fig: Figure, result: ExperimentResult) -> None:
    sub = f"AAT: {result.aat_short or result.aat_source}"
    if result.engine:
        sub += f" · engine: {result.engine}"
    fig.suptitle(f"{result.title}\n{sub}", fontsize=11)


def _plain_log_ticks(ax: Axes) -> None:
    """Log-scale y ticks as plain numbers (40, 100, 400) instead of 4×10^1."""
    from matplotlib.ticker import FuncFormatter

    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(fmt)


def _context_ticks(ax: Axes, contexts: list[int]) -> None:
    """A log2 context axis ticked at the solved contexts, labelled 128, 1k, 16k."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(contexts, [f"{c // 1024}k" if c >= 1024 else str(c) for c in contexts])
    ax.minorticks_off()


def _grid(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(n, max_cols)
    return math.ceil(n / cols), cols


def _label_ctx(context: int) -> str:
    return f"L = {context:,} tokens"


def _one_workload(frame: pd.DataFrame) -> str:
    """'longspec / llama-3.1-8b / v80 / gov_report' of a frame holding one workload."""
    parts = []
    for col in ("algorithm", "model", "board", "task"):
        if col in frame and frame[col].nunique() == 1:
            parts.append(str(frame[col].iloc[0]))
    return " / ".join(parts)


# --------------------------------------------------------------------------- Fig. 1


def speedup_curve(result: ExperimentResult) -> Figure:
    """Left: speedup over AD vs x per context, best marked; right: AAT vs x."""
    full, summary = result.full, result.plot_data["summary"]
    fig = _figure(12, 4.8)
    ax_s, ax_a = fig.subplots(1, 2)
    for color, (context, part) in zip(COLORS * 4, full.groupby("context"), strict=False):
        part = part.sort_values("verify_len")
        ax_s.plot(
            part["verify_len"],
            part["speedup"],
            color=color,
            lw=1.8,
            marker=".",
            ms=4,
            label=_label_ctx(context),
        )
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
            label=_label_ctx(context),
        )
    ax_s.axhline(1.0, color="black", lw=1.2, ls="--", label="AD (speedup 1)")
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
        label="best x (max speedup)",
    )
    ax_s.set(
        xlabel=X_LABEL,
        ylabel="speedup over AD (×)",
        ylim=(0, None),
        xlim=(0, full["verify_len"].max() + 2),
        title=f"Speedup over AD: {_one_workload(full)}",
    )
    ax_a.set(
        xlabel=X_LABEL,
        ylabel="AAT (accepted tokens per iteration)",
        title="Average accepted tokens (AAT)",
        xlim=(0, full["verify_len"].max() + 2),
    )
    for ax in (ax_s, ax_a):
        ax.grid(alpha=0.3)
    ax_s.legend(fontsize=8, loc="upper right")
    ax_a.legend(fontsize=8, loc="lower right")
    _suptitle(fig, result)
    return fig


# --------------------------------------------------------------------------- Fig. 2


def rooflines(result: ExperimentResult) -> Figure:
    """Per context: P, P_disc, P_eff (best marked) on top; AAT and AR below."""
    full, summary = result.full, result.plot_data["summary"]
    contexts = sorted(full["context"].unique())
    n = len(contexts)
    fig = _figure(4.6 * n, 8.2)
    axes = np.atleast_2d(fig.subplots(2, n, squeeze=False))
    for j, context in enumerate(contexts):
        part = full[full["context"] == context].sort_values("verify_len")
        s = summary[summary["context"] == context].iloc[0]
        top: Axes = axes[0, j]
        x = part["verify_len"]
        draw_rooflines(top, x, part["p"], part["p_disc"], part["p_eff"], s["ad_tokens_per_s"])
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
            f"best x = {bx}\n{by:.1f} tok/s = {s['best_speedup']:.2f}× AD",
            (bx, by),
            xytext=(10, -30),
            textcoords="offset points",
            fontsize=8,
        )
        top.set_title(_label_ctx(context))
        bottom: Axes = axes[1, j]
        right = draw_aat_ar(bottom, x, part["aat"], part["ar"])
        bottom.axvline(bx, color="tab:green", lw=1, ls=":", label=f"best x = {bx}")
        legend_with_twin(bottom, right, fontsize=8, loc="center right")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=9)
    _suptitle(fig, result)
    return fig


# --------------------------------------------------------------------------- Fig. 4


def sparse_fit_models(result: ExperimentResult) -> Figure:
    """Per algorithm: best speedup vs context per model (top) and best x (bottom)."""
    full = result.full
    algorithms = list(dict.fromkeys(full["algorithm"]))
    n = len(algorithms)
    fig = _figure(5.8 * n, 8.4)
    axes = np.atleast_2d(fig.subplots(2, n, squeeze=False))
    for j, algorithm in enumerate(algorithms):
        part = full[full["algorithm"] == algorithm]
        contexts = sorted(part["context"].unique())
        for color, (model, rows) in zip(
            COLORS * 4, part.groupby("model", sort=False), strict=False
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
        axes[0, j].axhline(1.0, color="black", lw=1, ls="--", label="AD (speedup 1)")
        axes[0, j].set(
            title=f"{algorithm}: speedup over AD on {_boards(part)}",
            ylabel="speedup over AD (×)",
            ylim=(0, None),
        )
        axes[1, j].set(
            title=f"{algorithm}: best verification length x",
            ylabel="best x (tokens per verification)",
            ylim=(0, None),
        )
        for ax in axes[:, j]:
            _context_ticks(ax, contexts)
            ax.set_xlabel("context length L (tokens, log scale)")
            ax.grid(alpha=0.3)
        axes[0, j].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)
        axes[1, j].legend(fontsize=8, loc="upper left")
    _suptitle(fig, result)
    return fig


def _boards(frame: pd.DataFrame) -> str:
    return ", ".join(dict.fromkeys(frame["board"])) if "board" in frame else ""


def boards_grid(result: ExperimentResult) -> Figure:
    """Best speedup and best x vs context, one line per board."""
    full = result.full
    fig = _figure(11, 4.4)
    ax_s, ax_x = fig.subplots(1, 2)
    order = full.groupby("board", sort=False)["compute_to_bandwidth"].first().sort_values()
    for color, board in zip(COLORS * 4, order.index, strict=False):
        rows = full[full["board"] == board].sort_values("context")
        label = f"{board} ({order[board]:.2g} MAC/byte)"
        ax_s.plot(rows["context"], rows["speedup"], marker="o", color=color, label=label)
        ax_x.plot(
            rows["context"],
            rows["best_verify_len"].astype(float),
            marker="o",
            color=color,
            label=label,
        )
    ax_s.set(title="best speedup over AD", ylabel="speedup (×)", ylim=(0, None))
    ax_x.set(title="best verification length", ylabel="best x (tokens)", ylim=(0, None))
    for ax in (ax_s, ax_x):
        _context_ticks(ax, sorted(full["context"].unique()))
        ax.set_xlabel("context length L (tokens, log scale)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    _suptitle(fig, result)
    return fig


# --------------------------------------------------------------------------- Fig. 5


def fit_table(result: ExperimentResult) -> Figure:
    """Per context: every AAT point, the fitted points highlighted, the fitted curve, R²."""
    full, points = result.full, result.plot_data["points"]
    rows, cols = _grid(len(full))
    fig = _figure(3.6 * cols, 3.1 * rows + 0.6)
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
            f"{_label_ctx(r['context'])}: R² = {r['r2']:.3f} on all {r['n_points']} sizes",
            fontsize=10,
        )
        ax.set(xlabel="x (tokens per verification)", ylabel="AAT (tokens / iteration)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    for ax in axes[len(full) :]:
        ax.set_visible(False)
    _suptitle(fig, result)
    return fig


# --------------------------------------------------------------------------- Fig. 6


def aat_curves(result: ExperimentResult) -> Figure:
    """AAT vs x, one line per tree-construction method (one panel per context)."""
    full = result.full
    contexts = sorted(full["context"].unique())
    fig = _figure(6.4 * len(contexts), 4.6)
    axes = np.atleast_1d(fig.subplots(1, len(contexts), squeeze=False)).ravel()
    for ax, context in zip(axes, contexts, strict=True):
        part = full[full["context"] == context]
        for method, rows in part.groupby("method", sort=False):
            label, color, ls = METHOD_STYLE.get(method, (method, None, "-"))
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
            xlabel=X_LABEL,
            ylabel="AAT (accepted tokens per iteration)",
            title=f"{_one_workload(part)}, {_label_ctx(context)}",
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9, loc="lower right")
    _suptitle(fig, result)
    return fig
