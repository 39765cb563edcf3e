"""The study lowering: a pass's graph to an instruction `Program` (tiling, durations, waits).

Registered as `lowering: study` in `lowerings.registry`, beside FlightLLM's compiler.

All modelling choices of the cycle-level engines live in this package; the engines only
execute the rows. One file per op family, each small enough to read at once:

  machine.py      the board in bytes and cycles (channel rates, MPE modes, SFU)
  plan.py         Plan/Step: an op's streamed loads, operand load and compute steps
  linear.py       linears and the LM head (weight tiles)
  attention.py    QK^T, softmax, PV (KV chunks, tree-mask tile skipping)
  elementwise.py  norms and other SFU-only ops
  emit.py         plans -> instruction rows (waits, buffer space), on dataflow/emitter.py
  fragments.py    each op's rows emitted once and relocated into every program using them

Realistic mode (board.overlap == "realistic"):
- weights, K/V and PV's probabilities stream through bounded buffers (linear.py,
  attention.py); a load takes its buffer space when it starts and the MPE tile that
  consumes it frees it;
- MPE tiles run in MV mode for one token (mv_macs_per_cycle) and in MM mode otherwise, with
  tokens padded to padding.mm_token_multiple and matrix dimensions rounded up to the PE array
  (a few tokens run as repeated MV passes when that is cheaper than one padded MM tile);
- the SFU runs norms, softmax and element-wise ops (MISC), one per op or per weight tile;
- an op's operand load waits for the stores of the ops producing its inputs, as the pass's
  `Graph` says (`Graph.direct_producers`); softmax waits for its scores' last MPE tile;
- loads run in order on the LD unit and stores on the ST unit, each at its channel group's
  rate (`Board.group_bytes_per_cycle`); loads never wait for stores.

Ideal mode (the analytic engine's assumptions): the same loads and stores, no waits at all
(not even a tile on its own load: with in-order queues any wait makes the pass the sum of
local maxima instead of the max of the sums), unbounded buffers, no SFU work, no padding or
array rounding, MV at the full array rate.
"""

from __future__ import annotations

from fpgasim.config.schema import Board, DrafterSchema, TargetModel
from fpgasim.dataflow.drafters import lower_pass
from fpgasim.dataflow.graph import Graph
from fpgasim.dataflow.instructions import Program
from fpgasim.dataflow.lowerings.study.attention import TreeMask, plan_pv, plan_qk, plan_softmax
from fpgasim.dataflow.lowerings.study.elementwise import plan_elementwise
from fpgasim.dataflow.lowerings.study.fragments import (
    Assembler,
    Entry,
    entries_of,
    op_key,
    store_plan,
)
from fpgasim.dataflow.lowerings.study.linear import plan_linear
from fpgasim.dataflow.lowerings.study.machine import Machine
from fpgasim.dataflow.lowerings.study.plan import Plan
from fpgasim.dataflow.ops import Op, PassOps
from fpgasim.dataflow.passes import PassSpec

__all__ = ["Machine", "lower", "lower_ops"]


def _plan(
    mach: Machine,
    model: TargetModel,
    mask: TreeMask,
    op: Op,
    index: int,
    scores: Plan | None,
) -> Plan:
    """The plan of one op by its kind; `scores` is softmax's QK^T plan."""
    if op.kind in ("linear", "lm_head"):
        return plan_linear(mach, op, index)
    if op.kind == "attn_qk":
        return plan_qk(mach, model, mask, op, index)
    if op.kind == "attn_pv":
        return plan_pv(mach, model, mask, op, index)
    if op.kind == "softmax":
        return plan_softmax(mach, op, index, scores)
    return plan_elementwise(mach, op, index)


