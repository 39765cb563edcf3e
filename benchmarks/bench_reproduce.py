"""Wall and CPU time of the README's `fpgasim reproduce all --out DIR` (a fresh process, like a
user) with the default simulator beside the accounting, the accounting alone and `event`.

Targets, on the 2-core reference machine: default (fast beside analytic, numba compiled from
scratch: its on-disk cache is emptied first) <= 10 s wall (issue 28; 30 s for issue 13),
the default run again with the kernel in numba's on-disk cache <= 12 s (issue 18),
`--engine analytic` <= 5 s, `--engine event` <= 120 s. CPU time (this process's children:
the CLI and its pool workers) is reported beside the wall time: on a shared machine the
wall time is pessimistic, the CPU time is not. All runs read the shipped measured AAT tables.

Measured for issue 18 (the default run again, `--format csv --out DIR`, numba cached, load
average ~2 from other sessions, alternating runs): 10.7-11.0 s wall / 19.8-20.1 s CPU,
against 11.4-12.1 s / 21.1-21.8 s before the pass service interned its keys; under a heavier
load the same run took 15.7-22 s wall. Two idle cores were not available; summed from each
process's CPU per phase, the critical path is about 9.5 s: imports 0.6 s, the plan on two
workers ~1.5 s (fig4's dry run is one side, the eight others the other), the 3425 passes
~2.6 s per worker, the experiments and figures ~4.5 s per worker (table3's throughput tree
search 2.3 s, fig4's 68 solved curves 1.9 s, the five figures 2.5 s), then the files.

Measured for issue 28 (2026-11-27, idle machine; every board on FlightLLM's compiler,
Llama-3.1-8B up to 16K tokens): default cold 15.9 s wall / 29.9 s CPU, again 15.4 s /
28.7 s, `--engine analytic` 4.0-4.2 s / 6.1 s, `--engine event` 54 s / 105 s (24.3 s
and 20.3 s wall for the first two before the window proof without a repeating state, the
key tiles compiled once, numba loaded once and the costliest experiments started first:
docs/benchmarks.md, "Where the time went"). The 10 s issue 28 asks for is not reached.
Then (fig4 on the bounded search, the collector's thresholds, prefetch chunks cut between
token counts, the tree search's array calls): default cold 10.8 s wall / 19.7 s CPU, again
10.2 s / 18.7 s, `--engine analytic` 3.5 s / 5.5 s, `--engine event` 27.4 s / 51.2 s; cold
still missed the 10 s by about 0.8 s. Then (the numba kernel's arrays allocated by its
caller, the heap frozen before the exit, the tree search's last-level children bounded
together, AAT lookups without pandas filters, experiments ordered by their cost with
their figures): default cold 9.4 s wall / 17.6 s CPU, again 9.3 s / 17.3 s, `--engine
analytic` 3.0 s / 4.8 s, `--engine event` 27.2 s / 50.2 s; alternating cold runs against
the commit before 9.0-9.5 s against 10.1-11.2 s (10.7-10.9 s against 12.5-12.6 s while the
host ran slower).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: (label, --engine, target wall seconds, empty the numba cache first)
RUNS = (
    ("default (fast beside analytic, numba compiled)", "fast", 10.0, True),
    ("default again (numba cache on disk)", "fast", 12.0, False),
    ("--engine analytic", "analytic", 5.0, False),
    ("--engine event", "event", 120.0, False),
)


def clear_numba_cache() -> None:
    """Remove the fast engine's compiled kernel from its on-disk cache (a fresh install)."""
    from fpgasim.engine.fast import numba_cache_dir

    for path in numba_cache_dir().rglob("fast._loop*"):
        path.unlink()


def timed_cli(args: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of `python -m fpgasim ARGS` in a fresh process (CPU: the CLI and
    its pool workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "fpgasim", *args],
        capture_output=True, text=True, timeout=3600, cwd=REPO,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"fpgasim {' '.join(args)} failed: {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def wall_and_cpu_rows(name: str, wall: float, cpu: float, target: float) -> list[dict]:
    """The two rows of a run: wall seconds against the target, and CPU seconds."""
    return [
        {"benchmark": f"{name}: wall", "value": wall, "unit": "s",
         "target": f"<= {target:.0f} s", "ok": wall <= target},
        {"benchmark": f"{name}: CPU (all processes)", "value": cpu, "unit": "s",
         "target": "(wall on a busy machine: judge by CPU)", "ok": ""},
    ]  # fmt: skip


def run() -> list[dict]:
    """Two rows per run: wall seconds against the target, and CPU seconds."""
    rows = []
    for label, engine, target, fresh in RUNS:
        if fresh:
            clear_numba_cache()
        with tempfile.TemporaryDirectory() as tmp:
            args = ["reproduce", "all", "--engine", engine, "--out", str(Path(tmp))]
            wall, cpu = timed_cli(args)
        rows += wall_and_cpu_rows(f"reproduce all, {label}", wall, cpu, target)
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
