"""DFX's core and ring (Hong et al., MICRO 2022), lowered from its design facts: the
lowering of a design with `lowering: dfx` (designs/dfx.yaml; docs/dfx.md has every fact,
choice [A] and its sensitivity).

A pass becomes one `Program` (head: the token's embedding; one block per decoder layer,
Algorithm 1; tail: the final LayerNorm, the LM head and the argmax) on DFX's four units:
DMA (HBM weight and KV loads, KV stores, the DDR embedding row), MPU (MFU + SFU_M: every
`Conv1D`, `MaskedMM` and `MM` as matrix-vector tiles of 64 x 16 FP16), VPU (VFU + SFU_V:
LayerNorm, softmax, residual adds) and ROUTER (the four gathers per layer over the ring,
`board.cluster`). Each card holds 1/N of every weight's columns (heads for attention) and
runs the same program, so one card's program is the cluster's pass.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from fpgasim.bounded import memoised
from fpgasim.config.board import Board
from fpgasim.config.cluster import Cluster
from fpgasim.config.schema import DrafterSchema, TargetModel, model_source, refuse_architecture
from fpgasim.dataflow.instructions import (
    BUF_WEIGHT,
    GROUP_ACT,
    GROUP_WEIGHT,
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MISC,
    MV,
    PORT_ACT_LOAD,
    PORT_ACT_STORE,
    PORT_WEIGHT_LOAD,
    ROLE_COMPUTE,
    ROLE_LOAD,
    ROLE_SFU,
    ROLE_SYNC,
    ST,
    SYS,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    Executable,
    Program,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

__all__ = ["BLOCKS", "PARALLEL", "UNIT_NAMES", "UNIT_ROLES", "DfxRates", "check_split",
           "link_seconds", "lower", "pass_shape"]

#: DFX's units (docs/dfx.md, "Instruction set"): DMA, MPU, VPU, ROUTER, each an in-order queue
UNIT_NAMES = ("DMA", "MPU", "VPU", "ROUTER")
UNIT_ROLES = (ROLE_LOAD, ROLE_COMPUTE, ROLE_SFU, ROLE_SYNC)
U_DMA, U_MPU, U_VPU, U_ROUTER = range(4)
#: DFX lowers no drafter network (it runs GPT-2 text generation, no speculative decoding)
BLOCKS: frozenset[type] = frozenset()

#: how DFX splits a model over cards: intra-layer only (docs/dfx.md; no pipeline)
PARALLEL = ("tp",)
#: MFU tile: d = 64 inputs x l = 16 lanes per cycle (§V-B; docs/dfx.md "MPU")
TILE_IN, TILE_OUT = 64, 16
#: MFU latency 6 + 6 x 11 (multiplier, 6-level adder tree) + 11 (partial-sum add) and SFU_M's
#: about 30 [A]: a dependent consumer waits this long after a matrix instruction's last tile
MPU_DRAIN_CYCLES = 83 + 30
#: VFU width and operator latencies (§V-C): add/sub 11, mul 6, exp 4; SFU_V's accumulation
#: tree 6 x 11 and scalar reciprocals 22 [A] (docs/dfx.md "VPU")
VFU_WIDTH = 64
ADD, MUL, EXP, ACCUM, RECIP = 11, 6, 4, 66, 22
#: LayerNorm: six vector passes (accum, sub, square-accum, x rstd, x gamma, + beta) and the
#: chain of their latencies with the scalar scale and reciprocal square root [A]
NORM_PASSES = 6
NORM_LATENCY = ACCUM + MUL + ADD + (MUL + ACCUM) + MUL + RECIP + MUL + MUL + ADD
#: softmax per query row: sub max, exp, accum, x reciprocal (§IV-C), and its latency chain
SOFTMAX_PASSES = 4
SOFTMAX_LATENCY = ADD + EXP + ACCUM + RECIP + MUL
#: the DMA: 32 x 512 bits per cycle (§V-B): 2,048 B per cycle at the kernel clock
DMA_BYTES_PER_CYCLE = 32 * 64
#: DDR: 38 GB/s (§IV-B), one DMA channel: the embedding rows (WTE, WPE)
DDR_BYTES_PER_S = 38e9
#: Aurora 64B/66B in streaming mode carries 99.8 % of a port's rate (docs/multi-fpga.md)
AURORA_PAYLOAD = 0.998
#: weight tiles one DMA load row carries, and the weight buffer's size in such rows: the
#: operand collector double-buffers (§V-D); the DMA buffer's size is not stated [A]
CHUNK_TILES = 256
BUFFER_CHUNKS = 2
#: vector register file per card (a LaTeX comment of §V-D): 2 banks x 2,048 x 64 FP16; a
#: prompt window's FFN activations (T x 4h / N) must fit it [A] (docs/dfx.md, "Register files")
VECTOR_RF_VALUES = 2 * 2048 * 64
ELEMENT_BYTES = 2  # FP16 everywhere (§IV-B)


@dataclass(frozen=True)
class DfxRates:
    """What one card's rows cost on a board: clock, weight stream, ring links, cluster."""

    clock_hz: float
    weight_bytes_per_cycle: float
    kv_open_cycles: int
    ddr_bytes_per_cycle: float
    link_bytes_per_cycle: float
    hop_cycles: float
    cards: int

    @staticmethod
    def of(board: Board) -> DfxRates:
        """The board's rates: the DMA's width, capped by the HBM's sequential-stream rate
        (AMD's measured efficiency where the part's file gives it; docs/dfx.md "DMA")."""
        clock = board.clock_hz
        mem = board.fpga.memory
        hbm = mem.bandwidth_gb_s * 1e9
        access = getattr(mem, "access", None)
        if access is not None:
            hbm *= access.sequential_efficiency
        open_ns = access.random_transaction_ns if access is not None else 0.0
        cluster = board.cluster
        net = board.fpga.network
        port_b_s = (net.port_gbit_s * 1e9 / 8 if net is not None else 0.0) * AURORA_PAYLOAD
        if cluster.cards > 1 and port_b_s <= 0:
            raise ConfigError(f"board {board.name}", "fpga.network", None,
                              "network ports on the part: DFX's ring links its cards")
        return DfxRates(
            clock_hz=clock,
            weight_bytes_per_cycle=min(DMA_BYTES_PER_CYCLE, hbm / clock),
            kv_open_cycles=math.ceil(open_ns * 1e-9 * clock),
            ddr_bytes_per_cycle=DDR_BYTES_PER_S / clock,
            link_bytes_per_cycle=port_b_s / clock if port_b_s else 1.0,
            hop_cycles=cluster.hop_latency_s * clock,
            cards=cluster.tp_cards,
        )


