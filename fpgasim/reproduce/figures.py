"""Figures of the curve kinds (matplotlib, no pyplot state): titles, units, legends.

Each function takes an `ExperimentResult` (its `full` table and `plot_data`) and returns a
`matplotlib.figure.Figure`; `output.write_outputs` saves it as NAME.png.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fpgasim.analysis.decision import USE_AD, decision_of
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
    "throughput": ("throughput-optimal (embedded AAT)", "tab:red", ":"),
    "optimal": ("AAT-optimal (embedded AAT)", "tab:brown", (0, (5, 1, 1, 1))),
}


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _wrap(text: str, fig: Figure, fontsize: float) -> str:
    """`text` broken into lines that fit the figure's width at `fontsize` (an average glyph
    is about 0.55 em wide), so no title or caption runs past the canvas edges."""
    width_pt = fig.get_figwidth() * 72 * 0.94
    chars = max(20, int(width_pt / (0.55 * fontsize)))
    return "\n".join(
        textwrap.fill(part, chars, break_on_hyphens=False) for part in text.split("\n")
    )


def caption_text(result: ExperimentResult, extra: str = "") -> str:
    """Which AAT, engine(s) and lowering produced the figure, and how the lines read."""
    parts = [f"AAT: {result.aat_short or result.aat_source}"]
    if result.engine:
        engine = f"engine: {result.engine} (the study's accounting, solid lines"
        if result.sim_engine:
            engine += (
                f") beside {result.sim_engine} (the cycle-level simulator, thin dashed lines "
                "with hollow markers in the same colours)"
            )
        else:
            engine += ")"
        parts.append(engine)
        lowering = sorted({str(v) for v in result.full.get("lowering", pd.Series()).dropna()})
        if lowering:
            parts.append(f"lowering: {', '.join(lowering)}")
    elif not extra:
        parts.append("engine: none (AAT only, no timing)")
    return " · ".join([*parts, extra] if extra else parts)


def _suptitle(fig: Figure, result: ExperimentResult, extra: str = "") -> None:
    """The title and under it the provenance caption, wrapped to fit the canvas (one text:
    constrained layout then reserves its room above the panels)."""
    text = f"{result.title}\n{caption_text(result, extra)}"
    fig.suptitle(_wrap(text, fig, 10.5), fontsize=10.5)


def _overlay(ax: Axes, result: ExperimentResult, x: pd.Series, column: str, color: str) -> None:
    """The simulator's twin of `column` (NAME_sim): thin, dashed, hollow markers, if present."""
    twin = f"{column}_sim"
    if not result.sim_engine or twin not in result.full:
        return
    ax.plot(x, result.full.loc[x.index, twin].astype(float), color=color, lw=1.1, ls="--",
            marker="o", ms=4, mfc="none")  # fmt: skip


def _overlay_legend(ax: Axes, result: ExperimentResult) -> None:
    """One legend entry for every thin dashed line with hollow markers: the simulator."""
    if result.sim_engine:
        ax.plot([], [], color="0.3", lw=1.1, ls="--", marker="o", mfc="none",
                label=f"{result.sim_engine} simulator (each curve's colour)")  # fmt: skip


def _mark_ad(ax: Axes, result: ExperimentResult, rows: pd.DataFrame, column: str) -> None:
    """Ring in grey every point of `column` (and of its simulator twin) whose decision is
    AD: a best x or speedup there is not used (docs/glossary.md, "decision")."""
    for col, decision in ((column, "decision"), (f"{column}_sim", "decision_sim")):
        if col not in rows or decision not in rows:
            continue
        ad = rows[rows[decision] == USE_AD]
        if not ad.empty:
            ax.plot(ad["context"], ad[col].astype(float), ls="none", marker="s", ms=11,
                    mfc="none", mec="0.45", mew=1.6)  # fmt: skip


def _ad_legend(ax: Axes, result: ExperimentResult) -> None:
    """The legend entry of `_mark_ad`'s grey squares, when any point is AD."""
    cols = [c for c in ("decision", "decision_sim") if c in result.full]
    if any((result.full[c] == USE_AD).any() for c in cols):
        ax.plot([], [], ls="none", marker="s", ms=9, mfc="none", mec="0.45", mew=1.6,
                label="grey square: use AD here (speedup <= 1)")  # fmt: skip


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
        _overlay(ax_s, result, part["verify_len"], "speedup", color)
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
    _overlay_legend(ax_s, result)
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
        _overlay(top, result, x, "p", "tab:blue")
        _overlay(top, result, x, "p_disc", "tab:orange")
        _overlay(top, result, x, "p_eff", "tab:green")
        if j == 0:
            _overlay_legend(top, result)
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
        top.set_title(_label_ctx(context))
        bottom: Axes = axes[1, j]
        right = draw_aat_ar(bottom, x, part["aat"], part["ar"])
        bottom.axvline(bx, color="tab:green", lw=1, ls=":", label=f"best x = {bx}")
        legend_with_twin(bottom, right, fontsize=8, loc="center right")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, n), fontsize=9)
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
            _overlay(axes[0, j], result, rows["context"], "speedup", color)
            _overlay(axes[1, j], result, rows["context"], "best_verify_len", color)
            _mark_ad(axes[0, j], result, rows, "speedup")
            _mark_ad(axes[1, j], result, rows, "best_verify_len")
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
        _overlay_legend(axes[0, j], result)
        _overlay_legend(axes[1, j], result)
        _ad_legend(axes[0, j], result)
        _ad_legend(axes[1, j], result)
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
        _overlay(ax_s, result, rows["context"], "speedup", color)
        _overlay(ax_x, result, rows["context"], "best_verify_len", color)
        _mark_ad(ax_s, result, rows, "speedup")
        _mark_ad(ax_x, result, rows, "best_verify_len")
        ax_x.plot(
            rows["context"],
            rows["best_verify_len"].astype(float),
            marker="o",
            color=color,
            label=label,
        )
    _overlay_legend(ax_s, result)
    _ad_legend(ax_s, result)
    ax_s.axhline(1.0, color="black", lw=1, ls="-.", label="AD (speedup 1)")
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
            f"{_label_ctx(r['context'])}\nR² = {r['r2']:.3f} on all {r['n_points']} sizes",
            fontsize=9.5,
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
    fig = _figure(7.6 * len(contexts), 5.0)
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
    costed = " ".join(n for n in result.notes if n.startswith("throughput:"))
    if costed:  # the one curve that is neither measured nor untimed says so
        measured = [METHOD_STYLE.get(m, (m,))[0] for m in dict.fromkeys(full["method"])]
        measured = [m for m in measured if "embedded" not in m]
        costed = f"engine: none for {', '.join(measured)} (AAT only) · {costed}"
    _suptitle(fig, result, costed)
    return fig
