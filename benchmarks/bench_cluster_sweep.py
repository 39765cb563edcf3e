"""Cluster sweep benchmark (issue 39 item 6): >= 10,000 cluster points through `fpgasim
sweep --executor dask`, and the rows checked against the serial executor's on a subset.

The grid: two boards (`u280`, `v80`) x `--vary cluster.cards=1,2,4,8` x
`cluster.parallel=tp,pp` x `cluster.hop_latency_s=2.5e-7,1e-6` (32 board variants) x 8
contexts x verify lengths 1..40 = 10,240 points of Llama-2-7B-chat (heads, FFN columns and
vocabulary divide over 8 cards), on the `fast` engine (event's cycles bit for bit; the
analytic accounting prices one card only and refuses a cluster). It runs the real CLI in a
child process (`python -m fpgasim sweep ...`: flags, --vary, split checks, executor, the
writer), cache off, on a Dask LocalCluster of 2 workers (start-up included in the wall
time). The determinism check runs the first context x verify lengths 1..8 (256 points)
again on the `inprocess` executor and requires every column of those rows to be equal, bit
for bit. `run()` returns rows {benchmark, value, unit, target, ok}; docs/scaling.md records
the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

BOARDS = "u280,v80"
MODEL = "llama2-chat-7b"
VARY = ("cluster.cards=1,2,4,8", "cluster.parallel=tp,pp", "cluster.hop_latency_s=2.5e-7,1e-6")
CONTEXTS = "256,512,768,1024,1536,2048,3000,4000"
VERIFY_LENS = "1-40"
#: the subset re-run serially: the first context, x = 1..8, every board variant
SUBSET_CONTEXTS, SUBSET_LENS = "256", "1-8"
KEYS = ["board", "context", "verify_len", "batch"]


def sweep(out: Path, executor: str, contexts: str, verify_lens: str) -> float:
    """One `fpgasim sweep` of the grid in a child process; returns its wall seconds."""
    args = [sys.executable, "-m", "fpgasim", "sweep", "-b", BOARDS, "-m", MODEL,
            "--contexts", contexts, "--verify-lens", verify_lens, "-e", "fast",
            "--executor", executor, "--workers", "2", "--no-cache", "--out", str(out)]
    for item in VARY:
        args += ["--vary", item]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=os.environ.copy())
    if proc.returncode != 0:
        raise RuntimeError(f"sweep failed: {proc.stderr.strip().splitlines()[-1:]}")
    return time.perf_counter() - start


def _row(benchmark: str, value: float, unit: str, target: str, ok: bool) -> dict:
    return {"benchmark": benchmark, "value": value, "unit": unit, "target": target, "ok": ok}


def run() -> list[dict]:
    """Wall time and points/s of the dask sweep, and whether the serial subset agrees."""
    with tempfile.TemporaryDirectory() as folder:
        full, part = Path(folder) / "dask.parquet", Path(folder) / "serial.parquet"
        dask_s = sweep(full, "dask", CONTEXTS, VERIFY_LENS)
        serial_s = sweep(part, "inprocess", SUBSET_CONTEXTS, SUBSET_LENS)
        rows, serial = pd.read_parquet(full), pd.read_parquet(part)
    points = len(rows)
    subset = rows.merge(serial[KEYS], on=KEYS).sort_values(KEYS).reset_index(drop=True)
    serial = serial.sort_values(KEYS).reset_index(drop=True)
    same = len(subset) == len(serial) and subset[serial.columns].equals(serial)
    label = f"cluster sweep {points:,} pts (fast, dask LocalCluster x2)"
    return [
        _row(f"{label}: wall time", dask_s, "s", "(recorded in docs/scaling.md)", True),
        _row(f"{label}: rate", points / dask_s, "points/s", "-", True),
        _row("cluster sweep points", points, "points", ">= 10,000", points >= 10_000),
        _row(f"cluster sweep: {len(serial)} rows on inprocess == dask's", float(same), "bool",
             "1 (bit for bit)", same),
        _row(f"cluster sweep: {len(serial)} serial rows wall time", serial_s, "s", "-", True),
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
