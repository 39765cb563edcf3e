"""Fig. 4: the best x per model on the AAT fitted from a few measured points."""

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
    name="sparse_fit_models",
    doc="best x per model on the AAT fitted from sparse points (Fig. 4)",
    columns=(
        *("algorithm", "model", "context", "ar_tokens_per_s", "best_verify_len"),
        *("best_tokens_per_s", "speedup", "ori_verify_len", "ori_tokens_per_s", "ori_speedup"),
        *("naive_verify_len", "naive_tokens_per_s", "naive_speedup", "board", "task"),
        *("best_tree", "best_aat", "aat_a", "aat_b", "aat_c", "aat_r2_fit", "aat_n_fit_points"),
        *("decision", *TIMED_COLUMNS),
    ),
    decision=Decision("speedup", "best_verify_len"),
    beside=BesideSpec(
        (),
        ("decision", "ar_tokens_per_s", "best_verify_len", "best_tokens_per_s", "speedup"),
        "speedup",
        ("best_verify_len", "best_tree", "best_aat"),
    ),
    compare=EngineComparison(("algorithm", "model", "context"),
                             (("best_verify_len", "speedup"),), best_of_curve=False,
                             breakdown=False),
    render=tables.sparse_fit_models,
    plot=plot.sparse_fit_models_figure,
    external=None,
))  # fmt: skip
