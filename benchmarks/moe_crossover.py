"""SD on mixture-of-experts targets (docs/moe-sd.md, "SD on MoE: what the compiler gives"):
T_v(x)/T_v(1), the verdict and best x per drafter and context on FlightLLM's designs, and
the crossover against x, k and E.

Writes docs/moe_crossover.csv, one row per case with a `table` column:
- `tv`: T_v(x)/T_v(1) and the experts streamed per layer at x = 1 ... 64, per shipped MoE
  model (and Llama-3.1-8B as the dense reference) on flightllm@vhk158 (FlightLLM's board),
  flightllm@v80 and flightllm-mv4@v80, at L = 1024 and 8192;
- `verdict`: `fpgasim solve`'s decision, best x, speedup and AAT basis per drafter
  (longspec, eagle3, falcon) for the same models and designs;
- `batch`: EAGLE-3's best speedup (best x) at L = 1024 for batches 1 ... 16 (`fpgasim
  solve --batch`) on flightllm@vhk158 and flightllm-mv4@v80, MoE and dense;
- `crossover`: Qwen3-30B-A3B with E and k varied, the routed width k x I_e held at its 6,144
  (the active parameters fixed), EAGLE-3 at L = 1024: T_v(x)/T_v(1) at x = 4 and 16, the
  best x and speedup, and the largest x at which SD still pays (speedup > 1).
Prints the Markdown tables. Run from the checkout (about 5 minutes on one core):
    python benchmarks/moe_crossover.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import board_of, load_board
from fpgasim.engine.fast import FastEngine
from fpgasim.simulate import experts_streamed, fits_memory, verify_timing
from fpgasim.solving.solver import SolveOptions, solve, solve_batches

REPO = Path(__file__).resolve().parents[1]
HF = REPO / "workloads" / "models" / "hf"
MODELS = ("Qwen3-30B-A3B", "Qwen1.5-MoE-A2.7B-Chat", "Mixtral-8x7B-v0.1", "llama-3.1-8b")
BOARDS = (
    ("flightllm@vhk158", lambda: load_board("flightllm-vhk158")),
    ("flightllm@v80", lambda: board_of("v80", "flightllm")),
    ("flightllm-mv4@v80", lambda: board_of("v80", "flightllm-mv4")),
)
CONTEXTS = (1024, 8192)
XS = (1, 2, 4, 8, 16, 32, 64)
DRAFTERS = ("longspec", "eagle3", "falcon")
#: (E, k) of the crossover grid; I_e = 6144 / k (k x I_e fixed)
GRID_E = (8, 16, 32, 64, 128, 256)
GRID_K = (1, 2, 4, 8)


def model_of(name: str):
    """A shipped MoE config by file stem, else a shipped YAML model by name."""
    path = HF / f"{name}.json"
    return load_model(str(path) if path.exists() else name)


def tv_rows(engine: FastEngine) -> list[dict]:
    """T_v(x)/T_v(1) per model, board and context."""
    rows = []
    for label, make in BOARDS:
        board = make()
        for name in MODELS:
            model = model_of(name)
            for context in CONTEXTS:
                print(f"tv {label} {name} L={context}", file=sys.stderr)
                t1 = verify_timing(engine, board, model, 1, context)
                row = {"table": "tv", "board": label, "model": model.id, "context": context,
                       "fits_memory": fits_memory(board, model, context, 1),
                       "tv1_ms": round(t1.seconds * 1e3, 3)}
                for x in XS:
                    t = verify_timing(engine, board, model, x, context)
                    row[f"tv_ratio_x{x}"] = round(t.seconds / t1.seconds, 3)
                    row[f"weight_ratio_x{x}"] = round(t.weight_bytes / t1.weight_bytes, 3)
                    if model.moe is not None:
                        row[f"experts_x{x}"] = round(experts_streamed(model, x), 2)
                rows.append(row)
    return rows


def verdict_rows(engine: FastEngine) -> list[dict]:
    """`solve`'s verdict per model, board, drafter and context."""
    rows = []
    for label, make in BOARDS:
        board = make()
        for name in MODELS:
            model = model_of(name)
            for drafter in DRAFTERS:
                print(f"verdict {label} {name} {drafter}", file=sys.stderr)
                solution = solve(board, model, load_algorithm(drafter), CONTEXTS,
                                 SolveOptions(every_x=False), engine=engine)
                for r in solution.summary.to_dict("records"):
                    rows.append({"table": "verdict", "board": label, "model": model.id,
                                 "algorithm": drafter, "context": r["context"],
                                 "decision": r["decision"], "best_x": r["best_verify_len"],
                                 "speedup": round(r["best_speedup"], 3),
                                 "tv_best_over_tv1": round(r["best_verify_ratio"], 3),
                                 "aat_basis": r["aat_basis"],
                                 "fits_memory": r["fits_memory"]})
    return rows


