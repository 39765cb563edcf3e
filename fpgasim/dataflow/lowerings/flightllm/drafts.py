"""A drafter's network lowered to FlightLLM's layer types (an extension: FlightLLM's model
has no drafter, docs/flightllm-model.md).

Every drafter describes its pass once (`drafters.network.DraftNetwork`); this module builds
that description in FlightLLM's layer types (`graph.Layers`) for the keys the pass needs
padded to the design's multiples (`DraftKeys`). The compiler holds no drafter names: it
lowers the blocks, whichever drafter runs them. Linears are dense, without biases, at the
recipe's precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.design import Linear
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.drafters.network import (
    CrossAttention,
    Decoder,
    DraftNetwork,
    Fc,
    LmHead,
    Lstm,
    Mlp,
    SelfAttention,
    block_kinds,
    read_block,
)
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams, Layers
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class DraftKeys:
    """The padded keys of one draft pass: over the drafter's own cache of the context
    (`own`), its sliding window (`window`) and the target's cache (`target`); 0 where the
    network has no such attention."""

    own: int = 0
    window: int = 0
    target: int = 0


def decode_keys(tokens: int, context: int, board: Board) -> int:
    """Keys of a decode-style pass of `tokens` new tokens over `context` cached ones: their
    sum padded to padding.decode_multiple (the model's window is checked where the pass is
    asked for: simulate.Point.check)."""
    mult = board.padding.decode_multiple
    return math.ceil((context + tokens) / mult) * mult


def draft_keys(network: DraftNetwork, context: int, board: Board) -> DraftKeys:
    """The keys each attention of `network` runs over at `context`, padded to
    decode_multiple: the own cache's L + n; a window of min(window_tokens, n + L), at least
    the n rows; the target's cache of L positions, at least one block."""
    reader = _PaddedKeys(network.rows, context, board)
    for block in network.blocks():
        read_block(reader, block)
    return DraftKeys(reader.own, reader.window, reader.target)


class _PaddedKeys:
    """Reads each block as the padded keys its attention needs (`draft_keys`), keeping the
    last of each attention kind."""

    def __init__(self, rows: int, context: int, board: Board) -> None:
        self.rows, self.context, self.board = rows, context, board
        self.mult = board.padding.decode_multiple
        self.own = self.window = self.target = 0

    def decoder(self, block: Decoder) -> None:
        """The own cache: L + n."""
        self.own = decode_keys(self.rows, self.context, self.board)

    def self_attention(self, block: SelfAttention) -> None:
        """The own cache, or its window of min(window_tokens, n + L), at least the n rows."""
        if block.window_tokens is None:
            self.own = decode_keys(self.rows, self.context, self.board)
            return
        mult, n = self.mult, self.rows
        window = math.ceil(min(block.window_tokens, n + self.context) / mult) * mult
        self.window = max(window, math.ceil(n / mult) * mult)

    def cross_attention(self, block: CrossAttention) -> None:
        """The target's cache of L positions, at least one block."""
        self.target = max(self.mult, math.ceil(self.context / self.mult) * self.mult)

    def _no_keys(self, block: Fc | Lstm | Mlp) -> None:
        """No attention."""

    fc = lstm = mlp = _no_keys


def check_vocab(network: DraftNetwork, model: TargetModel, board: Board) -> None:
    """A drafter's own LM head must be a whole number of the compiler's blocks wide."""
    head, block = network.lm_head, board.compiler.block
    vocab = head.vocab or model.vocab
    if head.vocab_field and vocab % block:
        raise ConfigError(f"drafter {network.kind}", head.vocab_field, vocab,
                          f"a multiple of {block} (FlightLLM's blocks)")


def draft_label(network: DraftNetwork, keys: DraftKeys) -> str:
    """The pass's name in traces, e.g. "eagle3 rows=4 keys=1040 first": its keys over the
    context (the target's cache, else its own)."""
    shown = keys.target or keys.own
    return f"{network.kind} rows={network.rows}" + (f" keys={shown}" if shown else "") + \
        network.tag


def draft_graph(model: TargetModel, params: GraphParams, network: DraftNetwork,
                keys: DraftKeys, requests: int = 1) -> Graph:
    """One draft pass in FlightLLM's layer types. `requests`: a batch, each request with
    these rows and its own caches (docs/batching.md)."""
    size = f" window={keys.window}" if keys.window else f" keys={keys.own}" if keys.own else ""
    g = GraphBuilder(f"flightllm {network.kind} draft {model.id} rows={network.rows}{size}")
    reader = FlightLlmBlocks(Layers(g, model, params, network.rows, requests), network, keys,
                             model.vocab)
    x = reader.b.x
    for block in network.blocks():
        x = read_block(reader, block, x)
        reader.width = model.hidden
    read_block(reader, network.lm_head, x)
    return g.build()


