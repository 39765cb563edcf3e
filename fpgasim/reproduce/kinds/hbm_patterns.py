"""hbm_patterns: published HBM bandwidth measurements against fpgasim's access model
(docs/hbm_patterns.csv and the table of docs/validation.md, "HBM bandwidth by access
pattern").

The published cases (what each measured, transcribed with its source) are the experiment
file, workloads/experiments/hbm_patterns.yaml; `model_gb_s` is what
`config.memory_access.pattern_gb_s` gives each case's pattern with its part's
`memory.access` constants, times its independent streams. Well under a second.
tests/config/test_memory_access.py checks every case against its measurement (within 10%)
and each constant against the one case that calibrates it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field

from fpgasim.config import load_fpga
from fpgasim.config.loader import load_file
from fpgasim.config.memory_access import Pattern, pattern_gb_s
from fpgasim.errors import ConfigError
from fpgasim.reproduce.experiment_schema import Name, Strict
from fpgasim.reproduce.kind import External, register_external

#: The CSV's columns: the case, its source and measurement, the model, then the pattern.
COLUMNS = (
    "case", "source", "measured_gb_s", "model_gb_s", "role", "part", "streams",
    "transaction_bytes", "sequential", "channels", "reorders", "masters_per_channel",
    "lateral", "issue_ns",
)  # fmt: skip
#: digits of `model_gb_s` in the CSV
DIGITS = 6


class HbmCase(Strict):
    """One published measurement and the access pattern it ran."""

    case: str = Field(min_length=1, max_length=200, description="what was measured")
    source: str = Field(min_length=1, max_length=400, description="document, table and row")
    measured_gb_s: float = Field(gt=0, le=10_000, description="published bandwidth, GB/s")
    role: str = Field(pattern=r"^(check|calibrates .+)$",
                      description="check, or 'calibrates CONSTANT' (fixed one constant)")
    part: Name = Field(description="the HBM part (fpgas/*.yaml) with a memory.access model")
    streams: int = Field(ge=1, le=64, description="independent streams (masters)")
    transaction_bytes: int = Field(ge=1, le=1 << 20, description="bytes per transaction")
    sequential: bool = Field(description="sequential (true) or random (false) addresses")
    channels: int = Field(ge=1, le=64, description="pseudo-channels one stream spans")
    reorders: bool = Field(description="the master reorders across its channels")
    masters_per_channel: int = Field(ge=1, le=64, description="masters sharing a channel")
    lateral: bool = Field(description="the stream crosses the switch laterally")
    issue_ns: float = Field(ge=0, le=1_000, description="the master's own issue time, ns")


class HbmPatternsFile(Strict):
    """workloads/experiments/hbm_patterns.yaml: the published cases."""

    id: Name
    kind: Literal["hbm_patterns"]
    cases: list[HbmCase] = Field(min_length=1, max_length=1000)


def pattern_of(case: HbmCase) -> Pattern:
    """The access pattern a case measured."""
    return Pattern(
        transaction_bytes=case.transaction_bytes,
        sequential=case.sequential,
        channels=case.channels,
        reorders=case.reorders,
        masters_per_channel=case.masters_per_channel,
        lateral=case.lateral,
        issue_ns=case.issue_ns,
    )


def model_gb_s(case: HbmCase, source: str) -> float:
    """What the part's access model gives the case's pattern, over all its streams, GB/s."""
    fpga = load_fpga(case.part)
    mem = fpga.memory
    if mem.access is None:
        raise ConfigError(source, "cases.part", case.part, "a part with a memory.access model")
    channel = mem.bandwidth_gb_s / mem.channels
    return case.streams * pattern_gb_s(channel, mem.access, pattern_of(case))


def hbm_patterns_table(path: Path) -> pd.DataFrame:
    """docs/hbm_patterns.csv: every published case with the model's bandwidth beside it."""
    inputs = load_file(HbmPatternsFile, path)
    rows = []
    for case in inputs.cases:
        row = case.model_dump()
        row["model_gb_s"] = round(model_gb_s(case, str(path)), DIGITS)
        for flag in ("sequential", "reorders", "lateral"):
            row[flag] = int(row[flag])
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def hbm_patterns_markdown(frame: pd.DataFrame) -> str:
    """The table docs/validation.md shows ("HBM bandwidth by access pattern")."""
    lines = ["| case | measured GB/s | model GB/s | error | role |", "|---|---:|---:|---:|---|"]
    for r in frame.to_dict("records"):
        err = r["model_gb_s"] / r["measured_gb_s"] - 1
        lines.append(f"| {r['case']} | {r['measured_gb_s']:.4g} | {r['model_gb_s']:.4g} | "
                     f"{err:+.1%} | {r['role']} |")
    return "\n".join(lines)


KIND = register_external(
    name="hbm_patterns",
    doc="published HBM bandwidths vs fpgasim's access model (docs/hbm_patterns.csv)",
    columns=COLUMNS,
    external=External(
        title="HBM bandwidth: published measurements against the access model",
        description="Each published U50/U280 HBM measurement with the access pattern it ran, "
        "and the bandwidth fpgasim's access model gives that pattern (docs/validation.md).",
        schema=HbmPatternsFile,
        table=hbm_patterns_table,
        doc="docs/validation.md (\"HBM bandwidth by access pattern\")",
        markdown=hbm_patterns_markdown,
    ),
)  # fmt: skip
