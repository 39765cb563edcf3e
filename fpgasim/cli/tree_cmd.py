"""`fpgasim tree ...`: optimal trees, method comparison, prior-score search, calibration."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import numpy as np
import typer

from fpgasim.acceptance.measured import aat_path
from fpgasim.cli.common import (
    console,
    csv_text,
    dumps_json,
    report_written,
    rich_table,
)
from fpgasim.cli.options import (
    JsonTableMarkdown,
    OutputFormat,
    aat_dir_option,
    algorithm_option,
    board_from,
    check_png,
    cluster_options,
    context_option,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    out_option,
    parse_int_list,
    plot_option,
    refuse_cluster,
)
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import BULK_ENGINE, get_engine
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_method_curves
from fpgasim.fileio import (
    check_input_path,
    check_out_path,
    json_text,
    write_frame,
)
from fpgasim.lists import split_items
from fpgasim.simulate import fit_columns, fit_warnings
from fpgasim.solving.board_tree import board_tree
from fpgasim.solving.decision import USE_SD, rests_on
from fpgasim.tree import semantics
from fpgasim.tree.embedded import default_token_tree, default_tree_aat, embedded_model
from fpgasim.tree.method_curves import compare_curves
from fpgasim.tree.optimal import greedy_tree, optimal_tree, sequoia_tree
from fpgasim.tree.positional import MAX_TRACE_DEPTH, PositionalModel
from fpgasim.tree.prior_score import prior_score_search, trie_tree
from fpgasim.tree.shapes import parse_shape
from fpgasim.tree.traces import load_traces

tree_app = typer.Typer(
    help=(
        "Token trees: optimal trees under a positional acceptance model, AAT curves of the "
        "tree-construction methods, prior-score search from acceptance traces, and the "
        "calibration of the embedded acceptance models. See docs/trees.md."
    ),
    no_args_is_help=True,
)


class SolveMethod(StrEnum):
    auto = "auto"
    greedy = "greedy"
    dp = "dp"


def parse_vector(text: str, argument: str = "--acceptance-vector") -> list[list[float]]:
    """'0.6,0.1,0.05' -> one row; rows per depth separated by ';' ('0.8,0.1;0.7,0.1')."""
    rows = []
    for part in str(text).split(";"):
        if not part.strip():
            raise InputError(argument, text, "at least one probability per row (no empty rows)")
        items = split_items(part, argument, ".63,.11,.06") if "," in part else part.split()
        try:
            row = [float(p) for p in items]
        except ValueError:
            raise InputError(
                argument, text, "numbers separated by commas, e.g. .63,.11,.06"
            ) from None
        if not all(0 <= p <= 1 for p in row):  # also refuses nan
            raise InputError(argument, text, "probabilities between 0 and 1")
        rows.append(row)
    return rows


class TreeAatSource(StrEnum):
    measured = "measured"
    embedded = "embedded"


class Objective(StrEnum):
    aat = "aat"
    throughput = "throughput"


def acceptance_model(
    acceptance_vector: str | None,
    iid_rate: float | None,
    marginal_rate: float | None,
    aat: float | None,
    algorithm: str | None,
    context: int | None,
) -> PositionalModel:
    """The positional model from exactly one acceptance input (docs/trees.md, semantics).

    --acceptance-vector: positional p(d, r); --iid-rate: alpha for every candidate;
    --marginal-rate / --aat: the i.i.d. rate / the scaled embedded model that give the
    algorithm's default tree that per-token rate / expected AAT; none: the embedded model.
    """
    given = [
        n
        for n, v in (
            ("--acceptance-vector", acceptance_vector),
            ("--iid-rate", iid_rate),
            ("--marginal-rate", marginal_rate),
            ("--aat", aat),
        )
        if v is not None
    ]
    if len(given) > 1:
        raise InputError("/".join(given), None, "at most one acceptance input")
    if acceptance_vector is not None:
        return PositionalModel.from_rows(parse_vector(acceptance_vector), "--acceptance-vector")
    if iid_rate is not None:
        return semantics.iid_model(iid_rate)
    if algorithm is None:
        raise InputError(
            "--algorithm",
            None,
            "an algorithm (its embedded model or default tree), or --acceptance-vector / "
            "--iid-rate",
        )
    algo = load_algorithm(algorithm)
    model = embedded_model(algo, context)
    reference = default_token_tree(algo, model)
    if marginal_rate is not None:
        return semantics.iid_model(semantics.iid_from_marginal(marginal_rate, reference))
    if aat is not None:
        return semantics.scaled_to_aat(model, reference, aat)
    return model


#: The flags of `optimal` declared once (its signature lists them one a line).
OPTIMAL_ACCEPTANCE_VECTOR_FLAG = typer.Option(
    None,
    "--acceptance-vector",
    "-p",
    help="Positional acceptance: P(rank-r child is the accepted one | parent accepted), r = 0, 1, ..., e.g. .6342,.1079,.0570. Rows per depth may be separated by ';' (the last row applies deeper).",
)
OPTIMAL_IID_RATE_FLAG = typer.Option(
    None,
    "--iid-rate",
    help="i.i.d. acceptance rate alpha: every candidate, in rank order, is accepted with probability alpha (p(d, r) = alpha (1 - alpha)^r).",
)
OPTIMAL_MARGINAL_RATE_FLAG = typer.Option(
    None,
    "--marginal-rate",
    help="Marginal per-token rate: fraction of the algorithm's default tree's draft tokens accepted, (AAT - 1)/(x - 1); converted to an i.i.d. rate.",
)
OPTIMAL_AAT_FLAG = typer.Option(
    None,
    "--aat",
    help="Expected AAT (bonus included) of the algorithm's default tree: the embedded model scaled to reach it.",
)
OPTIMAL_ALGORITHM_FLAG = algorithm_option(
    None,
    "Algorithm: its embedded acceptance model (unless another input is given) and, for --objective throughput, its drafter and maximal tree.",
)
OPTIMAL_CONTEXT_FLAG = context_option(
    None,
    "Context length (default: the embedded model's reference context; required for --objective throughput).",
)
OPTIMAL_SIZE_FLAG = typer.Option(
    None,
    "--size",
    "-n",
    min=1,
    max=4096,
    help="Tree size N = verification length x, root included (--objective throughput: the largest x searched, default the algorithm's maximal tree).",
)
OPTIMAL_MAX_DEPTH_FLAG = typer.Option(
    None,
    "--max-depth",
    "-d",
    min=0,
    max=256,
    help="Maximum draft levels below the root (default: unbounded).",
)
OPTIMAL_METHOD_FLAG = typer.Option(
    SolveMethod.auto,
    "--method",
    help="auto: greedy when p is non-increasing in rank (then optimal), else Sequoia's DP.",
)
OPTIMAL_OBJECTIVE_FLAG = typer.Option(
    Objective.aat,
    "--objective",
    help="aat: the tree of N nodes with the highest expected AAT; throughput: the tree of highest tokens/s AAT/(T_v+T_d) on --board over every x <= N.",
)
OPTIMAL_BOARD_FLAG = typer.Option(
    None, "--board", "-b", help="Board (--objective throughput), e.g. v80; or --fpga with "
    "--design."
)
OPTIMAL_MODEL_NAME_FLAG = typer.Option(
    "llama-3.1-8b", "--model", "-m", help="Target model (--objective throughput)."
)
OPTIMAL_ENGINE_FLAG = engine_option(
    "Engine costing T_v and T_d (--objective throughput): fast (default; event's cycles), "
    "event or analytic.", BULK_ENGINE)
OPTIMAL_AAT_DIR_FLAG = aat_dir_option(
    "--objective throughput: measured AAT tables (default: the shipped ones). Where they "
    "hold the algorithm and model the candidate trees are their curve's, with their "
    "measured AAT, as `fpgasim solve` uses them; elsewhere the embedded model's search."
)
OPTIMAL_AAT_SOURCE_FLAG = typer.Option(
    None, "--aat-source",
    help="--objective throughput: measured (the tables' curve; the default where they hold "
    "the pair) or embedded (search every tree under the embedded model, even there).")
OPTIMAL_TASK_FLAG = typer.Option(
    None, "--task", help="--objective throughput: the measured table's task (default: "
    "the first of the tasks `solve` solves by default, read as `solve` reads them).")


@tree_app.command("optimal")
@cluster_options
def optimal(
    acceptance_vector: str | None = OPTIMAL_ACCEPTANCE_VECTOR_FLAG,
    iid_rate: float | None = OPTIMAL_IID_RATE_FLAG,
    marginal_rate: float | None = OPTIMAL_MARGINAL_RATE_FLAG,
    aat: float | None = OPTIMAL_AAT_FLAG,
    algorithm: str | None = OPTIMAL_ALGORITHM_FLAG,
    context: int | None = OPTIMAL_CONTEXT_FLAG,
    size: int | None = OPTIMAL_SIZE_FLAG,
    max_depth: int | None = OPTIMAL_MAX_DEPTH_FLAG,
    method: SolveMethod = OPTIMAL_METHOD_FLAG,
    objective: Objective = OPTIMAL_OBJECTIVE_FLAG,
    board: str | None = OPTIMAL_BOARD_FLAG,
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model_name: str = OPTIMAL_MODEL_NAME_FLAG,
    engine: str = OPTIMAL_ENGINE_FLAG,
    aat_dir: Path | None = OPTIMAL_AAT_DIR_FLAG,
    aat_source: TreeAatSource | None = OPTIMAL_AAT_SOURCE_FLAG,
    task: str | None = OPTIMAL_TASK_FLAG,
    output_format: OutputFormat = format_option(OutputFormat.table, "Output: table, json or csv."),
) -> None:
    """The tree of N nodes with the highest expected AAT, or of highest tokens/s on a board.

    --objective throughput takes its acceptance by the rule `solve` uses (docs/analysis.md,
    "Where the AAT comes from"): the measured curve's trees where tables hold the algorithm
    and model, every tree the drafter can build under the embedded model elsewhere (or
    under an acceptance given with -p, --iid-rate, --marginal-rate or --aat); the best tree
    is compared with AD, and the decision says when no tree beats it.

    Example (Sequoia's published vector):
    fpgasim tree optimal -p .6342,.1079,.0570,.0225,.0195,.0150,.0045,.0030,.0120 --size 64 --max-depth 9

    Example (hardware-aware): fpgasim tree optimal --objective throughput -b v80 -a longspec --context 1024
    """
    if context is not None and algorithm is None:
        raise InputError("--context", context, "only with --algorithm")
    explicit = acceptance_vector is not None or iid_rate is not None
    if objective is Objective.aat and explicit and algorithm is not None:
        raise InputError(
            "--acceptance-vector/--iid-rate/--algorithm",
            algorithm,
            "one acceptance model for --objective aat: a vector or rate, or an algorithm",
        )
    given_inputs = {"--acceptance-vector": acceptance_vector, "--iid-rate": iid_rate,
                    "--marginal-rate": marginal_rate, "--aat": aat}
    boards = (board, fpga, design)
    tables = (aat_dir, aat_source.value if aat_source else None, task)
    if objective is Objective.throughput:
        row, title, lines = _throughput(given_inputs, method, algorithm, context, boards,
                                        model_name, size, max_depth, engine, tables)
    else:
        row, title, lines = _aat_optimal(given_inputs, method, algorithm, context, boards,
                                         size, max_depth, tables)
    _show_row(row, title, lines, output_format)


def _throughput(given_inputs: dict, method: SolveMethod, algorithm: str | None,
                context: int | None, board: tuple[str | None, str | None, str | None],
                model_name: str, size: int | None, max_depth: int | None, engine: str,
                tables: tuple[Path | None, str | None, str | None],
                ) -> tuple[dict, str, list[str]]:
    """`tree optimal --objective throughput`: its row, title and lines."""
    if method is not SolveMethod.auto:
        raise InputError("--method", method.value, "only with --objective aat")
    acceptance_vector, iid_rate, marginal_rate, aat = given_inputs.values()
    named = [k for k, v in given_inputs.items() if v is not None]
    given = (acceptance_model(acceptance_vector, iid_rate, marginal_rate, aat, algorithm,
                              context) if named else None)
    note = f"{named[0]} {given_inputs[named[0]]}" if named else ""
    row = _throughput_row(given, note, board, model_name, algorithm, context, size, max_depth,
                          engine, tables)
    return row, f"throughput-optimal tree on {row['board']}, L={context}", throughput_lines(row)


def _aat_optimal(given_inputs: dict, method: SolveMethod, algorithm: str | None,
                 context: int | None, board: tuple[str | None, str | None, str | None],
                 size: int | None, max_depth: int | None,
                 tables: tuple[Path | None, str | None, str | None],
                 ) -> tuple[dict, str, list[str]]:
    """`tree optimal --objective aat`: the tree of N nodes with the highest expected AAT."""
    for flag, value in zip(("--aat-dir", "--aat-source", "--task"), tables, strict=True):
        if value is not None:
            raise InputError(flag, str(value), "only with --objective throughput")
    acceptance_vector, iid_rate, marginal_rate, aat = given_inputs.values()
    model = acceptance_model(acceptance_vector, iid_rate, marginal_rate, aat, algorithm,
                             context)
    if size is None:
        raise InputError("--size", None, "a tree size N for --objective aat")
    refuse_cluster("with --objective aat (no board: a cluster is for --objective throughput)")
    for flag, value in zip(("--board", "--fpga", "--design"), board, strict=True):
        if value is not None:
            raise InputError(flag, value, "only with --objective throughput")
    solver = {"auto": optimal_tree, "greedy": greedy_tree, "dp": sequoia_tree}[method.value]
    result = solver(model, size, max_depth)
    t = result.tree
    row = {
        "expected_aat": result.expected_aat,
        "size": t.size,
        "max_depth": max_depth,
        "levels": t.depth,
        "method": result.method,
        "monotone": model.is_monotone(),
        "tree_shape": t.shape_str(),
        "parents": list(t.parents),
        "ranks": t.ranks.tolist(),
    }
    return row, f"optimal tree, N={size}", []


def _show_row(row: dict, title: str, lines: list[str], output_format: OutputFormat) -> None:
    """One row as JSON, CSV, or a quantity/value table with its lines under it."""
    if output_format is OutputFormat.json:
        print(dumps_json(row))
        return
    if output_format is OutputFormat.csv:
        print(csv_text([row]), end="")
        return
    shown = [
        {"quantity": k, "value": " ".join(map(str, v)) if isinstance(v, list) else v}
        for k, v in row.items()
    ]
    console.print(rich_table(shown, title=title, floatfmt="{:.6g}"))
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


def _throughput_row(
    given: PositionalModel | None,
    given_note: str,
    board: tuple[str | None, str | None, str | None],
    model_name: str,
    algorithm: str | None,
    context: int | None,
    size: int | None,
    max_depth: int | None,
    engine: str,
    tables: tuple[Path | None, str | None, str | None],
) -> dict:
    """`tree optimal --objective throughput`: the best tree on the board by the acceptance
    `solve` uses (`solving.board_tree`), AD beside it, and the AAT-optimal tree of its x."""
    for name, value in (("--algorithm", algorithm), ("--context", context)):
        if value is None:
            raise InputError(name, None, "required with --objective throughput")
    if max_depth is not None:
        raise InputError(
            "--max-depth",
            max_depth,
            "not with --objective throughput (the drafter's maximal tree bounds the levels)",
        )
    assert algorithm is not None and context is not None
    aat_dir, aat_source, task = tables
    check_input_path(aat_dir, "--aat-dir")
    eng = get_engine(engine)
    b, a, m = board_from(*board), load_algorithm(algorithm), load_model(model_name)
    check_drafter(b, a)
    found = board_tree(eng, b, m, a, context, max_verify_len=size, given=given,
                       given_note=given_note, aat_dir=aat_dir, aat_source=aat_source,
                       task=task)
    row = _found_row(found, b, m, a, context, eng.name)
    # the marks every speed carries, and their warnings (docs/hardware.md, "What does not fit")
    row |= fit_columns(b, m, context, found.best.verify_len, a.drafter)
    warn_after_output(fit_warnings(b, m, [(context, found.best.verify_len, a.drafter, 1)]))
    return row


def _found_row(found, b, m, a, context: int, engine: str) -> dict:
    """The row of a throughput search: the workload, the decision, the best tree and the
    AAT-optimal tree of its x, and what the search cost."""
    row: dict = {
        "objective": "throughput",
        "board": b.name,
        "fpga": b.fpga.name,
        "design": b.design.name,
        "model": m.id,
        "algorithm": a.id,
        "context": context,
        "engine": engine,
        "aat_basis": found.aat_basis,
        "aat_note": found.aat_note,
        "task": found.task,
        "trees_from": found.trees_from,
        "decision": found.decision,
        "speedup": found.speedup,
        "ad_tokens_per_s": found.ad_tokens_per_s,
    }
    for prefix, d in (("", found.best), ("aat_optimal_", found.aat_optimal)):
        row |= {
            f"{prefix}verify_len": d.verify_len,
            f"{prefix}tree": d.drafted,
            f"{prefix}tree_shape": d.tree.shape_str() if d.tree is not None else "",
            f"{prefix}levels": d.tree.depth if d.tree is not None else None,
            f"{prefix}expected_aat": d.aat,
            f"{prefix}accepted": d.accepted,
            f"{prefix}verify_s": d.verify_s,
            f"{prefix}draft_s": d.draft_s,
            f"{prefix}tokens_per_s": d.tokens_per_s,
            f"{prefix}parents": list(d.tree.parents) if d.tree is not None else [],
            f"{prefix}ranks": d.tree.ranks.tolist() if d.tree is not None else [],
        }
    row["gain_vs_aat_optimal"] = found.best.tokens_per_s / found.aat_optimal.tokens_per_s
    row["search_states"] = found.search_states
    row["search_trees"] = found.search_trees
    row["engine_passes"] = found.engine_passes
    row["search_s"] = found.seconds
    return row


def throughput_lines(row: dict) -> list[str]:
    """The lines under `tree optimal --objective throughput`'s table: the decision against
    AD (saying when no tree beats it) and the acceptance it rests on."""
    where = f"{row['board']} at L={row['context']}"
    best = (f"the best tree '{row['tree']}' (x = {row['verify_len']}, AAT "
            f"{row['expected_aat']:.3g}) {row['tokens_per_s']:.3g} tok/s")
    if row["decision"] == USE_SD:
        head = (f"{row['decision']}: on {where} {best}, {row['speedup']:.3g}x AD's "
                f"{row['ad_tokens_per_s']:.3g} tok/s")
    else:
        head = (f"{row['decision']}: no tree beats AD on {where} (AD "
                f"{row['ad_tokens_per_s']:.3g} tok/s; {best}, {row['speedup']:.3g}x)")
    return [f"  {head}; {rests_on(row)}", f"  AAT {row['aat_basis']}: {row['aat_note']}",
            f"  trees: {row['trees_from']}"]


@tree_app.command("compare")
def compare(
    algorithm: str = algorithm_option(..., "SD algorithm with an embedded acceptance model."),
    sizes: str = typer.Option(
        "2-85", "--sizes", help="Verification lengths x, e.g. 2-85 or 2,5,9."
    ),
    context: int | None = context_option(
        None, "Context length (default: the model's reference context)."
    ),
    iterations: int = typer.Option(
        100_000, "--iterations", min=1, max=10**7, help="Generated traces for prior-score."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the trace generator."),
    max_tree: str | None = typer.Option(
        None,
        "--max-tree",
        help="Maximal tree level widths, e.g. '4 16 16 16 16 16' (default: the algorithm's, or the nodes spread evenly over its depth bound).",
    ),
    plot: Path | None = plot_option("Also draw the curves to this PNG."),
    out: Path | None = out_option(None, "Also write the long table (.csv or .parquet)."),
    output_format: OutputFormat = format_option(OutputFormat.table, "Output: table, json or csv."),
) -> None:
    """AAT curves of prior-score, width, depth and optimal trees under the embedded model.

    Prior-score searches the maximal tree with traces generated by the model (seeded);
    every AAT is the model's exact expectation for the tree.
    """

    if out is not None:
        check_out_path(out, "--out")
    check_png(plot)
    algo = load_algorithm(algorithm)
    xs = parse_int_list(sizes, "--sizes", 2, 4096)
    shape = parse_shape(max_tree, "--max-tree") if max_tree else None
    if shape is not None and len(shape) > MAX_TRACE_DEPTH:  # else named as --max-depth
        raise InputError("--max-tree", max_tree, f"at most {MAX_TRACE_DEPTH} levels (prior-score "
                         f"traces are drawn that deep); {len(shape)} given")
    frame = compare_curves(
        algo, xs, np.random.default_rng(seed), context, iterations, max_shape=shape
    )
    if out is not None:
        write_frame(frame, out)
    if plot is not None:
        ctx = context or (algo.acceptance.context_ref if algo.acceptance else None)
        plot_method_curves(frame, f"{algo.id}: embedded acceptance, context {ctx}", plot)
    wide = frame.pivot(index="verify_len", columns="method", values="aat").reset_index()
    wide = wide[["verify_len", "prior_score", "width", "depth", "optimal"]]
    rows = wide.to_dict("records")
    if output_format is OutputFormat.json:
        print(dumps_json(rows))
        return
    if output_format is OutputFormat.csv:
        print(csv_text(rows), end="")
        return
    console.print(rich_table(rows, title=f"expected AAT by tree method ({algo.id})"))


@tree_app.command("search")
def search(
    traces: Path = typer.Option(
        ...,
        "--traces",
        "-t",
        help="Trace file (.csv/.parquet): one row per iteration, column `ranks` = accepted sibling ranks from the root, e.g. '0 2 0' (docs/trees.md).",
    ),
    max_nodes: int = typer.Option(
        84, "--max-nodes", min=1, max=4095, help="Largest tree (draft nodes) in the table."
    ),
    out: Path = out_option(..., "Size -> tree table (.csv or .parquet)."),
    max_tree: str | None = typer.Option(
        None,
        "--max-tree",
        help="Level widths of the maximal tree the traces were logged on (default: the algorithm's with --algorithm, else the tree of all logged paths).",
    ),
    algorithm: str | None = algorithm_option(
        None, "Take the maximal tree (and its arrangement) from this algorithm."
    ),
    context: int | None = context_option(
        None, "Use only trace rows of this context.", maximum=None
    ),
) -> None:
    """Prior-score search: score nodes by accepted counts, write the best tree of every size.

    Rows: verify_len, nodes, aat (mean accepted tokens of that tree on the traces),
    tree_shape, parents, ranks.
    """

    check_out_path(out, "--out")
    check_input_path(traces, "--traces")
    logged = load_traces(traces, context)
    model = None
    shape = parse_shape(max_tree, "--max-tree") if max_tree else None
    if algorithm is not None:
        algo = load_algorithm(algorithm)
        if algo.acceptance is not None:
            model = embedded_model(algo, context)
        if shape is None and algo.max_tree:
            shape = tuple(algo.max_tree)
    shape_from = "--max-tree" if max_tree else "max_tree"  # the option, else the file's
    tree = TokenTree.from_shape(shape, model, shape_from) if shape else trie_tree(logged)
    result = prior_score_search(logged, tree)
    top = min(max_nodes, tree.nodes)
    if top < 1:
        raise InputError("--traces", str(traces), "at least one accepted draft token")
    frame = result.to_frame(top)
    write_frame(frame, out)
    note = f" (the maximal tree holds {tree.nodes})" if top < max_nodes else ""
    line = (
        f"{result.iterations} iterations, {result.truncated} paths cut by the maximal tree; "
        f"wrote trees of 1..{top} nodes{note} to {out}; AAT at {top} nodes: "
        f"{result.aat(top):.4f}"
    )
    report_written(line)


@tree_app.command("calibrate")
def calibrate(
    algorithm: str = algorithm_option(..., "longspec or eagle3."),
    aat_dir: Path | None = aat_dir_option(
        "Measured AAT tables (builtin: the ones shipped with fpgasim): refit the context decay and report R² per context."
    ),
    output_format: JsonTableMarkdown = format_option(
        JsonTableMarkdown.table, "Output: table, json, csv (the calibration as one row; the "
        "agreement table with --aat-dir: json or table) or markdown (the blocks of "
        "docs/trees.md)."
    ),
) -> None:
    """Recompute an embedded acceptance model from the published figures and compare it.

    Prints the calibrated probabilities, the tau they reproduce, and with --aat-dir the
    R², RMSE and bias of the shipped model's AAT curve against every measured table.
    """
    # local: tree.calibrate imports scipy.optimize, needed by this subcommand only
    from fpgasim.tree.calibrate import (
        agreement_markdown,
        agreement_tables,
        calibration_markdown,
    )
    from fpgasim.tree.calibrate import calibrate as run_calibration

    check_input_path(aat_dir, "--aat-dir")
    algo = load_algorithm(algorithm)
    aat_dir = aat_path(aat_dir) if aat_dir is not None else None
    if aat_dir is not None and not aat_dir.is_dir():
        raise InputError("--aat-dir", str(aat_dir), "a folder of measured AAT tables")
    acc = run_calibration(algo, aat_dir)
    if output_format is JsonTableMarkdown.markdown:
        print(calibration_markdown([algo]))
        if aat_dir is not None:
            print()
            print(agreement_markdown(algo, aat_dir))
        return
    shipped = algo.acceptance
    result = {
        "algorithm": algo.id,
        "probabilities": acc.probabilities,
        "context_ref": acc.context_ref,
        "context_decay": acc.context_decay,
        "tau_target": acc.tau_target,
        "tau_recomputed": default_tree_aat(algo.model_copy(update={"acceptance": acc})),
        "matches_shipped": shipped is not None
        and shipped.probabilities == acc.probabilities
        and (aat_dir is None or shipped.context_decay == acc.context_decay),
    }
    frame = agreement_tables(algo, aat_dir) if aat_dir is not None else None
    _show_calibration(result, frame, output_format)


def _show_calibration(result: dict, frame, output_format: JsonTableMarkdown) -> None:
    """The calibration as one CSV row, JSON (with the agreement table) or tables."""
    if output_format is JsonTableMarkdown.csv:
        print(csv_text([{**result, "probabilities": json_text(result["probabilities"], compact=True)}]),
              end="")
        return
    if output_format is JsonTableMarkdown.json:
        if frame is not None:
            result["agreement"] = frame.to_dict("records")
        print(dumps_json(result))
        return
    shown = [{"quantity": k, "value": v} for k, v in result.items() if k != "probabilities"]
    console.print(rich_table(shown, title=f"{result['algorithm']}: embedded acceptance", floatfmt="{:.4f}"))
    rows = [
        {"depth": d + 1, "p(rank 0..)": " ".join(f"{v:.4f}" for v in row)}
        for d, row in enumerate(result["probabilities"])
    ]
    console.print(rich_table(rows))
    if frame is not None:
        console.print(rich_table(frame.to_dict("records"), title="agreement with measured AAT"))
