"""Clusters (issue 39 item 6): one Llama-3.1-70B verify pass on 8 U280 cards (FlightLLM's
design, tensor parallel) on `fast`, warm (target <= 10 ms), and `solve` for that cluster over
four contexts (target <= 10 s); beside them a pipelined pass (8 stages, 8 micro-batches) and
a tp x pp pass, so the speed of the pipeline's schedule is on record too.

"Warm" is a process that has timed a pass before (numba compiled, the fitted board built):
the first row times the same pass on a fresh engine (its lowering kept, its parts'
makespans not), the second a pass at a context not seen before (its attention parts
compiled), the third one at a verify length not seen before (every part compiled). Wall
seconds (`time.perf_counter`), best of three, each repeat on a fresh engine. The numbers
and what they were before are in docs/scaling.md, "Clusters".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from fpgasim.bounded import clear_caches
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.engine import get_engine
from fpgasim.simulate import verify_timing
from fpgasim.solving.solver import solve

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "workloads" / "models" / "hf" / "Llama-3.1-70B-Instruct.json"
CONTEXTS = (512, 1024, 2048, 4096)


def _board(**cluster):
    """FlightLLM's design fitted to the U280, on a cluster of 8 cards."""
    return BoardBase(None, "u280", "flightllm").build().with_cluster(Cluster(cards=8, **cluster))


def _best(fn: Callable[[], object], repeats: int = 3) -> float:
    """Best wall seconds of `repeats` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list[dict]:
    model = load_model(str(MODEL))
    tp = _board()
    rows = []

    def row(name: str, seconds: float, target_s: float | None = None) -> None:
        rows.append({"benchmark": name, "value": seconds * 1e3, "unit": "ms",
                     "target": "" if target_s is None else f"<= {target_s * 1e3:g} ms",
                     "ok": "" if target_s is None else seconds <= target_s})

    verify_timing(get_engine("fast"), tp, model, 16, 2048)  # warm: numba, the fitted board
    row("70B verify x=16 L=2048, 8 U280 tp, fast, warm (same pass, fresh engine)",
        _best(lambda: verify_timing(get_engine("fast"), tp, model, 16, 2048)), 0.010)
    contexts = iter(range(3000, 3100))
    row("70B verify x=16, 8 U280 tp, fast, warm, a context not seen before",
        _best(lambda: verify_timing(get_engine("fast"), tp, model, 16, next(contexts))), 0.010)
    lengths = iter(range(20, 40))
    row("70B verify L=2048, 8 U280 tp, fast, warm, a verify length not seen before",
        _best(lambda: verify_timing(get_engine("fast"), tp, model, next(lengths), 2048)))
    pp = _board(parallel="pp")
    verify_timing(get_engine("fast"), pp, model, 4, 2048, batch=8)
    row("70B verify x=4 L=2048 batch 8, 8 U280 pp, 8 micro-batches, fast, warm",
        _best(lambda: verify_timing(get_engine("fast"), pp, model, 4, 2048, batch=8)))
    tp_pp = _board(parallel="tp-pp", tp=4)
    verify_timing(get_engine("fast"), tp_pp, model, 16, 2048)
    row("70B verify x=16 L=2048, 8 U280 as 2 stages of 4 (tp-pp), fast, warm",
        _best(lambda: verify_timing(get_engine("fast"), tp_pp, model, 16, 2048)))

    def solve_cold() -> None:
        clear_caches()  # as a new command starts: nothing compiled, nothing remembered
        solve(tp, model, load_algorithm("eagle3"), CONTEXTS, engine=get_engine("fast"))

    row("solve 70B eagle3, 8 U280 tp, 4 contexts, fast, cold caches", _best(solve_cold, 2), 10.0)
    return rows


if __name__ == "__main__":
    for r in run():
        print(f"{r['benchmark']}: {r['value']:.2f} {r['unit']} {r['target']} {r['ok']}")
