"""A kind of experiment defined outside fpgasim, to prove that adding one is one module: its
record (columns, decision rule, what goes beside the accounting, engine comparison,
renderer, figure) is all `fpgasim.reproduce` needs. `register()` adds it for a test; an
experiment file of kind `best_x_demo` then loads, validates, runs side by side with the
simulator, plans its passes and writes its CSV, Markdown and PNG like a shipped kind."""

from __future__ import annotations

from typing import Any

from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import (
    TIMED_COLUMNS,
    BesideSpec,
    Decision,
    EngineComparison,
    ExperimentKind,
    register_kind,
    unregister_kind,
)
from fpgasim.reproduce.rendered import Rendered, base, frame, solved_workloads
from fpgasim.reproduce.workloads import RunContext

NAME = "best_x_demo"


def render(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per board and context: the best x and its speedup over AD (a cut-down Table IV)."""
    rows = []
    for _board, _model, _algorithm, sol in solved_workloads(exp, ctx):
        for s in sol.summary.to_dict("records"):
            rows.append({**base(exp, ctx, s), "context": s["context"],
                         "best_verify_len": s["best_verify_len"],
                         "speedup": s["best_speedup"], "best_tree": s["best_tree"],
                         "best_aat": s["best_aat"]})  # fmt: skip
    return Rendered(frame(exp.kind, rows), ("a test-only kind",))


def plot(result: Any) -> Any:
    """The speedup against the context, one line per board."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    for board, rows in result.full.groupby("board"):
        ax.plot(rows["context"], rows["speedup"].astype(float), marker="o", label=board)
    ax.set_xlabel("context L (tokens)")
    ax.set_ylabel("speedup over AD")
    ax.legend()
    fig.suptitle(result.title)
    return fig


KIND = ExperimentKind(
    name=NAME,
    doc="best x and speedup per board and context (a test-only kind)",
    columns=("board", "context", "best_verify_len", "speedup", "model", "algorithm", "task",
             "best_tree", "best_aat", "decision", *TIMED_COLUMNS),
    decision=Decision("speedup", "best_verify_len"),
    beside=BesideSpec((), ("decision", "best_verify_len", "speedup"), "speedup",
                      ("best_verify_len", "best_tree", "best_aat")),
    compare=EngineComparison(("board", "context"), (("best_verify_len", "speedup"),),
                             best_of_curve=False, breakdown=False),
    render=render,
    plot=plot,
    external=None,
)  # fmt: skip


def register() -> None:
    """Add the test kind to the registry."""
    register_kind(KIND)


def unregister() -> None:
    """Remove it again."""
    unregister_kind(NAME)
