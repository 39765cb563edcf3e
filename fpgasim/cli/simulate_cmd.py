"""`fpgasim simulate`: one point (verify pass, and the draft phase with an algorithm), or
the prefill of a prompt (--phase prefill)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from fpgasim.cli.common import console, csv_text, dumps_json, rich_table
from fpgasim.cli.options import (
    OutputFormat,
    accepted_option,
    algorithm_option,
    board_from,
    board_option,
    cluster_options,
    context_option,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    model_option,
    prompt_len_option,
)
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.schema import Algorithm, config_source
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.dataflow.routing import with_routing
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import get_engine
from fpgasim.engine.cycle import CycleEngine, check_mask_tokens
from fpgasim.errors import InputError
from fpgasim.fileio import atomic_write_bytes, check_output_path, json_text
from fpgasim.simulate import (
    MAX_BATCH,
    Point,
    PointResult,
    fit_warnings,
    point_graphs,
    point_result,
    prefill_result,
)
from fpgasim.step import step_passes
from fpgasim.tree.draft_trees import default_tree
from fpgasim.tree.shapes import parse_shape
from fpgasim.validation import validation_line


def tree_verify_len(
    algorithm: Algorithm, draft_tree: TokenTree, verify_len: int | None, given_tree: bool
) -> int:
    """x for a draft tree: its node count + 1 by default; a given --verify-len must agree.

    A shaped tree verifies all its nodes plus the root, so x = nodes + 1 exactly. EAGLE-3
    keeps x - 1 of the nodes its depth x top-k passes draft (the default: total_tokens).
    """
    where = "--tree" if given_tree else f"the default tree of {config_source(algorithm)}"
    if not draft_tree.is_dynamic:
        nodes = draft_tree.nodes
        if verify_len is not None and verify_len != nodes + 1:
            raise InputError(
                "--verify-len",
                verify_len,
                f"must be {nodes + 1} = the {nodes} draft nodes of {where} "
                f"'{draft_tree.describe()}' + the root; for x = {verify_len} give a --tree of "
                f"{verify_len - 1} draft nodes, or leave --verify-len out",
            )
        return nodes + 1
    drafted = draft_tree.top_k * (draft_tree.draft_depth + 1)
    total = algorithm.default_tree.total_tokens
    x = verify_len if verify_len is not None else min(total or drafted, drafted) + 1
    if x - 1 > drafted:
        raise InputError(
            "--verify-len",
            x,
            f"at most {drafted + 1}: depth {draft_tree.draft_depth} x top-k {draft_tree.top_k} "
            f"({where}) drafts {drafted} nodes to keep x - 1 of",
        )
    if x < 2:
        raise InputError("--verify-len", x, "at least 2 with an algorithm (x = 1 is AD)")
    return x


class Phase(StrEnum):
    """--phase: decode (a verify pass at a context) or prefill (a prompt at context 0)."""

    decode = "decode"
    prefill = "prefill"


def build_tree(
    algorithm: Algorithm, tree: str | None, depth: int | None, top_k: int | None
) -> TokenTree:
    """The draft tree from --tree or --depth/--top-k, else the algorithm's default tree."""
    if tree is not None and (depth is not None or top_k is not None):
        raise InputError("--tree", tree, "give either --tree or --depth/--top-k, not both")
    if tree is not None:
        if algorithm.dynamic_tree:
            raise InputError("--tree", tree, f"{algorithm.id} drafts by --depth and --top-k")
        return TokenTree.from_shape(parse_shape(tree))
    if depth is not None or top_k is not None:
        if not algorithm.dynamic_tree:
            raise InputError("--depth", depth, f"{algorithm.id} drafts a tree given by --tree")
        base = default_tree(algorithm)
        return TokenTree.dynamic(depth or base.draft_depth, top_k or base.top_k)
    return default_tree(algorithm)


def print_graphs(point: Point) -> None:
    """Print each pass's graph dump (plain text: tensor lists contain brackets)."""
    for k, (spec, graph, layers) in enumerate(point_graphs(point)):
        if k:
            print()
        blocks = min(layers, 2)
        shown = ", ".join(f"L{b}" for b in range(blocks))
        print(
            f"# {spec.kind} pass {k}: {spec.tokens} tokens at context {spec.context}; "
            f"{layers} layer block(s), {shown} shown (the lowering's template)"
        )
        print(graph.dump())


