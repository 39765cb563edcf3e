"""Every registered in-memory cache's hits and misses over the questions users ask (issue 44):
which caches earn their place, measured.

The workload, in one process from cold (`clear_caches`), through the real CLI entry point:
`solve` on v80 and flightllm-vhk158 (Llama-3.1-8B, LongSpec, two contexts, `fast`),
`tree optimal` on v80, `generate` on flightllm-vhk158 (P = 128, D = 256), `explore` of
flightllm-vhk158 over bandwidth and clock, and `reproduce table3` and `table4`. A cache that
never hits in this workload is listed with hit rate 0: a candidate for removal, unless its
`why` (docs/scaling.md) names a workload outside it. Everything runs in this process
(`--executor inprocess`, `--workers 1`): a pool worker's caches count in the worker.
Run: python benchmarks/bench_cache_hits.py (prints the table; `run()` rows for run.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile

from fpgasim.bounded import cache_specs, cache_stats, clear_caches, reset_stats
from fpgasim.cli import main

WORKLOAD = (
    ["solve", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024,8192",
     "--engine", "fast", "--format", "csv"],
    ["solve", "-b", "flightllm-vhk158", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts",
     "1024,8192", "--engine", "fast", "--format", "csv"],
    ["tree", "optimal", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--context",
     "1024", "--objective", "throughput", "--format", "csv"],
    ["generate", "-b", "flightllm-vhk158", "-m", "llama-3.1-8b", "-a", "longspec",
     "--prompt-len", "128", "--decode-len", "256", "--format", "csv"],
    ["explore", "-b", "flightllm-vhk158", "-m", "llama-3.1-8b", "-a", "longspec", "--vary",
     "fpga.memory.bandwidth_gb_s=460,819.2", "--vary", "design.clock_mhz=200,225",
     "--contexts", "1024", "--engine", "fast", "--executor", "inprocess", "--format", "csv"],
)


def _run(args: list[str]) -> None:
    """One command in this process, its output discarded; a failure stops the benchmark."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(args)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise SystemExit(f"fpgasim {' '.join(args)} failed: {err.getvalue()}") from None


def run() -> list[dict]:
    """Hits and misses per cache over the workload; rows for benchmarks/run.py."""
    with tempfile.TemporaryDirectory() as folder:
        os.environ["FPGASIM_CACHE_DIR"] = folder  # no persistent result cache hits
        clear_caches()
        reset_stats()
        for args in WORKLOAD:
            _run(args)
        for table in ("table3", "table4"):
            _run(["reproduce", table, "--workers", "1", "--out", os.path.join(folder, table)])
    stats = cache_stats()
    rows = []
    for spec in cache_specs():
        hits, misses = stats.get(spec.name, (0, 0))
        asked = hits + misses
        rate = hits / asked if asked else 0.0
        rows.append({"benchmark": f"cache {spec.name} hit rate", "value": rate, "unit": "",
                     "target": f"{hits:,} hits / {asked:,} asks", "ok": hits > 0})
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row['benchmark']:<60} {row['value']:6.3f}  {row['target']}")
