"""Run every benchmarks/bench_*.py and print one table of their results.

Each bench module defines `run() -> list[dict]` whose rows have at least
`benchmark`, `value`, `unit` and `target` (a human-readable goal, e.g. "<= 2 s").
Usage: python benchmarks/run.py [NAME_FILTER]
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table


def main() -> None:
    here = Path(__file__).parent
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    table = Table(title="fpgasim benchmarks (this machine)")
    for col in ("benchmark", "value", "unit", "target", "ok"):
        table.add_column(col)
    for path in sorted(here.glob("bench_*.py")):
        if wanted not in path.stem:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        start = time.perf_counter()
        rows = module.run()
        for row in rows:
            table.add_row(row["benchmark"], f"{row['value']:.4g}", row["unit"],
                          row.get("target", ""), str(row.get("ok", "")))
        print(f"{path.stem}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    Console().print(table)


if __name__ == "__main__":
    main()
