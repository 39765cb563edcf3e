"""`fpgasim compare-algorithms`: several SD algorithms on one board/model/contexts."""

from __future__ import annotations

from pathlib import Path

import typer

from fpgasim.cli.common import (
    dumps_json,
    json_records,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import (
    OutputFormat,
    aat_dir_option,
    board_from,
    board_option,
    check_png,
    cluster_options,
    contexts_option,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    model_option,
    parse_contexts,
    parse_name_list,
    plot_option,
)
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_comparison
from fpgasim.fileio import check_input_path
from fpgasim.simulate import fit_warnings
from fpgasim.studies.algorithm_comparison import acceptance_label
from fpgasim.studies.algorithm_comparison import compare_algorithms as compare_workload

#: The flags of `compare_algorithms` declared once (its signature lists them one a line).
COMPARE_ALGORITHMS_FLAG = typer.Option(
    "falcon,eagle3,longspec",
    "--algorithms",
    "-a",
    help="Comma-separated SD algorithms (names or YAML paths).",
)
COMPARE_CONTEXTS_FLAG = contexts_option(
    "Context lengths L, e.g. 512,2048,8192 (each solved separately)."
)
COMPARE_AAT_DIR_FLAG = aat_dir_option(
    "Folder of measured AAT tables. Default: builtin, the tables shipped with fpgasim; "
    "each algorithm uses them where they hold it on this model (one task: the one "
    "measured at the most contexts), else its embedded acceptance model."
)
COMPARE_EMBEDDED_FLAG = typer.Option(
    False, "--embedded", help="Use every algorithm's embedded acceptance model, even where tables exist."
)
COMPARE_PLOT_FLAG = plot_option(
    "Write the comparison figure (speedup, AAT, T_v/T_d split, speedup over x) to this PNG."
)
COMPARE_OUTPUT_FORMAT_FLAG = format_option(
    OutputFormat.table,
    "Output: table (ranking + who wins and why), csv (one row per context and algorithm) or json.",
)


@cluster_options
def compare_algorithms(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("vicuna-7b-v1.5"),
    algorithms: str = COMPARE_ALGORITHMS_FLAG,
    contexts: str = COMPARE_CONTEXTS_FLAG,
    engine: str = engine_option("Engine: analytic, event, fast."),
    aat_dir: Path | None = COMPARE_AAT_DIR_FLAG,
    embedded: bool = COMPARE_EMBEDDED_FLAG,
    plot: Path | None = COMPARE_PLOT_FLAG,
    output_format: OutputFormat = COMPARE_OUTPUT_FORMAT_FLAG,
) -> None:
    """Compare SD algorithms on one board and target model.

    Each algorithm's AAT comes from the measured tables where they hold it on this model,
    else from its embedded acceptance model; one line per algorithm and context says which
    (measured, interpolated, extrapolated or embedded). Every algorithm is solved at every context (its best x, tree, AAT, T_v and T_d there,
    alpha = draft/target weight bytes); per context the winner's lead over the runner-up is
    split into an acceptance factor AAT(W)/AAT(R) and a step-cost factor
    (T_v+T_d)(R)/(T_v+T_d)(W).

    Example: fpgasim compare-algorithms --board v80 --model vicuna-7b-v1.5
    --algorithms falcon,eagle3,longspec --contexts 512,2048,8192 --engine analytic
    """
    check_png(plot)
    check_input_path(aat_dir, "--aat-dir")
    if embedded and aat_dir is not None:
        raise InputError("--aat-dir", str(aat_dir), "no folder with --embedded (drop one)")
    names = parse_name_list(algorithms, "--algorithms")
    b, m = board_from(board, fpga, design), load_model(model)
    algos = [load_algorithm(n) for n in names]
    for a in algos:
        check_drafter(b, a)
    result = compare_workload(
        b, m, algos, parse_contexts(contexts), engine=engine, aat_dir=aat_dir,
        aat_source="embedded" if embedded else None,
    )
    _show(result, output_format, plot)
    points = [(int(r["context"]), int(r["best_verify_len"]), a.drafter, 1)
              for a in algos for r in result.table.to_dict("records") if r["algorithm"] == a.id]
    warn_after_output(fit_warnings(b, m, points))  # every row carries its fit marks


def _show(result, output_format: OutputFormat, plot: Path | None) -> None:
    """The figure, then the comparison as CSV, JSON or the ranking table with its lines."""
    if plot is not None:
        plot_comparison(result, plot)
    if output_format is OutputFormat.csv:
        print(result.table.to_csv(index=False), end="")
    elif output_format is OutputFormat.json:
        print(
            dumps_json(
                {"table": json_records(result.table), "winners": json_records(result.winners)}
            )
        )
    else:
        _print(result)
        if plot is not None:
            report_written(f"wrote figure to {plot}")


def _print(result) -> None:
    out = wide_console()
    t = result.table
    first = t.iloc[0]
    rows = [
        {
            "context": r["context"],
            "rank": r["rank"],
            "algorithm": r["algorithm"],
            "k": r["tokens_per_pass"],
            "decision": r["decision"],
            "speedup": r["best_speedup"],
            "best x": r["best_verify_len"],
            "tree": r["best_tree"],
            "levels": r["tree_levels"],
            "passes": r["draft_passes"],
            "AAT": r["best_aat"],
            "T_v ms": r["verify_ms"],
            "T_d ms": r["draft_ms"],
            "alpha": r["alpha"],
            "tok/s": r["best_tokens_per_s"],
            "ori speedup": r["ori_speedup"],
            "fits": bool(r["fits_memory"]) and r["fits_dsps"] is not False,
        }
        for r in t.to_dict("records")
    ]
    title = (
        f"{first['board']} / {first['model']} / engine {first['engine']} / AAT: "
        f"{acceptance_label(t)} (AD: {', '.join(f'L={c} {v:.3g} tok/s' for c, v in _ad(t))})"
    )
    out.print(rich_table(rows, title=title, floatfmt="{:.3g}"))
    for w in result.winners.to_dict("records"):
        out.print(f"  L={w['context']}: {w['reason']}", highlight=False)
    for r in t.sort_values(["algorithm", "context"]).to_dict("records"):
        out.print(
            f"  AAT of {r['algorithm']} at L={r['context']}: {r['aat_basis']}: {r['aat_note']}",
            highlight=False,
        )


def _ad(t) -> list[tuple[int, float]]:
    return [(int(c), float(g["ad_tokens_per_s"].iloc[0])) for c, g in t.groupby("context")]
