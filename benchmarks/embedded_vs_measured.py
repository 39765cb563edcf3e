"""The embedded acceptance model against every measured AAT row shipped with fpgasim.

    python benchmarks/embedded_vs_measured.py [--out docs/embedded_vs_measured.csv]

Writes one CSV row per measured row (`fpgasim.acceptance.agreement.AGREEMENT_COLUMNS`:
the measured AAT, the embedded model's AAT for the same tree at the same context, the
relative error, and what the acceptance rule uses by default there) and prints the summary
block of docs/trees.md ("Embedded model against every measured row").
`tests/acceptance/test_rule.py` checks that both files hold what this script writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fpgasim.acceptance.agreement import agreement_markdown, embedded_vs_measured
from fpgasim.acceptance.measured import builtin_tables
from fpgasim.config import load_algorithm

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "embedded_vs_measured.csv"


def main() -> None:
    """Compute the table from the shipped tables, write the CSV, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="CSV to write")
    args = parser.parse_args()
    tables = builtin_tables()
    algorithms = {a: load_algorithm(a) for a in sorted(set(tables.rows["algorithm"]))}
    frame = embedded_vs_measured(tables, algorithms)
    frame.to_csv(args.out, index=False, float_format="%.6g")
    print(agreement_markdown(frame))
    print(f"\nwrote {len(frame)} rows to {args.out}")


if __name__ == "__main__":
    main()
