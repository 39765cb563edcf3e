"""Regenerate the tables of docs/flightllm-sd.md ("What FlightLLM needs for tree SD to pay").

1. Resources: the DSPs of every FlightLLM-lowered board (shared chain and separate arrays).
2. The published designs' verdict: flightllm-vhk158 and flightllm-u280, every drafter.
3. The cheapest change that makes each drafter pay on each published design: the design
   space over MV lanes x MV width (x1, x2) at the board's own MM tile, bandwidth and clock
   (every design of that space at the largest context is listed too).
4. Table IV (LongSpec) on the four study boards four ways: (a) the study's accounting,
   (b) today's boards (event engine), (c) the study lowering calibrated to FlightLLM
   (*-flightllm, event), (d) FlightLLM's compiler (*-flc, fast), and (e) the cheapest
   paying design on each *-flc board.

Model LLaMA2-7B as FlightLLM's model file has it (the one model the compiler runs: no
GQA), the embedded AAT curves of each drafter (the study's measured tables are for
Llama-3.1-8B), the best x searched over VERIFY_LENS. Markdown on stdout; with --out DIR
also one CSV per table. Cached in the sweep cache (FPGASIM_CACHE_DIR), so a rerun is fast.

Usage: python benchmarks/flightllm_sd.py [--out DIR] [--drafters longspec,eagle3,falcon]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
from fpgasim.analysis.design_space import (
    cheapest_paying,
    designs,
    explore_designs,
    solve_boards,
)
from fpgasim.config.resources import board_resources

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.sweep.cache import SweepCache

MODEL = "llama2-7b-flightllm"
PUBLISHED = ("flightllm-vhk158", "flightllm-u280")
STUDY = ("u280", "vhk158", "v80", "u250")
CONTEXTS = (256, 1024)
TABLE4_CONTEXTS = (256, 1024, 2048)
VERIFY_LENS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128)
LANES = (1, 2, 4, 8)


def markdown(frame: pd.DataFrame, floats: str = "{:.3g}") -> str:
    """A frame as a Markdown table (floats with 3 significant digits)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [floats.format(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def resources_table() -> pd.DataFrame:
    """Section 1: DSPs of every FlightLLM-lowered board."""
    rows = []
    for name in (*PUBLISHED, *(f"{b}-flc" for b in STUDY)):
        board = load_board(name)
        res = board_resources(board)
        apart = board_resources(board, separate_mv=True)
        rows.append(
            {
                "board": name,
                "dsp_kind": res.dsp_kind,
                "MM MxNxK": f"{res.mm.tokens}x{res.mm.outputs}x{res.mm.k}",
                "MV MxNxK": f"{res.mv.tokens}x{res.mv.outputs}x{res.mv.k}",
                "MM dsps": res.mm_dsps,
                "MV dsps": res.mv_dsps,
                "pipelines": res.pipelines,
                "used (shared chain)": res.dsps_used,
                "used (separate MV)": apart.dsps_used,
                "available": res.dsps_available,
                "fits": res.fits_dsps,
                "fits (separate MV)": apart.fits_dsps,
            }
        )
    return pd.DataFrame(rows)


def verdict(drafters, cache) -> pd.DataFrame:
    """Section 2: best SD on the published designs."""
    frame = solve_boards(
        [load_board(b) for b in PUBLISHED], load_model(MODEL), drafters, CONTEXTS,
        engine="fast", executor="process", cache=cache, verify_lens=VERIFY_LENS,
    )
    return frame[["board", "algorithm", "context", "ad_tokens_per_s", "best_verify_len",
                  "best_tokens_per_s", "speedup", "dsps_used", "fits_dsps"]]


def cheapest(
    base_name: str, drafters, cache, contexts=CONTEXTS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Section 3: the design space of one base; (cheapest paying rows, full summary)."""
    base = load_board(base_name)
    lanes = base.flightllm.mv_parallel_m
    width = base.mv_macs_per_cycle // lanes
    space = designs(LANES, (width, 2 * width), [base.flightllm.mm_tile_rows],
                    [base.memory.bandwidth_gb_s], [base.clock_mhz])
    result = explore_designs(
        base, space, load_model(MODEL), drafters, contexts, engine="fast", executor="process",
        cache=cache, verify_lens=VERIFY_LENS,
    )
    best = cheapest_paying(result.summary)
    return best, result.summary


def best_fitting(summary: pd.DataFrame) -> pd.DataFrame:
    """The highest speedup among fitting designs, per (drafter, context)."""
    fits = summary[summary["fits_dsps"].fillna(True).astype(bool)]
    idx = fits.groupby(["algorithm", "context"])["speedup"].idxmax()
    return fits.loc[idx, ["algorithm", "context", "changes", "dsps_used", "best_verify_len",
                          "speedup"]]


def table4(cache) -> pd.DataFrame:
    """Section 4: LongSpec on the four study boards, four lowerings, plus (e)."""
    longspec = [load_algorithm("longspec")]
    model = load_model(MODEL)
    configs = (
        ("a", "", "analytic"),
        ("b", "", "event"),
        ("c", "-flightllm", "event"),
        ("d", "-flc", "fast"),
    )
    out = None
    for label, suffix, engine in configs:
        boards = [load_board(f"{b}{suffix}") for b in STUDY]
        t = solve_boards(boards, model, longspec, TABLE4_CONTEXTS, engine=engine,
                         executor="process", cache=cache, verify_lens=VERIFY_LENS)
        t["board"] = t["board"].str.removesuffix(suffix) if suffix else t["board"]
        t = t[["board", "context", "ad_tokens_per_s", "best_verify_len", "speedup"]].rename(
            columns={"ad_tokens_per_s": f"AD {label}", "best_verify_len": f"x {label}",
                     "speedup": f"speedup {label}"}
        )
        out = t if out is None else out.merge(t, on=["board", "context"])
    rows = []
    for b in STUDY:
        best, summary = cheapest(f"{b}-flc", longspec, cache, TABLE4_CONTEXTS)
        for context in TABLE4_CONTEXTS:
            hit = best[best["context"] == context]
            top = best_fitting(summary)
            top = top[top["context"] == context].iloc[0]
            rows.append(
                {
                    "board": b,
                    "context": context,
                    "(e) cheapest paying change": hit["changes"].iloc[0] if len(hit) else "none",
                    "(e) dsps": int(hit["dsps_used"].iloc[0]) if len(hit) else None,
                    "(e) speedup": float(hit["speedup"].iloc[0]) if len(hit) else None,
                    "best fitting speedup": float(top["speedup"]),
                }
            )
    return out.merge(pd.DataFrame(rows), on=["board", "context"])


def main() -> None:
    args = sys.argv[1:]
    out = Path(args[args.index("--out") + 1]) if "--out" in args else None
    names = args[args.index("--drafters") + 1] if "--drafters" in args else (
        "longspec,eagle3,falcon")
    drafters = [load_algorithm(n) for n in names.split(",")]
    tables: dict[str, pd.DataFrame] = {}
    started = time.perf_counter()
    with SweepCache() as cache:
        tables["resources"] = resources_table()
        tables["verdict"] = verdict(drafters, cache)
        for base in PUBLISHED:
            best, summary = cheapest(base, drafters, cache)
            tables[f"cheapest_{base}"] = best[["algorithm", "context", "changes", "dsps_used",
                                               "fits_dsps", "best_verify_len", "speedup"]]
            tables[f"best_fitting_{base}"] = best_fitting(summary)
            at = summary[summary["context"] == CONTEXTS[-1]]
            tables[f"designs_{base}_L{CONTEXTS[-1]}"] = at[
                ["algorithm", "mv_lanes", "mv_width", "dsps_used", "fits_dsps",
                 "ad_tokens_per_s", "best_verify_len", "best_tokens_per_s", "speedup"]
            ].sort_values(["algorithm", "mv_width", "mv_lanes"])
        tables["table4"] = table4(cache)
    for name, frame in tables.items():
        print(f"\n### {name}\n")
        print(markdown(frame))
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            frame.to_csv(out / f"{name}.csv", index=False)
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
