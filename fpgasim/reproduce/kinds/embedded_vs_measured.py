"""embedded_vs_measured: the embedded acceptance model against every measured AAT row shipped
with fpgasim (docs/embedded_vs_measured.csv and the summary block of docs/trees.md,
"Embedded model against every measured row").

One row per measured row (`acceptance.agreement.AGREEMENT_COLUMNS`): the measured AAT, the
embedded model's AAT for the same tree at the same context, the relative error, and what
the acceptance rule uses by default there. Seconds. tests/acceptance/test_rule.py checks
what the rows say (the default reads every measured row; the embedded model is not claimed
to reproduce them).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.acceptance.agreement import (
    AGREEMENT_COLUMNS,
    agreement_markdown,
    embedded_vs_measured,
)
from fpgasim.acceptance.measured import builtin_tables
from fpgasim.config import load_algorithm
from fpgasim.config.loader import load_file
from fpgasim.reproduce.experiment_schema import DocTableFile
from fpgasim.reproduce.kind import External, register_external


def agreement_table(path: Path) -> pd.DataFrame:
    """Every shipped measured row against the embedded model (the file names the kind only)."""
    load_file(DocTableFile, path)
    tables = builtin_tables()
    algorithms = {a: load_algorithm(a) for a in sorted(set(tables.rows["algorithm"]))}
    return embedded_vs_measured(tables, algorithms)


KIND = register_external(
    name="embedded_vs_measured",
    doc="the embedded acceptance model vs every shipped measured AAT row",
    columns=tuple(AGREEMENT_COLUMNS),
    external=External(
        title="The embedded acceptance model against every measured AAT row",
        description="Per shipped measured row: the measured AAT, the embedded model's for the "
        "same tree and context, the relative error and what the acceptance rule reads there.",
        schema=DocTableFile,
        table=agreement_table,
        doc='docs/trees.md ("Embedded model against every measured row")',
        markdown=agreement_markdown,
        float_format="%.6g",
        aat_source="measured (every table of workloads/aat) beside embedded (the acceptance "
        "model)",
    ),
)  # fmt: skip
