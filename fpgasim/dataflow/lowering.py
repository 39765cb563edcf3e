"""Lowering of a pass's ops to an instruction `Program`: tiling, durations, dependencies.

All modelling choices of the cycle-level engines live here; the engines only execute the
rows. Durations are fixed at lowering: bytes / channel-group rate, MACs / MPE rate, element
passes / SFU rate. See docs/engines.md.

Realistic mode (board.overlap == "realistic"):
- weights stream in tiles of whole output columns (or, if a slot holds fewer than the PE
  columns, of PE-columns x part of the rows) sized to weight_kib / prefetch_depth; cached
  K/V (and PV's probabilities) stream in key chunks sized to activation_kib / prefetch_depth;
  a load takes its buffer space when it starts and the MPE tile that consumes it frees it;
- MPE tiles run in MV mode for one token (mv_macs_per_cycle) and in MM mode otherwise, with
  tokens padded to padding.decode_multiple and matrix dimensions rounded up to the PE array
  (a few tokens run as repeated MV passes when that is cheaper than one padded MM tile);
- the SFU runs norms, softmax and element-wise ops (MISC), one per op or per weight tile;
- an op's operand load waits for the stores of the ops producing its inputs (q/k/v wait
  for the norm, QK^T for q and k, softmax for QK^T's tiles, PV for softmax and v, ...);
- each channel group has a load port and a store port (loads never wait for stores);
- tree attention skips (query block x key block) tiles that the tree mask hides entirely
  (the causal tree mask, or Falcon's relaxed mask with PassSpec.mask_block = k), unless
  the dense formula is cheaper (few tokens run as MV passes);

Ideal mode (the analytic engine's assumptions): the same loads and stores, no waits at all
(not even a tile on its own load: with in-order queues any wait makes the pass the sum of
local maxima instead of the max of the sums), unbounded buffers, no SFU work, no padding or
array rounding, MV at the full array rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fpgasim.config.schema import Board, TargetModel
from fpgasim.dataflow.instructions import (
    BUF_ACT,
    BUF_WEIGHT,
    GROUP_ACT,
    GROUP_WEIGHT,
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MISC,
    MM,
    MV,
    PORT_ACT_LOAD,
    PORT_ACT_STORE,
    PORT_WEIGHT_LOAD,
    ST,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    UNIT_LD,
    UNIT_MPE,
    UNIT_SFU,
    UNIT_ST,
    Program,
    Segments,
)
from fpgasim.dataflow.ops import Op, PassOps
from fpgasim.dataflow.passes import PassSpec, lower_pass
from fpgasim.dataflow.treemask import tile_visibility, visibility, visible_tile_elements
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class Machine:
    """What the lowering needs from a board, in bytes and cycles."""

    ideal: bool
    weight_bytes_per_cycle: float  # weight loads (weight group)
    load_bytes_per_cycle: float  # activation/KV loads (activation group)
    store_bytes_per_cycle: float  # stores (activation group)
    rows: int
    cols: int
    mv_macs_per_cycle: int
    pad: int
    reuse: int
    sfu_elements_per_cycle: int
    depth: int
    weight_bits: int
    act_bits: int
    kv_bits: int
    weight_buffer_bytes: int
    act_buffer_bytes: int

    @classmethod
    def of(cls, board: Board) -> Machine:
        bpc = board.bytes_per_cycle
        mem = board.memory
        wg, ag = mem.weight_group, mem.activation_group
        return cls(
            ideal=board.overlap == "ideal",
            weight_bytes_per_cycle=bpc * wg.channels / mem.channels * wg.load_efficiency,
            load_bytes_per_cycle=bpc * ag.channels / mem.channels * ag.load_efficiency,
            store_bytes_per_cycle=bpc * ag.channels / mem.channels * ag.store_efficiency,
            rows=board.pe_array.rows,
            cols=board.pe_array.cols,
            mv_macs_per_cycle=board.mv_macs_per_cycle,
            pad=board.padding.decode_multiple,
            reuse=board.weight_reuse_tokens,
            sfu_elements_per_cycle=board.sfu.elements_per_cycle,
            depth=board.buffers.prefetch_depth,
            weight_bits=board.precision.weight_bits,
            act_bits=board.precision.activation_bits,
            kv_bits=board.precision.kv_bits,
            weight_buffer_bytes=board.buffers.weight_kib * 1024,
            act_buffer_bytes=board.buffers.activation_kib * 1024,
        )

    @property
    def macs_per_cycle(self) -> int:
        return self.rows * self.cols

    def padded(self, n: int) -> int:
        return -(-n // self.pad) * self.pad

    def mpe_cycles(self, n: int, k_dim: int, out_dim: int, heads: int = 1, factor: int = 1) -> int:
        """Cycles of n tokens x (k_dim -> out_dim) per head on the cheaper MPE mode.

        MV mode runs one token at a time at mv_macs_per_cycle (the weight tile stays on chip);
        MM mode pads the tokens to padding.decode_multiple and rounds the matrix up to the PE
        array. One token always uses MV (as FlightLLM); a few tokens use n MV passes when that
        beats one padded MM tile, as a compiler for this ISA would schedule them.
        """
        macs = n * k_dim * out_dim * heads * factor
        if self.ideal:
            return _ceil_div(macs, self.macs_per_cycle)
        mv_cycles = _ceil_div(macs, self.mv_macs_per_cycle)
        if n == 1:
            return mv_cycles
        tiles = _ceil_div(k_dim, self.rows) * _ceil_div(out_dim, self.cols)
        return min(mv_cycles, self.padded(n) * heads * tiles * factor)

    def is_mv(self, macs: int, cycles: int) -> bool:
        """Whether an MPE tile of `macs` taking `cycles` ran in MV mode (see mpe_cycles)."""
        return not self.ideal and macs > 0 and cycles == _ceil_div(macs, self.mv_macs_per_cycle)

    def sfu_cycles(self, elements: int) -> int:
        return _ceil_div(elements, self.sfu_elements_per_cycle)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _bytes(elements: int, bits: int) -> int:
    return (elements * bits + 7) // 8


def _xfer_cycles(nbytes: int, rate: float) -> int:
    return max(1, math.ceil(nbytes / rate))


def _split(total: int, weights: list[int]) -> list[int]:
    """Integer parts of `total` proportional to `weights`, summing exactly to `total`."""
    whole = sum(weights)
    out, acc, prev = [], 0, 0
    for w in weights:
        acc += w
        cut = total * acc // whole
        out.append(cut - prev)
        prev = cut
    return out


def _token_blocks(n: int, reads: int, reuse: int) -> list[int]:
    """Tokens served by each of the `reads` weight passes: `reuse` each, the rest last."""
    per = max(reuse, -(-n // reads))
    blocks = [min(per, n - b * per) for b in range(reads)]
    if min(blocks) < 1:  # more weight passes than the tokens fill: spread them evenly
        blocks = _split(n, [1] * reads)
    return blocks


# --------------------------------------------------------------------------- op plans


@dataclass
class Step:
    """One compute step of an op: an MPE tile, then SFU work, then a store, in that order."""

    mpe_cycles: int = 0
    macs: int = 0
    streams: tuple[int, ...] = ()  # the op's streamed loads this tile consumes (and frees)
    needs_operand: bool = True
    sfu_elements: int = 0
    store_bytes: int = 0


@dataclass
class Plan:
    """How one op becomes instructions: streamed loads, one operand load, compute steps.

    Streamed loads go through a bounded buffer in `stream_bytes` order; the first
    `prefetch_depth` of them may be issued early (before the operand load and the loads of
    preceding ops that wait for inputs). `stream_waits[k]` marks loads that wait for the
    op's producers (PV's probabilities wait for softmax).
    """

    op: Op
    index: int
    stream_bytes: list[int] = field(default_factory=list)
    stream_waits: list[bool] = field(default_factory=list)
    stream_traffic: int = TRAFFIC_WEIGHT
    stream_buffer: int = BUF_WEIGHT
    operand_bytes: int = 0
    steps: list[Step] = field(default_factory=list)
    tree_visible: int = 0  # attention: computed tree score elements per head (realistic)
    tree_keys: int = 0
    cached_keys: int = 0

    def add_stream(self, nbytes: int, waits: bool = False) -> int:
        self.stream_bytes.append(nbytes)
        self.stream_waits.append(waits)
        return len(self.stream_bytes) - 1

    @property
    def waits_for_inputs(self) -> bool:
        """Some streamed load waits for a producer: the op's loads cannot be hoisted."""
        return any(self.stream_waits)


