"""Run a sweep: look points up in the cache, simulate the rest in chunks on an executor.

Points are cut, in grid order, into chunks of consecutive points (which share their board
and model, so a chunk pickles each of them once). A chunk is one task: the worker builds
the engine from its name, simulates the points and returns plain-Python rows. The parent
stores each finished chunk in the cache (one transaction) before asking for the next
result, so an interrupted sweep loses at most the chunks in flight. Rows come back in grid
order whatever the executor, so the output is identical bit for bit.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

import fpgasim
from fpgasim.engine import DEFAULT_ENGINE, ENGINES, get_engine
from fpgasim.engine.cycle import CycleEngine, check_mask_tokens
from fpgasim.simulate import Point, simulate_point
from fpgasim.step import Simulator
from fpgasim.sweep.cache import SweepCache, code_fingerprint, point_key
from fpgasim.sweep.executors import DEFAULT_EXECUTOR, Executor, make_executor
from fpgasim.sweep.grid import Grid, finish_row, rows_to_frame

#: Test-only hook: seconds a worker sleeps before each point (to kill a sweep mid-way).
SLOWDOWN_ENV = "FPGASIM_TEST_SLOWDOWN_S"
#: Largest automatic chunk; `chunk_size` overrides it.
MAX_CHUNK = 256
#: Automatic chunking aims at this many chunks per worker (load balance vs overhead).
CHUNKS_PER_WORKER = 4


class SweepProgress(Protocol):
    """Progress hooks: `start` once the executor is ready, `advance` per finished chunk."""

    def start(self, total: int, done: int) -> None:
        """The sweep has `total` points, `done` of them already cached."""
        ...

    def advance(self, points: int) -> None:
        """`points` more points finished."""
        ...


@dataclass(frozen=True)
class Chunk:
    """One task: consecutive points simulated by one worker with the named engine."""

    engine: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class ChunkResult:
    """The rows of a chunk, with the code the worker ran (checked against the keys)."""

    engine_version: str
    fpgasim_version: str
    code: str
    rows: list[dict]


@dataclass(frozen=True)
class SweepStats:
    """How a sweep went: points in total, simulated now, and reused from the cache."""

    points: int
    computed: int
    cached: int
    chunks: int
    executor: str
    workers: int
    seconds: float
    refused: int = 0
    evicted: int = 0
    unstored: int = 0

    def summary(self) -> str:
        """One line, e.g. '510 points: 85 computed, 425 from the cache (1 chunk on ...)'."""
        where = (
            f"{self.chunks} chunk{'s' * (self.chunks != 1)} on {self.executor} x{self.workers}"
            if self.chunks
            else "nothing to simulate"
        )
        notes = ""
        if self.refused:
            notes += (
                f"; {self.refused} cached row{'s' * (self.refused != 1)} failed "
                f"{'their' if self.refused != 1 else 'its'} checksum and "
                f"{'were' if self.refused != 1 else 'was'} recomputed"
            )
        if self.evicted:
            notes += f"; {self.evicted} least recently used rows evicted (cache size limit)"
        if self.unstored:
            notes += f"; the cache is read-only: {self.unstored} computed rows not stored"
        return (
            f"{self.points} points: {self.computed} computed, {self.cached} from the cache "
            f"({where}, {self.seconds:.2f} s){notes}"
        )


@dataclass(frozen=True)
class SweepResult:
    """A sweep's rows as a DataFrame (`SWEEP_COLUMNS`, grid order) and its statistics."""

    frame: pd.DataFrame
    stats: SweepStats


def _plain(value: Any) -> Any:
    """numpy scalars -> Python scalars, so rows pickle small and JSON-encode exactly."""
    return value.item() if hasattr(value, "item") else value


def simulate_chunk(chunk: Chunk) -> ChunkResult:
    """Worker side: simulate every point of a chunk with a fresh engine."""
    engine = Simulator(get_engine(chunk.engine))  # one memo for the chunk's points
    delay = float(os.environ.get(SLOWDOWN_ENV) or 0.0)
    rows = []
    for point in chunk.points:
        if delay > 0:
            time.sleep(delay)
        rows.append({k: _plain(v) for k, v in simulate_point(engine, point).items()})
    return ChunkResult(str(engine.version), fpgasim.__version__, code_fingerprint(), rows)


def engine_version(engine: str) -> str:
    """The version of a registered engine (part of every cache key)."""
    get_engine(engine)  # unknown names -> InputError listing the choices
    return str(getattr(ENGINES[engine], "version", "unversioned"))


