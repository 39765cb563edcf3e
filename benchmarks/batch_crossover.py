"""The batch crossover table of docs/batching.md: for each shipped FPGA and design and each
drafter, the largest batch at which SD still pays, per context (`fpgasim solve --batch`).

Writes docs/batch_crossover.csv (one row per board, drafter, context: BATCH_CROSSOVER_COLUMNS
plus the speedups at every batch) and prints the Markdown table. Run from the checkout:
    python benchmarks/batch_crossover.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from fpgasim.analysis.solver import solve_batches
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import board_of, load_board
from fpgasim.errors import FpgasimError
from fpgasim.simulate import check_batch_memory

BATCHES = (1, 2, 4, 8, 16, 32)
DRAFTERS = ("longspec", "eagle3", "falcon")
#: (label, board, model, contexts): FlightLLM's design as published and with four MV token
#: lanes, then the study's fp16 arrays (llama-3.1-8b: its GQA model of the study)
CASES = (
    ("flightllm-vhk158", lambda: load_board("flightllm-vhk158"), "llama2-7b-flightllm",
     (512, 2048)),
    ("flightllm-u280", lambda: load_board("flightllm-u280"), "llama2-7b-flightllm",
     (512, 2048)),
    ("flightllm-mv4@vhk158", lambda: board_of("vhk158", "flightllm-mv4"), "llama2-7b-flightllm",
     (512, 2048)),
    ("vhk158 (study)", lambda: load_board("vhk158"), "llama-3.1-8b", (512, 2048, 8192)),
    ("v80 (study)", lambda: load_board("v80"), "llama-3.1-8b", (512, 2048, 8192)),
    ("u250 (study)", lambda: load_board("u250"), "llama-3.1-8b", (512, 2048, 8192)),
    ("u280 (study)", lambda: load_board("u280"), "llama-3.1-8b", (512, 2048, 8192)),
)


def fits(board, model, algorithm, context: int, batch: int) -> bool:
    """Whether `batch` requests' caches fit at this context (with the curve's largest x)."""
    try:
        check_batch_memory(board, model, context, 85, algorithm.drafter, batch)
    except FpgasimError:
        return False
    return True


def main() -> None:
    rows = []
    for label, make, model_name, contexts in CASES:
        board, model = make(), load_model(model_name)
        for drafter in DRAFTERS:
            algorithm = load_algorithm(drafter)
            for context in contexts:
                print(f"{label} {drafter} L={context}", file=sys.stderr)
                fitting = [b for b in BATCHES if fits(board, model, algorithm, context, b)]
                if fitting[-1:] == [1] or not fitting:
                    rows.append({"board": label, "model": model.id, "algorithm": drafter,
                                 "context": context, "note": "no batch > 1 fits the memory"})
                    continue
                result = None
                while len(fitting) > 1 and result is None:  # the curve's x may exceed 85
                    try:
                        result = solve_batches(board, model, algorithm, [context], fitting,
                                               engine="fast")
                    except FpgasimError:
                        fitting = fitting[:-1]
                if result is None:
                    rows.append({"board": label, "model": model.id, "algorithm": drafter,
                                 "context": context, "note": "no batch > 1 fits the memory"})
                    continue
                at = result.summary.set_index("batch")
                c = result.crossover.iloc[0].to_dict()
                rows.append({"board": label, "model": model.id, "algorithm": drafter, **c,
                             **{f"speedup_b{b}": round(float(at.loc[b, "best_speedup"]), 3)
                                for b in fitting},
                             **{f"x_b{b}": int(at.loc[b, "best_verify_len"]) for b in fitting},
                             "note": "" if len(fitting) == len(BATCHES) else
                             f"batches that fit the memory: {','.join(map(str, fitting))}"})
    frame = pd.DataFrame(rows)
    out = Path(__file__).resolve().parents[1] / "docs" / "batch_crossover.csv"
    frame.to_csv(out, index=False)
    print(frame.to_string(index=False))


if __name__ == "__main__":
    main()
