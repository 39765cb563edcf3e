"""Issue 39's two speed targets on a 70B cluster: one verify pass on 8 U280 cards (fast,
warm) and a solve of a 70B cluster over four contexts. (The crossover table of
docs/multi-fpga.md is `fpgasim reproduce cluster_crossover`.)

Usage: python benchmarks/run.py cluster
"""

from __future__ import annotations

import time

from fpgasim.config import load_algorithm, load_model
from fpgasim.engine import get_engine
from fpgasim.reproduce.kinds.cluster_crossover import MODELS, board_on
from fpgasim.simulate import verify_timing
from fpgasim.solving.solver import solve


def speed_targets() -> list[dict]:
    """Issue 39 item 6's two timings: a 70B verify pass on 8 cards (fast, warm: the second
    call of a fresh engine, lowering cached) and a solve of a 70B cluster over four contexts
    (cold engine, in this process)."""
    model = load_model(MODELS[0])
    board = board_on("u280", 8)
    engine = get_engine("fast")
    verify_timing(engine, board, model, 16, 2048)  # warm: compile, lower, numba
    engine = get_engine("fast")  # a fresh engine: its pass memo is empty, lowering cached
    t0 = time.perf_counter()
    verify_timing(engine, board, model, 16, 2048)
    verify_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    solve(board, model, load_algorithm("eagle3"), (512, 1024, 2048, 4096),
          engine=get_engine("fast"))
    solve_s = time.perf_counter() - t0
    return [{"benchmark": "70B verify pass x=16 L=2048, 8 U280, fast, warm", "seconds": verify_s,
             "target_s": 0.010},
            {"benchmark": "solve 70B eagle3 on 8 U280, 4 contexts, fast", "seconds": solve_s,
             "target_s": 10.0}]


def run() -> list[dict]:
    """The speed targets as rows (the benchmarks' convention)."""
    return speed_targets()