def _check(board: Board, model: TargetModel, spec: PassSpec) -> None:
    """Refuse what DFX does not run, each in one line naming the input."""
    refuse_architecture(model, "DFX's lowering", ("gpt2",))
    cluster = board.cluster
    if cluster.parallel not in PARALLEL:
        raise ConfigError(f"board {board.name}", "cluster.parallel", cluster.parallel,
                          "tp: DFX splits every layer over its cards (intra-layer), no pipeline")
    n = cluster.cards
    if model.heads % n:
        raise ConfigError(model_source(model), model.key_of("heads"), model.heads,
                          f"a multiple of the {n} cards: DFX splits attention head-wise")
    for name in ("hidden", "intermediate"):
        value = getattr(model, name)
        if value % (n * TILE_OUT):
            raise ConfigError(model_source(model), model.key_of(name), value,
                              f"a multiple of {n * TILE_OUT} ({n} cards x 16-column tiles)")
    if spec.kind != "target":
        raise InputError("pass", spec.kind, "DFX's lowering runs the target model only")
    if spec.batch != 1:
        raise InputError("batch", spec.batch, "1: DFX runs one request at a time (no batching)")
    if spec.phase == "prefill" and spec.context:
        raise InputError("context", spec.context, "0 for a prefill pass")
    rows = spec.tokens
    per_token = 4 * model.hidden // n
    if rows * per_token > VECTOR_RF_VALUES:
        raise InputError("tokens", rows, f"at most {VECTOR_RF_VALUES // per_token} tokens in "
                         f"one pass of {model.id} on {n} card(s): the FFN's activations fill "
                         "the vector register file (docs/dfx.md)")
    keys = spec.context + rows
    if keys > model.window_tokens:
        raise InputError("context", spec.context, f"context + tokens <= {model.window_tokens} "
                         f"({model.id}'s learned positions)")


def check_split(cluster: Cluster, model: TargetModel) -> None:
    """Refuse, naming --cards, a model DFX cannot split over the cluster's cards: head-wise
    attention and 16-column tiles of the hidden and FFN widths (`_check`'s rules, asked
    before any pass; DFX splits the LM head by vocabulary with a ceiling, so any vocab)."""
    n = cluster.cards
    if model.heads % n:
        raise InputError("cards", n, f"a divisor of {model.id}'s heads = {model.heads} (DFX "
                         "splits attention head-wise over its cards)")
    for name in ("hidden", "intermediate"):
        value = getattr(model, name)
        if value % (n * TILE_OUT):
            raise InputError("cards", n, f"a divisor of {model.id}'s {name} = {value} / 16 "
                             "(DFX splits it over its cards in 16-column tiles)")


