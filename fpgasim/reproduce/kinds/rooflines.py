"""Fig. 2: the primary and discounted rooflines, AAT/AR and P_eff against x."""

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
    name="rooflines",
    doc="P, P_disc, AAT/AR and P_eff vs x (Fig. 2)",
    columns=(
        *("context", "verify_len", "p", "p_disc", "aat", "ar", "p_eff", "board", "model"),
        *("algorithm", "task", "tree", "verify_s", "draft_s", "speedup", *TIMED_COLUMNS),
    ),
    decision=None,
    beside=BesideSpec(("verify_len",), ("p", "p_disc", "p_eff", "verify_s", "draft_s", "speedup"),
                      "speedup", ("verify_len", "tree", "aat")),
    compare=EngineComparison(("context",), (("best_verify_len", "best_speedup"),),
                             best_of_curve=True, breakdown=False),
    render=curve_renderers.rooflines,
    plot=plot.rooflines_figure,
    external=None,
))  # fmt: skip
