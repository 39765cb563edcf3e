"""energy_sd: the table of docs/energy-sd.md ("Energy of speculative decoding on FPGAs").

For the shipped drafters (LongSpec, EAGLE-3, Falcon) on FlightLLM's design as published
(flightllm-vhk158, flightllm-u280), with MV token lanes (design flightllm-mv4 fitted to the
VHK158 and the U280) and on the study's arrays (u280, vhk158, v80, u250): per context, AD's
tokens/s and tokens/J, the time-optimal x with its tokens/s and tokens/J, the energy-optimal
x with its, and which of SD and AD uses less energy per token. `fast` engine, embedded AAT
curves, the energy model of docs/energy.md. A few minutes: a slow doc table (`fpgasim
reproduce docs`, not `all`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board_loader import board_of
from fpgasim.config.loader import load_file
from fpgasim.engine import get_engine
from fpgasim.reproduce.experiment_schema import DocTableFile
from fpgasim.reproduce.kind import External, register_external
from fpgasim.solving.solver import solve_curves

DRAFTERS = ("longspec", "eagle3", "falcon")
#: (label, board, model, contexts): FlightLLM's designs run its LLaMA2-7B (4,096-token
#: window); the study's arrays the study's Llama-3.1-8B
SETUPS = (
    ("flightllm-vhk158", lambda: load_board("flightllm-vhk158"), "llama2-7b-flightllm",
     (256, 1024, 3072)),
    ("flightllm-u280", lambda: load_board("flightllm-u280"), "llama2-7b-flightllm",
     (256, 1024, 3072)),
    ("flightllm-mv4 on vhk158", lambda: board_of("vhk158", "flightllm-mv4"),
     "llama2-7b-flightllm", (256, 1024, 3072)),
    ("flightllm-mv4 on u280", lambda: board_of("u280", "flightllm-mv4"), "llama2-7b-flightllm",
     (256, 1024, 3072)),
    ("u280 (study)", lambda: load_board("u280"), "llama-3.1-8b", (256, 1024, 4096)),
    ("vhk158 (study)", lambda: load_board("vhk158"), "llama-3.1-8b", (256, 1024, 4096)),
    ("v80 (study)", lambda: load_board("v80"), "llama-3.1-8b", (256, 1024, 4096)),
    ("u250 (study)", lambda: load_board("u250"), "llama-3.1-8b", (256, 1024, 4096)),
)

#: The CSV's columns: the case, AD, the time-optimal and the energy-optimal x, the verdicts.
COLUMNS = (
    "board", "drafter", "context", "fits_dsps", "fits_memory", "ad_tokens_per_s",
    "ad_tokens_per_j", "time_x", "time_tokens_per_s", "time_tokens_per_j", "energy_x",
    "energy_tokens_per_s", "energy_tokens_per_j", "time_decision", "energy_decision",
)  # fmt: skip


def energy_sd_table(path: Path) -> pd.DataFrame:
    """One row per (board, drafter, context): AD, the time-optimal and the energy-optimal x."""
    load_file(DocTableFile, path)
    engine = get_engine("fast")
    rows = []
    for label, make, model_id, contexts in SETUPS:
        board, model = make(), load_model(model_id)
        for name in DRAFTERS:
            algo = load_algorithm(name)
            curves = embedded_curves(algo, list(contexts), model_id=model.id, why="asked for")
            sol = solve_curves(engine, board, model, algo, curves, roofline=False)
            for s in sol.summary.to_dict("records"):
                rows.append({
                    "board": label, "drafter": name, "context": s["context"],
                    "fits_dsps": board.fit.fits_dsps, "fits_memory": bool(s["fits_memory"]),
                    "ad_tokens_per_s": s["ad_tokens_per_s"],
                    "ad_tokens_per_j": s["ad_tokens_per_j"],
                    "time_x": s["speed_best_verify_len"],
                    "time_tokens_per_s": s["speed_best_tokens_per_s"],
                    "time_tokens_per_j": s["speed_best_tokens_per_j"],
                    "energy_x": s["energy_best_verify_len"],
                    "energy_tokens_per_s": s["energy_best_tokens_per_s"],
                    "energy_tokens_per_j": s["energy_best_tokens_per_j"],
                    "time_decision": "SD" if s["speed_best_tokens_per_s"]
                    > s["ad_tokens_per_s"] else "AD",
                    "energy_decision": "SD" if s["energy_best_tokens_per_j"]
                    > s["ad_tokens_per_j"] else "AD",
                })
    return pd.DataFrame(rows, columns=list(COLUMNS))


def energy_sd_markdown(frame: pd.DataFrame) -> str:
    """The table as docs/energy-sd.md shows it: a board whose arrays exceed the part's DSPs
    says so, a context whose weights and KV caches outgrow the memory is marked."""
    head = ("| board | drafter | L | AD tok/s | AD tok/J | time-opt x | tok/s | tok/J | "
            "energy-opt x | tok/s | tok/J | faster | fewer J/token |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in frame.to_dict("records"):
        part = " (parts)" if r["time_x"] != r["energy_x"] else ""
        board = r["board"]
        if r["fits_dsps"] is False:
            board = board.replace(")", ", beyond its DSPs)")
        context = f"{r['context']}" + ("" if r["fits_memory"] else " (does not fit)")
        lines.append(
            f"| {board} | {r['drafter']} | {context} | {r['ad_tokens_per_s']:.3g} | "
            f"{r['ad_tokens_per_j']:.3g} | {r['time_x']} | {r['time_tokens_per_s']:.3g} | "
            f"{r['time_tokens_per_j']:.3g} | {r['energy_x']}{part} | "
            f"{r['energy_tokens_per_s']:.3g} | {r['energy_tokens_per_j']:.3g} | "
            f"{r['time_decision']} | {r['energy_decision']} |")
    return "\n".join(lines)


KIND = register_external(
    name="energy_sd",
    doc="time- and energy-optimal x per design, drafter and context, tokens/s and tokens/J",
    columns=COLUMNS,
    external=External(
        title="Energy of speculative decoding on FPGAs: time- and energy-optimal x",
        description="FlightLLM's designs (published, four MV lanes) and the study's arrays; "
        "LongSpec, EAGLE-3 and Falcon; the fast engine and the energy model of "
        "docs/energy.md. Minutes.",
        schema=DocTableFile,
        table=energy_sd_table,
        doc="docs/energy-sd.md",
        markdown=energy_sd_markdown,
        slow=True,
        aat_source="embedded (each drafter's acceptance model)",
    ),
)  # fmt: skip
