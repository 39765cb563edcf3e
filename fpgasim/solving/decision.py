"""The SD-or-AD decision: one rule for every output that shows a best x.

SD pays only when its best speedup over AD (P_eff(x_best) / P(1)) exceeds 1; at exactly 1
nothing is gained and AD is kept (no draft model to run). Every table, CSV and figure that
shows a best x shows this decision beside it (docs/glossary.md, "decision").
"""

from __future__ import annotations

USE_SD = "use SD"
USE_AD = "use AD"


def decision_of(speedup: float) -> str:
    """'use SD' when the speedup over AD exceeds 1, else 'use AD' (NaN: 'use AD')."""
    return USE_SD if speedup > 1.0 else USE_AD


#: The column that says how far an absolute figure rests on silicon (the nearest validated
#: design/part and its measured error, docs/validation.md). Rows that carry it (its owner
#: adds it to every absolute figure) have it shown by `rests_on`; rows without it are shown
#: without it.
VALIDATION_COLUMN = "validation"


def fit_text(fits_memory: object, fits_dsps: object) -> str:
    """Whether the chosen set fits the part: its memory (weights + caches) and its DSPs."""
    memory = {True: "fits the memory", False: "does not fit the memory (timed as if it did)"}
    dsps = {True: "fits the DSPs", False: "needs more DSPs than the part has (timed as if it "
            "had them)"}
    return "; ".join([memory.get(_flag(fits_memory), "memory fit unknown"),
                      dsps.get(_flag(fits_dsps), "DSP fit unknown (a count is unpublished)")])


def _flag(value: object) -> bool | None:
    """A fit flag as True, False or None (unknown: NaN, None, '')."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    return bool(value)


def rests_on(row: dict) -> str:
    """What a decision rests on, as every decision line says it: the acceptance it was
    taken on (`aat_basis`) and whether the chosen set fits the part's memory and DSPs. The
    validation of the absolute figures (`VALIDATION_COLUMN`, the same for every row of a
    board) is printed once under the table (`validation.validation_line`), not per line."""
    parts = []
    if row.get("aat_basis"):
        parts.append(f"AAT {row['aat_basis']}")
    parts.append(fit_text(row.get("fits_memory"), row.get("fits_dsps")))
    return "rests on: " + "; ".join(parts)
