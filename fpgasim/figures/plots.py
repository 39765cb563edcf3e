"""Every figure fpgasim draws, in one module: solve's combined model and its batch sweep,
generate's run, explore's design space, compare's algorithms, the tree methods' AAT curves
and the reproduced experiments' figures (each experiment kind's `plot`).

Commands call one function each and name the file; matplotlib is imported only when a
figure is drawn (the Agg backend, no window), and every PNG is written through
`fileio.write_figure` (the CLI's output transaction), except the experiments' figures,
which return a `Figure` for `reproduce.output` to save.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from fpgasim.errors import InputError
from fpgasim.fileio import write_figure
from fpgasim.solving.decision import USE_AD, USE_SD, decision_of
from fpgasim.solving.solver import Solution
from fpgasim.studies.algorithm_comparison import Comparison, acceptance_label
from fpgasim.studies.explore import ExploreResult
from fpgasim.studies.generation import Generation
from fpgasim.tree.method_curves import METHODS

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

# --------------------------------------------------------------------------- solve and generate

MAX_PANELS = 12
MARKERS = {
    "best": ("*", "tab:green", 16),
    "ori": ("X", "tab:red", 11),
    "naive": ("D", "tab:brown", 9),
}


def plot_solution(solution: Solution, path: Path, lowering: str = "study") -> None:
    """Write a PNG: one row per (task, context), rooflines left, AAT and AR right."""
    plt = load_matplotlib()

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
    plt = load_matplotlib()

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
    """Write a PNG of `solve --batch`: SD's best speedup over AD at each batch size solved,
    one series of points per (board, task, context), with the break-even line; right, the
    batch's tokens/s at each (docs/batching.md). Points only, no line between them: a
    batch between two solved ones was not solved, and a line would draw a crossover no
    one computed. The title names the board(s)."""
    plt = load_matplotlib()

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
        line, = ax_s.plot(g["batch"], g["best_speedup"], marker="o", ls="none", ms=7,
                          label=label)
        ax_t.plot(g["batch"], g["batch_tokens_per_s"], marker="o", ls="none", ms=7,
                  color=line.get_color(), label=label)
    ax_s.axhline(1.0, color="tab:red", ls=":", lw=1, label="SD = AD")
    for ax in (ax_s, ax_t):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch (requests decoded together)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
    ax_s.set_ylabel("SD's best speedup over AD")
    ax_s.set_title("SD's speedup at each batch solved")
    ax_t.set_ylabel("the batch's tokens/s (decision taken)")
    ax_t.set_title("Throughput of the whole batch")
    first = summary.iloc[0]
    boards = ", ".join(dict.fromkeys(summary["board"]))
    fig.suptitle(f"SD under batching on {boards}: {first['algorithm']} on {first['model']}, "
                 f"{first['engine']} engine (the batches solved: "
                 f"{', '.join(map(str, sorted(summary['batch'].unique())))})", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    write_figure(fig, Path(path))


# --------------------------------------------------------------------------- explore


def plot_explore(result: ExploreResult, path: str | Path) -> None:
    """Top row: per drafter, the Pareto front of delivered tokens/s against DSPs used (one
    line per context; non-fitting boards hollow; where every variant uses the same DSPs the
    axis is that one count, said in the title). Below, over the first two varied fields,
    one pair of heat maps per context (over the first field against the contexts when one
    field is varied): delivered tokens/s, and SD's speedup on a colour scale centred on 1.0
    (break-even: green pays, red does not), cells where AD wins grey, hatched and labelled
    'AD' with AD's rate. The title is wrapped and given its own room."""
    plt = load_matplotlib()
    from matplotlib.patches import Patch

    summary, axes = result.summary, result.axes
    algorithms = list(dict.fromkeys(summary["algorithm"]))
    contexts = sorted(summary["context"].unique())
    x_axis = axes[0] if axes else None
    y_axis = axes[1] if len(axes) >= 2 else "context"
    # (rows of the frame, suffix of the titles) of each pair of heat maps
    panels = ([(None, "")] if y_axis == "context" else
              [(c, f", L = {c:,}") for c in contexts])
    clusters = "pareto_cards" in summary  # an explore over clusters: two more fronts
    n_rows = 1 + 2 * len(panels) + (2 if clusters else 0)
    fig, grid = plt.subplots(n_rows, len(algorithms), squeeze=False,
                             figsize=(4.8 * len(algorithms) + 0.8, 4.0 * n_rows))
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(contexts)))
    for j, algorithm in enumerate(algorithms):
        mine = summary[summary["algorithm"] == algorithm]
        ax = grid[0][j]
        for colour, context in zip(colours, contexts, strict=True):
            at = mine[mine["context"] == context]
            ax.scatter(at.loc[at["fits"], "dsps_used"], at.loc[at["fits"], "tokens_per_s"], s=10,
                       color=colour, alpha=0.4)
            ax.scatter(at.loc[~at["fits"], "dsps_used"], at.loc[~at["fits"], "tokens_per_s"],
                       s=10, facecolors="none", edgecolors=colour, alpha=0.4)
            front = at[at["pareto"]].sort_values("dsps_used")
            ax.step(front["dsps_used"], front["tokens_per_s"], where="post", color=colour,
                    marker="o", ms=3, label=f"L = {context:,}")
        ax.set_xlabel("DSP slices used (all pipelines)", fontsize=8)
        ax.set_ylabel("delivered tokens/s (best of SD and AD)", fontsize=8)
        dsps = sorted(mine["dsps_used"].unique())
        if len(dsps) == 1:  # one count: an axis of that count, not a span matplotlib invents
            ax.set_xlim(dsps[0] * 0.9, dsps[0] * 1.1)
            ax.set_xticks([dsps[0]], [f"{int(dsps[0]):,}"])
            ax.set_title(f"{algorithm}: Pareto front (every variant: {int(dsps[0]):,} DSPs)",
                         fontsize=10)
        else:
            ax.set_title(f"{algorithm}: Pareto front", fontsize=10)
        ax.legend(fontsize=7)
        for k, (context, where) in enumerate(panels):
            frame = mine if context is None else mine[mine["context"] == context]
            for row, (value, label, fmt) in enumerate(
                (("tokens_per_s", "delivered tokens/s", "{:.3g}"),
                 ("speedup", "SD speedup over AD (x)", "{:.2f}")), start=1 + 2 * k):
                ax = grid[row][j]
                if x_axis is None:
                    ax.set_axis_off()
                    continue
                _heat(ax, frame, x_axis, y_axis, value, fmt)
                ax.set_title(f"{algorithm}: {label}{where}", fontsize=9)
        if clusters:
            for ax, (cost, flag, label) in zip(
                    (grid[n_rows - 2][j], grid[n_rows - 1][j]),
                    (("cards", "pareto_cards", "cards"),
                     ("cluster_w", "pareto_watts", "cluster watts (W)")), strict=True):
                _cluster_front(ax, mine, contexts, colours, cost, flag)
                ax.set_xlabel(label, fontsize=8)
                ax.set_ylabel("delivered tokens/s", fontsize=8)
                ax.set_title(f"{algorithm}: tokens/s against {label}", fontsize=10)
    first = summary.iloc[0]
    title = textwrap.fill(
        f"Design space: {first['model']} on {first['fpga']} / {first['design']} variants "
        f"(engine {first['engine']}, AAT {'/'.join(sorted(set(summary['aat_basis'])))})",
        int(22 * len(algorithms) + 20))
    lines = title.count("\n") + 1
    fig.suptitle(title, fontsize=11)
    fig.legend(handles=[Patch(facecolor="0.85", hatch="///", edgecolor="0.55",
                              label="use AD: SD's best speedup <= 1 (the cell shows AD's rate)")],
               loc="lower center", fontsize=8, frameon=False)
    height = fig.get_figheight()
    top = 1 - (0.25 + 0.22 * lines) / height  # inches for the title's lines
    fig.tight_layout(rect=(0, 0.25 / height, 1, top))
    write_figure(fig, path)


