"""Table IV: AD, the best x and its speedup per board and context, with the regime."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    embedded_task_note,
    frame,
    solved_workloads,
)
from fpgasim.reproduce.workloads import RunContext
from fpgasim.solving.roofline import ridge_tokens

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from fpgasim.figures.style import Figure


def boards_grid(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per board and context: AD tokens/s, the best x, its tokens/s and speedup."""
    rows = []
    for board, _model, _algorithm, sol in solved_workloads(exp, ctx):
        for s in sol.summary.to_dict("records"):
            rows.append(
                {
                    **base(exp, ctx, s),
                    "context": s["context"],
                    "ar_tokens_per_s": s["ad_tokens_per_s"],
                    "best_verify_len": s["best_verify_len"],
                    "best_tokens_per_s": s["best_tokens_per_s"],
                    "speedup": s["best_speedup"],
                    "best_tree": s["best_tree"],
                    "best_aat": s["best_aat"],
                    "ori_verify_len": s["ori_verify_len"],
                    "ori_speedup": s["ori_speedup"],
                    "naive_verify_len": s["naive_verify_len"],
                    "naive_speedup": s["naive_speedup"],
                    "regime": s["regime"],
                    "x_ridge": s["x_ridge"],
                    "macs_per_cycle": board.peak_macs_per_cycle,
                    "bytes_per_cycle": board.bandwidth_bytes_per_s / board.clock_hz,
                    "compute_to_bandwidth": board.peak_macs_per_cycle
                    / (board.bandwidth_bytes_per_s / board.clock_hz),
                    "ridge_tokens": ridge_tokens(board),
                }
            )
    notes = [
        *embedded_task_note(exp, ctx),
        "ar_tokens_per_s: autoregressive decoding (AD, x = 1); compute_to_bandwidth: "
        "MAC per cycle / off-chip bytes per cycle (MAC/byte); x_ridge: x_R, where the "
        "engine's measured roofline turns flat; ridge_tokens: the board sheet's ridge (peak "
        "MAC/cycle over weights streamed per cycle, as `fpgasim boards`); decision: use SD "
        "iff speedup > 1",
    ]
    return Rendered(frame(exp.kind, rows), tuple(notes))


def boards_grid_figure(result: ExperimentOutput) -> Figure:
    """Best speedup and best x vs context, one line per board."""
    full = result.full
    fig = style.new_figure(11, 4.4)
    ax_s, ax_x = fig.subplots(1, 2)
    order = full.groupby("board", sort=False)["compute_to_bandwidth"].first().sort_values()
    for color, board in zip(style.COLORS * 4, order.index, strict=False):
        rows = full[full["board"] == board].sort_values("context")
        label = f"{board} ({order[board]:.2g} MAC/byte)"
        ax_s.plot(rows["context"], rows["speedup"], marker="o", color=color, label=label)
        style.overlay(ax_s, result, rows["context"], "speedup", color)
        style.overlay(ax_x, result, rows["context"], "best_verify_len", color)
        style.mark_ad(ax_s, result, rows, "speedup")
        style.mark_ad(ax_x, result, rows, "best_verify_len")
        ax_x.plot(
            rows["context"],
            rows["best_verify_len"].astype(float),
            marker="o",
            color=color,
            label=label,
        )
    style.overlay_legend(ax_s, result)
    style.ad_legend(ax_s, result)
    ax_s.axhline(1.0, color="black", lw=1, ls="-.", label="AD (speedup 1)")
    ax_s.set(title="best speedup over AD", ylabel="speedup (×)", ylim=(0, None))
    ax_x.set(title="best verification length", ylabel="best x (tokens)", ylim=(0, None))
    for ax in (ax_s, ax_x):
        style.context_ticks(ax, sorted(full["context"].unique()))
        ax.set_xlabel("context length L (tokens, log scale)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    style.suptitle(fig, result)
    return fig


KIND = register_kind(ExperimentKind(
    name="boards_grid",
    doc="best x and speedup per board (Table IV)",
    columns=(
        *("board", "context", "ar_tokens_per_s", "best_verify_len", "best_tokens_per_s"),
        *("speedup", "model", "algorithm", "task", "best_tree", "best_aat", "ori_verify_len"),
        *("ori_speedup", "naive_verify_len", "naive_speedup", "regime", "x_ridge"),
        *("macs_per_cycle", "bytes_per_cycle", "compute_to_bandwidth", "ridge_tokens"),
        *("decision", *TIMED_COLUMNS),
    ),
    decision=Decision("speedup", "best_verify_len"),
    beside=BesideSpec(
        (),
        ("decision", "ar_tokens_per_s", "best_verify_len", "best_tokens_per_s", "speedup"),
        "speedup",
        ("best_verify_len", "best_tree", "best_aat"),
    ),
    compare=EngineComparison(("board", "context"), (("best_verify_len", "speedup"),),
                             best_of_curve=False, breakdown=True),
    render=boards_grid,
    plot=boards_grid_figure,
    external=None,
))  # fmt: skip
