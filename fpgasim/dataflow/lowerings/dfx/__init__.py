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
from fpgasim.dataflow.description import Reader, describe_target
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    LmHead,
    Node,
    Positions,
    Residual,
)
from fpgasim.dataflow.description.nodes import Linear as LinearNode
from fpgasim.dataflow.description.nodes import Norm as NormNode
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
BLOCKS: frozenset[str] = frozenset()

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


def _kv_load(r: _Rows, rates: DfxRates, name: str, nbytes: int, heads: int, layer: int) -> int:
    """The DMA's load of the cached K (or V) of this card's heads: the bytes at the weight
    stream's rate plus one random transaction a head (the access model's); returns its row."""
    return r.add(U_DMA, LD, name, nbytes / rates.weight_bytes_per_cycle
                 + heads * rates.kv_open_cycles, nbytes=nbytes, traffic=TRAFFIC_KV,
                 group=GROUP_ACT, chan=PORT_ACT_LOAD, layer=layer)


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


def link_seconds(spec: PassSpec, board: Board, model: TargetModel,
                 engine: object = None) -> tuple[float, float]:
    """(seconds the pass waits on the ring, seconds one port is busy sending) on the board's
    cluster: Algorithm 1's four gathers a layer and the argmax pairs', each on the critical
    path (the next matrix instruction waits for the gathered vector); (0, 0) on one card.
    No engine is needed (`engine` is the registry's signature: DFX has no pipeline)."""
    del engine
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


#: DFX's op names of the description's nodes (docs/dfx.md, Algorithm 1)
DFX_NAMES = {"attn_norm": "ln1", "mlp.post_norm": "ln2", "final_norm": "ln_f",
             "o": "attn_proj", "mlp.up": "ffn1", "mlp.down": "ffn2",
             "attn_residual": "residual", "mlp.residual": "residual"}


