"""Print the Table IV comparison of docs/validation.md ("The study's boards against
FlightLLM's design"): best x, speedup and whether SD pays under three configurations, and
the one-change-at-a-time sensitivity of the FlightLLM calibration (Markdown on stdout).

(a) the study's accounting: `table4` on the analytic engine; (b) today's realistic boards:
`table4` on the event engine; (c) the boards calibrated to FlightLLM's design:
`table4-flightllm` (boards/*-flightllm.yaml) on the event engine; and (d) the accounting
(analytic) on the calibrated boards, to separate their parameters from the simulator's
realism. All with the measured AAT of the study (GovReport, LongSpec, Llama-3.1-8B).

Usage: python benchmarks/table4_flightllm.py [AAT_DIR] [--no-sensitivity]
(AAT_DIR default ../shared/reference/aat; about 4 minutes with the sensitivity table on
an idle 2-core machine, 2 without.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from fpgasim.analysis.solver import solve
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.reproduce import run_experiment

BOARDS = ("u280", "vhk158", "v80", "u250")
CONFIGS = (
    ("a", "table4", "analytic"),
    ("b", "table4", "event"),
    ("c", "table4-flightllm", "event"),
    ("d", "table4-flightllm", "analytic"),  # the accounting on the calibrated boards
)
SENSITIVITY_CONTEXT = 1024


def three_way(aat_dir: Path) -> pd.DataFrame:
    """One row per (board, context): AD tokens/s, best x and speedup per configuration."""
    out = None
    for label, experiment, engine in CONFIGS:
        t = run_experiment(experiment, engine=engine, aat_dir=aat_dir).table.copy()
        t["board"] = t["board"].str.replace("-flightllm", "", regex=False)
        t = t[["board", "context", "ar_tokens_per_s", "best_verify_len", "speedup"]]
        t = t.rename(
            columns={
                "ar_tokens_per_s": f"ad_{label}",
                "best_verify_len": f"x_{label}",
                "speedup": f"speedup_{label}",
            }
        )
        out = t if out is None else out.merge(t, on=["board", "context"])
    return out


def print_three_way(frame: pd.DataFrame) -> None:
    print(
        "| board | L | (a) x | (a) speedup | (b) x | (b) speedup | (c) x | (c) speedup "
        "| AD tok/s (a / b / c) | SD pays? (a / b / c) | (d) x | (d) speedup |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |")
    for r in frame.to_dict("records"):
        pays = " / ".join("yes" if r[f"speedup_{k}"] > 1 else "no" for k in "abc")
        ad = " / ".join(f"{r[f'ad_{k}']:.3g}" for k in "abc")
        print(
            f"| {r['board']} | {r['context']} | {r['x_a']} | {r['speedup_a']:.3f} "
            f"| {r['x_b']} | {r['speedup_b']:.3f} | {r['x_c']} | {r['speedup_c']:.3f} "
            f"| {ad} | {pays} | {r['x_d']} | {r['speedup_d']:.3f} |"
        )


def single_changes(board_name: str) -> dict[str, dict]:
    """Each FlightLLM change of boards/NAME-flightllm.yaml alone, as a board update."""
    base = load_board(board_name).model_dump()
    cal = load_board(f"{board_name}-flightllm").model_dump()
    changes = {
        "weights INT4-timed over 8 channels, FlightLLM's weight ring": {
            "memory.weight_group": cal["memory"]["weight_group"],
            "precision.weight_bits": cal["precision"]["weight_bits"],
            "buffers.weight_kib": cal["buffers"]["weight_kib"],
            "buffers.prefetch_depth": cal["buffers"]["prefetch_depth"],
        },
        "INT8 activations and KV": {
            "precision.activation_bits": cal["precision"]["activation_bits"],
            "precision.kv_bits": cal["precision"]["kv_bits"],
        },
        "KV over 8 channels at 0.7": {"memory.activation_group": cal["memory"]["activation_group"]},
        "128-token MM tile": {"padding.mm_token_multiple": cal["padding"]["mm_token_multiple"]},
    }
    if (cal["pe_array"], cal["mv_macs_per_cycle"]) != (base["pe_array"], base["mv_macs_per_cycle"]):
        changes["FlightLLM's MM/MV arrays"] = {
            "pe_array": cal["pe_array"],
            "mv_macs_per_cycle": cal["mv_macs_per_cycle"],
        }
    return changes


def _apply(board_name: str, update: dict):
    data = load_board(board_name).model_dump()
    for path, value in update.items():
        *parents, leaf = path.split(".")
        node = data
        for p in parents:
            node = node[p]
        node[leaf] = value
    return type(load_board(board_name)).model_validate(data)


def sensitivity(aat_dir: Path) -> None:
    """Best x and speedup at one context with each change alone (event engine)."""
    model, algorithm = load_model("llama-3.1-8b"), load_algorithm("longspec")
    print(
        "\n| board | change (alone, on today's board) | AD tok/s | best x "
        f"| speedup (L={SENSITIVITY_CONTEXT}) |"
    )
    print("| --- | --- | ---: | ---: | ---: |")
    for name in BOARDS:
        variants = {"none (today's board)": load_board(name)}
        for label, update in single_changes(name).items():
            variants[label] = _apply(name, update)
        variants["all (the -flightllm board)"] = load_board(f"{name}-flightllm")
        for label, board in variants.items():
            s = solve(
                board,
                model,
                algorithm,
                [SENSITIVITY_CONTEXT],
                engine=get_engine("event"),
                tasks=["gov_report"],
                aat_dir=aat_dir,
            ).summary.iloc[0]
            print(
                f"| {name} | {label} | {s['ad_tokens_per_s']:.2f} | {s['best_verify_len']} "
                f"| {s['best_speedup']:.3f} |"
            )


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    aat_dir = (
        Path(args[0])
        if args
        else Path(__file__).resolve().parents[1].parent / "shared/reference/aat"
    )
    print_three_way(three_way(aat_dir))
    if "--no-sensitivity" not in sys.argv:
        sensitivity(aat_dir)


if __name__ == "__main__":
    main()
