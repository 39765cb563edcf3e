"""Scale benchmark: the design-space sweep of issue 8 on each executor.

16 hypothetical V80 boards (PE arrays 64x48, 128x64, 128x128, 256x128 x peak bandwidths
77, 460, 819, 1638 GB/s) x 6 contexts x x = 1..85 with the LongSpec draft phase: 8160
points. Engine: `fast` when registered, else `analytic` (the row names say which). The
cache is off for the executor rows; a last row times a fully cached rerun. `run()` returns
rows {benchmark, value, unit, target, ok}; each timing is the best of two, after a warm-up
that imports (and JIT-compiles) the engine in every worker.
"""

from __future__ import annotations

import tempfile
import time

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import ENGINES
from fpgasim.sweep import Grid, SweepCache, derive_boards, run_sweep
from fpgasim.sweep.executors import DaskExecutor, ProcessExecutor, default_workers

PE_ARRAYS = [(64, 48), (128, 64), (128, 128), (256, 128)]
BANDWIDTHS_GB_S = [77, 460, 819, 1638]
CONTEXTS = [128, 256, 512, 1024, 2048, 4096]


def scale_grid() -> Grid:
    """The 16-board x 6-context x 85-x grid (8160 points)."""
    return Grid(
        boards=derive_boards(load_board("v80"), PE_ARRAYS, BANDWIDTHS_GB_S),
        model=load_model("llama-3.1-8b"),
        contexts=CONTEXTS,
        verify_lens=list(range(1, 86)),
        algorithm=load_algorithm("longspec"),
    )


def warm_up(grid: Grid, engine: str, executor) -> None:
    """One-point tasks, so every worker has imported (and JIT-compiled) the engine."""
    small = Grid(
        boards=grid.boards[:1],
        model=grid.model,
        contexts=grid.contexts[:1],
        verify_lens=[1, 2, 3, 4, 5, 6],
        algorithm=grid.algorithm,
    )
    run_sweep(small, engine, executor, chunk_size=1)


def _best_of(fn, repeat: int = 2) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run() -> list[dict]:
    """Points per second in-process, on the process pool and on a 2-worker LocalCluster."""
    engine = "fast" if "fast" in ENGINES else "analytic"
    grid = scale_grid()
    points = len(grid.points())
    cores = default_workers()
    label = f"sweep {points} pts ({engine})"
    rows: list[dict] = []

    def rate_row(name: str, seconds: float, target: float, unit_target: str) -> float:
        rate = points / seconds
        rows.append(
            {
                "benchmark": f"{label}: {name}",
                "value": rate,
                "unit": "points/s",
                "target": unit_target,
                "ok": rate >= target,
            }
        )
        return rate

    warm_up(grid, engine, "inprocess")  # compiled before the pool forks
    base = rate_row(
        "in-process", _best_of(lambda: run_sweep(grid, engine, "inprocess")), 0, "(baseline)"
    )

    with ProcessExecutor() as pool:
        warm_up(grid, engine, pool)
        seconds = _best_of(lambda: run_sweep(grid, engine, pool))
    pool_rate = rate_row(f"process pool x{cores}", seconds, 0, "(see speed-up)")
    speedup_target = 1.0 + 0.25 * (cores - 1)
    rows.append(
        {
            "benchmark": f"{label}: process pool x{cores} speed-up",
            "value": pool_rate / base,
            "unit": "x",
            "target": f">= {speedup_target:.2g} on {cores} cores",
            "ok": pool_rate / base >= speedup_target,
        }
    )

    try:
        import distributed  # noqa: F401 - only to know whether the dask rows can run
    except ImportError:
        rows.append(
            {"benchmark": f"{label}: dask", "value": 0.0, "unit": "-", "target": "dask extra"}
        )
    else:
        start = time.perf_counter()
        with DaskExecutor(workers=2) as cluster:
            startup = time.perf_counter() - start
            warm_up(grid, engine, cluster)  # spawned workers compile numba code once
            seconds = _best_of(lambda: run_sweep(grid, engine, cluster))
        dask_rate = rate_row("dask LocalCluster x2", seconds, 0, "(see speed-up)")
        rows.append(
            {
                "benchmark": f"{label}: dask LocalCluster x2 speed-up",
                "value": dask_rate / base,
                "unit": "x",
                "target": ">= 1 (2 workers)",
                "ok": dask_rate / base >= 1.0,
            }
        )
        rows.append(
            {
                "benchmark": "dask LocalCluster x2 start-up",
                "value": startup,
                "unit": "s",
                "target": "< 10 s",
                "ok": startup < 10,
            }
        )

    with tempfile.TemporaryDirectory() as folder, SweepCache(folder) as cache:
        run_sweep(grid, engine, "inprocess", cache=cache)
        seconds = _best_of(lambda: run_sweep(grid, engine, "inprocess", cache=cache))
    rate_row("cached rerun", seconds, 0, "(all from the cache)")
    return rows
