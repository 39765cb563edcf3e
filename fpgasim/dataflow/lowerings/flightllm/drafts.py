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
    Block,
    CrossAttention,
    Decoder,
    DraftNetwork,
    Fc,
    Lstm,
    Mlp,
    SelfAttention,
)
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams, Layers
from fpgasim.errors import ConfigError

#: the blocks this lowering builds (a drafter using another is refused up front)
BLOCKS: frozenset[type] = frozenset({Fc, Lstm, SelfAttention, CrossAttention, Mlp, Decoder})


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
    mult = board.padding.decode_multiple
    n = network.rows
    own = window = target = 0
    for block in network.blocks():
        if isinstance(block, Decoder) or (
            isinstance(block, SelfAttention) and block.window_tokens is None
        ):
            own = decode_keys(n, context, board)
        elif isinstance(block, SelfAttention):
            window = math.ceil(min(block.window_tokens, n + context) / mult) * mult
            window = max(window, math.ceil(n / mult) * mult)
        elif isinstance(block, CrossAttention):
            target = max(mult, math.ceil(context / mult) * mult)
    return DraftKeys(own, window, target)


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
    b = Layers(g, model, params, network.rows, requests)
    x, width = b.x, network.input_multiple * model.hidden
    for block in network.blocks():
        x = _block(b, block, x, width, keys, network.input_name)
        width = model.hidden
    head = network.lm_head
    if head.rows != network.rows:  # more LM-head rows than the pass's (Falcon's k)
        x = g.input("lm_head.rows", (head.rows * requests, model.hidden), b.act, "hbm")
    b.linear("lm_head", x, model.hidden, head.vocab or model.vocab, Linear())
    return g.build()


def _block(b: Layers, block: Block, x: str, width: int, keys: DraftKeys,
           input_name: str) -> str:
    """One block in FlightLLM's layer types over the activation `x`; its output."""
    g, h, dense = b.g, b.h, Linear()
    if isinstance(block, Fc):
        fused_width = block.fused_layers * h
        fused = g.input(input_name, (b.rows, fused_width), b.act, "hbm")
        return b.linear("fc", fused, fused_width, h, dense)
    if isinstance(block, Lstm):
        # each layer: one linear over [input, previous state] (concatenated in HBM) fused
        # with a SiLU over its 4h gates (the stand-in for sigmoid and tanh: the MISC unit
        # has neither, and SiLU runs at the same 16 elements/cycle), then the cell update
        # as three stand-alone eltwise layers over h (f * c, + i * g, o * tanh(c))
        d_in = width
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
    if isinstance(block, Decoder):
        # residual: the feature; a wide norm reads it concatenated with the token embedding
        # (assembled in HBM)
        b.residual = x
        src, wide = x, block.input_multiple * h
        if block.input_multiple > 1:
            src = g.input("embedding_feature", (b.rows, wide), b.act, "hbm")
        out = b.draft_decoder(src, wide, keys.own)
        b.residual = ""
        return out
    if isinstance(block, SelfAttention):
        p, kvw = block.name, b.kv_width
        span = keys.own if block.window_tokens is None else keys.window
        n1 = b.rmsnorm(f"{p}.norm", x)
        q = b.rope(f"{p}.q", b.linear(f"{p}.q_proj", n1, h, h, dense))
        k = b.rope(f"{p}.k", b.linear(f"{p}.k_proj", n1, h, kvw, dense))
        v = b.linear(f"{p}.v_proj", n1, h, kvw, dense)
        k_all, v_all, after = b.kv_append(p, k, v, span)
        att = b.attention(p, q, k_all, v_all, span, -1, after)
        return b.eltwise(f"{p}.residual", b.linear(f"{p}.o_proj", att, h, h, dense), x, "add")
    if isinstance(block, CrossAttention):
        p = block.name
        n2 = b.rmsnorm(f"{p}.norm", x)
        cq = b.linear(f"{p}.q_proj", n2, h, h, dense)
        caches = (b.kv_heads * b.requests, keys.target, b.hd)
        tk = g.input("target.k_cache", caches, b.kv, "kv_cache")
        tv = g.input("target.v_cache", caches, b.kv, "kv_cache")
        cross = b.attention(p, cq, tk, tv, keys.target, -1)
        return b.eltwise(f"{p}.residual", b.linear(f"{p}.o_proj", cross, h, h, dense), x, "add")
    if isinstance(block, Mlp):
        dot = f"{block.name}." if block.name else ""
        n3 = b.rmsnorm(f"{dot}norm", x)
        act_out = b.silu(f"{dot}silu", b.linear(f"{dot}gate_proj", n3, h, b.inter, dense),
                         b.inter)
        up = b.linear(f"{dot}up_proj", n3, h, b.inter, dense)
        gated = b.eltwise(f"{dot}gated", up, act_out, "mul")
        down = b.linear(f"{dot}down_proj", gated, b.inter, h, dense)
        return b.eltwise(f"{dot}residual", down, x, "add")
    raise TypeError(f"FlightLLM's lowering has no layers for block {block!r}")
