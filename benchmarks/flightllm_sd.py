"""Regenerate the tables of docs/flightllm-sd.md ("What FlightLLM needs for tree SD to pay").

1. Resources: the DSPs of FlightLLM's published designs and of the study's boards, as fitted
   (config/fit.py), with one DSP chain per pipeline (shared) and with separate MV slices.
2. The published designs' verdict: flightllm-vhk158 and flightllm-u280, every drafter.
3. The cheapest change that makes each drafter pay on each published design: `explore`
   (fpgasim/studies/explore.py) over MV lanes {1, 2, 4, 8} x MV width per lane (x1, x2)
   at the board's own MM tile, bandwidth and clock, keeping the combinations the fit accepts
   (it refuses an MV array that leaves the part no room for the MM array); every design of
   that space at the largest context is listed too.

Table IV on the study's boards is `fpgasim reproduce table4` (docs/reproduction.md); the
four-lowerings record in the same chapter ran boards that no longer exist.

Model LLaMA2-7B as FlightLLM's model file has it, the embedded AAT curves of each drafter
(the study's measured tables are for Llama-3.1-8B), the best x searched over VERIFY_LENS,
the `fast` engine. Markdown on stdout; with --out DIR also one CSV per table. Cached in the
sweep cache (FPGASIM_CACHE_DIR), so a rerun is fast.

Usage: python benchmarks/flightllm_sd.py [--out DIR] [--drafters longspec,eagle3,falcon]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import pandas as pd

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.fit import DesignDoesNotFit
from fpgasim.studies.explore import cheapest_paying, explore
from fpgasim.sweep import BoardBase, SweepCache, Variation

MODEL = "llama2-7b-flightllm"
PUBLISHED = ("flightllm-vhk158", "flightllm-u280")
STUDY = ("u280", "vhk158", "v80", "u250")
CONTEXTS = (256, 1024)
VERIFY_LENS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128)
LANES = (1, 2, 4, 8)
LANES_FIELD, WIDTH_FIELD = "design.mv_lanes", "design.mv_macs_per_lane"


class Fitting(Variation):
    """A product of fields without the combinations the fit refuses (`--vary` takes a whole
    product; here the designs that do not fit at all are left out and listed)."""

    def __init__(self, base: BoardBase, axes):
        super().__init__(tuple(axes))
        full = [tuple(zip([p for p, _ in axes], combo, strict=True))
                for combo in itertools.product(*(v for _, v in axes))]
        keep, refused = [], []
        for changes in full:
            try:
                base.build(changes)
            except DesignDoesNotFit:
                refused.append(changes)
            else:
                keep.append(changes)
        object.__setattr__(self, "kept", tuple(keep))
        object.__setattr__(self, "refused", tuple(refused))

    def combinations(self):  # noqa: D102 - Variation's
        return list(self.kept)


def markdown(frame: pd.DataFrame, floats: str = "{:.3g}") -> str:
    """A frame as a Markdown table (floats with 3 significant digits)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [floats.format(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def resources_table() -> pd.DataFrame:
    """Section 1: DSPs of the published designs and the study's boards."""
    rows = []
    for name in (*PUBLISHED, *STUDY):
        board = load_board(name)
        f = board.fit
        k = board.design.compiler.block
        built = f.pipelines_built
        separate = (f.mm_dsps + f.mv_dsps) * built
        available = f.dsps_available
        rows.append(
            {
                "board": name,
                "DSP": board.fpga.dsp_kind,
                "MM MxNxK": f"{f.mm_rows}x{f.mm_cols // k}x{k}",
                "MV MxNxK": f"{f.mv_lanes}x{max(1, f.mv_macs_per_lane // k)}x{k}",
                "MM dsps": f.mm_dsps,
                "MV dsps": f.mv_dsps,
                "pipelines": built,
                "used (shared chain)": f.dsps_used,
                "used (separate MV)": separate,
                "available": available,
                "fits": f.fits_dsps,
                "fits (separate MV)": None if available is None else separate <= available,
            }
        )
    return pd.DataFrame(rows)


def space(base: BoardBase, variation: Variation, drafters, cache, contexts=CONTEXTS):
    """explore's summary of one base and variation, fast engine, on the process pool."""
    return explore(
        base, variation, load_model(MODEL), drafters, list(contexts), engine="fast",
        executor="process", cache=cache, verify_lens=VERIFY_LENS, accounting=False,
    ).summary


def verdict(drafters, cache) -> pd.DataFrame:
    """Section 2: best SD on the published designs."""
    frames = [space(BoardBase(board=b), Variation(), drafters, cache) for b in PUBLISHED]
    frame = pd.concat(frames, ignore_index=True)
    return frame[["board", "algorithm", "context", "ad_tokens_per_s", "best_verify_len",
                  "best_sd_tokens_per_s", "speedup", "decision", "dsps_used", "fits_dsps"]]


def cheapest(base_name: str, drafters, cache) -> tuple[pd.DataFrame, pd.DataFrame, Fitting]:
    """Section 3: the design space of one base; (cheapest paying rows, full summary, space)."""
    board = load_board(base_name)
    width = board.fit.mv_macs_per_lane
    base = BoardBase(board=base_name)
    variation = Fitting(base, [(LANES_FIELD, LANES), (WIDTH_FIELD, (width, 2 * width))])
    summary = space(base, variation, drafters, cache)
    return cheapest_paying(summary), summary, variation


def best_fitting(summary: pd.DataFrame) -> pd.DataFrame:
    """The highest speedup among fitting designs, per (drafter, context)."""
    fits = summary[summary["fits_dsps"].fillna(True).astype(bool)]
    idx = fits.groupby(["algorithm", "context"])["speedup"].idxmax()
    return fits.loc[idx, ["algorithm", "context", "changes", "dsps_used", "best_verify_len",
                          "speedup"]]


def main() -> None:
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return
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
            best, summary, variation = cheapest(base, drafters, cache)
            for changes in variation.refused:
                print(f"{base}: the fit refuses {dict(changes)}", file=sys.stderr)
            tables[f"cheapest_{base}"] = best[["algorithm", "context", "changes", "dsps_used",
                                               "fits_dsps", "best_verify_len", "speedup"]]
            tables[f"best_fitting_{base}"] = best_fitting(summary)
            at = summary[summary["context"] == CONTEXTS[-1]]
            tables[f"designs_{base}_L{CONTEXTS[-1]}"] = at[
                ["algorithm", LANES_FIELD, WIDTH_FIELD, "dsps_used", "fits_dsps",
                 "ad_tokens_per_s", "best_verify_len", "best_sd_tokens_per_s", "speedup"]
            ].sort_values(["algorithm", WIDTH_FIELD, LANES_FIELD])
    for name, frame in tables.items():
        print(f"\n### {name}\n")
        print(markdown(frame))
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            frame.to_csv(out / f"{name}.csv", index=False)
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
