"""The commands' figures: solve's combined model and its batch sweep, generate's run,
explore's design space, compare's algorithms, the tree methods' AAT curves. (Each
experiment kind draws its own figure in its module of `fpgasim.reproduce.kinds`, with the
helpers of `figures.style`, and returns a `Figure` for `reproduce.output` to save.)

Commands call one function each and name the file; matplotlib is imported only when a
figure is drawn (the Agg backend, no window), and every PNG is written through
`fileio.write_figure` (the CLI's output transaction).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.errors import InputError
from fpgasim.figures.style import (
    AAT_STYLE,
    COLORS,
    draw_aat_ar,
    draw_rooflines,
    legend_with_twin,
    load_matplotlib,
)
from fpgasim.fileio import write_figure
from fpgasim.solving.decision import USE_SD
from fpgasim.solving.solver import Solution
from fpgasim.studies.algorithm_comparison import Comparison, acceptance_label
from fpgasim.studies.explore import ExploreResult
from fpgasim.studies.generation import Generation
from fpgasim.tree.method_curves import METHODS

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






























# --------------------------------------------------------------------------- Fig. 1




# --------------------------------------------------------------------------- Fig. 2




# --------------------------------------------------------------------------- Fig. 4








# --------------------------------------------------------------------------- Fig. 5




# --------------------------------------------------------------------------- Fig. 6