def lower_ops(
    pass_ops: PassOps,
    board: Board,
    model: TargetModel,
    tree_parents: tuple[int, ...] | None = None,
    label: str = "",
    mask_block: int = 1,
) -> Program:
    """The template program of a pass: head, min(layers, 2) layer blocks, tail.

    Ops are emitted in graph order; an op whose loads cannot be prefetched (norms, softmax,
    PV) is emitted after the prefetch of the next op that streams, so that loads overlap.
    """
    mach = Machine.of(board)
    graph = pass_ops.graph
    flat = pass_ops.template_ops()
    if len(flat) != len(graph.nodes):
        raise AssertionError(f"graph {graph.name}: {len(graph.nodes)} nodes for {len(flat)} ops")
    entries = entries_of(mach)
    low = Assembler(mach)
    mask = TreeMask(tree_parents, mask_block, mach.ideal)
    # what an attention plan reads besides its op: head geometry and the tree mask
    mask_key = None if (tree_parents is None or mach.ideal) else (tree_parents, mask_block)
    attention_key = (model.head_dim, model.kv_heads, mask_key)
    placed: dict[int, Entry] = {}
    attention: dict[tuple, Entry] = {}  # this pass's attention plans (see fragments)
    blocks = pass_ops.template_blocks
    regions: list[tuple[int, tuple[Op, ...]]] = [(-1, pass_ops.head)]
    regions += [(k, pass_ops.layer) for k in range(blocks)]
    regions.append((blocks, pass_ops.tail))
    bounds = [0]
    pos = 0
    for layer, ops in regions:
        low.layer = layer
        # ops whose emission waits for the next op that can prefetch: ops without streamed
        # loads (norms, softmax) and ops whose streamed loads wait for inputs (PV)
        deferred: list[int] = []
        for op in ops:
            key = op_key(op)
            scores = None
            cache = entries
            if op.kind in ("attn_qk", "attn_pv"):
                key += attention_key
                cache = attention
            elif op.kind == "softmax":
                scores = next(
                    (placed[p].plan for p in graph.producers(pos) if flat[p].kind == "attn_qk"),
                    None,
                )
                key += (None,) if scores is None else (scores.cached_keys, scores.tree_visible)
                cache = attention
            entry = cache.get(key)
            if entry is None:
                plan = _plan(mach, model, mask, op, pos, scores)
                entry = store_plan(cache, key, plan, shared=cache is entries)
            placed[pos] = entry
            pos += 1
            if not entry.prefetches:
                deferred.append(pos - 1)
                continue
            streams = low.prefetch(entry, pos - 1)
            for d in deferred:
                low.body(placed[d], d, _inputs(low, placed[d].plan, d, graph), [])
            deferred = []
            low.body(entry, pos - 1, _inputs(low, entry.plan, pos - 1, graph), streams)
        for d in deferred:
            low.body(placed[d], d, _inputs(low, placed[d].plan, d, graph), [])
        bounds.append(low.count)
    instrs = low.rows()
    head_len = bounds[1]
    layer_len = bounds[2] - bounds[1] if blocks else 0
    if blocks == 2 and bounds[3] - bounds[2] != layer_len:
        raise AssertionError("layer blocks of the template differ in length")
    instrs.flags.writeable = False
    buffers = (-1, -1) if mach.ideal else (mach.weight_buffer_bytes, mach.act_buffer_bytes)
    return Program(
        instrs=instrs,
        op_names=tuple(op.name for op in flat),
        head_len=head_len,
        layer_len=layer_len,
        layers=blocks,
        total_layers=pass_ops.layers,
        buffer_bytes=buffers,
        clock_hz=board.clock_hz,
        ideal=mach.ideal,
        label=label,
    )


def _inputs(low: Assembler, plan: Plan, index: int, graph: Graph) -> tuple[int, ...]:
    """Rows the op's first instructions wait for (none in ideal mode).

    The rows that publish the outputs of the op's direct producers in the graph; softmax
    waits for the last MPE tile of its scores instead (the scores' store runs beside it).
    """
    if low.mach.ideal:
        return ()
    producers = graph.direct_producers(index)
    if plan.op.kind == "softmax":
        return tuple(low.last_mpe[p] for p in producers if low.last_mpe.get(p, -1) >= 0)
    return tuple(low.done[p] for p in producers if low.done.get(p, -1) >= 0)


def lower(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> Program:
    """The study's template program of a pass (see `instructions.window` for the layers).

    A buffer too small for some tile raises `BufferTooSmall`; `lowerings.registry.lower` reports it.
    """
    ops = lower_pass(spec, board, model, drafter)
    label = f"{board.name} {model.id} {spec.kind} n={spec.tokens} L={spec.context}"
    return lower_ops(ops, board, model, spec.tree_parents, label, spec.mask_block)
