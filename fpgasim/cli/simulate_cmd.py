"""`fpgasim simulate`: one point (verify pass, and the draft phase with an algorithm), or
the prefill of a prompt (--phase prefill)."""

from __future__ import annotations

from dataclasses import dataclass
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


#: The flags of `simulate` declared once (its signature lists them one a line).
SIMULATE_CONTEXT_FLAG = context_option(
    None, "Context length L (cached tokens); required with --phase decode."
)
SIMULATE_VERIFY_LEN_FLAG = typer.Option(
    None,
    "--verify-len",
    "-x",
    min=1,
    max=65536,
    help="Tokens verified per pass, x (1 = plain autoregressive decoding). Default: 1, or with --algorithm the draft tree's nodes + 1 (a given x must match the tree).",
)
SIMULATE_ALGORITHM_FLAG = algorithm_option(
    None,
    "SD algorithm whose draft phase is costed too: longspec, eagle3, falcon, falcon-k3, "
    "falcon-k4 (workloads/algorithms) or a YAML path.",
)
SIMULATE_TREE_FLAG = typer.Option(
    None,
    "--tree",
    help="Draft tree: draft nodes per level below the root, separated by spaces, e.g. '4 16 16 16 16' (LongSpec, Falcon). Default: the algorithm's default tree.",
)
SIMULATE_TOP_K_FLAG = typer.Option(
    None, "--top-k", min=1, max=1024, help="EAGLE-3 top-k per level."
)
SIMULATE_ACCEPTED_FLAG = accepted_option(
    "Tokens accepted in the last iteration (floor(AAT)): the first draft pass runs over them."
)
SIMULATE_BATCH_FLAG = typer.Option(
    1, "--batch", "-B", min=1, max=MAX_BATCH,
    help="Requests decoded together: each verifies x tokens over its own KV cache; the "
    "linear layers see batch x x rows (docs/batching.md). verify_tokens_per_s counts "
    "the whole batch's tokens.",
)
SIMULATE_ENGINE_FLAG = engine_option(
    "Engine: analytic (the study's accounting), event (discrete-event simulator), fast (numba)."
)
SIMULATE_PHASE_FLAG = typer.Option(
    Phase.decode,
    "--phase",
    help="decode: one verify pass at --context (default); prefill: the prompt of --prompt-len tokens, rounded up to the board's padding.prefill_multiple, at context 0.",
)
SIMULATE_PROMPT_LEN_FLAG = prompt_len_option(
    None, "Prompt tokens P of the prefill (with --phase prefill)."
)
SIMULATE_OUTPUT_FORMAT_FLAG = format_option(OutputFormat.table, "Output: table, json or csv (the result's row; the table adds the per-unit utilisation).")
SIMULATE_TRACE_FLAG = typer.Option(
    None,
    "--trace",
    help="Write a Chrome trace-event JSON of the verify pass (event or fast engine); open it in Perfetto.",
)
SIMULATE_ROUTING_FLAG = typer.Option(
    None, "--routing",
    help="A mixture-of-experts target's routing (docs/moe-sd.md): skew=S (capped-Zipf "
    "popularity, 0 = uniform), rho=R (a tree token routes as its parent), trace=FILE "
    "(per-layer expert counts: layer, expert, count); default uniform, rho 0.")
SIMULATE_DUMP_GRAPH_FLAG = typer.Option(
    False,
    "--dump-graph",
    help="Print the dataflow graph of the verify pass (and, with --algorithm, of each draft pass) instead of timing it.",
)


@cluster_options
def simulate(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama-3.1-8b"),
    context: int | None = SIMULATE_CONTEXT_FLAG,
    verify_len: int | None = SIMULATE_VERIFY_LEN_FLAG,
    algorithm: str | None = SIMULATE_ALGORITHM_FLAG,
    tree: str | None = SIMULATE_TREE_FLAG,
    depth: int | None = typer.Option(None, "--depth", min=1, max=64, help="EAGLE-3 draft depth."),
    top_k: int | None = SIMULATE_TOP_K_FLAG,
    accepted: int = SIMULATE_ACCEPTED_FLAG,
    batch: int = SIMULATE_BATCH_FLAG,
    engine: str = SIMULATE_ENGINE_FLAG,
    phase: Phase = SIMULATE_PHASE_FLAG,
    prompt_len: int | None = SIMULATE_PROMPT_LEN_FLAG,
    output_format: OutputFormat = SIMULATE_OUTPUT_FORMAT_FLAG,
    trace: Path | None = SIMULATE_TRACE_FLAG,
    routing: str | None = SIMULATE_ROUTING_FLAG,
    dump_graph: bool = SIMULATE_DUMP_GRAPH_FLAG,
) -> None:
    """Time one verification pass (and the draft phase) on a board.

    Example: fpgasim simulate --board u280 --model llama-3.1-8b --context 256 --verify-len 1

    Any part and design: fpgasim simulate --fpga u55c --design flightllm --model llama-3.1-8b
    --context 4095

    Prefill: fpgasim simulate --board vhk158 --model llama2-chat-7b --phase prefill --prompt-len 128
    """
    flags = SimulateFlags(board, fpga, design, model, context, verify_len, algorithm, tree,
                          depth, top_k, accepted, batch, engine, phase, prompt_len,
                          output_format, trace, routing, dump_graph)
    shown = _prefill(flags) if phase is Phase.prefill else _decode(flags)
    if shown is not None:
        _show(*shown, output_format)


