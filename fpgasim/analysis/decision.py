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
