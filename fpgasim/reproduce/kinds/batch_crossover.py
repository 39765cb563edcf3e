"""batch_crossover: the batch crossover of docs/batching.md (docs/batch_crossover.csv and its
table): for each shipped FPGA and design and each drafter, the largest batch at which SD
still pays, per context (`fpgasim solve --batch`, the `fast` engine). Minutes: a slow doc
table (`fpgasim reproduce docs`, not `all`).

One row per board, drafter and context: `solving.solver.BATCH_CROSSOVER_COLUMNS`, the
DSP-fit mark, and SD's best speedup and x at every batch whose point fits the memory.
tests/config/test_fit_marks.py checks the oversized study arrays are marked.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import board_of, load_board
from fpgasim.config.loader import load_file
from fpgasim.reproduce.experiment_schema import DocTableFile
from fpgasim.reproduce.kind import External, register_external
from fpgasim.simulate import fits_memory
from fpgasim.solving.solver import BATCH_CROSSOVER_COLUMNS, solve_batches

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
#: The CSV's columns: the case, `solve --batch`'s crossover, the DSP mark, SD's best speedup
#: and x at each batch (empty where the point does not fit the memory), and a note.
COLUMNS = (
    "board", "model", "algorithm", *BATCH_CROSSOVER_COLUMNS, "fits_dsps",
    *(f"speedup_b{b}" for b in BATCHES), *(f"x_b{b}" for b in BATCHES), "note",
)  # fmt: skip


def batch_crossover_table(path: Path) -> pd.DataFrame:
    """docs/batch_crossover.csv: per design, drafter and context, the crossover batch and
    SD's best speedup and x at every batch that fits the memory."""
    load_file(DocTableFile, path)
    rows = []
    for label, make, model_name, contexts in CASES:
        board, model = make(), load_model(model_name)
        marks = {"fits_dsps": board.fit.fits_dsps}
        for drafter in DRAFTERS:
            algorithm = load_algorithm(drafter)
            for context in contexts:
                # batches whose AD pass already outgrows the memory are not solved at all
                tried = [b for b in BATCHES if fits_memory(board, model, context, 1, None, b)]
                if tried[-1:] == [1] or not tried:
                    rows.append({"board": label, "model": model.id, "algorithm": drafter,
                                 "context": context, **marks,
                                 "note": "no batch > 1 fits the memory"})
                    continue
                result = solve_batches(board, model, algorithm, [context], tried,
                                       engine="fast")
                at = result.summary.set_index("batch")
                c = result.crossover.iloc[0].to_dict()
                # a batch's speedup is SD's at its best x: shown where that point fits
                # (weights, drafter and every request's caches), as the crossover ranks
                fitting = [b for b in tried if bool(at.loc[b, "fits_memory"])
                           and fits_memory(board, model, context,
                                           int(at.loc[b, "best_verify_len"]),
                                           algorithm.drafter, b)]
                rows.append({"board": label, "model": model.id, "algorithm": drafter, **c,
                             **marks,
                             **{f"speedup_b{b}": round(float(at.loc[b, "best_speedup"]), 3)
                                for b in fitting},
                             **{f"x_b{b}": int(at.loc[b, "best_verify_len"]) for b in fitting},
                             "note": "" if len(fitting) == len(BATCHES) else
                             f"batches that fit the memory: {','.join(map(str, fitting))}"})
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


def batch_crossover_markdown(frame: pd.DataFrame) -> str:
    """docs/batching.md's table: per (design, drafter, context) SD's best speedup at each
    batch (bold where SD pays, a dash where the batch's KV caches do not fit the memory) and
    the batches at which it pays; a design whose arrays exceed the part's DSPs says so."""
    head = ("| design (model) | drafter | L | " + " | ".join(f"B={b}" for b in BATCHES)
            + " | SD pays at |")
    lines = [head, "|---|---|---:|" + "---:|" * len(BATCHES) + "---|"]
    for r in frame.to_dict("records"):
        if r.get("note") == "no batch > 1 fits the memory":
            continue
        label = r["board"]
        if r["fits_dsps"] is False or r["fits_dsps"] == "False":
            label = label.replace(")", ", beyond its DSPs)") if label.endswith(")") else \
                f"{label} (beyond its DSPs)"
        cells, pays = [], []
        for b in BATCHES:
            v = r.get(f"speedup_b{b}")
            if v is None or pd.isna(v):
                cells.append("-")
                continue
            cells.append(f"**{v:.2f}**" if v > 1 else f"{v:.2f}")
            if v > 1:
                pays.append(str(b))
        lines.append(f"| {label} ({r['model']}) | {r['algorithm']} | {r['context']} | "
                     + " | ".join(cells) + f" | {', '.join(pays) or 'none'} |")
    return "\n".join(lines)


KIND = register_external(
    name="batch_crossover",
    doc="the largest batch at which SD pays, per design, drafter and context",
    columns=COLUMNS,
    external=External(
        title="Batch crossover: SD's best speedup per batch on every shipped design",
        description="FlightLLM's designs (published, four MV lanes) and the study's fp16 "
        "arrays; LongSpec, EAGLE-3 and Falcon; the fast engine. Minutes.",
        schema=DocTableFile,
        table=batch_crossover_table,
        doc='docs/batching.md ("The crossover")',
        markdown=batch_crossover_markdown,
        slow=True,
        aat_source="the acceptance rule's default (measured tables where shipped, else "
        "embedded)",
    ),
)  # fmt: skip
