"""Figures of the analysis: the combined model (per (task, context) the rooflines and P_eff,
and the AAT/AR curve) and a generation's run (tokens against time beside AD; x and AAT)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fpgasim.analysis.generation import Generation
from fpgasim.analysis.solver import Solution
from fpgasim.errors import InputError
from fpgasim.fileio import write_figure

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from matplotlib.axes import Axes

MAX_PANELS = 12
MARKERS = {
    "best": ("*", "tab:green", 16),
    "ori": ("X", "tab:red", 11),
    "naive": ("D", "tab:brown", 9),
}


def plot_solution(solution: Solution, path: Path, lowering: str = "study") -> None:
    """Write a PNG: one row per (task, context), rooflines left, AAT and AR right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = solution.summary.sort_values(["task", "context"])
    if len(summary) > MAX_PANELS:
        raise InputError("plot", str(path), f"at most {MAX_PANELS} (task, context) rows")
    if Path(path).suffix.lower() != ".png":
        raise InputError("plot", str(path), "a file ending in .png")
    n = len(summary)
    fig, axes = plt.subplots(n, 2, figsize=(13, 3.6 * n), squeeze=False)
    for row, s in zip(axes, summary.to_dict("records"), strict=True):
        _rooflines(row[0], solution, s)
        _aat(row[1], solution, s)
    first = summary.iloc[0]
    fig.suptitle(
        f"Combined model: {first['algorithm']} on {first['model']}, board {first['board']} "
        f"({first['engine']} engine, {lowering} lowering, AAT {first['aat_source']})",
        fontsize=13,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.98 if n > 2 else 0.95))
    write_figure(fig, Path(path))


def _curve(solution: Solution, s: dict) -> pd.DataFrame:
    c = solution.curves
    return c[(c["task"] == s["task"]) & (c["context"] == s["context"])].sort_values("verify_len")


def _rooflines(ax, solution: Solution, s: dict) -> None:
    roof = solution.rooflines[solution.rooflines["context"] == s["context"]]
    curve = _curve(solution, s)
    draw_rooflines(
        ax,
        roof["verify_len"],
        roof["p_tokens_per_s"],
        (curve["verify_len"], curve["p_disc_tokens_per_s"]),
        (curve["verify_len"], curve["p_eff_tokens_per_s"]),
        s["ad_tokens_per_s"],
        ad_label=f"AD = P(1) = {s['ad_tokens_per_s']:.1f} tok/s",
    )
    ax.plot(
        roof["verify_len"],
        roof["p_fit_tokens_per_s"],
        color="tab:blue",
        ls=":",
        lw=1,
        label=f"piecewise fit, x_R = {s['x_ridge']}",
    )
    for name in ("best", "ori", "naive"):
        x, y = s[f"{name}_verify_len"], s[f"{name}_tokens_per_s"]
        if x is None or (isinstance(x, float) and np.isnan(x)) or np.isnan(y):
            continue
        marker, color, size = MARKERS[name]
        ax.plot(
            [x],
            [y],
            marker=marker,
            color=color,
            ms=size,
            ls="none",
            label=f"{name}: x={int(x)}, {y:.1f} tok/s ({s[f'{name}_speedup']:.2f}x)",
        )
    ax.set_title(f"{s['task']}, context {s['context']}: {s['regime']}, {s['decision']}")
    ax.legend(fontsize=7, loc="center right", framealpha=0.85)


