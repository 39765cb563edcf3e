"""Table III (and tree_design): the best x per tree-construction method."""

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
    name="tree_methods",
    doc="best x per tree-construction method (Table III)",
    columns=(
        *("method", "verify_len", "tokens_per_s", "speedup"),
        *("context", "board", "model", "algorithm", "task", "aat", "tree", "decision"),
        *TIMED_COLUMNS,
    ),
    decision=Decision("speedup", "verify_len"),
    beside=BesideSpec(("method",), ("decision", "verify_len", "tokens_per_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("board", "algorithm", "context", "method"),
                             (("verify_len", "speedup"),), best_of_curve=False, breakdown=False),
    render=tables.tree_methods,
    plot=None,
    external=None,
))  # fmt: skip