def _cluster_front(ax, mine: pd.DataFrame, contexts, colours, cost: str, flag: str) -> None:
    """Delivered tokens/s of every variant against `cost` (cards or cluster watts), one
    colour per context, its Pareto front (`flag`) as a step line; non-fitting hollow."""
    for colour, context in zip(colours, contexts, strict=True):
        at = mine[mine["context"] == context]
        ax.scatter(at.loc[at["fits"], cost], at.loc[at["fits"], "batch_tokens_per_s"], s=10,
                   color=colour, alpha=0.4)
        ax.scatter(at.loc[~at["fits"], cost], at.loc[~at["fits"], "batch_tokens_per_s"], s=10,
                   facecolors="none", edgecolors=colour, alpha=0.4)
        front = at[at[flag]].sort_values(cost)
        ax.step(front[cost], front["batch_tokens_per_s"], where="post", color=colour,
                marker="o", ms=3, label=f"L = {context:,}")
    ax.legend(fontsize=7)


#: The speedup heat map's colours: red below break-even, green above, centred on 1.0.
SPEEDUP_CMAP = "RdYlGn"


def _heat(ax, frame: pd.DataFrame, x_axis: str, y_axis: str, value: str, fmt: str) -> None:
    """One heat map of `value` over (x_axis, y_axis); AD cells grey and hatched. Delivered
    tokens/s on viridis; the speedup on `SPEEDUP_CMAP` with its centre at 1.0 (break-even)
    and a range symmetric about it, so a cell's colour says whether SD pays, whatever the
    spread of the values."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    table = frame.pivot_table(index=y_axis, columns=x_axis, values=value, aggfunc="first")
    use_ad = (frame.assign(ad=frame["decision"] != USE_SD)
              .pivot_table(index=y_axis, columns=x_axis, values="ad", aggfunc="first")
              .reindex_like(table).fillna(False).to_numpy(bool))
    values = table.to_numpy(float)
    if value == "speedup":
        finite = values[np.isfinite(values)]
        half = max([0.05, *(abs(finite - 1.0).tolist())])
        # symmetric about break-even, but no speedup is below 0
        low = max(1.0 - half, 0.0)
        norm, cmap = TwoSlopeNorm(vcenter=1.0, vmin=low, vmax=1.0 + half), SPEEDUP_CMAP
    else:
        norm, cmap = None, "viridis"
    image = ax.imshow(np.where(use_ad, np.nan, values), origin="lower", cmap=cmap, norm=norm,
                      aspect="auto")
    for (i, k), v in np.ndenumerate(values):
        if not np.isfinite(v):
            continue
        if use_ad[i, k]:
            ax.add_patch(plt.Rectangle((k - 0.5, i - 0.5), 1, 1, facecolor="0.85", hatch="///",
                                       edgecolor="0.55", linewidth=0))
            ax.text(k, i, f"AD\n{fmt.format(v)}", ha="center", va="center", fontsize=7)
        else:
            ax.text(k, i, fmt.format(v), ha="center", va="center", fontsize=7)
    ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns], fontsize=7)
    ax.set_yticks(range(table.shape[0]), [str(r) for r in table.index], fontsize=7)
    ax.set_xlabel(x_axis, fontsize=8)
    ax.set_ylabel(y_axis, fontsize=8)
    bar = plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if value == "speedup":
        bar.set_label("1.0 = break-even", fontsize=7)


# --------------------------------------------------------------------------- compare


COMPARISON_MARKERS = ("o", "s", "^", "D", "v", "P")


def plot_comparison(comparison: Comparison, path: Path) -> None:
    """PNG, 2 x 2: speedup vs context; AAT at the best x; step time split into T_v and T_d
    (in AD steps); speedup(x) at the middle context."""
    plt = load_matplotlib()

    if Path(path).suffix.lower() != ".png":
        raise InputError("plot", str(path), "a file ending in .png")
    t = comparison.table
    algos = list(dict.fromkeys(t.sort_values("algorithm")["algorithm"]))
    contexts = sorted(t["context"].unique())
    style = {a: (COLORS[i % len(COLORS)], COMPARISON_MARKERS[i % len(COMPARISON_MARKERS)])
             for i, a in enumerate(algos)}
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    ax_s, ax_a, ax_t, ax_x = axes[0, 0], axes[0, 1], axes[1, 0], axes[1, 1]
    pos = np.arange(len(contexts))
    for i, a in enumerate(algos):
        rows = t[t["algorithm"] == a].set_index("context").loc[contexts]
        color, marker = style[a]
        ax_s.plot(pos, rows["best_speedup"], marker=marker, color=color, lw=2, ms=8, label=a)
        labels = zip(pos, rows["best_speedup"], rows["best_verify_len"], strict=True)
        for p, sp, x in labels:  # labels above for even, below for odd algorithms
            ax_s.annotate(
                f"x={x}",
                (p, sp),
                textcoords="offset points",
                xytext=(0, 8 if i % 2 == 0 else -15),
                ha="center",
                fontsize=8,
                color=color,
            )
        ax_a.plot(pos, rows["best_aat"], marker=marker, color=color, lw=2, ms=8, label=a)
    ax_s.axhline(1.0, color="gray", ls="--", lw=1, label="AD (speedup 1)")
    for ax, title, ylabel in (
        (ax_s, "Best speedup over AD (label: best x)", "speedup = P_eff(x*) / P(1)"),
        (ax_a, "Accepted tokens per iteration at the best x", "AAT(x*)"),
    ):
        ax.set_xticks(pos, [str(c) for c in contexts])
        ax.set_xlabel("context length L")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
    ax_s.set_ylim(0, float(t["best_speedup"].max()) * 1.15)
    ax_a.set_ylim(1, float(t["best_aat"].max()) * 1.1)
    width = 0.8 / max(1, len(algos))
    for i, a in enumerate(algos):
        rows = t[t["algorithm"] == a].set_index("context").loc[contexts]
        ad_ms = 1e3 / rows["ad_tokens_per_s"]
        tv, td = rows["verify_ms"] / ad_ms, rows["draft_ms"] / ad_ms
        xs = pos - 0.4 + width * (i + 0.5)
        color = style[a][0]
        ax_t.bar(xs, tv, width, color=color, alpha=0.45, edgecolor=color)
        ax_t.bar(xs, td, width, bottom=tv, color=color, edgecolor="black", hatch="//")
        for x, top, passes in zip(xs, tv + td, rows["draft_passes"], strict=True):
            ax_t.annotate(
                f"{passes}p",
                (x, top),
                textcoords="offset points",
                xytext=(0, 2),
                ha="center",
                fontsize=7,
            )
    handles = [plt.Rectangle((0, 0), 1, 1, color=style[a][0]) for a in algos]
    handles += [
        plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="gray", alpha=0.6),
        plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="black", hatch="//"),
    ]
    ax_t.legend(
        handles,
        [*algos, "T_v (verify)", "T_d (draft)"],
        fontsize=8,
        ncol=len(handles),
        loc="upper center",
        handlelength=1.2,
        columnspacing=0.8,
    )
    ax_t.set_ylim(
        0, float((t["verify_ms"] + t["draft_ms"]).div(1e3 / t["ad_tokens_per_s"]).max()) * 1.22
    )
    ax_t.set_xticks(pos, [str(c) for c in contexts])
    ax_t.set_xlabel("context length L")
    ax_t.set_ylabel("time per iteration / AD step time")
    ax_t.set_title("Step at the best x: T_v + T_d (hatched; label: draft passes)")
    ax_t.grid(alpha=0.3, axis="y")
    mid = contexts[len(contexts) // 2]
    c = comparison.curves
    for a in algos:
        cur = c[(c["algorithm"] == a) & (c["context"] == mid)].sort_values("verify_len")
        color, marker = style[a]
        ax_x.plot(cur["verify_len"], cur["speedup"], color=color, lw=1.8, label=a)
        best = cur.loc[cur["speedup"].idxmax()]
        ax_x.plot(
            best["verify_len"],
            best["speedup"],
            marker=marker,
            color=color,
            ms=10,
            markeredgecolor="black",
        )
    ax_x.axhline(1.0, color="gray", ls="--", lw=1)
    ax_x.set_xscale("log")
    ax_x.set_xlabel("verification length x (tree nodes + 1)")
    ax_x.set_ylabel("speedup P_eff(x) / P(1)")
    ax_x.set_title(f"Speedup over x at L = {mid} (marker: best x)")
    ax_x.grid(alpha=0.3, which="both")
    ax_x.legend(fontsize=9)
    first = t.iloc[0]
    fig.suptitle(
        f"{' vs '.join(algos)} on {first['model']}, board {first['board']} "
        f"({first['engine']} engine; AAT: {acceptance_label(t)})",
        fontsize=13,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    write_figure(fig, Path(path))


# --------------------------------------------------------------------------- tree methods


def plot_method_curves(frame: pd.DataFrame, title: str, path: Path) -> None:
    """Write a PNG of AAT against x, one line per tree-construction method (`fpgasim tree
    compare`'s `method_curves.compare_curves` frame)."""
    plt = load_matplotlib()

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in METHODS:
        part = frame[frame["method"] == method]
        ax.plot(part["verify_len"], part["aat"], label=method.replace("_", "-"), lw=1.6)
    ax.set_xlabel("verification length x (tokens)")
    ax.set_ylabel("expected AAT (tokens / iteration)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    write_figure(fig, Path(path), dpi=120)


# --------------------------------------------------------------------------- reproduced experiments


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


def _suptitle(fig: Figure, result: ExperimentOutput, extra: str = "") -> None:
    """The title and under it the provenance caption, wrapped to fit the canvas (one text:
    constrained layout then reserves its room above the panels)."""
    text = f"{result.title}\n{caption_text(result, extra)}"
    fig.suptitle(_wrap(text, fig, 10.5), fontsize=10.5)


def _overlay(ax: Axes, result: ExperimentOutput, x: pd.Series, column: str, color: str) -> None:
    """The simulator's twin of `column` (NAME_sim): thin, dashed, hollow markers, if present."""
    twin = f"{column}_sim"
    if not result.sim_engine or twin not in result.full:
        return
    ax.plot(x, result.full.loc[x.index, twin].astype(float), color=color, lw=1.1, ls="--",
            marker="o", ms=4, mfc="none")  # fmt: skip


def _overlay_legend(ax: Axes, result: ExperimentOutput) -> None:
    """One legend entry for every thin dashed line with hollow markers: the simulator."""
    if result.sim_engine:
        ax.plot([], [], color="0.3", lw=1.1, ls="--", marker="o", mfc="none",
                label=f"{result.sim_engine} simulator (each curve's colour)")  # fmt: skip


def _mark_ad(ax: Axes, result: ExperimentOutput, rows: pd.DataFrame, column: str) -> None:
    """Ring in grey every point of `column` (and of its simulator twin) whose decision is
    AD: a best x or speedup there is not used (docs/glossary.md, "decision")."""
    for col, decision in ((column, "decision"), (f"{column}_sim", "decision_sim")):
        if col not in rows or decision not in rows:
            continue
        ad = rows[rows[decision] == USE_AD]
        if not ad.empty:
            ax.plot(ad["context"], ad[col].astype(float), ls="none", marker="s", ms=11,
                    mfc="none", mec="0.45", mew=1.6)  # fmt: skip


def _ad_legend(ax: Axes, result: ExperimentOutput) -> None:
    """The legend entry of `_mark_ad`'s grey squares, when any point is AD."""
    cols = [c for c in ("decision", "decision_sim") if c in result.full]
    if any((result.full[c] == USE_AD).any() for c in cols):
        ax.plot([], [], ls="none", marker="s", ms=9, mfc="none", mec="0.45", mew=1.6,
                label="grey square: use AD here (speedup <= 1)")  # fmt: skip


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


def speedup_curve_figure(result: ExperimentOutput) -> Figure:
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


def rooflines_figure(result: ExperimentOutput) -> Figure:
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


def sparse_fit_models_figure(result: ExperimentOutput) -> Figure:
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


def boards_grid_figure(result: ExperimentOutput) -> Figure:
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


def fit_table_figure(result: ExperimentOutput) -> Figure:
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


def aat_curves_figure(result: ExperimentOutput) -> Figure:
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