class FlightLlmBlocks:
    """Reads a drafter's blocks as FlightLLM's layer types (`graph.Layers` `b`): each method
    adds one block's layers over the activation `x` and returns its output. Linears are
    dense; `keys` are the pass's padded keys, `vocab` the target's; `width` is the running
    activation's (the pass input's, then h)."""

    def __init__(self, b: Layers, network: DraftNetwork, keys: DraftKeys, vocab: int) -> None:
        self.b, self.keys, self.vocab = b, keys, vocab
        self.input_name, self.rows = network.input_name, network.rows
        self.width = network.input_multiple * b.h

    def fc(self, block: Fc, x: str) -> str:
        """The fc over the pass input (read from HBM), fused_layers h -> h."""
        b = self.b
        fused_width = block.fused_layers * b.h
        fused = b.g.input(self.input_name, (b.rows, fused_width), b.act, "hbm")
        return b.linear("fc", fused, fused_width, b.h, Linear())

    def lstm(self, block: Lstm, x: str) -> str:
        """Each layer: one linear over [input, previous state] (concatenated in HBM) fused
        with a SiLU over its 4h gates (the stand-in for sigmoid and tanh: the MISC unit has
        neither, and SiLU runs at the same 16 elements/cycle), then the cell update as three
        stand-alone eltwise layers over h (f * c, + i * g, o * tanh(c))."""
        b, g, h, dense = self.b, self.b.g, self.b.h, Linear()
        d_in = self.width
        for i in range(block.layers):
            src = g.input(f"lstm{i}.in", (b.rows, d_in + h), b.act, "hbm")
            proj = b.linear(f"lstm{i}.proj", src, d_in + h, 4 * h, dense)
            gates = b.silu(f"lstm{i}.gates", proj, 4 * h)
            cell = g.input(f"lstm{i}.cell", (b.rows, h), b.act, "hbm")
            forget = b.eltwise(f"lstm{i}.forget", cell, gates, "mul")
            new_cell = b.eltwise(f"lstm{i}.cell_update", forget, gates, "add")
            x = b.eltwise(f"lstm{i}.out", new_cell, gates, "mul")
            d_in = h
        return x

    def decoder(self, block: Decoder, x: str) -> str:
        """A decoder layer over the own cache; its residual is the feature, and a wide norm
        reads the feature concatenated with the token embedding (assembled in HBM)."""
        b = self.b
        b.residual = x
        src, wide = x, block.input_multiple * b.h
        if block.input_multiple > 1:
            src = b.g.input("embedding_feature", (b.rows, wide), b.act, "hbm")
        out = b.draft_decoder(src, wide, self.keys.own)
        b.residual = ""
        return out

    def self_attention(self, block: SelfAttention, x: str) -> str:
        """Norm, q/k/v with RoPE, the kv append, attention over the own cache or its
        window, o plus the residual."""
        b, h, dense = self.b, self.b.h, Linear()
        p, kvw = block.name, b.kv_width
        span = self.keys.own if block.window_tokens is None else self.keys.window
        n1 = b.rmsnorm(f"{p}.norm", x)
        q = b.rope(f"{p}.q", b.linear(f"{p}.q_proj", n1, h, h, dense))
        k = b.rope(f"{p}.k", b.linear(f"{p}.k_proj", n1, h, kvw, dense))
        v = b.linear(f"{p}.v_proj", n1, h, kvw, dense)
        k_all, v_all, after = b.kv_append(p, k, v, span)
        att = b.attention(p, q, k_all, v_all, span, -1, after)
        return b.eltwise(f"{p}.residual", b.linear(f"{p}.o_proj", att, h, h, dense), x, "add")

    def cross_attention(self, block: CrossAttention, x: str) -> str:
        """Norm, q, attention over the target's K/V caches (read in place), o plus the
        residual."""
        b, g, h, dense = self.b, self.b.g, self.b.h, Linear()
        p, target = block.name, self.keys.target
        n2 = b.rmsnorm(f"{p}.norm", x)
        cq = b.linear(f"{p}.q_proj", n2, h, h, dense)
        caches = (b.kv_heads * b.requests, target, b.hd)
        tk = g.input("target.k_cache", caches, b.kv, "kv_cache")
        tv = g.input("target.v_cache", caches, b.kv, "kv_cache")
        cross = b.attention(p, cq, tk, tv, target, -1)
        return b.eltwise(f"{p}.residual", b.linear(f"{p}.o_proj", cross, h, h, dense), x, "add")

    def mlp(self, block: Mlp, x: str) -> str:
        """Norm, gate with SiLU, up, their product, down plus the residual."""
        b, h, dense = self.b, self.b.h, Linear()
        dot = f"{block.name}." if block.name else ""
        n3 = b.rmsnorm(f"{dot}norm", x)
        act_out = b.silu(f"{dot}silu", b.linear(f"{dot}gate_proj", n3, h, b.inter, dense),
                         b.inter)
        up = b.linear(f"{dot}up_proj", n3, h, b.inter, dense)
        gated = b.eltwise(f"{dot}gated", up, act_out, "mul")
        down = b.linear(f"{dot}down_proj", gated, b.inter, h, dense)
        return b.eltwise(f"{dot}residual", down, x, "add")

    def lm_head(self, block: LmHead, x: str) -> None:
        """The LM head (the target's vocabulary unless the drafter has its own); more
        LM-head rows than the pass's (Falcon's k) are read from HBM."""
        b = self.b
        if block.rows != self.rows:
            x = b.g.input("lm_head.rows", (block.rows * b.requests, b.h), b.act, "hbm")
        b.linear("lm_head", x, b.h, block.vocab or self.vocab, Linear())


#: the block kinds this lowering builds (a drafter using another is refused up front)
BLOCKS: frozenset[str] = block_kinds(FlightLlmBlocks)