def _aat(ax, solution: Solution, s: dict) -> None:
    curve = _curve(solution, s)
    twin = draw_aat_ar(ax, curve["verify_len"], curve["aat"], curve["ar"])
    xs = np.linspace(max(1.0, curve["verify_len"].min()), curve["verify_len"].max(), 200)
    fit = s["aat_a"] + s["aat_b"] * np.log(xs - s["aat_c"])
    ax.plot(
        xs,
        fit,
        color=AAT_STYLE["color"],
        lw=1,
        ls=":",
        label=(
            f"fit {s['aat_a']:.2f} + {s['aat_b']:.2f}·ln(x − {s['aat_c']:.2f}), "
            f"R² {s['aat_r2_fit']:.3f} fit / {s['aat_r2_all']:.3f} all"
        ),
    )
    for name in ("best", "ori", "naive"):
        x, y = s[f"{name}_verify_len"], s[f"{name}_aat"]
        if x is None or (isinstance(x, float) and np.isnan(x)) or np.isnan(y):
            continue
        marker, color, size = MARKERS[name]
        ax.plot(
            [x], [y], marker=marker, color=color, ms=size, ls="none", label=f"{name} x={int(x)}"
        )
    ax.set_title(f"AAT and acceptance rate, context {s['context']} ({s['aat_source']})")
    legend_with_twin(ax, twin, fontsize=7.5, loc="center right")


# --------------------------------------------------------------------------- shared drawing
# The roofline / P_eff panels of `fpgasim solve --plot` and of `fpgasim reproduce fig2`.

X_LABEL = "verification length x (tokens per verification)"
ROOFLINE_STYLE: dict[str, dict] = {
    "p": {"color": "tab:blue", "lw": 2, "label": "P(x) = x / T_v: primary roofline"},
    "p_disc": {
        "color": "tab:orange",
        "lw": 1.8,
        "label": "P_disc(x) = x / (T_v + T_d): discounted roofline",
    },
    "p_eff": {"color": "tab:green", "lw": 2.2, "label": "P_eff(x) = AAT / (T_v + T_d): combined"},
}
AAT_STYLE = {"color": "tab:purple", "lw": 2, "label": "AAT(x): accepted tokens / iteration"}
AR_STYLE = {"color": "tab:red", "lw": 1.4, "ls": "--", "label": "AR(x) = AAT / x: acceptance rate"}


def draw_rooflines(
    ax, x, p, p_disc, p_eff, ad_tokens_per_s: float, ad_label: str = "AD speed P(1)"
) -> None:
    """P(x), P_disc(x), P_eff(x) on a log throughput axis, and the AD speed P(1).

    `p` is over `x`; `p_disc` and `p_eff` are each an (x, y) pair or, like `p`, over `x`.
    """
    for key, y in (("p", p), ("p_disc", p_disc), ("p_eff", p_eff)):
        xs, ys = y if isinstance(y, tuple) else (x, y)
        ax.plot(xs, ys, **ROOFLINE_STYLE[key])
    ax.axhline(
        ad_tokens_per_s,
        color="black",
        ls=":",
        lw=1,
        label=ad_label,
    )
    from matplotlib.ticker import FuncFormatter

    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(v)[0] in "25" else ""))
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel("throughput (tokens/s, log scale)")
    ax.grid(True, which="both", alpha=0.3)


def draw_aat_ar(ax, x, aat, ar) -> Axes:
    """AAT(x) on `ax` and AR(x) = AAT/x on a right-hand twin axis (returned)."""
    ax.plot(x, aat, marker=".", ms=3.5, **AAT_STYLE)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel("AAT (accepted tokens / iteration)")
    ax.grid(True, alpha=0.3)
    twin = ax.twinx()
    twin.plot(x, ar, **AR_STYLE)
    twin.set_ylabel("AR (accepted / verified)", color=AR_STYLE["color"])
    twin.set_ylim(0, 1.05)
    return twin


def legend_with_twin(ax, twin, **kwargs) -> None:
    """One legend for the lines of an axis and of its twin."""
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], **kwargs)


