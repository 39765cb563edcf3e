"""Scale benchmark: `fpgasim explore` of issue 8 on each executor.

16 hypothetical V80 boards (the `v80` board, the study's design on the V80, with its MM
array R x C = 64x48, 128x64, 128x128, 256x128 x peak bandwidths 77, 460, 819, 1638 GB/s,
each re-fitted to the part) x 6 contexts x (AD + LongSpec at every x of its AAT curve up
to 85, 43 values of x, each with the curve's tree): 4224 points, solved for the best x per
board and context. Engine:
`fast` when registered, else `analytic` (the row names say which). The cache is off for
the executor rows; a last row times a fully cached rerun. `run()` returns
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
from fpgasim.sweep import BoardBase, Grid, SweepCache, Variation, run_sweep
from fpgasim.sweep.executors import DaskExecutor, ProcessExecutor, default_workers

PE_ARRAYS = [(64, 48), (128, 64), (128, 128), (256, 128)]
BANDWIDTHS_GB_S = [77, 460, 819, 1638]
CONTEXTS = [128, 256, 512, 1024, 2048, 4096]
VERIFY_LENS = list(range(2, 86))


class ArraysByBandwidth(Variation):
    """The PE arrays (rows and columns paired, not crossed) x the bandwidths: `--vary` takes
    a product of fields, so the pairs are listed here. A 256-row array prefills in 256-row
    tiles (the padding must be a multiple of the M tile)."""

    def combinations(self):  # noqa: D102 - Variation's
        return [(("design.mm_rows", rows), ("design.mm_cols", cols),
                 ("design.padding.prefill_multiple", max(128, rows)),
                 ("fpga.memory.bandwidth_gb_s", bw))
                for rows, cols in PE_ARRAYS for bw in BANDWIDTHS_GB_S]


VARIATION = ArraysByBandwidth((
    ("design.mm_rows", tuple(dict.fromkeys(r for r, _ in PE_ARRAYS))),
    ("design.mm_cols", tuple(dict.fromkeys(c for _, c in PE_ARRAYS))),
    ("fpga.memory.bandwidth_gb_s", tuple(BANDWIDTHS_GB_S)),
))


def scale_grid() -> Grid:
    """The 16 boards, 6 contexts and x = 1..85, for the warm-up."""
    return Grid(
        boards=[load_board("v80", changes) for changes in VARIATION.combinations()],
        model=load_model("llama-3.1-8b"),
        contexts=CONTEXTS,
        verify_lens=list(range(1, 86)),
        algorithm=load_algorithm("longspec"),
    )


def run_explore(engine: str, executor, cache: SweepCache | None = None) -> int:
    """The benchmark's explore run; returns the number of simulated points."""
    result = explore(
        BoardBase(board="v80"),
        VARIATION,
        load_model("llama-3.1-8b"),
        [load_algorithm("longspec")],
        CONTEXTS,
        engine=engine,
        executor=executor,
        cache=cache,
        verify_lens=VERIFY_LENS,
        accounting=False,
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
