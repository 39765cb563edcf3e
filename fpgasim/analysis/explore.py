"""Design-space exploration: hypothetical boards (PE array x bandwidth) solved for best x.

Answers "more DSPs or more bandwidth?": every derived board is costed at every x of the
AAT curve through the sweep runner (executors, result cache, resume), then P_eff =
AAT / (T_v + T_d) picks the best x per (board, context).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.analysis.aat import load_aat_tables
from fpgasim.analysis.aat_curves import (
    AatCurve,
    embedded_curves,
    max_verify_len,
    measured_curves,
)
from fpgasim.analysis.decision import USE_SD, decision_of
from fpgasim.config.schema import Algorithm, Board, TargetModel
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.fileio import write_figure
from fpgasim.simulate import Point
from fpgasim.sweep.cache import SweepCache
from fpgasim.sweep.executors import Executor
from fpgasim.sweep.grid import check_points
from fpgasim.sweep.runner import SweepProgress, SweepStats, run_points
from fpgasim.sweep.space import derive_boards

#: Columns of the per-(board, context) summary, inputs first.
EXPLORE_COLUMNS = [
    "board",
    "pe_array",
    "macs_per_cycle",
    "bandwidth_gb_s",
    "model",
    "algorithm",
    "context",
    "engine",
    "aat_source",
    "ad_tokens_per_s",
    "best_verify_len",
    "best_tree",
    "best_aat",
    "best_tokens_per_s",
    "speedup",
    "decision",
    "fits_memory",
]


@dataclass(frozen=True)
class ExploreResult:
    """summary: one row per (board, context) (EXPLORE_COLUMNS); points: one row per x."""

    summary: pd.DataFrame
    points: pd.DataFrame
    stats: SweepStats


def explore_curves(
    algorithm: Algorithm,
    model: TargetModel,
    contexts: Sequence[int],
    aat_dir: str | None = None,
    task: str | None = None,
) -> list[AatCurve]:
    """The AAT curve (x -> AAT, tree) per context: measured with `aat_dir`, else embedded."""
    if aat_dir is None:
        return embedded_curves(algorithm, contexts)
    tables = load_aat_tables(aat_dir)
    return measured_curves(
        tables, algorithm, model.id, contexts, [task] if task else None, aat_source="measured"
    )


def explore_points(
    boards: Sequence[Board], model: TargetModel, algorithm: Algorithm, curves: Sequence[AatCurve]
) -> list[Point]:
    """For every board and curve: the AD point (x = 1) then one SD point per x of the curve."""
    points = []
    for board in boards:
        for curve in curves:
            points.append(Point(board, model, curve.context, 1))
            for x, aat, tree in curve.points[["verify_len", "aat", "tree"]].itertuples(index=False):
                points.append(
                    Point(
                        board,
                        model,
                        curve.context,
                        int(x),
                        algorithm,
                        tree,
                        accepted_from_aat(float(aat)),
                    )
                )
    return points


def check_explore_size(
    boards: int, contexts: Sequence[int], algorithms: Sequence[Algorithm], field: str,
    value: object,
) -> None:
    """Refuse, before any work, an exploration past `MAX_POINTS` points: every board at
    every context has its AD point and one per x of each algorithm's embedded curve
    (x = 2 .. `max_verify_len`)."""
    per = 1 + sum(max_verify_len(a) - 1 for a in algorithms)
    check_points(boards * len(contexts) * per, field, value,
                 f"{boards} board(s) x {len(contexts)} contexts x {per} points")


def explore(
    base: Board,
    pe_arrays: Sequence[tuple[int, int]],
    bandwidths_gb_s: Sequence[float],
    model: TargetModel,
    algorithm: Algorithm,
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    aat_dir: str | None = None,
    task: str | None = None,
    progress: SweepProgress | None = None,
) -> ExploreResult:
    """Solve every (PE array, bandwidth) variant of `base` at every context."""
    field = "pe_arrays/bandwidths/contexts"
    shown = (f"{len(pe_arrays)} PE arrays, {len(bandwidths_gb_s)} bandwidths, "
             f"{len(contexts)} contexts")
    if aat_dir is None:  # the embedded curves' size is known before they are computed
        check_explore_size(len(pe_arrays) * len(bandwidths_gb_s), contexts, [algorithm],
                           field, shown)
    curves = explore_curves(algorithm, model, contexts, aat_dir, task)
    count = len(pe_arrays) * len(bandwidths_gb_s) * sum(1 + len(c.points) for c in curves)
    check_points(count, field, shown, "the boards x their curves' points")
    boards = derive_boards(base, pe_arrays, bandwidths_gb_s)
    points = explore_points(boards, model, algorithm, curves)
    rows, stats = run_points(
        points,
        engine,
        executor,
        workers=workers,
        scheduler=scheduler,
        cache=cache,
        progress=progress,
    )
    aat_of = {
        (c.context, int(x)): float(a)
        for c in curves
        for x, a in c.points[["verify_len", "aat"]].itertuples(index=False)
    }
    source = curves[0].aat_source if curves else ""
    frame = pd.DataFrame(rows)
    by_name = {b.name: b for b in boards}
    frame["pe_array"] = [
        f"{by_name[n].pe_array.rows}x{by_name[n].pe_array.cols}" for n in frame["board"]
    ]
    frame["macs_per_cycle"] = [by_name[n].macs_per_cycle for n in frame["board"]]
    frame["bandwidth_gb_s"] = [by_name[n].memory.bandwidth_gb_s for n in frame["board"]]
    frame["aat"] = [
        1.0 if x == 1 else aat_of[(c, x)]
        for c, x in zip(frame["context"], frame["verify_len"], strict=True)
    ]
    draft_s = frame["draft_s"].fillna(0.0) if "draft_s" in frame else 0.0
    frame["p_eff_tokens_per_s"] = frame["aat"] / (frame["verify_s"] + draft_s)
    summary = summarise(frame, engine, source, algorithm.id)
    return ExploreResult(summary, frame, stats)


def summarise(frame: pd.DataFrame, engine: str, aat_source: str, algorithm: str) -> pd.DataFrame:
    """Best x per (board, context): argmax P_eff (the smaller x on ties), speedup over AD."""
    out = []
    for (board, context), group in frame.groupby(["board", "context"], sort=False):
        ad = group.loc[group["verify_len"] == 1].iloc[0]
        out.append(
            {
                "board": board,
                "pe_array": ad["pe_array"],
                "macs_per_cycle": ad["macs_per_cycle"],
                "bandwidth_gb_s": ad["bandwidth_gb_s"],
                "algorithm": algorithm,
                "context": int(context),
                "engine": engine,
                "aat_source": aat_source,
                **best_of(group),
            }
        )
    return pd.DataFrame(out, columns=EXPLORE_COLUMNS)


def best_of(group: pd.DataFrame) -> dict:
    """AD and the best x (argmax P_eff, the smaller x on ties) of one group of points that
    share board, drafter and context: the result columns of explore and the design space."""
    ad = group.loc[group["verify_len"] == 1].iloc[0]
    sd = group.loc[group["verify_len"] >= 2].sort_values("verify_len")
    best = sd.loc[sd["p_eff_tokens_per_s"].idxmax()]
    p1 = float(ad["p_eff_tokens_per_s"])
    speedup = float(best["p_eff_tokens_per_s"]) / p1
    return {
        "model": ad["model"],
        "ad_tokens_per_s": p1,
        "best_verify_len": int(best["verify_len"]),
        "best_tree": best["tree"],
        "best_aat": float(best["aat"]),
        "best_tokens_per_s": float(best["p_eff_tokens_per_s"]),
        "speedup": speedup,
        "decision": decision_of(speedup),
        "fits_memory": bool(best["fits_memory"]),
    }


def verdict(summary: pd.DataFrame) -> list[str]:
    """Per context: from the smallest board, does one step more compute or one step more
    bandwidth raise the best tokens/s more? Plus the overall best board."""
    lines = []
    macs = sorted(summary["macs_per_cycle"].unique())
    bws = sorted(summary["bandwidth_gb_s"].unique())
    for context, group in summary.groupby("context"):
        grid = group.set_index(["macs_per_cycle", "bandwidth_gb_s"])["best_tokens_per_s"]
        top = group.loc[group["best_tokens_per_s"].idxmax()]
        line = (
            f"L={context}: fastest {top['pe_array']} at {top['bandwidth_gb_s']:g} GB/s "
            f"({top['decision']}: {top['speedup']:.2f}x over AD at x={top['best_verify_len']}, "
            f"{top['best_tokens_per_s']:.3g} tok/s)"
        )
        gains = []
        for m, b in zip(macs[:-1], bws[:-1], strict=False):
            here = grid.get((m, b))
            more_c = grid.get((macs[macs.index(m) + 1], b))
            more_b = grid.get((m, bws[bws.index(b) + 1]))
            if here is None or more_c is None or more_b is None:
                continue
            gains.append((more_c / here, more_b / here))
        if gains:
            c_gain = float(np.exp(np.mean([np.log(g[0]) for g in gains])))
            b_gain = float(np.exp(np.mean([np.log(g[1]) for g in gains])))
            which = "more DSPs" if c_gain > b_gain else "more bandwidth"
            line += (
                f"; one step up the diagonal: compute x{c_gain:.2f} vs bandwidth "
                f"x{b_gain:.2f} -> {which}"
            )
        lines.append(line)
    return lines


def plot_explore(summary: pd.DataFrame, path: Path, lowering: str = "study") -> None:
    """Heat maps over (MAC/cycle, bandwidth): best tokens/s, speedup and best x per context.

    A cell where SD does not beat AD (decision 'use AD') is drawn grey and hatched in every
    panel, labelled 'AD', so no colour suggests SD where AD is faster (legend below)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    contexts = sorted(summary["context"].unique())
    macs = sorted(summary["macs_per_cycle"].unique())
    bws = sorted(summary["bandwidth_gb_s"].unique())
    panels = [
        ("best_tokens_per_s", "best P_eff (tokens/s)", "viridis", "{:.3g}"),
        ("speedup", "speedup over AD (x)", "RdYlGn", "{:.2f}"),
        ("best_verify_len", "best verification length x", "magma", "{:.0f}"),
    ]
    fig, axes = plt.subplots(
        len(panels),
        len(contexts),
        squeeze=False,
        figsize=(3.6 * len(contexts) + 1.4, 3.2 * len(panels) + 1.6),
    )
    for row, (col, label, cmap, fmt) in enumerate(panels):
        for j, context in enumerate(contexts):
            ax = axes[row][j]
            here = summary[summary["context"] == context]
            grid = here.pivot_table(
                index="macs_per_cycle", columns="bandwidth_gb_s", values=col
            ).reindex(index=macs, columns=bws)
            use_ad = (
                here.assign(ad=here["decision"] != USE_SD)
                .pivot_table(index="macs_per_cycle", columns="bandwidth_gb_s", values="ad")
                .reindex(index=macs, columns=bws)
                .fillna(False)
                .to_numpy(bool)
            )
            values = np.where(use_ad, np.nan, grid.to_numpy(float))
            kwargs = (
                {
                    "vmin": min(0.5, float(np.nanmin(grid.values))),
                    "vmax": max(1.5, float(np.nanmax(grid.values))),
                }
                if col == "speedup"
                else {}
            )
            image = ax.imshow(values, origin="lower", cmap=cmap, aspect="auto", **kwargs)
            for (i, k), value in np.ndenumerate(grid.values):
                if not np.isfinite(value):
                    continue
                if use_ad[i, k]:
                    ax.add_patch(
                        plt.Rectangle(
                            (k - 0.5, i - 0.5), 1, 1, facecolor="0.85", hatch="///",
                            edgecolor="0.55", linewidth=0,
                        )
                    )  # fmt: skip
                    text, color = f"AD\n{fmt.format(value)}", "black"
                else:
                    r, g, b, _ = image.cmap(image.norm(value))
                    dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
                    text, color = fmt.format(value), "white" if dark else "black"
                ax.text(k, i, text, ha="center", va="center", fontsize=8, color=color)
            ax.set_xticks(range(len(bws)), [f"{b:g}" for b in bws], fontsize=8)
            ax.set_yticks(range(len(macs)), [f"{m:,}" for m in macs], fontsize=8)
            ax.set_xlabel("off-chip bandwidth (GB/s)", fontsize=8)
            if j == 0:
                ax.set_ylabel(f"{label}\nPE array (MAC/cycle)", fontsize=8)
            if row == 0:
                ax.set_title(f"L = {context:,} tokens", fontsize=10)
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    first = summary.iloc[0]
    fig.suptitle(
        textwrap.fill(
            f"Design space: {first['model']} / {first['algorithm']} on variants of the base "
            "board",
            int(fig.get_figwidth() * 72 * 0.9 / (0.55 * 11)),
        ),
        fontsize=11,
    )
    fig.legend(
        handles=[Patch(facecolor="0.85", hatch="///", edgecolor="0.55", label="use AD")],
        labels=[
            textwrap.fill(
                "grey, hatched, 'AD': SD's best speedup <= 1 here, use AD (its x is not used)",
                int(fig.get_figwidth() * 72 * 0.85 / (0.55 * 8)),
            )
        ],
        loc="lower center",
        bbox_to_anchor=(0.5, 0.035),
        fontsize=8,
        frameon=False,
    )
    fig.text(
        0.5,
        0.01,
        f"engine: {first['engine']} (lowering {lowering}) · AAT: {first['aat_source']}",
        ha="center",
        fontsize=8,
        wrap=True,
    )
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    write_figure(fig, Path(path))
