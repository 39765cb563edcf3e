"""Fig. 6: the AAT against x per tree-construction method."""

from fpgasim.figures import plots as plot
from fpgasim.reproduce import curve_renderers
from fpgasim.reproduce.kind import SOURCE_COLUMNS, ExperimentKind, register_kind

KIND = register_kind(ExperimentKind(
    name="aat_curves",
    doc="AAT vs x per tree-construction method (Fig. 6)",
    columns=(
        *("method", "verify_len", "aat", "context", "algorithm", "model", "task", "tree"),
        *SOURCE_COLUMNS,
    ),
    decision=None,
    beside=None,
    compare=None,
    render=curve_renderers.aat_curves,
    plot=plot.aat_curves_figure,
    external=None,
))  # fmt: skip