def plot_generation(generation: Generation, path: Path) -> None:
    """Write a PNG of one `generate` run: tokens generated against time for SD and its AD
    baseline (left), and per SD step the verification length x and the accepted tokens
    AAT(x) (right), so the run's speedup and where it comes from are visible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if Path(path).suffix.lower() != ".png":
        raise InputError("plot", str(path), "a file ending in .png")
    s, steps = generation.summary, generation.steps
    ad = generation.ad_steps if generation.ad_steps is not None else steps
    fig, (ax_t, ax_x) = plt.subplots(1, 2, figsize=(13, 4.8))
    ttft = float(s["ttft_s"])
    for frame, label, color in (
        (ad, f"AD: {s['ad_decode_tokens_per_s']:.3g} tok/s decode", "tab:gray"),
        *(
            [(steps, f"SD ({s['algorithm']}): {s['decode_tokens_per_s']:.3g} tok/s decode, "
              f"{s['decode_speedup']:.2f}x", "tab:blue")]
            if s["algorithm"]
            else []
        ),
    ):
        done = np.minimum(frame["generated_before"] + frame["aat"], float(s["decode_len"]))
        ax_t.step([0.0, ttft, *frame["elapsed_s"]], [0.0, 0.0, *done], where="post",
                  color=color, lw=1.8, label=label)
    ax_t.axvline(ttft, color="tab:red", ls=":", lw=1, label=f"prefill (TTFT {ttft:.3g} s)")
    ax_t.set_xlabel("time since the prompt arrived (s)")
    ax_t.set_ylabel("tokens generated")
    ax_t.set_title("Tokens generated against time")
    ax_t.grid(alpha=0.3)
    ax_t.legend(fontsize=9, loc="upper left")
    step_no = np.arange(1, len(steps) + 1)
    ax_x.plot(step_no, steps["verify_len"], drawstyle="steps-mid", color="tab:orange",
              lw=1.6, label="x: tokens verified per step")
    ax_x.plot(step_no, steps["aat"], drawstyle="steps-mid", color="tab:green", lw=1.6,
              label="AAT(x): tokens accepted per step")
    ax_x.set_xlabel("decode step")
    ax_x.set_ylabel("tokens per step")
    ax_x.set_ylim(0, max(2.0, float(steps["verify_len"].max())) * 1.15)
    ax_x.set_title("Verification length and accepted tokens per step")
    ax_x.grid(alpha=0.3)
    ax_x.legend(fontsize=9, loc="lower right")
    what = f"{s['algorithm']}, AAT {s['aat_source']} ({s['aat_basis']})" if s["algorithm"] else "AD"
    fig.suptitle(
        f"generate: {s['model']} on {s['board']}, P={s['prompt_len']} D={s['decode_len']}, "
        f"{what}, {s['engine']} engine",
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    write_figure(fig, Path(path))


def plot_batch_speedups(summary: pd.DataFrame, path: Path) -> None:
    """Write a PNG of `solve --batch`: SD's best speedup over AD against the batch size, one
    line per (board, task, context), with the break-even line; right, the batch's tokens/s
    against the batch size (docs/batching.md)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if Path(path).suffix.lower() != ".png":
        raise InputError("plot", str(path), "a file ending in .png")
    fig, (ax_s, ax_t) = plt.subplots(1, 2, figsize=(13, 4.8))
    keys = ["board", "task", "context"]
    multi_task = summary["task"].nunique() > 1
    multi_board = summary["board"].nunique() > 1
    for (board, task, context), g in summary.groupby(keys, sort=True):
        g = g.sort_values("batch")
        label = f"L={context}" + (f", {task}" if multi_task else "") + \
            (f", {board}" if multi_board else "")
        line, = ax_s.plot(g["batch"], g["best_speedup"], marker="o", lw=1.6, label=label)
        ax_t.plot(g["batch"], g["batch_tokens_per_s"], marker="o", lw=1.6,
                  color=line.get_color(), label=label)
    ax_s.axhline(1.0, color="tab:red", ls=":", lw=1, label="SD = AD")
    for ax in (ax_s, ax_t):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch (requests decoded together)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
    ax_s.set_ylabel("SD's best speedup over AD")
    ax_s.set_title("Where SD stops paying as the batch grows")
    ax_t.set_ylabel("the batch's tokens/s (decision taken)")
    ax_t.set_title("Throughput of the whole batch")
    first = summary.iloc[0]
    fig.suptitle(f"solve --batch: {first['algorithm']} on {first['model']}, "
                 f"{first['engine']} engine", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    write_figure(fig, Path(path))
