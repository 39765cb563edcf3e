"""FlightLLM's lowering of one pass (docs/flightllm-model.md): the pass's hardware layers
(`pass_layers`: the target's graph fused, or a drafter's network; a cluster card's share),
cut into parts (part_plan.py), each compiled once (part_store.py, compiler.py), returned as
an `Executable`; and the lower bounds of a pass from its context-free parts
(`lower_fixed`) or from sizes alone (`fixed_floor_cycles`), docs/engines.md "Lower
bounds"."""

from __future__ import annotations

from dataclasses import replace

from fpgasim.bounded import memoised
from fpgasim.config.board import Board
from fpgasim.config.schema import DrafterSchema, TargetModel
from fpgasim.dataflow.drafters import DRAFTERS, DrafterKind, DraftNetwork, draft_network
from fpgasim.dataflow.drafters.network import missing_blocks
from fpgasim.dataflow.instructions import Executable, Program
from fpgasim.dataflow.lowerings.flightllm.compiler import (
    MV_FORM,
    UNIT_ROLES,
    Rates,
    form_cost,
    has_choice,
    mm_form_compute_cycles,
)
from fpgasim.dataflow.lowerings.flightllm.drafts import (
    BLOCKS,
    DraftKeys,
    check_vocab,
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
from fpgasim.dataflow.lowerings.flightllm.masks import MaskSet
from fpgasim.dataflow.lowerings.flightllm.moe import moe_hardware_layers
from fpgasim.dataflow.lowerings.flightllm.part_plan import PartGroup, plan
from fpgasim.dataflow.lowerings.flightllm.part_store import PARTS
from fpgasim.dataflow.lowerings.flightllm.pass_shapes import (
    checked_rates,
    pass_shape,
    prefill_masks,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

_OWNER = "fpgasim.dataflow.lowerings.flightllm.flightllm_lowering"


def lower(spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Executable:
    """FlightLLM's instruction stream of one pass, as barrier-delimited parts (a target pass
    on a pipeline of stages: its micro-batches' stages, timed by their schedule)."""
    if drafter is None and spec.kind == "target" and board.cluster.pp_stages > 1:
        return lower_pipelined(spec, board, model)
    hw, rates, masks, label = pass_layers(spec, board, model, drafter)
    return compiled_parts(*plan(hw), rates, masks, label, board)


@memoised("flightllm.hardware_layers", owner=_OWNER,
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


def lower_fixed(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> Executable | None:
    """The parts of a decode or verify pass's `lower(...)` that do not depend on its context
    (every part but attention and concat: projections, norms, FFN, LM head), each as often
    as in the pass; None for prefill and draft passes (no bound). The pass takes at least
    their time (docs/engines.md, "Lower bounds").

    They depend on the row count, not the context (the pass service keeps one bound per
    shape, `fixed_shape`): `build_graph` hands the context only to concat and attention,
    the layer kinds left out, so the other layers, their barrier runs and how often each
    runs are the same at any context (tested part for part against the pass's own at many
    contexts)."""
    if drafter is not None or spec.kind != "target" or spec.phase == "prefill":
        return None
    if board.cluster.micro_batches_of(spec.batch) > 1:  # stages overlap: no sum bounds it
        return None
    checked_rates(board, model)  # the model's and board's checks first, as `lower`'s
    _, rows, _ = pass_shape(spec, board)  # the pass's own checks (e.g. its context fits)
    # not cached here: the pass service keeps each bound by its shape (`step.bounds`,
    # `fixed_shape`), and a cache of these executables hit 2 of 44 asks with no measurable
    # gain (docs/scaling.md, "Hit rates, measured"); their parts are the part store's
    return _fixed_parts(spec, board, model, f"rows={rows * spec.batch}")


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
    hw, rates, _, _ = pass_layers(spec, board, model)
    groups, order = plan(hw)
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


@memoised("flightllm.one_group_busiest", owner=_OWNER,
          keys="hardware layer, rates", budget=4096,
          why="a floor of a pass sums one MV row group's busiest unit per layer; the same "
          "layers recur at every context")
def _one_group_busiest(L: HwLayer, rates: Rates) -> float:
    """The busiest unit's summed durations of one MV row group of L, less its error bound."""
    cost = form_cost(L, rates.link_free, None, MV_FORM)
    busiest, err = cost.busiest_unit_cycles(rates)
    return busiest * (1 - err)


def _fixed_parts(spec: PassSpec, board: Board, model: TargetModel, label: str) -> Executable | None:
    """The parts of `lower(spec, ...)` whose group does not depend on the context."""
    hw, rates, masks, _ = pass_layers(spec, board, model)
    groups, order = plan(hw)
    kept = [k for k, group in enumerate(groups) if not group.per_pass]
    if not kept:
        return None
    renumber = {k: j for j, k in enumerate(kept)}
    fixed = tuple(groups[k] for k in kept), tuple(renumber[k] for k in order if k in renumber)
    return compiled_parts(*fixed, rates, masks, f"{board.name} {model.id} fixed parts {label}",
                          board)


def pass_layers(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> tuple[tuple[HwLayer, ...], Rates, MaskSet | None, str]:
    """(hardware layers, rates, masks, label) of one pass, its inputs checked."""
    rates = checked_rates(board, model)
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


def _draft_layers(spec: PassSpec, board: Board, model: TargetModel, drafter,
                  params: GraphParams) -> tuple:
    """Hardware layers and label of one draft pass: its drafter's network (drafts.py)."""
    if getattr(drafter, "kind", None) != spec.kind or DrafterKind(spec.kind) not in DRAFTERS:
        raise InputError("algorithm", spec.kind, "a drafter of the pass's kind (registered)")
    network = draft_network(spec, drafter)
    unknown = missing_blocks(BLOCKS, network.blocks())
    if unknown:
        raise InputError("algorithm", spec.kind, f"a drafter without {', '.join(unknown)} "
                         "blocks (FlightLLM's lowering has no layers for them)")
    check_vocab(network, model, board)
    keys = draft_keys(network, spec.context, board)
    label = draft_label(network, keys) + (f" batch={spec.batch}" if spec.batch > 1 else "")
    return draft_layers_of(model, params, network, keys, spec.batch), label


@memoised("flightllm.draft_layers", owner=_OWNER,
          keys="model, graph parameters, the drafter's network and keys, requests",
          budget=192, why="a draft pass shape's fused hardware layers (64 shapes per "
          "shipped drafter), asked by every draft pass of that shape")
def draft_layers_of(model: TargetModel, params: GraphParams, network: DraftNetwork,
                    keys: DraftKeys, requests: int = 1) -> tuple:
    """Hardware layers of one draft pass: its network's graph fused (with `requests` a
    batch's size, docs/batching.md)."""
    return tuple(hardware_layers(draft_graph(model, params, network, keys, requests),
                                 prefill=False))


def compiled_parts(
    groups: tuple[PartGroup, ...], order: tuple[int, ...], rates: Rates, masks, label: str,
    board: Board,
) -> Executable:
    """The executable of planned parts: each group compiled (or found compiled), in order;
    a part whose durations sum past the simulator's range (`ProgramFacts.too_slow`) is
    refused, naming the bandwidth that made it so."""
    parts: list[Program] = []
    for group in groups:
        part = PARTS(group, rates, masks)
        if part.facts.too_slow:
            raise ConfigError(f"board {board.name}", "memory.bandwidth_gb_s",
                              board.memory.bandwidth_gb_s,
                              "too slow: a layer would exceed the simulator's time range")
        parts.append(part)
    return Executable(parts=tuple(parts), order=order, label=label, unit_roles=UNIT_ROLES)