@cluster_options
def simulate(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama-3.1-8b"),
    context: int | None = context_option(
        None, "Context length L (cached tokens); required with --phase decode."
    ),
    verify_len: int | None = typer.Option(
        None,
        "--verify-len",
        "-x",
        min=1,
        max=65536,
        help="Tokens verified per pass, x (1 = plain autoregressive decoding). Default: 1, or with --algorithm the draft tree's nodes + 1 (a given x must match the tree).",
    ),
    algorithm: str | None = algorithm_option(
        None,
        "SD algorithm whose draft phase is costed too: longspec, eagle3, falcon, falcon-k3, "
        "falcon-k4 (workloads/algorithms) or a YAML path.",
    ),
    tree: str | None = typer.Option(
        None,
        "--tree",
        help="Draft tree: draft nodes per level below the root, separated by spaces, e.g. '4 16 16 16 16' (LongSpec, Falcon). Default: the algorithm's default tree.",
    ),
    depth: int | None = typer.Option(None, "--depth", min=1, max=64, help="EAGLE-3 draft depth."),
    top_k: int | None = typer.Option(
        None, "--top-k", min=1, max=1024, help="EAGLE-3 top-k per level."
    ),
    accepted: int = accepted_option(
        "Tokens accepted in the last iteration (floor(AAT)): the first draft pass runs over them."
    ),
    batch: int = typer.Option(
        1, "--batch", "-B", min=1, max=MAX_BATCH,
        help="Requests decoded together: each verifies x tokens over its own KV cache; the "
        "linear layers see batch x x rows (docs/batching.md). verify_tokens_per_s counts "
        "the whole batch's tokens.",
    ),
    engine: str = engine_option(
        "Engine: analytic (the study's accounting), event (discrete-event simulator), fast (numba)."
    ),
    phase: Phase = typer.Option(
        Phase.decode,
        "--phase",
        help="decode: one verify pass at --context (default); prefill: the prompt of --prompt-len tokens, rounded up to the board's padding.prefill_multiple, at context 0.",
    ),
    prompt_len: int | None = prompt_len_option(
        None, "Prompt tokens P of the prefill (with --phase prefill)."
    ),
    output_format: OutputFormat = format_option(OutputFormat.table, "Output: table, json or csv (the result's row; the table adds the per-unit utilisation)."),
    trace: Path | None = typer.Option(
        None,
        "--trace",
        help="Write a Chrome trace-event JSON of the verify pass (event or fast engine); open it in Perfetto.",
    ),
    routing: str | None = typer.Option(
        None, "--routing",
        help="A mixture-of-experts target's routing (docs/moe-sd.md): skew=S (capped-Zipf "
        "popularity, 0 = uniform), rho=R (a tree token routes as its parent), trace=FILE "
        "(per-layer expert counts: layer, expert, count); default uniform, rho 0."),
    dump_graph: bool = typer.Option(
        False,
        "--dump-graph",
        help="Print the dataflow graph of the verify pass (and, with --algorithm, of each draft pass) instead of timing it.",
    ),
) -> None:
    """Time one verification pass (and the draft phase) on a board.

    Example: fpgasim simulate --board u280 --model llama-3.1-8b --context 256 --verify-len 1

    Any part and design: fpgasim simulate --fpga u55c --design flightllm --model llama-3.1-8b
    --context 4095

    Prefill: fpgasim simulate --board vhk158 --model llama2-chat-7b --phase prefill --prompt-len 128
    """
    if dump_graph and output_format is not OutputFormat.table:
        raise InputError("--format", output_format.value,
                         "table with --dump-graph (the graph dump is text)")
    if phase is Phase.prefill:
        decode_only = {"--dump-graph": (dump_graph, True), "--accepted": (accepted != 1, accepted),
                       "--routing": (routing is not None, routing),
                       "--batch": (batch != 1, batch),
                       "--tree": (tree is not None, tree), "--depth": (depth is not None, depth),
                       "--top-k": (top_k is not None, top_k)}
        for flag, (given, value) in decode_only.items():
            if given:
                raise InputError(flag, value, "only with --phase decode")
        _prefill(
            (board, fpga, design),
            model,
            context,
            verify_len,
            algorithm,
            engine,
            prompt_len,
            output_format,
            trace,
        )
        return
    if prompt_len is not None:
        raise InputError("--prompt-len", prompt_len, "only with --phase prefill")
    if context is None:
        raise InputError("--context", None, "required with --phase decode (cached tokens L >= 1)")
    if trace is not None:
        check_output_path(trace, "--trace")
    b = board_from(board, fpga, design)
    m = with_routing(load_model(model), routing)
    algo = load_algorithm(algorithm) if algorithm else None
    check_drafter(b, algo)
    if algo is None and accepted != 1:
        raise InputError("--accepted", accepted, "only with --algorithm (the draft phase)")
    if algo is None and (tree or depth or top_k):
        raise InputError("--tree/--depth/--top-k", tree or depth or top_k, "only with --algorithm")
    draft_tree = build_tree(algo, tree, depth, top_k) if algo else None
    if algo is not None:
        given = tree is not None or depth is not None or top_k is not None
        verify_len = tree_verify_len(algo, draft_tree, verify_len, given)
    elif verify_len is None:
        verify_len = 1
    point = Point(b, m, context, verify_len, algo, draft_tree, accepted, batch)
    if dump_graph:
        print_graphs(point)
        return
    eng = get_engine(engine)
    if algo is not None and isinstance(eng, CycleEngine):  # the tree's mask, before any work
        check_mask_tokens(verify_len, b, "tree" if tree is not None else "verify_len",
                          tree if tree is not None else verify_len)
    if trace is not None:
        if not hasattr(eng, "trace_events"):
            raise InputError("--trace", str(trace), "needs --engine event or fast")
        # the trace's size, before any work
        eng.check_timeline(step_passes(verify_len, context, algo, draft_tree, accepted).verify,
                           b, m)
    result = point_result(eng, point)
    drafter = algo.drafter if algo is not None else None
    warn_after_output(fit_warnings(b, m, [(context, verify_len, drafter, batch)]))
    if trace is not None:
        # the verify pass that was timed, tree mask included
        spec = step_passes(verify_len, context, algo, draft_tree, accepted, batch).verify
        events = eng.trace_events(spec, b, m)
        atomic_write_bytes(trace, json_text(events, compact=True).encode())
        result.row["trace_file"] = str(trace)
    label = f"{b.name} / {m.id} / L={context} / x={verify_len}"
    _show(result, output_format, label + (f" / batch {batch}" if batch > 1 else ""), "verify")