BATCHES = (1, 2, 4, 8, 16)


def batch_rows() -> list[dict]:
    """EAGLE-3 at L = 1024 against the batch (each request its own tree and cache)."""
    algorithm = load_algorithm("eagle3")
    rows = []
    for label, make in (BOARDS[0], BOARDS[2]):
        board = make()
        for name in MODELS:
            model = model_of(name)
            print(f"batch {label} {name}", file=sys.stderr)
            tried = [b for b in BATCHES if fits_memory(board, model, 1024, 1, None, b)]
            result = solve_batches(board, model, algorithm, [1024], tried, engine="fast")
            at = result.summary.set_index("batch")
            row = {"table": "batch", "board": label, "model": model.id, "algorithm": "eagle3",
                   "context": 1024,
                   "largest_sd_batch": result.crossover.iloc[0]["largest_sd_batch"]}
            for b in tried:
                row[f"speedup_b{b}"] = round(float(at.loc[b, "best_speedup"]), 3)
                row[f"x_b{b}"] = int(at.loc[b, "best_verify_len"])
            rows.append(row)
    return rows


def crossover_rows(engine: FastEngine) -> list[dict]:
    """Qwen3-30B-A3B with (E, k) varied at a fixed routed width, EAGLE-3, L = 1024."""
    base = model_of("Qwen3-30B-A3B")
    algorithm = load_algorithm("eagle3")
    rows = []
    for label, make in BOARDS[1:]:
        board = make()
        for e in GRID_E:
            for k in GRID_K:
                if k > e:
                    continue
                print(f"crossover {label} E={e} k={k}", file=sys.stderr)
                moe = base.moe.model_copy(update={"experts": e, "experts_per_token": k,
                                                  "expert_intermediate": 6144 // k})
                model = base.model_copy(update={"moe": moe, "id": f"qwen3-moe-E{e}-k{k}"})
                solution = solve(board, model, algorithm, [1024], SolveOptions(every_x=True),
                                 engine=engine)
                s = solution.summary.iloc[0]
                curve = solution.curves
                paying = curve[curve["speedup"] > 1]["verify_len"]
                t1 = verify_timing(engine, board, model, 1, 1024).seconds
                rows.append({
                    "table": "crossover", "board": label, "model": model.id, "experts": e,
                    "experts_per_token": k, "context": 1024, "algorithm": "eagle3",
                    "tv_ratio_x4": round(verify_timing(engine, board, model, 4, 1024).seconds
                                         / t1, 3),
                    "tv_ratio_x16": round(verify_timing(engine, board, model, 16, 1024).seconds
                                          / t1, 3),
                    "experts_x16": round(experts_streamed(model, 16), 2),
                    "decision": s["decision"], "best_x": int(s["best_verify_len"]),
                    "speedup": round(float(s["best_speedup"]), 3),
                    "largest_paying_x": int(paying.max()) if len(paying) else 0,
                })
    return rows


def main() -> None:
    engine = FastEngine()
    frame = pd.DataFrame(tv_rows(engine) + verdict_rows(engine) + batch_rows()
                         + crossover_rows(engine))
    frame.to_csv(REPO / "docs" / "moe_crossover.csv", index=False)
    for table in ("tv", "verdict", "batch", "crossover"):
        part = frame[frame["table"] == table].dropna(axis=1, how="all")
        print(f"\n## {table}\n")
        print(markdown(part.drop(columns="table")))


def markdown(frame: pd.DataFrame) -> str:
    """A frame as a Markdown table (no extra dependency)."""
    lines = ["| " + " | ".join(frame.columns) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
