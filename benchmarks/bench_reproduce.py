"""Wall time of `fpgasim reproduce all` (a fresh process, like a user) per engine.

Targets (issue 6): analytic < 60 s, fast < 5 min on this 2-core machine. Uses the measured
AAT tables of ../shared/reference/aat when present, else the embedded models.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

AAT_DIR = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aat"
TARGETS_S = {"analytic": 60.0, "fast": 300.0}


def reproduce_all_s(engine: str, out: Path) -> float:
    """Seconds of `python -m fpgasim reproduce all --engine ENGINE --out OUT`."""
    args = [sys.executable, "-m", "fpgasim", "reproduce", "all", "--engine", engine]
    args += ["--out", str(out), "--format", "csv"]
    if AAT_DIR.is_dir():
        args += ["--aat-dir", str(AAT_DIR)]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"reproduce all --engine {engine} failed: {proc.stderr.strip()}")
    return elapsed


def run() -> list[dict]:
    """One row per engine: wall seconds of `reproduce all` against its target."""
    from fpgasim.engine import ENGINES

    source = "measured AAT" if AAT_DIR.is_dir() else "embedded AAT"
    rows = []
    for engine, target in TARGETS_S.items():
        name = f"reproduce all, {engine} engine, {source}"
        if engine not in ENGINES:
            rows.append(
                {
                    "benchmark": name,
                    "value": float("nan"),
                    "unit": "s",
                    "target": f"< {target:.0f} s (skipped: engine not registered)",
                    "ok": "skipped",
                }
            )
            continue
        with tempfile.TemporaryDirectory() as tmp:
            seconds = reproduce_all_s(engine, Path(tmp))
        rows.append(
            {
                "benchmark": name,
                "value": seconds,
                "unit": "s",
                "target": f"< {target:.0f} s",
                "ok": seconds < target,
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
