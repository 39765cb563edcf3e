"""`fpgasim hetero solve|dovetail1`: Dovetail-style SD with the target on the CPU, draft on a GPU."""

from __future__ import annotations

import pandas as pd
import typer

from fpgasim.cli.common import (
    console,
    dumps_json,
    json_records,
    json_row,
    rich_table,
)
from fpgasim.cli.options import (
    TableJsonCsv,
    context_option,
    format_option,
    model_option,
    parse_int_list,
)
from fpgasim.config import available, load_model
from fpgasim.heterogeneous import (
    best_config,
    best_gamma_per_blocks,
    dovetail1_table,
    fit_acceptance,
    load_dovetail1_inputs,
    load_platform,
    solve_grid,
)

hetero_app = typer.Typer(
    name="hetero",
    help=(
        "Heterogeneous speculative decoding (Dovetail): the target model on the CPU, the "
        "drafter on a small GPU, only tokens and hidden states over PCIe. Hosts are "
        "platforms/*.yaml, given by name or path."
    ),
    no_args_is_help=True,
    add_completion=False,
)


WINNERS = {"sd": "heterogeneous SD", "ad": "target-only AD", "offload": "offloading AD"}


#: The flags of `solve` declared once (its signature lists them one a line).
HETERO_PLATFORM_FLAG = typer.Option(
    ...,
    "--platform",
    "-p",
    help=f"Host name ({', '.join(available('platform'))}) or a platform YAML path.",
)
HETERO_GAMMAS_FLAG = typer.Option(
    "2-64", "--gammas", help="Candidate-token counts gamma to try, e.g. 2-64 or 4,8,16."
)
HETERO_BLOCKS_FLAG = typer.Option(
    "1-8", "--blocks", help="Extra drafter blocks M to try, e.g. 1-8 or 0,4 (0 = EAGLE-2 size)."
)
HETERO_DEPTH_FLAG = typer.Option(
    7,
    "--depth",
    min=1,
    max=64,
    help="Dynamic-tree depth: at most depth+1 levels (draft passes). Dovetail: 7 server, 4 laptop.",
)
HETERO_OUTPUT_FORMAT_FLAG = format_option(
    TableJsonCsv.table,
    "table (best configuration and best gamma per M), json, or csv (the whole grid).",
)


@hetero_app.command("solve")
def solve(
    platform: str = HETERO_PLATFORM_FLAG,
    model: str = model_option("llama2-chat-7b"),
    context: int = context_option(512, "Context length L (cached tokens).", maximum=1_000_000),
    gammas: str = HETERO_GAMMAS_FLAG,
    blocks: str = HETERO_BLOCKS_FLAG,
    depth: int = HETERO_DEPTH_FLAG,
    output_format: TableJsonCsv = HETERO_OUTPUT_FORMAT_FLAG,
) -> None:
    """Best gamma (candidate tokens) and M (drafter blocks) for a host and target model.

    Compares heterogeneous SD with target-only AD on the same host and with offloading AD (target weights streamed over PCIe every step), and says which wins.

    Example: fpgasim hetero solve --platform xeon4214r-rtx2080s --model llama2-chat-7b
    """
    p = load_platform(platform)
    m = load_model(model)
    gamma_list = parse_int_list(gammas, "--gammas", 1, 1024)
    block_list = parse_int_list(blocks, "--blocks", 0, 64)
    fitted = fit_acceptance(load_dovetail1_inputs())
    grid = solve_grid(p, m, fitted, gamma_list, block_list, context, depth)
    _show(grid, output_format, p, m, context)


def _show(grid: pd.DataFrame, output_format: TableJsonCsv, p, m, context: int) -> None:
    """The grid as CSV, or its best configuration and best gamma per M as JSON or tables."""
    if output_format is TableJsonCsv.csv:
        print(grid.to_csv(index=False), end="")
        return
    best = json_row(best_config(grid))
    per_m = best_gamma_per_blocks(grid)
    if output_format is TableJsonCsv.json:
        print(dumps_json({"best": best, "per_blocks": json_records(per_m)}))
        return
    shown = {
        "best gamma": best["gamma"],
        "best M (blocks)": best["blocks"],
        "Omega (tokens/iteration)": best["omega"],
        "draft passes": best["draft_passes"],
        "T_D per pass, s": best["t_draft_pass_s"],
        "T_V(gamma), s": best["t_verify_s"],
        "T_SD per token, s": best["t_sd_s"],
        "tokens/s": best["tokens_per_s"],
        "target-only AD, s/token": best["t_ad_s"],
        "offloading AD, s/token": best["t_offload_s"],
        "speedup vs AD": best["speedup_vs_ad"],
        "speedup vs offloading": best["speedup_vs_offload"],
        "T_V < Omega*P/(B_p*E_p)": best["beats_offloading"],
        "winner": WINNERS[best["winner"]],
    }
    console.print(
        rich_table(
            [{"quantity": k, "value": v} for k, v in shown.items()],
            title=f"{p.name} / {m.id} / L={context}",
        )
    )
    console.print(rich_table(per_m.to_dict("records"), title="best gamma per M"))
    if best["target_fits_gpu"]:
        console.print(
            f"note: {m.id} ({p.precision.offload}) fits the {p.gpu.name}'s memory, so the GPU "
            "alone could serve it; this comparison assumes the target stays on the CPU."
        )


@hetero_app.command("dovetail1")
def dovetail1(
    output_format: TableJsonCsv = format_option(TableJsonCsv.table, "table, json or csv."),
) -> None:
    """Dovetail's measured speedups recomputed from its published table, beside the model's.

    speedup = T_T / T_SD with T_SD = ((depth+1)·T_D + T_V(gamma)) / Omega: the draft is charged per draft level (one forward pass each); see docs/heterogeneous.md.
    """
    frame: pd.DataFrame = dovetail1_table()
    if output_format is TableJsonCsv.csv:
        print(frame.to_csv(index=False), end="")
    elif output_format is TableJsonCsv.json:
        print(dumps_json(frame.to_dict("records")))
    else:
        console.print(rich_table(frame.to_dict("records"), title="dovetail1", floatfmt="{:.3f}"))
