"""The developer's inner loop: `python -m pytest -m "not slow"` (issue 44), wall time.

Target: under 2 minutes on a 2-core machine (tests/README.md). Runs the suite once in a
fresh process and reports its wall and CPU time, the tests run and the load average before
(a busy machine makes the wall time pessimistic, not the CPU time).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 120.0


def run() -> list[dict]:
    """One run of the inner loop; rows for benchmarks/run.py."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=REPO, timeout=1800,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"the inner loop failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}")
    passed = re.search(r"(\d+) passed", proc.stdout)
    tests = int(passed.group(1)) if passed else 0
    return [
        {"benchmark": "pytest -m 'not slow' wall", "value": wall, "unit": "s",
         "target": f"<= {TARGET_S:.0f} s", "ok": wall <= TARGET_S},
        {"benchmark": "pytest -m 'not slow' CPU", "value": cpu, "unit": "s", "target": ""},
        {"benchmark": "pytest -m 'not slow' tests", "value": tests, "unit": "tests",
         "target": ""},
        {"benchmark": "load average before", "value": load, "unit": "", "target": ""},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
