"""Table I: AD and the Ori / Naive / Best sets per context."""

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
    name="context_sets",
    doc="AD / Ori / Naive / Best sets per context (Table I)",
    columns=(
        *("context", "method", "verify_len", "tokens_per_s", "speedup"),
        *("board", "model", "algorithm", "task", "aat", "tree", "decision", *TIMED_COLUMNS),
    ),
    decision=Decision("speedup", "verify_len"),
    beside=BesideSpec(("method",), ("decision", "verify_len", "tokens_per_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("board", "context", "method"), (("verify_len", "speedup"),),
                             best_of_curve=False, breakdown=False),
    render=tables.context_sets,
    plot=None,
    external=None,
))  # fmt: skip
