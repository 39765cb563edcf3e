"""The figures' shared style: matplotlib loaded on first use, the colours, the roofline and
AAT panels (`fpgasim solve --plot` and the reproduced Fig. 2 draw the same ones), and the
helpers every experiment kind's figure draws with (title and provenance caption, the
simulator's overlay, the AD marks, context ticks). The kinds' own figures live in their
kind modules (`fpgasim.reproduce.kinds`); the commands' figures in `figures.plots`.
matplotlib is imported only in this package (tests/house/test_one_plotting_module.py).
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from fpgasim.solving.decision import USE_AD

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class ExperimentOutput(Protocol):
    """What an experiment's figure reads of its result (`reproduce.ExperimentResult`)."""

    title: str
    aat_source: str
    aat_short: str
    engine: str
    sim_engine: str
    notes: tuple[str, ...]
    full: pd.DataFrame
    plot_data: dict[str, pd.DataFrame]


COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def load_matplotlib() -> Any:
    """matplotlib.pyplot with the Agg backend (every figure is written to a file, never
    shown): imported on first use, a second of start-up no other command pays. Titles and
    labels are plain text: they hold names read from files (a model `a$x^$b` is not
    math; as mathtext it failed to draw), so `$` is never parsed as mathtext."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


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


TOKS = "tokens/s"


METHOD_STYLE = {
    "prior_score": ("prior-score (tree search)", "tab:green", "-"),
    "width": ("width-based", "tab:blue", "--"),
    "depth": ("depth-based", "tab:orange", "-."),
    "eagle3_dynamic": ("EAGLE-3 dynamic", "tab:purple", "-"),
    "chain": ("chain", "tab:gray", ":"),
    "throughput": ("throughput-optimal (embedded AAT)", "tab:red", ":"),
    "optimal": ("AAT-optimal (embedded AAT)", "tab:brown", (0, (5, 1, 1, 1))),
}


def new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def wrap_text(text: str, fig: Figure, fontsize: float) -> str:
    """`text` broken into lines that fit the figure's width at `fontsize` (an average glyph
    is about 0.55 em wide), so no title or caption runs past the canvas edges."""
    width_pt = fig.get_figwidth() * 72 * 0.94
    chars = max(20, int(width_pt / (0.55 * fontsize)))
    return "\n".join(
        textwrap.fill(part, chars, break_on_hyphens=False) for part in text.split("\n")
    )


def caption_text(result: ExperimentOutput, extra: str = "") -> str:
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


def suptitle(fig: Figure, result: ExperimentOutput, extra: str = "") -> None:
    """The title and under it the provenance caption, wrapped to fit the canvas (one text:
    constrained layout then reserves its room above the panels)."""
    text = f"{result.title}\n{caption_text(result, extra)}"
    fig.suptitle(wrap_text(text, fig, 10.5), fontsize=10.5)


def overlay(ax: Axes, result: ExperimentOutput, x: pd.Series, column: str, color: str) -> None:
    """The simulator's twin of `column` (NAME_sim): thin, dashed, hollow markers, if present."""
    twin = f"{column}_sim"
    if not result.sim_engine or twin not in result.full:
        return
    ax.plot(x, result.full.loc[x.index, twin].astype(float), color=color, lw=1.1, ls="--",
            marker="o", ms=4, mfc="none")  # fmt: skip


def overlay_legend(ax: Axes, result: ExperimentOutput) -> None:
    """One legend entry for every thin dashed line with hollow markers: the simulator."""
    if result.sim_engine:
        ax.plot([], [], color="0.3", lw=1.1, ls="--", marker="o", mfc="none",
                label=f"{result.sim_engine} simulator (each curve's colour)")  # fmt: skip


def mark_ad(ax: Axes, result: ExperimentOutput, rows: pd.DataFrame, column: str) -> None:
    """Ring in grey every point of `column` (and of its simulator twin) whose decision is
    AD: a best x or speedup there is not used (docs/glossary.md, "decision")."""
    for col, decision in ((column, "decision"), (f"{column}_sim", "decision_sim")):
        if col not in rows or decision not in rows:
            continue
        ad = rows[rows[decision] == USE_AD]
        if not ad.empty:
            ax.plot(ad["context"], ad[col].astype(float), ls="none", marker="s", ms=11,
                    mfc="none", mec="0.45", mew=1.6)  # fmt: skip


def ad_legend(ax: Axes, result: ExperimentOutput) -> None:
    """The legend entry of `_mark_ad`'s grey squares, when any point is AD."""
    cols = [c for c in ("decision", "decision_sim") if c in result.full]
    if any((result.full[c] == USE_AD).any() for c in cols):
        ax.plot([], [], ls="none", marker="s", ms=9, mfc="none", mec="0.45", mew=1.6,
                label="grey square: use AD here (speedup <= 1)")  # fmt: skip


def context_ticks(ax: Axes, contexts: list[int]) -> None:
    """A log2 context axis ticked at the solved contexts, labelled 128, 1k, 16k."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(contexts, [f"{c // 1024}k" if c >= 1024 else str(c) for c in contexts])
    ax.minorticks_off()


def grid_shape(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(n, max_cols)
    return math.ceil(n / cols), cols


def label_ctx(context: int) -> str:
    return f"L = {context:,} tokens"


def one_workload(frame: pd.DataFrame) -> str:
    """'longspec / llama-3.1-8b / v80 / gov_report' of a frame holding one workload."""
    parts = []
    for col in ("algorithm", "model", "board", "task"):
        if col in frame and frame[col].nunique() == 1:
            parts.append(str(frame[col].iloc[0]))
    return " / ".join(parts)


def boards_of(frame: pd.DataFrame) -> str:
    """The boards of a frame, in order of appearance, comma-separated ('' if none)."""
    return ", ".join(dict.fromkeys(frame["board"])) if "board" in frame else ""
