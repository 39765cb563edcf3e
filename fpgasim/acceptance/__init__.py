"""Acceptance (docs/method.md): the measured AAT tables, the AAT log model, the one
acceptance rule, AAT curves."""

from fpgasim.acceptance.curves import (
    AAT_SOURCES,
    AatCurve,
    OriPoint,
    acceptance_curves,
    embedded_curves,
    mean_curve,
    measured_curves,
)
from fpgasim.acceptance.log_model import (
    AatFit,
    fit_aat,
    fit_curve,
    naive_verify_len,
    r_squared,
)
from fpgasim.acceptance.measured import (
    BUILTIN_AAT,
    AatTables,
    load_aat_tables,
)
from fpgasim.acceptance.rule import (
    AcceptanceSource,
    acceptance_source,
)

__all__ = [
    "AAT_SOURCES",
    "AatCurve",
    "AatFit",
    "AatTables",
    "AcceptanceSource",
    "BUILTIN_AAT",
    "OriPoint",
    "acceptance_curves",
    "acceptance_source",
    "embedded_curves",
    "fit_aat",
    "fit_curve",
    "load_aat_tables",
    "mean_curve",
    "measured_curves",
    "naive_verify_len",
    "r_squared",
]