def cycles_shown(value: object) -> object:
    """A cycle count for a table: whole cycles as an integer, fractional ones (FlightLLM's
    lowering times transfers as bytes over a rate) to two decimals, never in e-notation."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.2f}" if isinstance(value, float) else value


def seconds_rule(result: PointResult, pass_name: str) -> str:
    """The line under the table saying how the row's seconds follow from its cycles (the
    clock and divisor the result carries)."""
    cycles = result.row[f"{pass_name}_cycles"]
    clock_mhz, divisor = result.clock_hz / 1e6, result.duration_divisor
    if divisor == 1:
        return (
            f"{pass_name}_s = {pass_name}_cycles / (clock_mhz x 1e6) = "
            f"{cycles_shown(cycles)} / ({clock_mhz:g} x 1e6)"
        )
    return (
        f"{pass_name}_s = {pass_name}_cycles / (clock_mhz x 1e6 x duration_divisor) = "
        f"{cycles_shown(cycles)} / ({clock_mhz:g} x 1e6 x {divisor:g}): the board divides "
        f"every duration by duration_divisor, as FlightLLM's performance model does"
    )



def _show(result: PointResult, output_format: OutputFormat, title: str, pass_name: str) -> None:
    """Print a result's row as JSON, or as a table followed by its per-unit utilisation."""
    row = result.row
    if output_format is OutputFormat.json:
        print(dumps_json(row))
        return
    if output_format is OutputFormat.csv:
        print(csv_text([row]), end="")
        return
    table = rich_table(
        [
            {"quantity": k, "value": cycles_shown(v) if k.endswith("_cycles") else v}
            for k, v in row.items() if k != "validation"
        ],
        title=title,
        floatfmt="{:.6g}",
    )
    console.print(table)
    for line in validation_line([row["validation"]] if "validation" in row else []):
        console.print(line, highlight=False, soft_wrap=True)
    console.print(seconds_rule(result, pass_name), highlight=False, soft_wrap=True)
    if result.unit_rows:
        rows = [{**u, "busy_cycles": cycles_shown(u["busy_cycles"])} for u in result.unit_rows]
        table = rich_table(rows, title=f"per-unit utilisation ({pass_name} pass)")
        table.columns[list(rows[0]).index("busy_cycles")].justify = "right"
        console.print(table)


def _prefill(
    board: tuple[str | None, str | None, str | None],
    model: str,
    context: int | None,
    verify_len: int | None,
    algorithm: str | None,
    engine: str,
    prompt_len: int | None,
    output_format: OutputFormat,
    trace: Path | None,
) -> None:
    """--phase prefill: time the prompt's prefill pass and print it."""
    for flag, value, unset in (
        ("--context", context, None),
        ("--verify-len", verify_len, None),
        ("--algorithm", algorithm, None),
        ("--trace", trace, None),
    ):
        if value != unset:
            raise InputError(flag, str(value), "only with --phase decode")
    if prompt_len is None:
        raise InputError("--prompt-len", None, "required with --phase prefill (prompt tokens >= 1)")
    b = board_from(*board)
    m = load_model(model)
    eng = get_engine(engine)
    result = prefill_result(eng, b, m, prompt_len)
    aligned = result.row["prompt_len_aligned"]
    warn_after_output(fit_warnings(b, m, [(aligned, 0, None, 1)]))
    title = f"{b.name} / {m.id} / prefill P={prompt_len} (aligned {aligned})"
    _show(result, output_format, title, "prefill")
