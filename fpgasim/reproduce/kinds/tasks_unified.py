"""Table II: each task's best x against the unified x of the tasks' mean AAT curve."""

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
    name="tasks_unified",
    doc="each task's best x vs the unified x (Table II)",
    columns=(
        *("task", "best_verify_len", "best_speedup", "unified_verify_len", "unified_speedup"),
        *("context", "board", "model", "algorithm", "mean", "unified_vs_best", "best_tree"),
        *("best_aat", "decision", *TIMED_COLUMNS),
    ),
    decision=Decision("best_speedup", "best_verify_len"),
    beside=BesideSpec(
        (),
        ("decision", "best_verify_len", "best_speedup", "unified_verify_len", "unified_speedup"),
        "best_speedup",
        ("best_verify_len", "best_tree", "best_aat"),
    ),
    compare=EngineComparison(
        ("task", "context"),
        (("best_verify_len", "best_speedup"), ("unified_verify_len", "unified_speedup")),
        best_of_curve=False, breakdown=False,
    ),
    render=tables.tasks_unified,
    plot=None,
    external=None,
))  # fmt: skip
