"""FlightLLM design space: which MV lanes, MV width, MM tile, bandwidth and clock make tree
SD pay, and at what DSP cost.

Every design (a `FlightDesign` applied to a FlightLLM-lowered base board) is costed by the
board's own compiler: AD (x = 1) and, per drafter and context, every x of the drafter's
AAT curve (verify + draft passes) through the sweep runner (executors, result cache,
resume, progress). The best x maximises P_eff = AAT / (T_v + T_d) as in the solver. Each
design also carries its DSP budget (fpgasim.config.resources). The Pareto front keeps,
per (drafter, context), the designs that fit and that no cheaper-or-equal design beats on
speedup. See docs/flightllm-sd.md.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.analysis.aat_curves import AatCurve
from fpgasim.analysis.explore import (
    EXPLORE_COLUMNS,
    best_of,
    check_explore_size,
    explore_curves,
    explore_points,
)
from fpgasim.config.resources import resource_columns
from fpgasim.config.schema import Algorithm, Board, TargetModel
from fpgasim.errors import InputError
from fpgasim.fileio import write_figure
from fpgasim.sweep.cache import SweepCache
from fpgasim.sweep.executors import Executor
from fpgasim.sweep.grid import check_points
from fpgasim.sweep.runner import SweepProgress, SweepStats, run_points
from fpgasim.sweep.space import FlightDesign, derive_flightllm_boards

#: Design inputs, in the order of `designs`' product.
DESIGN_COLUMNS = ["mv_lanes", "mv_width", "mm_tile_rows", "bandwidth_gb_s", "clock_mhz"]

#: Columns of the per-(design, drafter, context) summary, inputs first.
DESIGN_SPACE_COLUMNS = [
    "board",
    *DESIGN_COLUMNS,
    "mv_macs_per_cycle",
    "mm_macs_per_cycle",
    "changes",
    "dsp_kind",
    "pipelines",
    "mm_dsps",
    "mv_dsps",
    "dsps_used",
    "dsps_available",
    "fits_dsps",
    *EXPLORE_COLUMNS[EXPLORE_COLUMNS.index("model"):],  # what explore reports per board
    "pareto",
]


@dataclass(frozen=True)
class DesignSpaceResult:
    """summary: DESIGN_SPACE_COLUMNS rows; points: one row per simulated point."""

    summary: pd.DataFrame
    points: pd.DataFrame
    stats: SweepStats


def designs(
    mv_lanes: Sequence[int],
    mv_widths: Sequence[int],
    mm_tile_rows: Sequence[int],
    bandwidths_gb_s: Sequence[float],
    clocks_mhz: Sequence[float],
) -> list[FlightDesign]:
    """The full product of the five axes, lanes major (at most `MAX_POINTS` designs: each
    is at least one point to simulate)."""
    axes = (mv_lanes, mv_widths, mm_tile_rows, bandwidths_gb_s, clocks_mhz)
    count = math.prod(len(a) for a in axes)
    check_points(count, "mv_lanes/mv_widths/mm_tile_rows/bandwidths/clocks", f"{count} designs",
                 " x ".join(str(len(a)) for a in axes) + " designs")
    return [
        FlightDesign(*combo)
        for combo in itertools.product(
            mv_lanes, mv_widths, mm_tile_rows, bandwidths_gb_s, clocks_mhz
        )
    ]


def explore_designs(
    base: Board,
    space: Sequence[FlightDesign],
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    progress: SweepProgress | None = None,
    verify_lens: Sequence[int] | None = None,
) -> DesignSpaceResult:
    """Cost every design with every drafter at every context (embedded AAT curves).

    `verify_lens` restricts the search for the best x to those curve points (a coarser
    search: the speedup found is a lower bound of the full curve's); None keeps them all.
    """
    check_explore_size(len(space), contexts, algorithms, "contexts/algorithms",
                       f"{len(contexts)} contexts, {len(algorithms)} algorithms")
    boards = derive_flightllm_boards(base, space)
    frame, stats, sources = cost_boards(
        boards, model, algorithms, contexts, engine=engine, executor=executor,
        workers=workers, scheduler=scheduler, cache=cache, progress=progress,
        verify_lens=verify_lens,
        instruction_groups=[(d.mv_lanes, d.mv_width, d.mm_tile_rows) for d in space],
    )
    summary = summarise_designs(frame, boards, space, engine, sources, base_design(base))
    return DesignSpaceResult(summary, frame, stats)


def cost_boards(
    boards: Sequence[Board],
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    progress: SweepProgress | None = None,
    verify_lens: Sequence[int] | None = None,
    instruction_groups: Sequence[Hashable] | None = None,
) -> tuple[pd.DataFrame, SweepStats, dict[str, str]]:
    """Every point (AD, and each x of each drafter's curve) of every board and context,
    with its algorithm, AAT and P_eff; the sweep statistics; the AAT source per drafter.

    `instruction_groups` (one per board) marks boards whose instruction streams are the
    same but for their durations (FlightLLM designs differing in clock or bandwidth): the
    points run group by group, so each stream is compiled once and priced per board."""
    curves = {
        a.id: [thin_curve(c, verify_lens) for c in explore_curves(a, model, contexts)]
        for a in algorithms
    }
    points, algorithm_ids = [], []
    for a in algorithms:
        mine = explore_points(boards, model, a, curves[a.id])
        points += mine
        algorithm_ids += [a.id] * len(mine)  # AD rows (x = 1) carry no algorithm of their own
    # run group by group, then by x and context, each board's point for every drafter in a
    # row: the drafters share the verify pass, and the boards of a group share its compiled
    # instructions while they are cached (the rows come back in the points' order)
    groups = list(instruction_groups) if instruction_groups is not None else list(
        range(len(boards)))
    group_rank = {g: n for n, g in enumerate(dict.fromkeys(groups))}
    rank = {id(b): (group_rank[g], n) for n, (b, g) in enumerate(zip(boards, groups, strict=True))}
    order = sorted(range(len(points)), key=lambda i: (
        rank[id(points[i].board)][0], points[i].verify_len, points[i].context,
        rank[id(points[i].board)][1]))
    done, stats = run_points(
        [points[i] for i in order],
        engine,
        executor,
        workers=workers,
        scheduler=scheduler,
        cache=cache,
        progress=progress,
    )
    rows: list[dict] = [{}] * len(points)
    for i, row in zip(order, done, strict=True):
        rows[i] = row
    frame = pd.DataFrame(rows)
    frame["algorithm"] = algorithm_ids
    aat_of = {
        (a, c.context, int(x)): float(aat)
        for a, cs in curves.items()
        for c in cs
        for x, aat in c.points[["verify_len", "aat"]].itertuples(index=False)
    }
    frame["aat"] = [
        1.0 if x == 1 else aat_of[(a, c, x)]
        for a, c, x in zip(frame["algorithm"], frame["context"], frame["verify_len"], strict=True)
    ]
    draft_s = frame["draft_s"].fillna(0.0) if "draft_s" in frame else 0.0
    frame["p_eff_tokens_per_s"] = frame["aat"] / (frame["verify_s"] + draft_s)
    sources = {a: cs[0].aat_source for a, cs in curves.items() if cs}
    return frame, stats, sources


def solve_boards(
    boards: Sequence[Board],
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    cache: SweepCache | None = None,
    verify_lens: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Best SD per (board, drafter, context) of any boards (study or FlightLLM lowering),
    with each board's resource columns: the rows of the chapter's comparison tables."""
    frame, _, _ = cost_boards(
        boards, model, algorithms, contexts, engine=engine, executor=executor, cache=cache,
        verify_lens=verify_lens,
    )
    by_name = {b.name: b for b in boards}
    out = []
    for (name, algorithm, context), group in frame.groupby(
        ["board", "algorithm", "context"], sort=False
    ):
        out.append(
            {
                "board": name,
                "algorithm": algorithm,
                "context": int(context),
                "engine": engine,
                **best_of(group),
                **resource_columns(by_name[name]),
            }
        )
    return pd.DataFrame(out)


def base_design(base: Board) -> FlightDesign:
    """The design `base` itself is."""
    fl = base.flightllm
    if fl is None:
        raise InputError("base_board", base.name, "a board with lowering: flightllm")
    lanes = fl.mv_parallel_m
    return FlightDesign(
        lanes,
        base.mv_macs_per_cycle // lanes,
        fl.mm_tile_rows,
        base.memory.bandwidth_gb_s,
        base.clock_mhz,
    )


def design_changes(design: FlightDesign, base: FlightDesign) -> str:
    """What a design changes from the base, e.g. 'mv_lanes 1->4; mm_tile_rows 128->16'."""
    out = [
        f"{name} {getattr(base, name):g}->{getattr(design, name):g}"
        for name in ("mv_lanes", "mv_width", "mm_tile_rows", "bandwidth_gb_s", "clock_mhz")
        if getattr(design, name) != getattr(base, name)
    ]
    return "; ".join(out) or "none (the base design)"


def thin_curve(curve: AatCurve, verify_lens: Sequence[int] | None) -> AatCurve:
    """`curve` with only the x in `verify_lens` (all of them when None)."""
    if verify_lens is None:
        return curve
    keep = curve.points[curve.points["verify_len"].isin(list(verify_lens))]
    if keep.empty:
        raise InputError(
            "verify_lens",
            ",".join(map(str, verify_lens)),
            f"at least one x of the AAT curve at context {curve.context} "
            f"({int(curve.points['verify_len'].min())}..{int(curve.points['verify_len'].max())})",
        )
    return replace(curve, points=keep.reset_index(drop=True))


def summarise_designs(
    frame: pd.DataFrame,
    boards: Sequence[Board],
    space: Sequence[FlightDesign],
    engine: str,
    aat_sources: dict[str, str],
    base: FlightDesign,
) -> pd.DataFrame:
    """Best x per (design, drafter, context), with the design's DSPs and the Pareto flag."""
    design_of = {b.name: (b, d) for b, d in zip(boards, space, strict=True)}
    out = []
    for (name, algorithm, context), group in frame.groupby(
        ["board", "algorithm", "context"], sort=False
    ):
        board, design = design_of[name]
        out.append(
            {
                "board": name,
                "mv_lanes": design.mv_lanes,
                "mv_width": design.mv_width,
                "mm_tile_rows": design.mm_tile_rows,
                "bandwidth_gb_s": design.bandwidth_gb_s,
                "clock_mhz": design.clock_mhz,
                "mv_macs_per_cycle": board.mv_macs_per_cycle,
                "mm_macs_per_cycle": board.macs_per_cycle,
                "changes": design_changes(design, base),
                **resource_columns(board),
                "algorithm": algorithm,
                "context": int(context),
                "engine": engine,
                "aat_source": aat_sources.get(algorithm, ""),
                **best_of(group),
            }
        )
    summary = pd.DataFrame(out)
    summary["pareto"] = pareto_flags(summary)
    return summary[DESIGN_SPACE_COLUMNS]


def pareto_flags(summary: pd.DataFrame) -> list[bool]:
    """Per (algorithm, context): True for fitting designs on the front of speedup against
    DSPs used: no other fitting design has <= DSPs and a higher speedup (ties in both keep
    the first in grid order)."""
    flags = [False] * len(summary)
    fits = summary["fits_dsps"].fillna(True).astype(bool)
    for _, group in summary[fits].groupby(["algorithm", "context"], sort=False):
        order = group.sort_values(["dsps_used", "speedup"], ascending=[True, False], kind="stable")
        best = -np.inf
        for idx, speedup in order["speedup"].items():
            if speedup > best:
                flags[summary.index.get_loc(idx)] = True
                best = speedup
    return flags


def cheapest_paying(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (algorithm, context): the fitting design with the fewest DSPs whose speedup
    exceeds 1; ties go to the fewest changed fields (the smallest change to the base), then
    the higher speedup. No row when no design pays."""
    paying = summary[(summary["speedup"] > 1) & summary["fits_dsps"].fillna(True).astype(bool)]
    paying = paying.assign(
        _n_changes=[0 if c.startswith("none") else c.count(";") + 1 for c in paying["changes"]]
    )
    ordered = paying.sort_values(
        ["algorithm", "context", "dsps_used", "_n_changes", "speedup"],
        ascending=[True, True, True, True, False],
        kind="stable",
    ).drop(columns="_n_changes")
    return ordered.groupby(["algorithm", "context"], sort=False).head(1).reset_index(drop=True)


def plot_design_space(summary: pd.DataFrame, path: str | Path) -> None:
    """Top row: the Pareto front of speedup against DSPs used, per drafter (one line per
    context, every design as a dot, non-fitting designs hollow). Bottom row: heat maps of
    the best fitting speedup over (MV lanes, MV width) per drafter, at the largest context.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algorithms = list(dict.fromkeys(summary["algorithm"]))
    contexts = sorted(summary["context"].unique())
    fig, axes = plt.subplots(
        2, len(algorithms), squeeze=False, figsize=(4.6 * len(algorithms) + 0.6, 8.4)
    )
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(contexts)))
    available = summary["dsps_available"].dropna()
    for j, algorithm in enumerate(algorithms):
        ax = axes[0][j]
        mine = summary[summary["algorithm"] == algorithm]
        for colour, context in zip(colours, contexts, strict=True):
            at = mine[mine["context"] == context]
            fits = at["fits_dsps"].fillna(True).astype(bool)
            ax.scatter(at.loc[fits, "dsps_used"], at.loc[fits, "speedup"], s=8,
                       color=colour, alpha=0.35)
            ax.scatter(at.loc[~fits, "dsps_used"], at.loc[~fits, "speedup"], s=8,
                       facecolors="none", edgecolors=colour, alpha=0.35)
            front = at[at["pareto"]].sort_values("dsps_used")
            ax.step(front["dsps_used"], front["speedup"], where="post", color=colour, marker="o",
                    ms=3,
                    label=f"L = {context:,}")
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        if len(available):
            ax.axvline(float(available.iloc[0]), color="red", lw=0.8, ls=":",
                       label="device DSPs")
        ax.set_xlabel("DSP slices used (all pipelines)", fontsize=8)
        ax.set_ylabel("best SD speedup over AD (x)", fontsize=8)
        ax.set_title(f"{algorithm}: Pareto front", fontsize=10)
        ax.legend(fontsize=7)
        ax = axes[1][j]
        last = mine[(mine["context"] == contexts[-1])
                    & mine["fits_dsps"].fillna(True).astype(bool)]
        grid = last.pivot_table(index="mv_lanes", columns="mv_width", values="speedup",
                                aggfunc="max")
        if grid.empty:
            ax.set_axis_off()
            continue
        image = ax.imshow(grid.values, origin="lower", cmap="RdYlGn", aspect="auto",
                          vmin=min(0.5, float(np.nanmin(grid.values))),
                          vmax=max(1.5, float(np.nanmax(grid.values))))
        for (i, k), value in np.ndenumerate(grid.values):
            if np.isfinite(value):
                ax.text(k, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(grid.shape[1]), [f"{w:,}" for w in grid.columns], fontsize=8)
        ax.set_yticks(range(grid.shape[0]), [str(m) for m in grid.index], fontsize=8)
        ax.set_xlabel("MV width per lane (MAC/cycle)", fontsize=8)
        ax.set_ylabel("MV token lanes", fontsize=8)
        ax.set_title(f"{algorithm}: best fitting speedup, L = {contexts[-1]:,}", fontsize=10)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    first = summary.iloc[0]
    fig.suptitle(
        f"FlightLLM design space: {first['model']} (engine {first['engine']})", fontsize=11
    )
    fig.tight_layout()
    write_figure(fig, Path(path))
