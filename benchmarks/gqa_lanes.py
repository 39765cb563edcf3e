"""The table of docs/flightllm-sd.md, "GQA on MV lanes": FlightLLM's design with one and
with four MV token lanes (flightllm, flightllm-mv4) on the VHK158 and the U280, running
Llama-3.1-8B (grouped-query attention: 4 query heads per KV head), per drafter and context:
AD's tokens/s, the best x, its tokens/s, the speedup and the decision, and AD's attention
slope (T_v's growth per context token). `fast` engine, each drafter's embedded acceptance
model. Markdown on stdout, about a minute.

Usage: python benchmarks/gqa_lanes.py
"""

from __future__ import annotations

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import board_of
from fpgasim.engine import get_engine
from fpgasim.simulate import verify_timing
from fpgasim.solving.solver import solve_curves

MODEL = "llama-3.1-8b"
DRAFTERS = ("longspec", "eagle3", "falcon")
CONTEXTS = (1024, 4096, 16384)
PAIRS = (("vhk158", "flightllm"), ("vhk158", "flightllm-mv4"), ("u280", "flightllm"),
         ("u280", "flightllm-mv4"))


def slope_us(engine, board, model) -> float:
    """AD's T_v growth per context token between 1,023 and 2,047 cached tokens, us."""
    t = [verify_timing(engine, board, model, 1, c).seconds for c in (1023, 2047)]
    return (t[1] - t[0]) / 1024 * 1e6


def main() -> None:
    engine, model = get_engine("fast"), load_model(MODEL)
    print("| board | AD slope us/token | drafter | L | AD tok/s | best x | tok/s | speedup | "
          "decision |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for fpga, design in PAIRS:
        board = board_of(fpga, design)
        slope = slope_us(engine, board, model)
        for name in DRAFTERS:
            algo = load_algorithm(name)
            curves = embedded_curves(algo, list(CONTEXTS), model_id=model.id, why="asked for")
            sol = solve_curves(engine, board, model, algo, curves, roofline=False)
            for s in sol.summary.to_dict("records"):
                print(f"| {board.name} | {slope:.3f} | {name} | {s['context']} | "
                      f"{s['ad_tokens_per_s']:.3g} | {s['best_verify_len']} | "
                      f"{s['best_tokens_per_s']:.3g} | {s['best_speedup']:.3g} | "
                      f"{s['decision']} |")


if __name__ == "__main__":
    main()
