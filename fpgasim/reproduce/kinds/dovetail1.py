"""dovetail1: Dovetail's heterogeneous SD speedups, computed by `fpgasim.heterogeneous`."""

from fpgasim.heterogeneous import Dovetail1Inputs, dovetail1_table
from fpgasim.heterogeneous.dovetail_table import TABLE_COLUMNS
from fpgasim.reproduce.kind import External, register_external

KIND = register_external(
    name="dovetail1",
    doc="heterogeneous SD speedups recomputed from Dovetail's measurements vs modelled",
    columns=tuple(TABLE_COLUMNS),
    external=External(
        title="Dovetail: heterogeneous SD speedups, recomputed from the measurements vs "
        "modelled",
        description="LLaMA2-Chat-7B target on a CPU, drafter on a GPU "
        "(docs/heterogeneous.md).",
        schema=Dovetail1Inputs,
        table=dovetail1_table,
        aat_source="none (published measurements and the heterogeneous platform model)",
    ),
)  # fmt: skip
