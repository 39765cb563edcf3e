"""The cluster crossover table of docs/multi-fpga.md ("70B targets over several cards"):
Llama-3.1-70B and Llama-2-70B on FlightLLM's design over 1, 4 and 8 U280 / U55C / V80 cards
(tensor parallel, ring of direct Aurora cables, 0.25 us a hop), per drafter and context:
SD's verdict and best x, the step's sync share at AD and at the best x, and the whole
cluster's energy per token (`fpgasim solve --cards N`, the fast engine).

One card is the reference, timed as if the 70B model fit (it does not: fits_memory False).
Writes docs/cluster_crossover.csv and prints the Markdown table; also times the two
speed targets of issue 39 (one 70B verify pass on 8 cards, warm; a solve of a 70B
cluster over four contexts). Run from the checkout:
    python benchmarks/cluster_crossover.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import link_seconds
from fpgasim.engine import get_engine
from fpgasim.simulate import verify_timing
from fpgasim.solving.solver import solve
from fpgasim.step import verify_spec

REPO = Path(__file__).resolve().parents[1]
MODELS = ("workloads/models/hf/Llama-3.1-70B-Instruct.json",
          "workloads/models/hf/Llama-2-70b-hf.json")
FPGAS = ("u280", "u55c", "v80")
CARDS = (1, 4, 8)
DRAFTERS = ("longspec", "eagle3", "falcon")
#: Llama-2-70B's window is 4,096 tokens
CONTEXTS = (512, 1024, 3000)
COLUMNS = ["model", "fpga", "cards", "algorithm", "context", "decision", "best_verify_len",
           "best_speedup", "ad_tokens_per_s", "best_tokens_per_s", "ad_sync_share",
           "sync_share", "link_busy_share", "ad_tokens_per_j", "best_tokens_per_j",
           "fits_memory"]


def board_on(fpga: str, cards: int):
    """FlightLLM's design fitted to `fpga`, on `cards` cards (tensor parallel)."""
    board = BoardBase(None, fpga, "flightllm").build()
    return board if cards == 1 else board.with_cluster(Cluster(cards=cards))


def crossover_rows() -> list[dict]:
    """One row per model, part, cards, drafter and context."""
    rows = []
    fast = get_engine("fast")
    for path in MODELS:
        model = load_model(str(REPO / path))
        for fpga in FPGAS:
            for cards in CARDS:
                board = board_on(fpga, cards)
                for drafter in DRAFTERS:
                    print(f"{model.id} {fpga} x{cards} {drafter}", file=sys.stderr)
                    s = solve(board, model, load_algorithm(drafter), CONTEXTS,
                              engine=fast).summary
                    for r in s.to_dict("records"):
                        t1 = verify_timing(fast, board, model, 1, int(r["context"])).seconds
                        ad_sync = link_seconds(verify_spec(1, int(r["context"])), board,
                                               model)[0] / t1
                        rows.append({"model": model.id, "fpga": fpga, "cards": cards,
                                     "algorithm": drafter, "ad_sync_share": ad_sync,
                                     **{c: r[c] for c in COLUMNS if c in r}})
    return rows


def speed_targets() -> list[dict]:
    """Issue 39 item 6's two timings: a 70B verify pass on 8 cards (fast, warm: the second
    call of a fresh engine, lowering cached) and a solve of a 70B cluster over four contexts
    (cold engine, in this process)."""
    model = load_model(str(REPO / MODELS[0]))
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


def main() -> None:
    for row in speed_targets():
        print(f"{row['benchmark']}: {row['seconds'] * 1e3:.1f} ms (target "
              f"{row['target_s'] * 1e3:g} ms)")
    frame = pd.DataFrame(crossover_rows())[COLUMNS]
    frame.to_csv(REPO / "docs" / "cluster_crossover.csv", index=False, float_format="%.6g")
    table = frame.pivot_table(index=["model", "fpga", "algorithm", "context"],
                              columns="cards", values="best_speedup")
    print("| model | fpga | drafter | L | " + " | ".join(f"{c} cards" for c in table.columns)
          + " |")
    for key, values in table.iterrows():
        print("| " + " | ".join(map(str, key)) + " | "
              + " | ".join(f"{v:.2f}" for v in values) + " |")


if __name__ == "__main__":
    main()