@dataclass(frozen=True)
class SimulateFlags:
    """The flags of one `fpgasim simulate`, as given; `__post_init__` holds the rules that
    tie them together (what only a decode or only a prefill takes), before any file is
    read."""

    board: str | None
    fpga: str | None
    design: str | None
    model: str
    context: int | None
    verify_len: int | None
    algorithm: str | None
    tree: str | None
    depth: int | None
    top_k: int | None
    accepted: int
    batch: int
    engine: str
    phase: Phase
    prompt_len: int | None
    output_format: OutputFormat
    trace: Path | None
    routing: str | None
    dump_graph: bool

    def __post_init__(self) -> None:
        """Refuse flags the phase does not take, in the order the command always did."""
        if self.dump_graph and self.output_format is not OutputFormat.table:
            raise InputError("--format", self.output_format.value,
                             "table with --dump-graph (the graph dump is text)")
        if self.phase is Phase.prefill:
            decode_only = {
                "--dump-graph": (self.dump_graph, True),
                "--accepted": (self.accepted != 1, self.accepted),
                "--routing": (self.routing is not None, self.routing),
                "--batch": (self.batch != 1, self.batch),
                "--tree": (self.tree is not None, self.tree),
                "--depth": (self.depth is not None, self.depth),
                "--top-k": (self.top_k is not None, self.top_k)}
            for flag, (given, value) in decode_only.items():
                if given:
                    raise InputError(flag, value, "only with --phase decode")
            return
        if self.prompt_len is not None:
            raise InputError("--prompt-len", self.prompt_len, "only with --phase prefill")
        if self.context is None:
            raise InputError("--context", None,
                             "required with --phase decode (cached tokens L >= 1)")


def _decode(f: SimulateFlags) -> tuple[PointResult, str, str] | None:
    """A decode point: its verify pass (and draft phase) timed, the trace written; None
    when --dump-graph printed the graphs instead."""
    if f.trace is not None:
        check_output_path(f.trace, "--trace")
    b = board_from(f.board, f.fpga, f.design)
    m = with_routing(load_model(f.model), f.routing)
    algo = load_algorithm(f.algorithm) if f.algorithm else None
    check_drafter(b, algo)
    point = _point(f, b, m, algo)
    if f.dump_graph:
        print_graphs(point)
        return None
    context, verify_len, draft_tree, accepted, batch = (
        point.context, point.verify_len, point.tree, point.accepted, point.batch)
    eng = get_engine(f.engine)
    if algo is not None and isinstance(eng, CycleEngine):  # the tree's mask, before any work
        check_mask_tokens(verify_len, b, "tree" if f.tree is not None else "verify_len",
                          f.tree if f.tree is not None else verify_len)
    if f.trace is not None:
        if not hasattr(eng, "trace_events"):
            raise InputError("--trace", str(f.trace), "needs --engine event or fast")
        # the trace's size, before any work
        eng.check_timeline(step_passes(verify_len, context, algo, draft_tree, accepted).verify,
                           b, m)
    result = point_result(eng, point)
    drafter = algo.drafter if algo is not None else None
    warn_after_output(fit_warnings(b, m, [(context, verify_len, drafter, batch)]))
    if f.trace is not None:
        # the verify pass that was timed, tree mask included
        spec = step_passes(verify_len, context, algo, draft_tree, accepted, batch).verify
        events = eng.trace_events(spec, b, m)
        atomic_write_bytes(f.trace, json_text(events, compact=True).encode())
        result.row["trace_file"] = str(f.trace)
    label = f"{b.name} / {m.id} / L={context} / x={verify_len}"
    return result, label + (f" / batch {batch}" if batch > 1 else ""), "verify"


def _point(f: SimulateFlags, b, m, algo: Algorithm | None) -> Point:
    """The decode point the flags name: the draft tree and x checked against each other."""
    if algo is None and f.accepted != 1:
        raise InputError("--accepted", f.accepted, "only with --algorithm (the draft phase)")
    if algo is None and (f.tree or f.depth or f.top_k):
        raise InputError("--tree/--depth/--top-k", f.tree or f.depth or f.top_k,
                         "only with --algorithm")
    draft_tree = build_tree(algo, f.tree, f.depth, f.top_k) if algo else None
    verify_len = f.verify_len
    if algo is not None:
        given = f.tree is not None or f.depth is not None or f.top_k is not None
        verify_len = tree_verify_len(algo, draft_tree, verify_len, given)
    elif verify_len is None:
        verify_len = 1
    return Point(b, m, f.context, verify_len, algo, draft_tree, f.accepted, f.batch)


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



def _show(result: PointResult, title: str, pass_name: str, output_format: OutputFormat) -> None:
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


def _prefill(f: SimulateFlags) -> tuple[PointResult, str, str]:
    """--phase prefill: time the prompt's prefill pass."""
    for flag, value, unset in (
        ("--context", f.context, None),
        ("--verify-len", f.verify_len, None),
        ("--algorithm", f.algorithm, None),
        ("--trace", f.trace, None),
    ):
        if value != unset:
            raise InputError(flag, str(value), "only with --phase decode")
    if f.prompt_len is None:
        raise InputError("--prompt-len", None, "required with --phase prefill (prompt tokens >= 1)")
    b = board_from(f.board, f.fpga, f.design)
    m = load_model(f.model)
    eng = get_engine(f.engine)
    result = prefill_result(eng, b, m, f.prompt_len)
    aligned = result.row["prompt_len_aligned"]
    warn_after_output(fit_warnings(b, m, [(aligned, 0, None, 1)]))
    return result, f"{b.name} / {m.id} / prefill P={f.prompt_len} (aligned {aligned})", "prefill"