class _Lowering:
    """Builds the rows of a program; one instance per lowering call."""

    def __init__(
        self,
        mach: Machine,
        model: TargetModel,
        parents: tuple[int, ...] | None,
        mask_block: int = 1,
    ):
        self.mach = mach
        self.model = model
        self.parents = parents
        self.mask_block = mask_block
        self.rows: list[tuple] = []
        self.layer = -1
        self.done: dict[int, int] = {}  # op position -> row that publishes its output
        self.last_mpe: dict[int, int] = {}
        self.plans: dict[int, Plan] = {}
        self._vis: np.ndarray | None = None

    # ---------------------------------------------------------------- rows

    def emit(
        self,
        opcode: int,
        unit: int,
        op: int,
        cycles: int,
        *,
        nbytes: int = 0,
        work: int = 0,
        traffic: int = TRAFFIC_NONE,
        group: int = -1,
        chan: int = -1,
        acq: tuple[int, int] = (-1, 0),
        rel: tuple[int, int] = (-1, 0),
        wait: tuple[int, ...] = (),
    ) -> int:
        # ideal mode is the analytic's perfect overlap: no row waits for another
        waits = () if self.mach.ideal else tuple(w for w in wait if w >= 0)
        if len(waits) > MAX_WAIT:
            raise ValueError(f"an instruction waits on {len(waits)} > {MAX_WAIT} rows")
        if cycles < 1:
            raise ValueError(f"instruction of op {op} has {cycles} cycles; every row needs >= 1")
        waits = waits + (-1,) * (MAX_WAIT - len(waits))
        self.rows.append(
            (opcode, unit, op, self.layer, cycles, nbytes, work, traffic, group, chan)
            + (acq[0], acq[1], rel[0], rel[1], waits)
        )
        return len(self.rows) - 1

    def load(self, op: int, nbytes: int, traffic: int, buf: int, wait: tuple[int, ...]) -> int:
        m = self.mach
        weight = traffic == TRAFFIC_WEIGHT
        rate = m.weight_bytes_per_cycle if weight else m.load_bytes_per_cycle
        group = GROUP_WEIGHT if weight else GROUP_ACT
        acq = (buf, nbytes) if (buf >= 0 and not m.ideal) else (-1, 0)
        return self.emit(
            LD,
            UNIT_LD,
            op,
            _xfer_cycles(nbytes, rate),
            nbytes=nbytes,
            traffic=traffic,
            group=group,
            chan=PORT_WEIGHT_LOAD if weight else PORT_ACT_LOAD,
            acq=acq,
            wait=wait,
        )

    def store(self, op: int, nbytes: int, wait: tuple[int, ...]) -> int:
        m = self.mach
        return self.emit(
            ST,
            UNIT_ST,
            op,
            _xfer_cycles(nbytes, m.store_bytes_per_cycle),
            nbytes=nbytes,
            traffic=TRAFFIC_STORE,
            group=GROUP_ACT,
            chan=PORT_ACT_STORE,
            wait=wait,
        )

    # ---------------------------------------------------------------- plans

    def tree_vis(self, n: int) -> np.ndarray | None:
        if self.parents is None or self.mach.ideal:
            return None
        if len(self.parents) != n:
            raise ValueError(
                f"tree_parents has {len(self.parents)} entries but the pass has {n} tokens"
            )
        if self._vis is None:
            self._vis = visibility(self.parents, self.mask_block)
        return self._vis

    def plan(self, op: Op, index: int) -> Plan:
        kind = op.kind
        if kind in ("linear", "lm_head"):
            return self.plan_linear(op, index)
        if kind == "attn_qk":
            return self.plan_qk(op, index)
        if kind == "attn_pv":
            return self.plan_pv(op, index)
        if op.weight_elems or op.kv_elems or op.macs:
            raise ValueError(f"no instruction lowering for op {op.name!r} of kind {kind!r}")
        # norm, softmax, silu_mul: an operand load (if any), SFU work, a store (if any)
        plan = Plan(op, index, operand_bytes=_bytes(op.act_elems, self.mach.act_bits))
        plan.steps.append(
            Step(
                sfu_elements=op.sfu_elems,
                store_bytes=_bytes(op.store_elems, self.mach.act_bits),
                needs_operand=op.act_elems > 0,
            )
        )
        return plan

    def plan_linear(self, op: Op, index: int) -> Plan:
        m = self.mach
        n, d_in, d_out = op.tokens, op.in_dim, op.out_dim
        reads = op.weight_elems // (d_in * d_out)
        factor = op.macs // (n * d_in * d_out)
        if reads * d_in * d_out != op.weight_elems or factor * n * d_in * d_out != op.macs:
            raise ValueError(f"op {op.name!r}: weights/MACs are not whole passes over the matrix")
        slot_elems = (m.weight_buffer_bytes // m.depth) * 8 // m.weight_bits
        cols, rows = slot_elems // d_in, d_in  # tiles of whole columns if C of them fit
        if cols >= m.cols:
            cols = cols // m.cols * m.cols
        else:  # else C columns x part of the rows, partial sums kept on chip
            cols = min(m.cols, d_out)
            rows = slot_elems // cols
            if rows < 1:
                raise BufferTooSmall(
                    "buffers.weight_kib",
                    f"the weight buffer slot ({m.weight_buffer_bytes // m.depth} bytes per "
                    f"prefetch slot) must hold one {cols}-column tile row of op {op.name!r}; "
                    "raise buffers.weight_kib or lower buffers.prefetch_depth",
                )
            rows = min(d_in, rows // m.rows * m.rows if rows >= m.rows else rows)
        cols = min(cols, d_out)
        widths = [min(cols, d_out - c) for c in range(0, d_out, cols)]
        heights = [min(rows, d_in - r) for r in range(0, d_in, rows)]
        blocks = _token_blocks(n, reads, m.reuse)
        plan = Plan(op, index, operand_bytes=_bytes(op.act_elems, m.act_bits))
        shares = [nb * w for nb in blocks for w in widths]
        sfu = _split(op.sfu_elems, shares)
        k = 0
        for nb in blocks:
            for w in widths:
                for r, ht in enumerate(heights):
                    last = r == len(heights) - 1
                    tile = plan.add_stream(_bytes(ht * w, m.weight_bits))
                    plan.steps.append(
                        Step(
                            mpe_cycles=m.mpe_cycles(nb, ht, w, factor=factor),
                            macs=nb * ht * w * factor,
                            streams=(tile,),
                            sfu_elements=sfu[k] if last else 0,
                            store_bytes=_bytes(nb * w, m.act_bits) if last else 0,
                        )
                    )
                k += 1
        return plan

    def _chunks(
        self, keys: int, per_key_bytes: int, align: int, what: str, share: float = 1.0
    ) -> list[int]:
        slot = int(self.mach.act_buffer_bytes // self.mach.depth * share)
        per = slot // per_key_bytes
        if per < 1:
            raise BufferTooSmall(
                "buffers.activation_kib",
                f"the activation buffer slot ({slot} bytes per prefetch slot) must hold one "
                f"key of {what} ({per_key_bytes} bytes); raise buffers.activation_kib or "
                "lower buffers.prefetch_depth",
            )
        if per >= align:
            per = per // align * align
        return [min(per, keys - c) for c in range(0, keys, per)]

    def _tree_cycles(
        self, n: int, tree: int, k_dim_block: int, per_tile: int, dense: int
    ) -> int | None:
        """Cycles of the tree part with masked tiles skipped, or None for the dense formula.

        None also when the dense formula (`dense` cycles, e.g. n MV passes) is not dearer:
        a compiler skips tiles only when that saves cycles, so a mask never costs more.
        """
        vis = self.tree_vis(n)
        if vis is None or tree != n or n == 1:
            return None
        tiles = tile_visibility(vis, self.mach.pad, k_dim_block)
        masked = int(tiles.sum()) * self.mach.pad * per_tile
        return masked if masked < dense else None

    def plan_qk(self, op: Op, index: int) -> Plan:
        m, md = self.mach, self.model
        n, heads, hd = op.tokens, op.heads, md.head_dim
        kv = md.kv_heads * hd
        cached = op.kv_elems // kv
        tree = op.keys - cached
        chunks = self._chunks(cached, _bytes(kv, m.kv_bits), m.cols, f"op {op.name!r}")
        plan = Plan(op, index, stream_traffic=TRAFFIC_KV, stream_buffer=BUF_ACT)
        plan.operand_bytes = _bytes(op.act_elems, m.act_bits)
        plan.tree_keys, plan.cached_keys = tree, cached
        for c in chunks:
            chunk = plan.add_stream(_bytes(kv * c, m.kv_bits))
            plan.steps.append(
                Step(
                    mpe_cycles=m.mpe_cycles(n, hd, c, heads),
                    macs=n * c * heads * hd,
                    streams=(chunk,),
                    store_bytes=_bytes(n * c * heads, m.act_bits),
                )
            )
        if tree > 0:
            per_tile = heads * _ceil_div(hd, m.rows)
            dense = m.mpe_cycles(n, hd, tree, heads)
            cycles = self._tree_cycles(n, tree, m.cols, per_tile, dense)
            vis = self.tree_vis(n)
            if cycles is None:
                cycles = dense
                plan.tree_visible = n * tree
            else:
                plan.tree_visible = visible_tile_elements(vis, m.pad, m.cols)
            plan.steps.append(
                Step(
                    mpe_cycles=cycles,
                    macs=n * tree * heads * hd,
                    store_bytes=_bytes(n * tree * heads, m.act_bits),
                )
            )
        return plan

    def plan_softmax(self, op: Op, index: int, qk: Plan | None) -> Plan:
        plan = self.plan(op, index)
        if qk is not None and not self.mach.ideal:
            passes = op.sfu_elems // (op.tokens * op.keys * op.heads)
            computed = op.tokens * qk.cached_keys + qk.tree_visible
            plan.steps[0].sfu_elements = computed * op.heads * passes
        return plan

    def plan_pv(self, op: Op, index: int) -> Plan:
        m, md = self.mach, self.model
        n, heads, hd = op.tokens, op.heads, md.head_dim
        kv = md.kv_heads * hd
        cached = op.kv_elems // kv
        tree = op.keys - cached
        per_key = _bytes(kv, m.kv_bits) + _bytes(n * heads, m.act_bits)
        # V runs `depth` chunks ahead of P: depth+1 (V, P) pairs must fit in depth slots so
        # that loads keep overlapping the tiles (double buffering)
        share = m.depth / (m.depth + 1)
        chunks = self._chunks(cached, per_key, m.rows, f"op {op.name!r}", share)
        plan = Plan(op, index, stream_traffic=TRAFFIC_KV, stream_buffer=BUF_ACT)
        streamed_probs = n * cached * heads
        plan.operand_bytes = _bytes(op.act_elems - streamed_probs, m.act_bits)
        plan.tree_keys, plan.cached_keys = tree, cached
        # V chunks run `depth` chunks ahead of the probability chunks, which wait for softmax
        v_rows: list[int] = []
        p_rows: list[int] = []
        lead = min(m.depth, len(chunks))
        for c in chunks[:lead]:
            v_rows.append(plan.add_stream(_bytes(kv * c, m.kv_bits)))
        for k, c in enumerate(chunks):
            p_rows.append(plan.add_stream(_bytes(n * c * heads, m.act_bits), waits=True))
            if k + lead < len(chunks):
                v_rows.append(plan.add_stream(_bytes(kv * chunks[k + lead], m.kv_bits)))
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
            per_tile = heads * _ceil_div(hd, m.cols)
            dense = m.mpe_cycles(n, tree, hd, heads)
            cycles = self._tree_cycles(n, tree, m.rows, per_tile, dense)
            if cycles is None:
                cycles = dense
            plan.steps.append(Step(mpe_cycles=cycles, macs=n * tree * heads * hd))
        plan.steps[-1].needs_operand = True
        plan.steps[-1].store_bytes = _bytes(op.store_elems, m.act_bits)
        return plan

    # ---------------------------------------------------------------- emission

    def emit_loads(
        self, plan: Plan, inputs: tuple[int, ...], items: range, rows: list[int]
    ) -> None:
        """Streamed loads `items` of the plan, appended to `rows` (its row per item)."""
        for k in items:
            wait = inputs if plan.stream_waits[k] else ()
            nbytes = plan.stream_bytes[k]
            rows.append(
                self.load(plan.index, nbytes, plan.stream_traffic, plan.stream_buffer, wait)
            )

    def prefetch_count(self, plan: Plan) -> int:
        return 0 if plan.waits_for_inputs else min(self.mach.depth, len(plan.stream_bytes))

    def emit_body(self, plan: Plan, inputs: tuple[int, ...], streams: list[int]) -> None:
        """Operand load, remaining streamed loads, then per step MPE -> SFU -> store."""
        op = plan.index
        m = self.mach
        if plan.waits_for_inputs:  # loads that need no input go ahead of the waiting ones
            lead = plan.stream_waits.index(True)
            self.emit_loads(plan, inputs, range(len(streams), lead), streams)
        operand = -1
        if plan.operand_bytes > 0:
            operand = self.load(op, plan.operand_bytes, TRAFFIC_ACT, -1, inputs)
        self.emit_loads(plan, inputs, range(len(streams), len(plan.stream_bytes)), streams)
        gate = (operand,) if operand >= 0 else inputs
        last_mpe = last_out = -1
        for step in plan.steps:
            prev = gate if (step.needs_operand or operand < 0) else ()
            if step.mpe_cycles > 0:
                wait = prev + tuple(streams[k] for k in step.streams)
                rel = (-1, 0)
                if step.streams and not m.ideal:
                    freed = sum(plan.stream_bytes[k] for k in step.streams)
                    rel = (plan.stream_buffer, freed)
                opcode = MV if m.is_mv(step.macs, step.mpe_cycles) else MM
                last_mpe = self.emit(
                    opcode, UNIT_MPE, op, step.mpe_cycles, work=step.macs, rel=rel, wait=wait
                )
                prev = (last_mpe,)
            if step.sfu_elements > 0 and not m.ideal:
                cycles = m.sfu_cycles(step.sfu_elements)
                prev = (self.emit(MISC, UNIT_SFU, op, cycles, work=step.sfu_elements, wait=prev),)
            if step.store_bytes > 0:
                prev = (self.store(op, step.store_bytes, prev),)
            if prev:
                last_out = prev[0]
        self.done[op] = last_out if last_out >= 0 else (operand if operand >= 0 else -1)
        self.last_mpe[op] = last_mpe


# --------------------------------------------------------------------------- producers


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def producers(ops: list[Op]) -> list[list[int]]:
    """For each op of a flat sequence, the positions of the ops whose outputs it reads."""
    out: list[list[int]] = []
    for i, op in enumerate(ops):
        leaf = _leaf(op.name)
        found: list[int] = []
        if op.kind == "norm" or leaf in ("o", "fc") or op.kind in ("softmax", "lm_head"):
            found = [i - 1] if i > 0 else []
        elif leaf in ("q", "k", "v", "gate", "up"):
            found = _back_to_norm(ops, i, lambda o: o.kind == "norm", stop=False)
        elif leaf == "down":
            found = _back_to_norm(ops, i, lambda o: _leaf(o.name) in ("gate", "up"))
        elif op.kind == "attn_qk":
            found = _back_to_norm(ops, i, lambda o: _leaf(o.name) in ("q", "k"))
        elif op.kind == "attn_pv":
            found = [i - 1] + _back_to_norm(ops, i, lambda o: _leaf(o.name) == "v")
        else:
            found = [i - 1] if i > 0 else []
        out.append(found)
    return out


def _back_to_norm(ops: list[Op], i: int, match, stop: bool = True) -> list[int]:
    """Ops matching `match` between op i and the nearest norm before it (the norm itself if
    `stop` is False and it matches)."""
    found = []
    for j in range(i - 1, -1, -1):
        if match(ops[j]):
            found.append(j)
            if not stop:
                return found
        if ops[j].kind == "norm":
            break
    return found


# --------------------------------------------------------------------------- programs


def lower_ops(
    pass_ops: PassOps,
    board: Board,
    model: TargetModel,
    tree_parents: tuple[int, ...] | None = None,
    label: str = "",
    mask_block: int = 1,
) -> Program:
    """The template program of a pass: head, min(layers, 2) layer blocks, tail."""
    mach = Machine.of(board)
    low = _Lowering(mach, model, tree_parents, mask_block)
    blocks = min(pass_ops.layers, 2)
    regions: list[tuple[int, tuple[Op, ...]]] = [(-1, pass_ops.head)]
    regions += [(k, pass_ops.layer) for k in range(blocks)]
    regions.append((blocks, pass_ops.tail))
    flat = [op for _, ops in regions for op in ops]
    prods = producers(flat)
    bounds = [0]
    pos = 0
    for layer, ops in regions:
        low.layer = layer
        # ops whose emission waits for the next op that can prefetch: ops without streamed
        # loads (norms, softmax) and ops whose streamed loads wait for inputs (PV)
        deferred: list[Plan] = []
        for op in ops:
            qk = low.plans.get(pos - 1) if op.kind == "softmax" else None
            plan = low.plan_softmax(op, pos, qk) if op.kind == "softmax" else low.plan(op, pos)
            low.plans[pos] = plan
            pos += 1
            if not plan.stream_bytes or plan.waits_for_inputs:
                deferred.append(plan)
                continue
            streams: list[int] = []
            low.emit_loads(plan, (), range(low.prefetch_count(plan)), streams)
            for d in deferred:
                low.emit_body(d, _inputs(low, d, prods), [])
            deferred = []
            low.emit_body(plan, _inputs(low, plan, prods), streams)
        for d in deferred:
            low.emit_body(d, _inputs(low, d, prods), [])
        bounds.append(len(low.rows))
    instrs = np.array(low.rows, dtype=INSTR_DTYPE)
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


def _inputs(low: _Lowering, plan: Plan, prods: list[list[int]]) -> tuple[int, ...]:
    """Rows the op's first instructions wait for (none in ideal mode)."""
    if low.mach.ideal:
        return ()
    if plan.op.kind == "softmax":
        return tuple(low.last_mpe[p] for p in prods[plan.index] if low.last_mpe.get(p, -1) >= 0)
    return tuple(low.done[p] for p in prods[plan.index] if low.done.get(p, -1) >= 0)


class BufferTooSmall(Exception):
    """An on-chip buffer of the board cannot hold the smallest tile of some op."""

    def __init__(self, field: str, allowed: str) -> None:
        super().__init__(f"{field}: {allowed}")
        self.field, self.allowed = field, allowed


def lower(
    spec: PassSpec, board: Board, model: TargetModel, drafter=None
) -> Program | Segments:
    """Lower a PassSpec to its template program (see `window` for the layer count)."""
    if board.lowering == "flightllm":
        from fpgasim.dataflow import flightllm

        return flightllm.lower(spec, board, model, drafter)
    ops = lower_pass(spec, board, model, drafter)
    label = f"{board.name} {model.id} {spec.kind} n={spec.tokens} L={spec.context}"
    try:
        return lower_ops(ops, board, model, spec.tree_parents, label, spec.mask_block)
    except BufferTooSmall as exc:
        value = board.buffers.model_dump()[exc.field.split(".")[1]]
        raise ConfigError(f"board {board.name}", exc.field, value, exc.allowed) from None
