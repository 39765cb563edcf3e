"""Engine benchmarks: one Llama-3.1-8B verify pass on `event` and `fast`, and a `fast` sweep.

`run()` returns rows {benchmark, value, unit, target, ok}. Pass timings are the best of
several runs on fresh engines (no per-pass cache hits), after the numba JIT warm-up.
"""

from __future__ import annotations

import time

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.sweep import Grid, run_grid

BOARDS = ("u280", "vhk158", "v80", "u250")
CONTEXTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def _best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run() -> list[dict]:
    """Time the verify pass (x=16, L=4096, V80) per engine and a 4x8x85 sweep on fast."""
    model = load_model("llama-3.1-8b")
    v80 = load_board("v80")
    spec = PassSpec("target", 16, 4096)
    FastEngine().run_pass(spec, v80, model)  # JIT compile (or load from the numba cache)
    event_s = _best_of(lambda: EventEngine().run_pass(spec, v80, model), 3)
    event_full_s = _best_of(lambda: EventEngine(window=False).run_pass(spec, v80, model), 3)
    fast_s = _best_of(lambda: FastEngine().run_pass(spec, v80, model), 5)

    grid = Grid(
        boards=[load_board(b) for b in BOARDS],
        model=model,
        contexts=CONTEXTS,
        verify_lens=range(1, 86),
        algorithm=load_algorithm("longspec"),
        tree_method="width",
        accepted=1,
    )
    start = time.perf_counter()
    frame = run_grid(FastEngine(), grid)
    sweep_s = time.perf_counter() - start
    points = len(frame)

    rows = [
        ("event: verify pass, llama-3.1-8b x=16 L=4096 v80", event_s, "s", 2.0),
        ("event without layer windowing (all 32 layers)", event_full_s, "s", 2.0),
        ("fast: verify pass (after JIT warm-up)", fast_s * 1e3, "ms", 20.0),
        (
            f"fast: sweep 4 boards x 8 contexts x x=1..85, target+longspec ({points} points)",
            sweep_s,
            "s",
            60.0,
        ),  # fmt: skip
    ]
    return [
        {
            "benchmark": name,
            "value": value,
            "unit": unit,
            "target": f"<= {limit:g} {unit}",
            "ok": value <= limit,
        }
        for name, value, unit, limit in rows
    ]