class DfxReader(Reader):
    """Lowers a target's description onto one card's rows (Algorithm 1), one method per
    node kind: the embedding and position rows from DDR, LayerNorms and residual adds on the
    VPU, q, k and v as one `Conv1D` over this card's heads, attention over them, every other
    projection split by columns and all-gathered, GELU in its projection's pipeline, the LM
    head split by vocabulary over the last token."""

    what = "DFX's lowering"

    def __init__(self, r: _Rows, rates: DfxRates, model: TargetModel, tokens: int,
                 keys: int) -> None:
        self.r, self.rates, self.model, self.keys = r, rates, model, keys
        self.tokens, self.layer = tokens, -1
        self.rows: dict[str, int] = {}  # an activation -> the row that produces it
        self.qkv: list[LinearNode] = []  # q, k, v met so far, to run as one Conv1D
        self.attn_inputs: set[str] = set()

    def read(self, nodes: tuple[Node, ...], source: str, prev: int, layer: int,
             tokens: int) -> int:
        """Emit `nodes` for `layer` over `tokens` rows, their input `source` produced by
        row `prev`; the last row."""
        self.layer, self.tokens, self.rows = layer, tokens, {source: prev}
        self.attn_inputs = {i for n in nodes if n.kind == "attention" for i in n.inputs}
        for node in nodes:
            self.visit(node)
        return self.r.last

    def refuse(self, what: str) -> None:
        """One line: the model's architecture and what DFX's lowering lacks."""
        raise ConfigError(model_source(self.model), "architecture", self.model.architecture,
                          f"a model DFX's lowering reads (it has no {what})")

    def positions(self, node: Positions) -> None:
        """A token-table row and a position row per token from DDR, added on the VPU."""
        h, tokens = node.table.shape[1], self.tokens
        emb_bytes = 2 * h * tokens * ELEMENT_BYTES  # a WTE and a WPE row per token
        emb = self.r.add(U_DMA, LD, "embedding.ld", emb_bytes / self.rates.ddr_bytes_per_cycle,
                         nbytes=emb_bytes, traffic=TRAFFIC_ACT, group=GROUP_ACT,
                         chan=PORT_ACT_LOAD, layer=self.layer)
        self.rows[node.output] = self.r.add(U_VPU, MISC, "embedding.add",
                                            _vector(h) * tokens + ADD, (emb,),
                                            work=h * tokens, layer=self.layer)

    def norm(self, node: NormNode) -> None:
        """A LayerNorm on the VPU: its passes over every row, then its latency."""
        if node.norm != "layer":
            self.refuse(f"{node.norm} norm")
        w, tokens = node.width, self.tokens
        self.rows[node.output] = self.r.add(
            U_VPU, MISC, DFX_NAMES[node.name], NORM_PASSES * _vector(w) * tokens + NORM_LATENCY,
            (self.rows[node.inputs[0]],), work=NORM_PASSES * w * tokens, layer=self.layer)

    def linear(self, node: LinearNode) -> None:
        """q, k and v (attention's inputs) as one Conv1D of this card's heads once all
        three are met; any other projection split by columns, then all-gathered."""
        cards, layer = self.rates.cards, self.layer
        waits = (self.rows[node.inputs[0]],)
        if node.output in self.attn_inputs:
            self.qkv.append(node)
            if len(self.qkv) == 3:  # V, K, Q in order
                out = _conv1d(self.r, self.rates, "qkv", node.d_in,
                              sum(n.d_out for n in self.qkv) // cards, self.tokens, waits,
                              layer)
                for n in self.qkv:
                    self.rows[n.output] = out
                self.qkv = []
            return
        name = DFX_NAMES[node.name]
        out = _conv1d(self.r, self.rates, name, node.d_in, node.d_out // cards, self.tokens,
                      waits, layer)
        self.rows[node.output] = _gather(self.r, self.rates, f"sync.{name}", node.d_out,
                                         self.tokens, out, layer)

    def attention(self, node: Attention) -> None:
        """The new K and V stored; per card's heads the cached K block, QK^T (SFU_M masks
        and takes the row maximum), one softmax chain on the VPU, the cached V block, SV;
        whole-vector dependencies [A]; then the heads all-gathered."""
        r, rates, layer, tokens, keys = self.r, self.rates, self.layer, self.tokens, self.keys
        heads, hd = node.heads // rates.cards, node.head_dim
        qkv = self.rows[node.inputs[0]]
        kv_bytes = 2 * tokens * heads * hd * ELEMENT_BYTES
        r.add(U_DMA, ST, "kv.st", kv_bytes / rates.weight_bytes_per_cycle, (qkv,),
              nbytes=kv_bytes, traffic=TRAFFIC_STORE, group=GROUP_ACT, chan=PORT_ACT_STORE,
              layer=layer)
        past = keys - tokens  # keys already in HBM; this pass's own K and V are on chip
        kv_block = heads * past * hd * ELEMENT_BYTES
        waits: tuple[int, ...] = (qkv,)
        if past:
            kr = _kv_load(r, rates, "k.ld", kv_block, heads, layer)
            waits = (qkv, kr)
        qk_tiles = heads * math.ceil(keys / TILE_OUT) * math.ceil(hd / TILE_IN)
        qk = r.add(U_MPU, MV, "qk.mv", qk_tiles * tokens + MPU_DRAIN_CYCLES, waits,
                   work=heads * keys * hd * tokens, layer=layer)
        sm = r.add(U_VPU, MISC, "softmax",
                   SOFTMAX_PASSES * heads * _vector(keys) * tokens + SOFTMAX_LATENCY, (qk,),
                   work=SOFTMAX_PASSES * heads * keys * tokens, layer=layer)
        waits = (sm,)
        if past:
            vr = _kv_load(r, rates, "v.ld", kv_block, heads, layer)
            waits = (sm, vr)
        sv_tiles = heads * math.ceil(keys / TILE_IN) * math.ceil(hd / TILE_OUT)
        sv = r.add(U_MPU, MV, "sv.mv", sv_tiles * tokens + MPU_DRAIN_CYCLES, waits,
                   work=heads * keys * hd * tokens, layer=layer)
        # every query row runs over every key; masked elements are computed
        self.rows[node.output] = _gather(r, rates, "sync.attn", node.q_width, tokens, sv,
                                         layer)

    def activation(self, node: Activation) -> None:
        """GELU in the pipeline of the projection before it (no row)."""
        if node.gated or node.fn != "gelu":
            self.refuse(f"{'gated ' if node.gated else ''}{node.fn} activation")
        self.rows[node.output] = self.rows[node.inputs[0]]

    def residual(self, node: Residual) -> None:
        """An add on the VPU once the branch is gathered."""
        w, tokens = node.width, self.tokens
        self.rows[node.output] = self.r.add(
            U_VPU, MISC, DFX_NAMES[node.name], _vector(w) * tokens + ADD,
            (self.rows[node.inputs[0]],), work=w * tokens, layer=self.layer)

    def lm_head(self, node: LmHead) -> None:
        """The last token's LM head split by vocabulary (its tied WTE copy in HBM), argmax
        in SFU_M, a gather of the cards' (value, index) pairs [A]."""
        r, rates, layer = self.r, self.rates, self.layer
        vocab = math.ceil(node.vocab / rates.cards)
        head = _conv1d(r, rates, "lm_head", node.d_in, vocab, 1,
                       (self.rows[node.inputs[0]],), layer)
        pair = _gather(r, rates, "sync.argmax", 4 * rates.cards, 1, head, layer)  # 8 B a card
        self.rows[node.output] = r.add(U_ROUTER, SYS, "done", 1, (pair, head, r.last),
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
    described = describe_target(model)
    reader = DfxReader(r, rates, model, tokens, keys)
    reader.check(described, model)
    prev = reader.read(described.head, described.input, -1, -1, tokens)
    head_len = len(r.rows)
    blocks = min(2, model.layers)
    layer_in = described.head[-1].output if described.head else described.input
    for k in range(blocks):
        prev = reader.read(described.layer, layer_in, prev, k, tokens)
    layer_len = (len(r.rows) - head_len) // blocks
    # the tail over the last token only
    reader.read(described.tail, described.layer[-1].output, prev, model.layers, 1)
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
