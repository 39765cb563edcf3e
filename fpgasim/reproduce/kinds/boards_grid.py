"""Table IV: AD, the best x and its speedup per board and context, with the regime."""

from fpgasim.figures import plots as plot
from fpgasim.reproduce import tables
from fpgasim.reproduce.kind import (
    TIMED_COLUMNS,
    BesideSpec,
    Decision,
    EngineComparison,
    ExperimentKind,
    register_kind,
)

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
    render=tables.boards_grid,
    plot=plot.boards_grid_figure,
    external=None,
))  # fmt: skip
