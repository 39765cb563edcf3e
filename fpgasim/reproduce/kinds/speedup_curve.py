"""Fig. 1: the speedup over AD against x, with the AAT."""

from fpgasim.figures import plots as plot
from fpgasim.reproduce import curve_renderers
from fpgasim.reproduce.kind import (
    TIMED_COLUMNS,
    BesideSpec,
    EngineComparison,
    ExperimentKind,
    register_kind,
)

KIND = register_kind(ExperimentKind(
    name="speedup_curve",
    doc="speedup over AD vs x, and AAT (Fig. 1)",
    columns=(
        *("context", "verify_len", "aat", "speedup", "board", "model", "algorithm", "task"),
        *("tree", "tokens_per_s", "ar_tokens_per_s", *TIMED_COLUMNS),
    ),
    decision=None,
    beside=BesideSpec(("verify_len",), ("speedup", "tokens_per_s"), "speedup",
                      ("verify_len", "tree", "aat")),
    compare=EngineComparison(("context",), (("best_verify_len", "best_speedup"),),
                             best_of_curve=True, breakdown=False),
    render=curve_renderers.speedup_curve,
    plot=plot.speedup_curve_figure,
    external=None,
))  # fmt: skip