def pass_shape(spec: PassSpec) -> tuple[str, int, int]:
    """(phase, rows, keys): rows the pass's matrices see, keys its attention reads."""
    return spec.phase, spec.tokens, spec.context + spec.tokens


class _Rows:
    """Rows of one program as they are emitted (each row's waits given as row indices)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.names: dict[str, int] = {}

    def add(self, unit: int, opcode: int, name: str, cycles: float, waits: tuple[int, ...] = (),
            nbytes: int = 0, work: int = 0, traffic: int = TRAFFIC_NONE, group: int = -1,
            chan: int = -1, acq: int = 0, rel: int = 0, layer: int = 0) -> int:
        """Append one row; return its index."""
        waits = tuple(sorted({w for w in waits if w >= 0}))
        if len(waits) > MAX_WAIT:
            raise AssertionError(f"{name}: more than {MAX_WAIT} waits")
        op = self.names.setdefault(name, len(self.names))
        wait = waits + (-1,) * (MAX_WAIT - len(waits))
        self.rows.append((opcode, unit, op, layer, max(1, math.ceil(cycles)), nbytes, work,
                          traffic, group, chan, BUF_WEIGHT if acq else -1, acq,
                          BUF_WEIGHT if rel else -1, rel, wait))
        return len(self.rows) - 1

    @property
    def last(self) -> int:
        """Index of the last row."""
        return len(self.rows) - 1


def _conv1d(r: _Rows, rates: DfxRates, name: str, k: int, n: int, tokens: int,
            waits: tuple[int, ...], layer: int) -> int:
    """One `Conv1D` (or the LM head's `MM`) of a k x n weight slice over `tokens` input
    vectors: its weights streamed by the DMA in chunks into the double buffer, each chunk's
    tiles applied to every token on the MPU (a tile per cycle per token), the last chunk
    carrying the pipeline's drain; returns the last MPU row."""
    tiles = math.ceil(k / TILE_IN) * math.ceil(n / TILE_OUT)
    nbytes = k * n * ELEMENT_BYTES
    chunks = math.ceil(tiles / CHUNK_TILES)
    prev = -1
    for c in range(chunks):
        t = tiles // chunks + (1 if c < tiles % chunks else 0)
        b = nbytes // chunks + (1 if c < nbytes % chunks else 0)
        ld = r.add(U_DMA, LD, f"{name}.ld", b / rates.weight_bytes_per_cycle, nbytes=b,
                   traffic=TRAFFIC_WEIGHT, group=GROUP_WEIGHT, chan=PORT_WEIGHT_LOAD, acq=b,
                   layer=layer)
        drain = MPU_DRAIN_CYCLES if c == chunks - 1 else 0
        work = (k * n * tokens) // chunks + (1 if c < (k * n * tokens) % chunks else 0)
        prev = r.add(U_MPU, MV, f"{name}.mv", t * tokens + drain,
                     (ld, *(waits if c == 0 else ())), work=work, rel=b, layer=layer)
    return prev


def _gather(r: _Rows, rates: DfxRates, name: str, elements: int, tokens: int, after: int,
            layer: int) -> int:
    """One of Algorithm 1's syncs: an all-gather of `elements` per token over the ring, N-1
    steps in one direction, each α + the card's slice over one port (docs/dfx.md, "Router");
    on one card, nothing (returns `after`)."""
    if rates.cards == 1:
        return after
    cycles, _ = _gather_cost(rates, elements, tokens)
    return r.add(U_ROUTER, SYS, name, cycles, (after,), nbytes=0, layer=layer)


def _gather_cost(rates: DfxRates, elements: int, tokens: int) -> tuple[float, float]:
    """(cycles, bytes one port sends) of an all-gather of `elements` per token: N-1 ring
    steps, each α + the card's slice over one port."""
    n = rates.cards
    slice_bytes = elements // n * tokens * ELEMENT_BYTES
    return (n - 1) * (rates.hop_cycles + slice_bytes / rates.link_bytes_per_cycle), \
        (n - 1) * slice_bytes


def link_seconds(spec: PassSpec, board: Board, model: TargetModel) -> tuple[float, float]:
    """(seconds the pass waits on the ring, seconds one port is busy sending) on the board's
    cluster: Algorithm 1's four gathers a layer and the argmax pairs', each on the critical
    path (the next matrix instruction waits for the gathered vector); (0, 0) on one card."""
    if board.cluster.is_single:
        return 0.0, 0.0
    _check(board, model, spec)
    rates = DfxRates.of(board)
    tokens = pass_shape(spec)[1]
    h, f = model.hidden, model.intermediate
    per_layer = [_gather_cost(rates, e, tokens) for e in (h, h, f, h)]
    argmax = _gather_cost(rates, 4 * rates.cards, 1)
    cycles = model.layers * sum(c for c, _ in per_layer) + argmax[0]
    sent = model.layers * sum(b for _, b in per_layer) + argmax[1]
    return cycles / rates.clock_hz, sent / (rates.link_bytes_per_cycle * rates.clock_hz)


def _vector(elements: int) -> int:
    """Cycles of one VFU pass over `elements`."""
    return math.ceil(elements / VFU_WIDTH)


def _layer(r: _Rows, rates: DfxRates, model: TargetModel, tokens: int, keys: int,
           causal_rows: bool, prev: int, layer: int) -> int:
    """One decoder layer (Algorithm 1) on one card; returns its last row."""
    h, n = model.hidden, rates.cards
    heads = model.heads // n
    hd = model.head_dim
    ln1 = r.add(U_VPU, MISC, "ln1", NORM_PASSES * _vector(h) * tokens + NORM_LATENCY, (prev,),
                work=NORM_PASSES * h * tokens, layer=layer)
    qkv = _conv1d(r, rates, "qkv", h, 3 * h // n, tokens, (ln1,), layer)  # V, K, Q in order
    kv_bytes = 2 * tokens * heads * hd * ELEMENT_BYTES
    r.add(U_DMA, ST, "kv.st", kv_bytes / rates.weight_bytes_per_cycle, (qkv,), nbytes=kv_bytes,
          traffic=TRAFFIC_STORE, group=GROUP_ACT, chan=PORT_ACT_STORE, layer=layer)
    # attention over this card's heads, whole-vector dependencies [A]: every head's K
    # block, every head's Query x Key^T (SFU_M masks and takes the row maximum), one
    # softmax pass chain over all heads on the VPU (pipelined: one latency), every head's
    # V block, every head's Score x Value
    past = keys - tokens  # keys already in HBM; this pass's own K and V are on chip
    kv_block = heads * past * hd * ELEMENT_BYTES
    waits: tuple[int, ...] = (qkv,)
    if past:
        kr = r.add(U_DMA, LD, "k.ld", kv_block / rates.weight_bytes_per_cycle
                   + heads * rates.kv_open_cycles, nbytes=kv_block, traffic=TRAFFIC_KV,
                   group=GROUP_ACT, chan=PORT_ACT_LOAD, layer=layer)
        waits = (qkv, kr)
    qk_tiles = heads * math.ceil(keys / TILE_OUT) * math.ceil(hd / TILE_IN)
    qk = r.add(U_MPU, MV, "qk.mv", qk_tiles * tokens + MPU_DRAIN_CYCLES, waits,
               work=heads * keys * hd * tokens, layer=layer)
    sm = r.add(U_VPU, MISC, "softmax",
               SOFTMAX_PASSES * heads * _vector(keys) * tokens + SOFTMAX_LATENCY, (qk,),
               work=SOFTMAX_PASSES * heads * keys * tokens, layer=layer)
    waits = (sm,)
    if past:
        vr = r.add(U_DMA, LD, "v.ld", kv_block / rates.weight_bytes_per_cycle
                   + heads * rates.kv_open_cycles, nbytes=kv_block, traffic=TRAFFIC_KV,
                   group=GROUP_ACT, chan=PORT_ACT_LOAD, layer=layer)
        waits = (sm, vr)
    sv_tiles = heads * math.ceil(keys / TILE_IN) * math.ceil(hd / TILE_OUT)
    sv = r.add(U_MPU, MV, "sv.mv", sv_tiles * tokens + MPU_DRAIN_CYCLES, waits,
               work=heads * keys * hd * tokens, layer=layer)
    del causal_rows  # every query row runs over every key; masked elements are computed
    s4 = _gather(r, rates, "sync.attn", h, tokens, sv, layer)
    wa = _conv1d(r, rates, "attn_proj", h, h // n, tokens, (s4,), layer)
    s5 = _gather(r, rates, "sync.attn_proj", h, tokens, wa, layer)
    res1 = r.add(U_VPU, MISC, "residual", _vector(h) * tokens + ADD, (s5,), work=h * tokens,
                 layer=layer)
    ln2 = r.add(U_VPU, MISC, "ln2", NORM_PASSES * _vector(h) * tokens + NORM_LATENCY, (res1,),
                work=NORM_PASSES * h * tokens, layer=layer)
    f1 = _conv1d(r, rates, "ffn1", h, model.intermediate // n, tokens, (ln2,), layer)  # + GELU
    s8 = _gather(r, rates, "sync.ffn1", model.intermediate, tokens, f1, layer)
    f2 = _conv1d(r, rates, "ffn2", model.intermediate, h // n, tokens, (s8,), layer)
    s9 = _gather(r, rates, "sync.ffn2", h, tokens, f2, layer)
    return r.add(U_VPU, MISC, "residual", _vector(h) * tokens + ADD, (s9,), work=h * tokens,
                 layer=layer)


@memoised("dfx.programs", owner="fpgasim.dataflow.lowerings.dfx",
          keys="rates, model, pass shape", budget=256,
          why="a generation meets each (model, cards, context) pass once per request and the "
          "predictions re-run them per sensitivity case")
def _program(rates: DfxRates, model: TargetModel, shape: tuple[str, int, int],
             label: str) -> Program:
    """One card's program of a pass shape: head, two layer blocks (a template the engines
    window), tail."""
    phase, tokens, keys = shape
    r = _Rows()
    h = model.hidden
    emb_bytes = 2 * h * tokens * ELEMENT_BYTES  # a WTE and a WPE row per token, from DDR
    emb = r.add(U_DMA, LD, "embedding.ld", emb_bytes / rates.ddr_bytes_per_cycle,
                nbytes=emb_bytes, traffic=TRAFFIC_ACT, group=GROUP_ACT, chan=PORT_ACT_LOAD,
                layer=-1)
    prev = r.add(U_VPU, MISC, "embedding.add", _vector(h) * tokens + ADD, (emb,),
                 work=h * tokens, layer=-1)
    head_len = len(r.rows)
    blocks = min(2, model.layers)
    for k in range(blocks):
        prev = _layer(r, rates, model, tokens, keys, phase == "prefill", prev, k)
    layer_len = (len(r.rows) - head_len) // blocks
    last = model.layers
    # the tail: the last token's final LayerNorm, the LM head split by vocabulary (its tied
    # WTE copy in HBM), argmax in SFU_M, a gather of the cards' (value, index) pairs [A]
    ln = r.add(U_VPU, MISC, "ln_f", NORM_PASSES * _vector(h) + NORM_LATENCY, (prev,),
               work=NORM_PASSES * h, layer=last)
    vocab = math.ceil(model.vocab / rates.cards)
    head = _conv1d(r, rates, "lm_head", h, vocab, 1, (ln,), last)
    pair = _gather(r, rates, "sync.argmax", 4 * rates.cards, 1, head, last)  # 8 B per card
    r.add(U_ROUTER, SYS, "done", 1, (pair, head, r.last), layer=last)
    instrs = np.array(r.rows, dtype=INSTR_DTYPE)
    instrs.flags.writeable = False
    cap = BUFFER_CHUNKS * CHUNK_TILES * TILE_IN * TILE_OUT * ELEMENT_BYTES
    biggest = int(instrs["acq_bytes"].max())
    return Program(
        instrs=instrs, op_names=tuple(r.names), head_len=head_len, layer_len=layer_len,
        layers=blocks, total_layers=model.layers, buffer_bytes=(max(cap, biggest), -1),
        ideal=False, label=label, unit_names=UNIT_NAMES,
    )


def lower(spec: PassSpec, board: Board, model: TargetModel,
          drafter: DrafterSchema | None = None) -> Executable:
    """The pass on one card of the board's cluster, as an `Executable` of one part."""
    if drafter is not None:
        raise InputError("algorithm", getattr(drafter, "kind", "drafter"),
                         "none: DFX's lowering runs no drafter")
    _check(board, model, spec)
    rates = DfxRates.of(board)
    shape = pass_shape(spec)
    label = (f"{board.name} {model.id} dfx {shape[0]} rows={shape[1]} keys={shape[2]} "
             f"cards={rates.cards}")
    return Executable(parts=(_program(rates, model, shape, label),), order=(0,),
                      label=label, unit_roles=UNIT_ROLES)


def shape_of(spec: PassSpec) -> Hashable:
    """What a DFX pass's cost depends on."""
    return pass_shape(spec)
