"""Fill in docs/hbm_patterns.csv's model column and print docs/validation.md's table of it.

Each row of docs/hbm_patterns.csv is a published HBM bandwidth measurement (`case`,
`source`, `measured_gb_s`, transcribed) with the access pattern it measured (the columns
after `role`: part, independent streams, transaction bytes, sequential or random, the
pseudo-channels a stream spans, whether its master reorders across them, masters per
channel, lateral crossing, the master's own issue time per transaction). `model_gb_s` is
what fpgasim's access model (fpgasim/config/memory_access.py, with the part's
`memory.access` constants) gives that pattern: streams x `pattern_gb_s`. Rows marked
`calibrates ...` fixed one constant each; every other row is a check. Rewrites the CSV's
model column and prints the Markdown table, in well under a second.

Usage: python benchmarks/hbm_patterns.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.config import load_fpga
from fpgasim.config.memory_access import Pattern, pattern_gb_s

CSV = Path(__file__).resolve().parents[1] / "docs" / "hbm_patterns.csv"


def pattern_of(row: dict) -> Pattern:
    """The access pattern a row measured."""
    return Pattern(
        transaction_bytes=int(row["transaction_bytes"]),
        sequential=bool(row["sequential"]),
        channels=int(row["channels"]),
        reorders=bool(row["reorders"]),
        masters_per_channel=int(row["masters_per_channel"]),
        lateral=bool(row["lateral"]),
        issue_ns=float(row["issue_ns"]),
    )


def model_gb_s(row: dict) -> float:
    """What the part's access model gives the row's pattern, over all its streams, GB/s."""
    fpga = load_fpga(str(row["part"]))
    mem = fpga.memory
    if mem.access is None:
        raise ValueError(f"{row['case']}: part {fpga.name} has no access model")
    channel = mem.bandwidth_gb_s / mem.channels
    return int(row["streams"]) * pattern_gb_s(channel, mem.access, pattern_of(row))


def table(frame: pd.DataFrame) -> str:
    """The Markdown table docs/validation.md shows."""
    lines = ["| case | measured GB/s | model GB/s | error | role |", "|---|---:|---:|---:|---|"]
    for r in frame.to_dict("records"):
        err = r["model_gb_s"] / r["measured_gb_s"] - 1
        lines.append(f"| {r['case']} | {r['measured_gb_s']:.4g} | {r['model_gb_s']:.4g} | "
                     f"{err:+.1%} | {r['role']} |")
    return "\n".join(lines)


def main() -> None:
    """Rewrite the model column, print the table and the worst error of the checks."""
    frame = pd.read_csv(CSV)
    frame["model_gb_s"] = [round(model_gb_s(r), 6) for r in frame.to_dict("records")]
    frame.to_csv(CSV, index=False)
    print(table(frame))
    err = (frame["model_gb_s"] / frame["measured_gb_s"] - 1).abs()
    checks = frame["role"] == "check"
    print(f"\nworst error: {err.max():.1%} over {len(frame)} cases; "
          f"{err[checks].max():.1%} over the {int(checks.sum())} checks")


if __name__ == "__main__":
    main()