def auto_chunk_size(points: int, workers: int) -> int:
    """Enough chunks for every worker to get several, each at most `MAX_CHUNK` points."""
    return max(1, min(MAX_CHUNK, math.ceil(points / (CHUNKS_PER_WORKER * max(1, workers)))))


def run_points(
    points: Sequence[Point],
    engine: str = DEFAULT_ENGINE,
    executor: str | Executor = DEFAULT_EXECUTOR,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    chunk_size: int | None = None,
    progress: SweepProgress | None = None,
) -> tuple[list[dict], SweepStats]:
    """Rows of `simulate_point` for every point, in order, reusing and filling `cache`.

    `executor` is a registry name (created and closed here) or an executor already entered
    by the caller (kept open, e.g. to reuse a cluster across sweeps).
    """
    started = time.perf_counter()
    version = engine_version(engine)
    for point in points:
        point.check()
    memo: dict[int, str] = {}
    keys = [point_key(p, engine, version, memo) for p in points] if cache is not None else []
    rows: list[dict | None] = [None] * len(points)
    refused_before = cache.refused if cache is not None else 0
    evicted_before = cache.evicted if cache is not None else 0
    unstored_before = cache.unstored if cache is not None else 0
    if cache is not None:
        found = cache.get_many(keys)
        for i, key in enumerate(keys):
            rows[i] = found.get(key)
    missing = [i for i, row in enumerate(rows) if row is None]
    cached = len(points) - len(missing)

    owned = isinstance(executor, str)
    ex: Executor = make_executor(executor, workers, scheduler) if owned else executor
    size = chunk_size or auto_chunk_size(len(missing), ex.workers)
    spans = [missing[i : i + size] for i in range(0, len(missing), size)]
    if owned and ex.name == "process" and len(spans) <= 1:
        ex = make_executor("inprocess")  # a pool would only add start-up time
    chunks = [Chunk(engine, tuple(points[i] for i in span)) for span in spans]

    def consume(active: Executor) -> None:
        if progress is not None:
            progress.start(len(points), cached)
        for c, result in active.map_unordered(simulate_chunk, chunks):
            span = spans[c]
            mine = (version, fpgasim.__version__, code_fingerprint())
            theirs = (result.engine_version, result.fpgasim_version, result.code)
            if theirs != mine:
                raise RuntimeError(
                    f"a worker runs fpgasim {theirs[1]} (code {theirs[2][:8]}, engine {engine} "
                    f"{theirs[0]}), this process fpgasim {mine[1]} (code {mine[2][:8]}, engine "
                    f"{engine} {mine[0]}); install the same fpgasim on every worker (or the "
                    "sources changed during the sweep)"
                )
            pairs = list(zip(span, result.rows, strict=True))
            if cache is not None:
                cache.put_many((keys[i], engine, row) for i, row in pairs)
            for i, row in pairs:
                rows[i] = row
            if progress is not None:
                progress.advance(len(span))

    if not chunks:
        if progress is not None:
            progress.start(len(points), cached)
    elif owned:
        with ex as active:
            consume(active)
    else:
        consume(ex)
    stats = SweepStats(
        points=len(points),
        computed=len(missing),
        cached=cached,
        chunks=len(chunks),
        executor=ex.name,
        workers=ex.workers,
        seconds=time.perf_counter() - started,
        refused=cache.refused - refused_before if cache is not None else 0,
        evicted=cache.evicted - evicted_before if cache is not None else 0,
        unstored=cache.unstored - unstored_before if cache is not None else 0,
    )
    return [r for r in rows if r is not None], stats


def run_sweep(
    grid: Grid,
    engine: str = DEFAULT_ENGINE,
    executor: str | Executor = DEFAULT_EXECUTOR,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    chunk_size: int | None = None,
    progress: SweepProgress | None = None,
) -> SweepResult:
    """Simulate every point of `grid` (see `run_points`); one row per point, grid order.
    The largest tree's mask is checked against its budget on every board first."""
    if isinstance(get_engine(engine), CycleEngine):
        x = grid.largest_tree()
        for board in grid.boards:
            check_mask_tokens(x, board, "verify_lens", x)
    rows, stats = run_points(
        grid.points(),
        engine,
        executor,
        workers=workers,
        scheduler=scheduler,
        cache=cache,
        chunk_size=chunk_size,
        progress=progress,
    )
    return SweepResult(rows_to_frame([finish_row(r, grid.algorithm) for r in rows]), stats)
