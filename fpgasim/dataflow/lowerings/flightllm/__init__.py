"""FlightLLM's compiler, generalised: the lowering of every board (`Board.lowering` is
"flightllm"; results name it `lowering: flightllm`).

`lower` builds FlightLLM's LLaMA graph for the pass (graph.py), fuses it into hardware
layers (layers.py), compiles each barrier-delimited part once (compiler.py) and returns the
pass as an `Executable`: the parts in program order, on FlightLLM's six units with their
roles. Registered as "flightllm" in `fpgasim.dataflow.lowerings.registry`. See
docs/validation.md, "FlightLLM".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from fpgasim.bounded import BoundedCache, bounded_cache, memoised
from fpgasim.config.board import Board
from fpgasim.config.schema import DrafterSchema, TargetModel, model_source, refuse_architecture
from fpgasim.dataflow.drafters import DRAFTERS, DrafterKind, DraftNetwork, draft_network
from fpgasim.dataflow.instructions import Executable, Program
from fpgasim.dataflow.lowerings.flightllm.compiler import (
    MV_FORM,
    TICKS_PER_CYCLE,
    UNIT_NAMES,
    UNIT_ROLES,
    FormCost,
    PartRows,
    Rates,
    compile_part,
    emission_key,
    form_cost,
    has_choice,
    mm_form_compute_cycles,
    part_rows,
)
from fpgasim.dataflow.lowerings.flightllm.drafts import (
    BLOCKS,
    DraftKeys,
    check_vocab,
    decode_keys,
    draft_graph,
    draft_keys,
    draft_label,
)
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    check_cluster,
    cluster_layers,
    lower_pipelined,
)
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams, build_graph
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer, hardware_layers
from fpgasim.dataflow.lowerings.flightllm.masks import MaskSet, mask_set
from fpgasim.dataflow.lowerings.flightllm.masks import load as load_masks
from fpgasim.dataflow.lowerings.flightllm.moe import moe_hardware_layers
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

__all__ = [
    "BLOCKS", "fixed_floor_cycles", "fixed_shape", "lower", "lower_fixed", "pass_shape",
    "hardware_layers_of",
    "prefill_chunk_tokens",
    "TICKS_PER_CYCLE", "UNIT_NAMES",
]

#: the largest tick count a part may reach (int64 with headroom)
MAX_PART_TICKS = 1 << 62


def _check_model(model: TargetModel, block: int) -> None:
    """The model's sizes in whole blocks; an error names the model's file and the key it
    writes (`hidden_size` in a Hugging Face config); a GPT-2 model is refused (FlightLLM's
    graph is Llama's)."""
    refuse_architecture(model, "FlightLLM's lowering", ("llama",))
    source = model_source(model)
    for name in ("hidden", "intermediate", "head_dim", "vocab"):
        value = getattr(model, name)
        if value % block:
            raise ConfigError(source, model.key_of(name), value,
                              f"a multiple of {block} (FlightLLM's blocks)")


def prefill_chunk_tokens(board: Board) -> int:
    """The longest prefill run as one pass by FlightLLM's published rules (§4.5): the keys
    one attention tile holds (`GraphParams.key_tile`); a longer prompt runs in chunks of it,
    each a causal pass over the chunk's rows (simulate.prefill_specs)."""
    return GraphParams.of(board).key_tile


def pass_shape(spec: PassSpec, board: Board) -> tuple[str, int, int]:
    """(phase, rows, context) of a pass after the board's alignment: decode T, prefill L.

    Decode with T tokens is PassSpec(tokens=1, context=T-1); T is padded to
    padding.decode_multiple. x > 1 new tokens (a verify pass, a prefill chunk) take MV row
    groups or MM tiles over T = context + x keys (an extension: FlightLLM's model decodes one
    token). Prefill over P tokens is PassSpec(tokens=P, context=0, phase="prefill"); P is
    padded to padding.prefill_multiple and at most `prefill_chunk_tokens`.
    """
    if spec.kind != "target":
        raise InputError("pass", spec.kind, "FlightLLM's lowering runs the target model only")
    if spec.phase == "prefill":
        if spec.batch > 1:
            raise InputError("batch", spec.batch, "1 for a prefill pass (a batch's prompts are "
                             "prefilled one after another: simulate.prefill_specs)")
        if spec.context:
            raise InputError("context", spec.context, "0 for a prefill pass")
        mult = board.padding.prefill_multiple
        rows = math.ceil(spec.tokens / mult) * mult
        limit = prefill_chunk_tokens(board)
        if rows > limit:
            raise InputError("prompt_len", spec.tokens,
                             f"at most {limit} tokens in one prefill pass (longer prompts run "
                             "in chunks: simulate.prefill_specs)")
        return "prefill", rows, rows
    return "decode", spec.tokens, decode_keys(spec.tokens, spec.context, board)


@memoised("flightllm.hardware_layers", owner="fpgasim.dataflow.lowerings.flightllm",
          keys="model, graph parameters, phase, rows, context, requests", budget=64,
          why="a pass shape's fused hardware layers, asked by every pass of that shape "
          "(the graph is built and fused once)")
def hardware_layers_of(model: TargetModel, params: GraphParams, phase: str, rows: int,
                       context: int, requests: int = 1) -> tuple:
    """The hardware layers of one pass shape, in program order.

    The graph is built with one decoder layer (plus the final norm and LM head) and its
    decoder-layer hardware layers are repeated `model.layers` times (the same objects,
    named after layer 0), each prefill attention layer with its own mask index: every
    decoder layer of the graph is identical but for names and that index
    (`test_one_layer_graph_matches_the_full_graph` checks it).
    """
    if model.moe is not None:  # routed experts: each layer its own (moe.py)
        return moe_hardware_layers(model, params, phase, rows, context, requests)
    graph = build_graph(model, params, rows, context, phase, layers=1, requests=requests)
    hw = hardware_layers(graph, prefill=phase == "prefill")
    per = [x for x in hw if x.name.startswith("l0.")]
    tail = hw[len(per):]
    out = []
    for layer in range(model.layers):
        for x in per:
            if x.mask_layer >= 0:
                name = f"l{layer}." + x.name.removeprefix("l0.")
                x = replace(x, name=name, mask_layer=layer)
            out.append(x)
    return tuple(out + list(tail))


#: compiled parts kept across passes, up to this many rows in all (about 70 bytes each,
#: least recently used out): sweeps over contexts or verify lengths reuse the projections.
#: It holds the projections of x = 1..85 and the draft passes that a `generate` P = 128,
#: D = 512 meets at every context (5.0M rows)
PART_CACHE_ROWS = 6_000_000
#: the same parts' link-free rows (about 130 bytes a row, with their totals' row indices):
#: a design-space sweep over clocks and bandwidths compiles each instruction stream once and
#: prices it per board (the sweep runs the boards that share their instructions together)
ROWS_CACHE_ROWS = 2_000_000
#: link-free rows of parts that depend on the context (attention): met again only by the
#: next designs of a sweep that differ in clock or bandwidth
PASS_ROWS_CACHE_ROWS = 1_000_000
#: compiled parts that depend on the context, up to this many rows in all (least recently
#: used out): a long context's attention tiles over the keys, and every full tile of every
#: context of a verify length compiles to the same part (at L = 16,384 on V80, 19 parts
#: per pass, 6 of them distinct; the passes of one x run side by side in a prefetch)
CONTEXT_PART_ROWS = 500_000
#: form summaries kept (a few hundred bytes each)
FORM_COSTS = 200_000


class _PartCache:
    """Compiled parts by (layer keys, rates, masks), under each group's own names
    (`_named`); their link-free rows by (each layer's `emission_key` in its form, link-free
    rates, masks, forms) and each layer's form summaries likewise, so another clock or
    bandwidth only prices the rows again (bit-identical to compiling them), and parts whose
    rows are the same under other names or row counts (a draft pass's layers, verify
    attention in MM tiles, the full key tiles of a long context) are compiled once."""

    def __init__(self) -> None:
        self.parts: BoundedCache[Program] = bounded_cache(
            "flightllm.parts", owner="fpgasim.dataflow.lowerings.flightllm", unit="rows",
            keys="layer keys, rates, masks", budget=PART_CACHE_ROWS,
            size_of=lambda p: len(p.instrs),
            why="the projections of every x recur at every context: LongSpec's `generate` "
            "with P = 128, D = 512 meets 5.0M rows of them; with a 4M-row budget it "
            "recompiled them at every context (66 s of CPU for that `generate`, 24 s with "
            "room for all)")
        self.link_free: BoundedCache[PartRows] = bounded_cache(
            "flightllm.link_free", owner="fpgasim.dataflow.lowerings.flightllm", unit="rows",
            keys="each layer's emission key, link-free rates, masks, forms",
            budget=ROWS_CACHE_ROWS, size_of=lambda p: len(p.rows),
            why="designs that differ only in clock or bandwidth share their instructions "
            "(docs/flightllm-sd.md, \"Speed\"): pricing rows again costs a copy and one "
            "vectorised formula, compiling them an emission and a token resolution")
        self.per_pass: BoundedCache[PartRows] = bounded_cache(
            "flightllm.per_pass", owner="fpgasim.dataflow.lowerings.flightllm", unit="rows",
            keys="as `flightllm.link_free`, for the parts that depend on the context",
            budget=PASS_ROWS_CACHE_ROWS, size_of=lambda p: len(p.rows),
            why="the attention parts' link-free rows, met again only by the next designs of "
            "a sweep that differ in clock or bandwidth")
        self.context_parts: BoundedCache[Program] = bounded_cache(
            "flightllm.context_parts", owner="fpgasim.dataflow.lowerings.flightllm",
            unit="rows", keys="layer keys, rates, masks (attention, concat)",
            budget=CONTEXT_PART_ROWS, size_of=lambda p: len(p.instrs),
            why="the full key tiles of a long context are one part, met several times a "
            "pass and at every longer context of the same x: `reproduce all` compiled "
            "20,310 parts for its 2,951 passes without it, 8,648 with it")
        self.costs: BoundedCache[FormCost] = bounded_cache(
            "flightllm.form_costs", owner="fpgasim.dataflow.lowerings.flightllm",
            keys="a layer's emission key in one form, link-free rates, masks, form",
            budget=FORM_COSTS,
            why="the MV-or-MM choice of a layer needs both forms' busiest unit; a summary "
            "is a 6 x 3 array")

    def __call__(self, group: _Group, rates: Rates, masks: MaskSet | None) -> Program:
        free = rates.link_free
        keep = self.per_pass if group.per_pass else self.link_free
        layers = list(group.layers)

        def rows_of(layers, rates, masks, forms, emitted=None) -> PartRows:
            keys = tuple(emission_key(L, f, free) for L, f in zip(layers, forms, strict=True))
            return keep((keys, free, masks, forms),
                        lambda: part_rows(layers, rates, masks, forms, emitted))

        def cost_of(L, rates, masks, form) -> FormCost:
            fresh = []  # a summary made now keeps its rows for this part (not in the cache)

            def make() -> FormCost:
                fresh.append(form_cost(L, rates, masks, form))
                return replace(fresh[0], chunks=())

            kept = self.costs((emission_key(L, form, free), free, masks, form), make)
            return fresh[0] if fresh else kept

        def compiled() -> Program:
            return compile_part(layers, rates, masks, list(group.names), rows_of, cost_of)

        # attention and concat depend on the context: kept briefly, apart from the projections
        parts = self.context_parts if group.per_pass else self.parts
        return _named(parts((group.keys[0], rates, masks), compiled), group.names)


def _named(part: Program, names: tuple[str, ...]) -> Program:
    """The compiled part under these op names (a name is cosmetic: traces and messages show
    it, nothing matches on it): the same rows and derived results, relabelled."""
    if part.op_names == names:
        return part
    renamed = replace(part, op_names=names, label=" + ".join(names))
    object.__setattr__(renamed, "derived", part.derived)  # from the rows alone: shared
    return renamed


_part = _PartCache()
#: layer kinds whose instructions depend on the context: their priced parts are not kept
#: across passes (a sweep over x or contexts meets each once), leaving room to the
#: projections; their link-free rows are, briefly (`PASS_ROWS_CACHE_ROWS`)
_CONTEXT_KINDS = frozenset({"attention_qk", "attention_pv", "concat"})


def _short(name: str) -> str:
    """The op name without its decoder-layer prefix (cosmetic: names are never matched)."""
    head, _, rest = name.partition(".")
    return rest if head.startswith("l") and head[1:].isdigit() and rest else name


def lower(spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Executable:
    """FlightLLM's instruction stream of one pass, as barrier-delimited parts (a target pass
    on a pipeline of stages: its micro-batches' stages, timed by their schedule)."""
    if drafter is None and spec.kind == "target" and board.cluster.pp_stages > 1:
        return lower_pipelined(spec, board, model)
    return _segments(*_layers(spec, board, model, drafter), board)


def lower_fixed(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> Executable | None:
    """The parts of a decode or verify pass's `lower(...)` that do not depend on its context
    (every part but attention and concat: projections, norms, FFN, LM head), each as often
    as in the pass; None for prefill and draft passes (no bound). The pass takes at least
    their time (docs/engines.md, "Lower bounds").

    They are built once per row count and reused at every context: `build_graph` hands the
    context only to concat and attention, the layer kinds left out, so the other layers,
    their barrier runs and how often each runs are the same at any context (tested part
    for part against the pass's own at many contexts)."""
    if drafter is not None or spec.kind != "target" or spec.phase == "prefill":
        return None
    if board.cluster.micro_batches_of(spec.batch) > 1:  # stages overlap: no sum bounds it
        return None
    rates = _checked(board, model)
    _, rows, _ = pass_shape(spec, board)  # the pass's own checks (e.g. its context fits)
    # the recipe beside the rates: two designs alike in rates but not in, e.g., a
    # projection's sparsity compile different parts
    # the cluster too: a card's share of a pass is not the whole card's (rates omit it)
    return _FIXED_PARTS((rates, GraphParams.of(board), model, board.cluster, *fixed_shape(spec)),
                        lambda: _fixed_parts(spec, board, model, f"rows={rows * spec.batch}"))


#: the floor's allowance for the engines' tick rounding (each duration rounds to 2**-24 of a
#: cycle, rows of at least one cycle: a relative error far below this)
FLOOR_SLACK = 1e-6


def fixed_floor_cycles(spec: PassSpec, board: Board, model: TargetModel) -> float | None:
    """Cycles the pass's `lower_fixed` parts take at least, from sizes alone (no part
    compiled): per projection the less of its MV form's floor (its row groups, identical,
    each at least one row group's busiest unit) and its MM form's (`mm_form_compute_cycles`);
    norms and element-wise layers 0. Each part runs after the one before (a barrier
    between them) and takes at least its busiest unit's sum, so the sum over the pass's
    parts bounds the pass; a first, cheap filter before `lower_fixed`'s tighter bound
    (docs/engines.md, "Lower bounds"). None where `lower_fixed` gives none."""
    if spec.kind != "target" or spec.phase == "prefill":
        return None
    if board.cluster.micro_batches_of(spec.batch) > 1:  # stages overlap: no sum bounds it
        return None
    hw, rates, _, _ = _layers(spec, board, model)
    groups, order = _plan(hw)
    floors = [0.0 if g.per_pass else sum(_layer_floor(L, rates) for L in g.layers)
              for g in groups]
    return sum(floors[k] for k in order) * (1 - FLOOR_SLACK)


def _layer_floor(L: HwLayer, rates: Rates) -> float:
    """A linear layer's floor (`fixed_floor_cycles`); 0 for every other kind."""
    if L.kind != "linear":
        return 0.0
    lanes = rates.mv_start_rows
    groups = L.tokens // lanes
    mv = _one_group_busiest(replace(L, rows=lanes), rates) * groups if groups else 0.0
    if not has_choice(L):
        return mv
    return min(mv, mm_form_compute_cycles(L, rates.link_free))


@memoised("flightllm.one_group_busiest", owner="fpgasim.dataflow.lowerings.flightllm",
          keys="hardware layer, rates", budget=4096,
          why="a floor of a pass sums one MV row group's busiest unit per layer; the same "
          "layers recur at every context")
def _one_group_busiest(L: HwLayer, rates: Rates) -> float:
    """The busiest unit's summed durations of one MV row group of L, less its error bound."""
    cost = form_cost(L, rates.link_free, None, MV_FORM)
    busiest, err = cost.busiest_unit_cycles(rates)
    return busiest * (1 - err)


def fixed_shape(spec: PassSpec) -> tuple:
    """What `lower_fixed`'s parts depend on: the pass's kind and phase and the rows its
    projections see (tokens x batch), not its context, tree or how its rows split into
    requests (the parts hold no attention)."""
    return (spec.kind, spec.phase, spec.tokens * spec.batch)


#: `lower_fixed`'s executables by (rates, recipe, model, rows), up to as many rows in all
#: as the part cache holds (least recently used out; their parts are mostly the part cache's own
#: objects): `generate`'s x = 1..85 hold 4.2M rows
_FIXED_PARTS: BoundedCache[Executable | None] = bounded_cache(
    "flightllm.fixed_parts", owner="fpgasim.dataflow.lowerings.flightllm", unit="rows",
    keys="rates, graph parameters (the recipe), model, cluster, pass kind, phase, rows",
    budget=PART_CACHE_ROWS,
    size_of=lambda ex: 0 if ex is None else sum(len(p.instrs) for p in ex.parts),
    why="what a pass's lower bound sums (`flightllm.lower_fixed`; x = 1..85 hold 4.2M rows); "
    "rebuilding the pass's graph and plan at every context to find them cost 2.5 s of CPU "
    "for the 2,688 bounds of LongSpec's `generate` on `flightllm-vhk158`, 1.16 s "
    "with them kept")


def _fixed_parts(spec: PassSpec, board: Board, model: TargetModel, label: str) -> Executable | None:
    """The parts of `lower(spec, ...)` whose group does not depend on the context."""
    hw, rates, masks, _ = _layers(spec, board, model)
    groups, order = _plan(hw)
    kept = [k for k, group in enumerate(groups) if not group.per_pass]
    if not kept:
        return None
    renumber = {k: j for j, k in enumerate(kept)}
    fixed = tuple(groups[k] for k in kept), tuple(renumber[k] for k in order if k in renumber)
    return _parts(*fixed, rates, masks, f"{board.name} {model.id} fixed parts {label}", board)


def _checked(board: Board, model: TargetModel) -> Rates:
    """The board's rates, after checking that the compiler can tile the model."""
    block = board.compiler.block
    _check_model(model, block)
    if board.padding.prefill_multiple % board.fit.mm_rows:
        raise ConfigError(f"board {board.name}", "design.padding.prefill_multiple",
                          board.padding.prefill_multiple,
                          f"a multiple of the MM array's {board.fit.mm_rows} rows")
    return _rates(board)


@memoised("flightllm.rates", owner="fpgasim.dataflow.lowerings.flightllm", keys="board", budget=256,
          why="every lowered pass prices its rows at its board's rates")
def _rates(board: Board) -> Rates:
    """The board's rates (clock, link, unit parameters) as the compiler prices rows."""
    return Rates.of(board)


def _layers(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> tuple[tuple[HwLayer, ...], Rates, MaskSet | None, str]:
    """(hardware layers, rates, masks, label) of one pass, its inputs checked."""
    rates = _checked(board, model)
    params = GraphParams.of(board)
    if drafter is not None or spec.kind != "target":
        hw, label = _draft_layers(spec, board, model, drafter, params)
        return hw, rates, None, f"{board.name} {model.id} flightllm {label}"
    phase, rows, context = pass_shape(spec, board)
    masks = None
    if phase == "prefill":
        masks = prefill_masks(board, model, context)
    hw = hardware_layers_of(model, params, phase, rows, context, spec.batch)
    label = f"{board.name} {model.id} flightllm {phase} rows={rows} T={context}"
    if not board.cluster.is_single:  # one card's share and its collectives (cluster.py)
        check_cluster(board, model)
        hw = cluster_layers(hw, board, rates.act_bytes)
        label += f" cards={board.cluster.cards}"
    if spec.batch > 1:
        label += f" batch={spec.batch}"
    return hw, rates, masks, label


def prefill_masks(board: Board, model: TargetModel, tokens: int) -> MaskSet:
    """The recipe's block-sparse prefill masks where its table fits the model and covers the
    prompt (FlightLLM's are LLaMA2-7B's: 32 layers of 32 heads, 2,048 tokens), else the
    dense causal mask (`prefill_mask_used` names which: docs/models.md, "Recipes")."""
    block = board.compiler.mask_block
    return mask_set(prefill_mask_used(board, model, tokens), model.heads, tokens // block, block,
                    board.fit.mm_rows // block)


def prefill_mask_used(board: Board, model: TargetModel, tokens: int) -> str:
    """The name of the prefill mask a prompt of `tokens` (padded) tokens runs with."""
    name = board.recipe.prefill_mask
    if name == "causal":
        return name
    table = load_masks(name)
    block = board.compiler.mask_block
    fits = (table.block_tokens == block and table.heads == model.heads
            and len(table.layers) in (1, model.layers)
            and tokens // block <= table.layers[0].rows()
            and board.fit.mm_rows == 2 * block)  # its V sums are per two mask rows
    return name if fits else "causal"


def _draft_layers(spec: PassSpec, board: Board, model: TargetModel, drafter,
                  params: GraphParams) -> tuple:
    """Hardware layers and label of one draft pass: its drafter's network (drafts.py)."""
    if getattr(drafter, "kind", None) != spec.kind or DrafterKind(spec.kind) not in DRAFTERS:
        raise InputError("algorithm", spec.kind, "a drafter of the pass's kind (registered)")
    network = draft_network(spec, drafter)
    unknown = [type(block).__name__ for block in network.blocks() if type(block) not in BLOCKS]
    if unknown:
        raise InputError("algorithm", spec.kind, f"a drafter without {', '.join(unknown)} "
                         "blocks (FlightLLM's lowering has no layers for them)")
    check_vocab(network, model, board)
    keys = draft_keys(network, spec.context, board)
    label = draft_label(network, keys) + (f" batch={spec.batch}" if spec.batch > 1 else "")
    return draft_layers_of(model, params, network, keys, spec.batch), label


@memoised("flightllm.draft_layers", owner="fpgasim.dataflow.lowerings.flightllm",
          keys="model, graph parameters, the drafter's network and keys, requests",
          budget=192, why="a draft pass shape's fused hardware layers (64 shapes per "
          "shipped drafter), asked by every draft pass of that shape")
def draft_layers_of(model: TargetModel, params: GraphParams, network: DraftNetwork,
                    keys: DraftKeys, requests: int = 1) -> tuple:
    """Hardware layers of one draft pass: its network's graph fused (with `requests` a
    batch's size, docs/batching.md)."""
    return tuple(hardware_layers(draft_graph(model, params, network, keys, requests),
                                 prefill=False))


@dataclass(frozen=True)
class _Group:
    """One barrier-delimited part of a pass: its layers, what identifies its instructions
    (layer keys and short names) and whether it depends on the context."""

    layers: tuple[HwLayer, ...]
    keys: tuple
    names: tuple[str, ...]
    per_pass: bool  # attention or concat: met once in a sweep, so not kept across passes


#: the grouping of recent hardware-layer tuples (by identity; the tuples come from the
#: memoised `*_layers_of`), so a pass of a shape seen before is not regrouped
_PLANS: BoundedCache[tuple[tuple, tuple[tuple[_Group, ...], tuple[int, ...]]]] = bounded_cache(
    "flightllm.plans", owner="fpgasim.dataflow.lowerings.flightllm",
    keys="a hardware-layer tuple's identity (held)", budget=256,
    why="a pass of a shape seen before is not grouped into parts again")


def _plan(hw: tuple) -> tuple[tuple[_Group, ...], tuple[int, ...]]:
    """The distinct parts of a pass (first occurrence order) and the order they run in."""
    # keyed by identity: the entry holds `hw`, so no other tuple has its id while it is kept
    return _PLANS(id(hw), lambda: (hw, _periodic_plan(hw) or _group(hw)))[1]


def _periodic_plan(hw: tuple) -> tuple[tuple[_Group, ...], tuple[int, ...]] | None:
    """The plan of a pass whose decoder layers are the same objects repeated (see
    `hardware_layers_of`): one decoder layer and the tail grouped, the order repeated;
    None for any other pass."""
    try:
        period = hw.index(hw[0], 1)
    except ValueError:
        return None
    repeats = 1
    while hw[repeats * period:(repeats + 1) * period] == hw[:period]:  # identity first
        repeats += 1
    if repeats < 2 or hw[period - 1].kind == "concat":
        return None
    head = hw[:period]
    if any(x is not y for x, y in zip(hw[period:repeats * period], head * (repeats - 1),
                                         strict=True)):
        return None  # equal but distinct objects: group generically
    groups, order = _group(head + hw[repeats * period:])
    runs = sum(1 for x in head if x.kind != "concat")  # the period's runs
    return groups, order[:runs] * repeats + order[runs:]


def _group(hw: tuple) -> tuple[tuple[_Group, ...], tuple[int, ...]]:
    """Barrier-delimited runs of layers, the distinct ones as groups, and their order."""
    runs: list[list[HwLayer]] = []
    current: list[HwLayer] = []
    for layer in hw:
        current.append(layer)
        if layer.kind != "concat":  # every layer but concat ends in a full barrier
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    groups: list[_Group] = []
    index: dict[tuple, int] = {}
    same_objects: dict[tuple[int, ...], int] = {}  # decoder layers repeat the same objects
    order: list[int] = []
    for run in runs:
        ids = tuple(map(id, run))
        k = same_objects.get(ids)
        if k is None:
            names = tuple(_short(layer.name) for layer in run)
            keys = (tuple(layer.key() for layer in run), names)
            k = index.get(keys)
            if k is None:
                k = index[keys] = len(groups)
                per_pass = any(layer.kind in _CONTEXT_KINDS for layer in run)
                groups.append(_Group(tuple(run), keys, names, per_pass))
            same_objects[ids] = k
        order.append(k)
    return tuple(groups), tuple(order)


def _segments(hw, rates: Rates, masks, label: str, board: Board) -> Executable:
    """Hardware layers -> barrier-delimited parts (each distinct part compiled once)."""
    return _parts(*_plan(hw), rates, masks, label, board)


def _parts(
    groups: tuple[_Group, ...], order: tuple[int, ...], rates: Rates, masks, label: str,
    board: Board,
) -> Executable:
    """The executable of planned parts: each group compiled (or found compiled), in order."""
    parts: list[Program] = []
    for group in groups:
        part = _part(group, rates, masks)
        if part.derived.too_slow is None:
            # summed as floats: an int64 sum of many long rows could wrap
            part.derived.too_slow = float(part.instrs["cycles"].sum(dtype=np.float64)) >= (
                MAX_PART_TICKS)
        if part.derived.too_slow:
            raise ConfigError(f"board {board.name}", "memory.bandwidth_gb_s",
                              board.memory.bandwidth_gb_s,
                              "too slow: a layer would exceed the simulator's time range")
        parts.append(part)
    return Executable(parts=tuple(parts), order=order, label=label, unit_roles=UNIT_ROLES)
