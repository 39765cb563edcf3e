"""Attention: QK^T, softmax and PV over the KV cache and the pass's tree block.

Cached K/V (and PV's probabilities) stream in key chunks sized to activation_kib /
prefetch_depth; a chunk takes its buffer space when its load starts and the MPE tile that
consumes it frees it. The tree part (the pass's own tokens) runs as one tile step; with a
tree mask (the causal tree mask, or Falcon's relaxed mask with PassSpec.mask_block = k)
the (query block x key block) tiles the mask hides entirely are skipped, unless the dense
formula is cheaper (few tokens run as MV passes). Softmax exponentiates only the scores
that were computed.
"""

from __future__ import annotations

import numpy as np

from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.instructions import BUF_ACT, TRAFFIC_KV
from fpgasim.dataflow.lowerings.study.elementwise import plan_elementwise
from fpgasim.dataflow.lowerings.study.machine import Machine, ceil_div, nbytes_of
from fpgasim.dataflow.lowerings.study.plan import Plan, Step
from fpgasim.dataflow.ops import Op
from fpgasim.dataflow.treemask import tile_visibility, visibility, visible_tile_elements

#: visibility matrices by (parents, block), read-only: one tree is lowered at many contexts
_VISIBILITY: dict[tuple[tuple[int, ...], int], np.ndarray] = {}
#: trees kept before the memo is emptied (results never depend on it)
_MAX_TREES = 1024


class TreeMask:
    """The pass's tree (parent per token) and mask block; None parents = dense attention."""

    def __init__(self, parents: tuple[int, ...] | None, block: int, ideal: bool) -> None:
        self.parents = parents
        self.block = block
        self.ideal = ideal
        self._vis: np.ndarray | None = None

    def visibility(self, n: int) -> np.ndarray | None:
        """n x n visibility of the pass's tree tokens, or None (dense, or ideal mode)."""
        if self.parents is None or self.ideal:
            return None
        if len(self.parents) != n:
            raise ValueError(
                f"tree_parents has {len(self.parents)} entries but the pass has {n} tokens"
            )
        if self._vis is None:
            key = (self.parents, self.block)
            vis = _VISIBILITY.get(key)
            if vis is None:
                if len(_VISIBILITY) >= _MAX_TREES:
                    _VISIBILITY.clear()
                vis = _VISIBILITY[key] = visibility(self.parents, self.block)
                vis.flags.writeable = False
            self._vis = vis
        return self._vis


