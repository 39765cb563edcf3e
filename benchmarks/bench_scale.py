"""Scale benchmark: `fpgasim explore` of issue 8 on each executor.

16 hypothetical V80 boards (PE arrays 64x48, 128x64, 128x128, 256x128 x peak bandwidths
77, 460, 819, 1638 GB/s) x 6 contexts x x = 1..85 (AD + LongSpec with the embedded
model's optimal tree at every x): 8160 points, solved for the best x per board and
context. Engine: `fast` when registered, else `analytic` (the row names say which). The
cache is off for the executor rows; a last row times a fully cached rerun. `run()` returns
rows {benchmark, value, unit, target, ok}; each timing is the best of two rounds that
interleave the executors, after a warm-up that imports (and JIT-compiles) the engine in
every worker.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from typing import Any

from fpgasim.analysis.explore import explore
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


def run_explore(engine: str, executor, cache: SweepCache | None = None) -> int:
    """The benchmark's explore run; returns the number of simulated points."""
    result = explore(
        load_board("v80"),
        PE_ARRAYS,
        BANDWIDTHS_GB_S,
        load_model("llama-3.1-8b"),
        load_algorithm("longspec"),
        CONTEXTS,
        engine=engine,
        executor=executor,
        cache=cache,
    )
    return len(result.points)


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


def _row(benchmark: str, value: float, unit: str, target: str, ok: bool) -> dict:
    return {"benchmark": benchmark, "value": value, "unit": unit, "target": target, "ok": ok}


def time_executors(grid: Grid, engine: str, rounds: int = 2) -> dict[str, float]:
    """Best sweep seconds per executor, measured in interleaved rounds (so that load from
    other processes hits every executor alike), plus the cluster's start-up seconds."""
    best: dict[str, float] = {}
    with ProcessExecutor() as pool, contextlib.ExitStack() as stack:  # fork before threads
        executors: dict[str, Any] = {"inprocess": "inprocess", "process": pool}
        try:
            import distributed  # noqa: F401 - only to know whether the dask rows can run
        except ImportError:
            pass
        else:
            start = time.perf_counter()
            executors["dask"] = stack.enter_context(DaskExecutor(workers=2))
            best["dask start-up"] = time.perf_counter() - start
        for executor in executors.values():
            warm_up(grid, engine, executor)  # every worker imports and compiles the engine
        for _ in range(rounds):
            for name, executor in executors.items():
                start = time.perf_counter()
                run_explore(engine, executor)
                best[name] = min(best.get(name, math.inf), time.perf_counter() - start)
    return best


def run() -> list[dict]:
    """Points per second in-process, on the process pool and on a 2-worker LocalCluster."""
    engine = "fast" if "fast" in ENGINES else "analytic"
    grid = scale_grid()
    cores = default_workers()
    best = time_executors(grid, engine)
    with tempfile.TemporaryDirectory() as folder, SweepCache(folder) as cache:
        points = run_explore(engine, "inprocess", cache)
        start = time.perf_counter()
        run_explore(engine, "inprocess", cache)
        cached_s = time.perf_counter() - start
    label = f"explore {points} pts ({engine})"

    one_s, pool_s = best["inprocess"], best["process"]
    target = 1.0 + 0.25 * (cores - 1)
    rows = [
        _row(f"{label}: in-process", points / one_s, "points/s", "(baseline)", True),
        _row(f"{label}: process pool x{cores}", points / pool_s, "points/s", "-", True),
        _row(
            f"{label}: process pool x{cores} speed-up",
            one_s / pool_s,
            "x",
            f">= {target:.2g} on {cores} cores",
            one_s / pool_s >= target,
        ),
    ]
    if "dask" not in best:
        rows.append(_row(f"{label}: dask", 0.0, "-", "needs the dask extra", False))
    else:
        dask_s, startup = best["dask"], best["dask start-up"]
        rows += [
            _row(f"{label}: dask LocalCluster x2", points / dask_s, "points/s", "-", True),
            _row(
                f"{label}: dask LocalCluster x2 speed-up",
                one_s / dask_s,
                "x",
                ">= 1 (2 workers)",
                one_s / dask_s >= 1.0,
            ),
            _row("dask LocalCluster x2 start-up", startup, "s", "< 10 s", startup < 10),
        ]
    rows.append(_row(f"{label}: cached rerun", points / cached_s, "points/s", "-", True))
    return rows
