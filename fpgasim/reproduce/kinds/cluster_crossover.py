"""cluster_crossover: 70B targets over several cards (docs/multi-fpga.md, "70B over several
cards: the crossover"; docs/cluster_crossover.csv): Llama-3.1-70B and Llama-2-70B on
FlightLLM's design (one MV token lane) and on `flightllm-mv4` (four lanes sharing one weight
stream: the design on which SD pays) over 1, 4 and 8 U280 / U55C / V80 cards (tensor
parallel, ring of direct Aurora cables, 0.25 us a hop), per drafter and context: SD's
verdict and best x, the step's sync share at AD and at the best x, and the whole cluster's
energy per token (`fpgasim solve --cards N`, the fast engine).

One card is the reference, timed as if the 70B model fit (it does not: fits_memory False).
Minutes: a slow doc table (`fpgasim reproduce docs`, not `all`). The two speed targets of
issue 39 are benchmarks/bench_cluster.py.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board import Board
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.config.loader import load_file
from fpgasim.dataflow.lowerings.registry import link_seconds
from fpgasim.reproduce.experiment_schema import DocTableFile
from fpgasim.reproduce.kind import External, register_external
from fpgasim.simulate import verify_timing
from fpgasim.solving.solver import solve
from fpgasim.step import Simulator, verify_spec

#: shipped Hugging Face configs (workloads/models/hf) by file stem
MODELS = ("Llama-3.1-70B-Instruct", "Llama-2-70b-hf")
#: FlightLLM as published, and with four MV token lanes (docs/flightllm-sd.md)
DESIGNS = ("flightllm", "flightllm-mv4")
FPGAS = ("u280", "u55c", "v80")
CARDS = (1, 4, 8)
DRAFTERS = ("longspec", "eagle3", "falcon")
#: Llama-2-70B's window is 4,096 tokens
CONTEXTS = (512, 1024, 3000)
COLUMNS = ["design", "model", "fpga", "cards", "algorithm", "context", "decision",
           "best_verify_len", "best_speedup", "ad_tokens_per_s", "best_tokens_per_s",
           "ad_sync_share", "sync_share", "link_busy_share", "ad_tokens_per_j", "best_tokens_per_j",
           "fits_memory"]


def board_on(fpga: str, cards: int, design: str = "flightllm") -> Board:
    """`design` (FlightLLM's by default) fitted to `fpga`, on `cards` cards (tensor
    parallel)."""
    board = BoardBase(None, fpga, design).build()
    return board if cards == 1 else board.with_cluster(Cluster(cards=cards))


def crossover_rows() -> list[dict]:
    """One row per design, model, part, cards, drafter and context."""
    rows = []
    fast = Simulator.named("fast")  # one pass memo: solve's AD passes serve the sync shares
    for design in DESIGNS:
        for path in MODELS:
            model = load_model(path)
            for fpga in FPGAS:
                for cards in CARDS:
                    board = board_on(fpga, cards, design)
                    for drafter in DRAFTERS:
                        rows += _solved(fast, board, model, drafter,
                                        {"design": design, "model": model.id, "fpga": fpga,
                                         "cards": cards, "algorithm": drafter})
    return rows


def _solved(fast: Simulator, board: Board, model, drafter: str, keys: dict) -> list[dict]:
    """`solve`'s rows for one cluster and drafter, with AD's sync share beside them."""
    rows = []
    s = solve(board, model, load_algorithm(drafter), CONTEXTS, engine=fast).summary
    for r in s.to_dict("records"):
        t1 = verify_timing(fast, board, model, 1, int(r["context"])).seconds
        ad_sync = link_seconds(verify_spec(1, int(r["context"])), board, model)[0] / t1
        rows.append({**keys, "ad_sync_share": ad_sync, **{c: r[c] for c in COLUMNS if c in r}})
    return rows


def cluster_crossover_table(path: Path) -> pd.DataFrame:
    """docs/cluster_crossover.csv: one row per model, part, cards, drafter and context."""
    load_file(DocTableFile, path)
    return pd.DataFrame(crossover_rows())[COLUMNS]


def cluster_crossover_markdown(frame: pd.DataFrame) -> str:
    """The table docs/multi-fpga.md shows: the U280's cells (the U55C's are the same, the
    V80's within a few hundredths), best speedup over AD, best x and the verdict per model,
    drafter and context, one column per design and card count."""
    u280 = frame[frame["fpga"] == "u280"]
    heads = [f"{design}: 1 card" if cards == CARDS[0] else f"{cards} cards"
             for design in DESIGNS for cards in CARDS]
    lines = ["| model | drafter | L | " + " | ".join(heads) + " |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in heads) + " |"]
    for (model, drafter, context), g in u280.groupby(["model", "algorithm", "context"],
                                                     sort=False):
        cells = []
        for design in DESIGNS:
            for cards in CARDS:
                r = g[(g["design"] == design) & (g["cards"] == cards)].iloc[0]
                verdict = "SD" if r["decision"] == "use SD" else "AD"
                cells.append(f"{r['best_speedup']:.2f} (x={int(r['best_verify_len'])}) "
                             f"{verdict}")
        name = model.replace("-Instruct", "").replace("-hf", "")
        lines.append(f"| {name} | {drafter} | {int(context):,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


KIND = register_external(
    name="cluster_crossover",
    doc="70B targets over 1, 4 and 8 cards: SD's verdict, best x, sync share, energy",
    columns=tuple(COLUMNS),
    external=External(
        title="70B targets over several cards: SD's verdict per card count",
        description="Llama-3.1-70B and Llama-2-70B on FlightLLM's design (one and four MV "
        "token lanes) over 1, 4 and 8 U280 "
        "/ U55C / V80 cards (tensor parallel, ring of Aurora cables); the fast engine. Minutes.",
        schema=DocTableFile,
        table=cluster_crossover_table,
        doc='docs/multi-fpga.md ("70B over several cards: the crossover")',
        markdown=cluster_crossover_markdown,
        float_format="%.6g",
        slow=True,
        aat_source="the acceptance rule's default (measured tables where shipped, else "
        "embedded)",
    ),
)  # fmt: skip
