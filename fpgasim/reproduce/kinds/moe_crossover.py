"""moe_crossover: SD on mixture-of-experts targets (docs/moe-sd.md, "SD on MoE: what the
compiler gives"; docs/moe_crossover.csv): T_v(x)/T_v(1), the verdict and best x per drafter
and context on FlightLLM's designs, and the crossover against x, k and E.

One row per case with a `table` column:
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
About 5 minutes on one core: a slow doc table (`fpgasim reproduce docs`, not `all`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import board_of, load_board
from fpgasim.config.loader import load_file
from fpgasim.config.schema import TargetModel
from fpgasim.engine.fast import FastEngine
from fpgasim.reproduce.experiment_schema import DocTableFile
from fpgasim.reproduce.kind import External, register_external
from fpgasim.simulate import experts_streamed, fits_memory, verify_timing
from fpgasim.solving.solver import SolveOptions, solve, solve_batches

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


def model_of(name: str) -> TargetModel:
    """A shipped model by name: a Hugging Face config of workloads/models/hf by its file
    stem, or a YAML model."""
    return load_model(name)


def tv_rows(engine: FastEngine) -> list[dict]:
    """T_v(x)/T_v(1) per model, board and context."""
    rows = []
    for label, make in BOARDS:
        board = make()
        for name in MODELS:
            model = model_of(name)
            for context in CONTEXTS:
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

#: The CSV's columns, as the four tables' rows first write them (`table` says which).
COLUMNS = (
    "table", "board", "model", "context", "fits_memory", "tv1_ms",
    *(f"{c}_x{x}" for x in XS for c in ("tv_ratio", "weight_ratio", "experts")),
    "algorithm", "decision", "best_x", "speedup", "tv_best_over_tv1", "aat_basis",
    "largest_sd_batch", *(f"{c}_b{b}" for b in BATCHES for c in ("speedup", "x")),
    "experts", "experts_per_token", "largest_paying_x",
)  # fmt: skip


def moe_crossover_table(path: Path) -> pd.DataFrame:
    """docs/moe_crossover.csv: the tv, verdict, batch and crossover rows (`table` column)."""
    load_file(DocTableFile, path)
    engine = FastEngine()
    frame = pd.DataFrame(tv_rows(engine) + verdict_rows(engine) + batch_rows()
                         + crossover_rows(engine))
    return frame.reindex(columns=list(COLUMNS))


def moe_crossover_markdown(frame: pd.DataFrame) -> str:
    """Each of the four tables as Markdown, under its name (the rows docs/moe-sd.md quotes)."""
    out = []
    for table in ("tv", "verdict", "batch", "crossover"):
        part = frame[frame["table"] == table].dropna(axis=1, how="all").drop(columns="table")
        lines = ["| " + " | ".join(part.columns) + " |", "|" + "---|" * len(part.columns)]
        lines += ["| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
                  for row in part.itertuples(index=False)]
        out.append(f"**{table}**\n\n" + "\n".join(lines))
    return "\n\n".join(out)


KIND = register_external(
    name="moe_crossover",
    doc="SD on mixture-of-experts targets: T_v(x)/T_v(1), verdicts, batches, (E, k) crossover",
    columns=COLUMNS,
    external=External(
        title="SD on MoE targets: what the compiler gives",
        description="Qwen3-30B-A3B, Qwen1.5-MoE-A2.7B, Mixtral-8x7B and dense Llama-3.1-8B on "
        "FlightLLM's designs (VHK158, V80, four MV lanes on V80); the fast engine. Minutes.",
        schema=DocTableFile,
        table=moe_crossover_table,
        doc='docs/moe-sd.md ("SD on MoE: what the compiler gives")',
        markdown=None,
        slow=True,
        aat_source="the acceptance rule's default (measured tables where shipped, else "
        "embedded)",
    ),
)  # fmt: skip