def _chunks(
    m: Machine, keys: int, per_key_bytes: int, align: int, what: str, share: float = 1.0
) -> list[int]:
    slot = int(m.act_buffer_bytes // m.depth * share)
    per = slot // per_key_bytes
    if per < 1:
        raise BufferTooSmall(
            "buffers.activation_kib",
            m.act_buffer_bytes // 1024,
            f"the activation buffer slot ({slot} bytes per prefetch slot) must hold one "
            f"key of {what} ({per_key_bytes} bytes); raise buffers.activation_kib or "
            "lower buffers.prefetch_depth",
        )
    if per >= align:
        per = per // align * align
    return [min(per, keys - c) for c in range(0, keys, per)]


def _tree_cycles(
    m: Machine, mask: TreeMask, n: int, tree: int, k_dim_block: int, per_tile: int, dense: int
) -> int | None:
    """Cycles of the tree part with masked tiles skipped, or None for the dense formula.

    None also when the dense formula (`dense` cycles, e.g. n MV passes) is not dearer:
    a compiler skips tiles only when that saves cycles, so a mask never costs more.
    """
    vis = mask.visibility(n)
    if vis is None or tree != n or n == 1:
        return None
    tiles = tile_visibility(vis, m.pad, k_dim_block)
    masked = int(tiles.sum()) * m.pad * per_tile
    return masked if masked < dense else None


def plan_qk(m: Machine, md: TargetModel, mask: TreeMask, op: Op, index: int) -> Plan:
    """QK^T: cached keys stream in chunks through the activation buffer; the tree block last."""
    n, heads, hd = op.tokens, op.heads, md.head_dim
    kv = md.kv_heads * hd
    cached = op.kv_elems // kv
    tree = op.keys - cached
    chunks = _chunks(m, cached, nbytes_of(kv, m.kv_bits), m.cols, f"op {op.name!r}")
    plan = Plan(op, index, stream_traffic=TRAFFIC_KV, stream_buffer=BUF_ACT)
    plan.operand_bytes = nbytes_of(op.act_elems, m.act_bits)
    plan.tree_keys, plan.cached_keys = tree, cached
    for c in chunks:
        chunk = plan.add_stream(nbytes_of(kv * c, m.kv_bits))
        plan.steps.append(
            Step(
                mpe_cycles=m.mpe_cycles(n, hd, c, heads),
                macs=n * c * heads * hd,
                streams=(chunk,),
                store_bytes=nbytes_of(n * c * heads, m.act_bits),
            )
        )
    if tree > 0:
        per_tile = heads * ceil_div(hd, m.rows)
        dense = m.mpe_cycles(n, hd, tree, heads)
        cycles = _tree_cycles(m, mask, n, tree, m.cols, per_tile, dense)
        vis = mask.visibility(n)
        if cycles is None:
            cycles = dense
            plan.tree_visible = n * tree
        else:
            plan.tree_visible = visible_tile_elements(vis, m.pad, m.cols)
        plan.steps.append(
            Step(
                mpe_cycles=cycles,
                macs=n * tree * heads * hd,
                store_bytes=nbytes_of(n * tree * heads, m.act_bits),
            )
        )
    return plan


def plan_softmax(m: Machine, op: Op, index: int, qk: Plan | None) -> Plan:
    """Softmax over the scores QK^T computed (masked tiles skipped are not exponentiated)."""
    plan = plan_elementwise(m, op, index)
    if qk is not None and not m.ideal:
        passes = op.sfu_elems // (op.tokens * op.keys * op.heads)
        computed = op.tokens * qk.cached_keys + qk.tree_visible
        plan.steps[0].sfu_elements = computed * op.heads * passes
    return plan


def plan_pv(m: Machine, md: TargetModel, mask: TreeMask, op: Op, index: int) -> Plan:
    """PV: V chunks run `depth` ahead of the probability chunks, which wait for softmax."""
    n, heads, hd = op.tokens, op.heads, md.head_dim
    kv = md.kv_heads * hd
    cached = op.kv_elems // kv
    tree = op.keys - cached
    per_key = nbytes_of(kv, m.kv_bits) + nbytes_of(n * heads, m.act_bits)
    # V runs `depth` chunks ahead of P: depth+1 (V, P) pairs must fit in depth slots so
    # that loads keep overlapping the tiles (double buffering)
    share = m.depth / (m.depth + 1)
    chunks = _chunks(m, cached, per_key, m.rows, f"op {op.name!r}", share)
    plan = Plan(op, index, stream_traffic=TRAFFIC_KV, stream_buffer=BUF_ACT)
    streamed_probs = n * cached * heads
    plan.operand_bytes = nbytes_of(op.act_elems - streamed_probs, m.act_bits)
    plan.tree_keys, plan.cached_keys = tree, cached
    # V chunks run `depth` chunks ahead of the probability chunks, which wait for softmax
    v_rows: list[int] = []
    p_rows: list[int] = []
    lead = min(m.depth, len(chunks))
    for c in chunks[:lead]:
        v_rows.append(plan.add_stream(nbytes_of(kv * c, m.kv_bits)))
    for k, c in enumerate(chunks):
        p_rows.append(plan.add_stream(nbytes_of(n * c * heads, m.act_bits), waits=True))
        if k + lead < len(chunks):
            v_rows.append(plan.add_stream(nbytes_of(kv * chunks[k + lead], m.kv_bits)))
    for k, c in enumerate(chunks):
        plan.steps.append(
            Step(
                mpe_cycles=m.mpe_cycles(n, c, hd, heads),
                macs=n * c * heads * hd,
                streams=(v_rows[k], p_rows[k]),
                needs_operand=False,
            )
        )
    if tree > 0:
        per_tile = heads * ceil_div(hd, m.cols)
        dense = m.mpe_cycles(n, tree, hd, heads)
        cycles = _tree_cycles(m, mask, n, tree, m.rows, per_tile, dense)
        if cycles is None:
            cycles = dense
        plan.steps.append(Step(mpe_cycles=cycles, macs=n * tree * heads * hd))
    plan.steps[-1].needs_operand = True
    plan.steps[-1].store_bytes = nbytes_of(op.store_elems, m.act_bits)
    return plan
