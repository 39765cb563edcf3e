"""Engine benchmarks: one Llama-3.1-8B verify pass on `event` and `fast`, a `fast` sweep, and
one verify pass at L = 16,384 on `fast` (issue 28: <= 5 ms warm).

`run()` returns rows {benchmark, value, unit, target, ok}. Pass timings are the best of
several runs on fresh engines (no per-pass cache hits), after the numba JIT warm-up. At
L = 16,384 "warm" is a process that has timed a verify pass of the same x at another long
context (the kernel and the x's projections compiled); each timed pass is a new context
of more keys (a new 16-key bucket: its attention parts compiled), the best of three.
Measured 2026-11-27: 2.2-2.9 ms on u280 and v80, 4.2 ms on flightllm-vhk158 (0.3-0.4 ms
for a context within a compiled bucket).
"""

from __future__ import annotations

import time

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.sweep import Grid, run_grid

BOARDS = ("u280", "vhk158", "v80", "u250")
#: boards of the L = 16,384 verify pass: a study board at each end and FlightLLM's own
LONG_BOARDS = ("u280", "v80", "flightllm-vhk158")
CONTEXTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def _best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def long_context_pass_ms(board_name: str, model) -> float:
    """Best of three verify passes (x = 16) at a new long context on a warm `fast` engine."""
    board = load_board(board_name)
    engine = FastEngine()
    engine.run_pass(PassSpec("target", 16, 16384 - 256), board, model)  # warm
    return 1e3 * min(
        _best_of(lambda c=c: engine.run_pass(PassSpec("target", 16, c), board, model), 1)
        for c in (16384, 16384 - 64, 16384 - 128)
    )


def run() -> list[dict]:
    """Time the verify pass (x=16, L=4096, V80) per engine, a 4x8x85 sweep on fast and the
    verify pass at L = 16,384 on fast."""
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
    rows += [
        (f"fast: verify pass x=16 L=16384 {b}, warm, new context", long_context_pass_ms(b, model),
         "ms", 5.0)
        for b in LONG_BOARDS
    ]  # fmt: skip
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
