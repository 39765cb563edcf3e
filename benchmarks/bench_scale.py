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

from fpgasim.bounded import clear_caches
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import ENGINES
from fpgasim.studies.explore import explore
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


#: the in-memory caches emptied before every timed run (all but numba's loaded kernels), so
#: each executor starts as cold as a new command would: the parent's compiled parts would
#: otherwise serve a second in-process round whole, while a pool's workers see other passes
COLD_PREFIXES = ("flightllm.", "engine.", "fast.fixed", "graph.", "instructions.", "step.",
                 "model.", "drafters.")


def _cold() -> None:
    """Empty the caches a run fills (`COLD_PREFIXES`), in this process."""
    for prefix in COLD_PREFIXES:
        clear_caches(prefix)


def time_executors(grid: Grid, engine: str, rounds: int = 2) -> dict[str, float]:
    """Best sweep seconds per executor, measured in interleaved rounds (so that load from
    other processes hits every executor alike), each run cold: the caches emptied first,
    the process pool forked afresh from the emptied parent (its start-up counted), the Dask
    cluster made afresh (its start-up, timed apart, not counted)."""
    best: dict[str, float] = {}
    warm_up(grid, engine, "inprocess")  # the engine's kernels compiled, inherited by forks
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401 - only to know whether the dask rows can run

        best["dask start-up"] = math.inf
    for _ in range(rounds):
        _cold()
        start = time.perf_counter()
        run_explore(engine, "inprocess")
        best["inprocess"] = min(best.get("inprocess", math.inf), time.perf_counter() - start)
        _cold()
        start = time.perf_counter()
        with ProcessExecutor() as pool:
            run_explore(engine, pool)
        best["process"] = min(best.get("process", math.inf), time.perf_counter() - start)
        if "dask start-up" in best:
            start = time.perf_counter()
            with DaskExecutor(workers=2) as cluster:
                up = time.perf_counter()
                best["dask start-up"] = min(best["dask start-up"], up - start)
                warm_up(grid, engine, cluster)  # each new worker loads the engine's kernels
                ready = time.perf_counter()
                run_explore(engine, cluster)
                best["dask"] = min(best.get("dask", math.inf), time.perf_counter() - ready)
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
