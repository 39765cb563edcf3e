"""Fig. 5: the AAT model A + B·ln(x − C) fitted on a few points, and its R²."""

from fpgasim.figures import plots as plot
from fpgasim.reproduce import curve_renderers
from fpgasim.reproduce.kind import SOURCE_COLUMNS, ExperimentKind, register_kind

KIND = register_kind(ExperimentKind(
    name="fit_table",
    doc="AAT model fitted on a few points, R² (Fig. 5)",
    columns=(
        *("context", "A", "B", "C", "r2", "n_fit_points", "r2_fit", "fit_points", "n_points"),
        *("algorithm", "model", "task", *SOURCE_COLUMNS),
    ),
    decision=None,
    beside=None,
    compare=None,
    render=curve_renderers.fit_table,
    plot=plot.fit_table_figure,
    external=None,
))  # fmt: skip
