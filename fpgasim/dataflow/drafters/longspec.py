"""LongSpec: a one-layer drafter with a sliding-window self-attention and cross-attention
over the target's KV cache; a static tree drafted level by level (docs/accounting.md)."""

from __future__ import annotations

import math
from typing import ClassVar

from fpgasim.config.board import Board
from fpgasim.config.design import Linear
from fpgasim.config.schema import (
    LongSpecDrafter,
    TargetModel,
)
from fpgasim.dataflow.draft_passes import level_passes
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.drafts import DraftGraph
from fpgasim.dataflow.lowerings.flightllm.graph import GraphParams, Layers
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net, PassSpec, identity
from fpgasim.dataflow.token_tree import TokenTree


class LongSpec:
    """The LongSpec drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("longspec")
    schema: ClassVar[type[LongSpecDrafter]] = LongSpecDrafter

    def draft_passes(
        self, drafter: LongSpecDrafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """One pass over the accepted tokens, then one per level but the last (its width)."""
        return level_passes(self.kind, tree, accepted, context)

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: LongSpecDrafter
    ) -> PassOps:
        """`longspec_pass`: windowed self-attention, then cross-attention over the target's
        cache (docs/accounting.md, LongSpec draft pass)."""
        return longspec_pass(model, drafter, spec.tokens, spec.context, board)

    def weight_count(self, model: TargetModel, drafter: LongSpecDrafter) -> int:
        """Windowed self-attention (q, o: h x h; k, v: h x kv), cross-attention q and o (its
        K/V are the target's cache), the MLP; the LM head is the target's."""
        h, kv = model.hidden, model.kv_heads * model.head_dim
        return 2 * h * h + 2 * h * kv + 2 * h * h + 3 * h * model.intermediate

    def kv_tokens(self, drafter: LongSpecDrafter, context: int, verify_len: int) -> int:
        """Its sliding window (cross-attention reads the target's cache)."""
        return min(drafter.window_tokens, context + verify_len)

    def flightllm_graph(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: LongSpecDrafter
    ) -> DraftGraph:
        """Its pass on FlightLLM's compiler: rows n, the window W = min(window_tokens, n + L)
        and the target's cache of L positions (at least one block), padded to
        decode_multiple."""
        mult = board.padding.decode_multiple
        n, ctx = spec.tokens, spec.context
        window = math.ceil(min(drafter.window_tokens, n + ctx) / mult) * mult
        window = max(window, math.ceil(n / mult) * mult)
        keys = max(mult, math.ceil(ctx / mult) * mult)
        label = f"longspec rows={n} keys={keys}"
        return DraftGraph(longspec_flightllm_graph, (n, window, keys), label)


def longspec_pass(
    m: TargetModel, d: LongSpecDrafter, n: int, context: int, board: Board
) -> PassOps:
    """One LongSpec draft pass: windowed self-attention, cross-attention over the target KV, MLP."""
    net = Net(f"longspec n={n} L={context}", m, n, board)
    h = m.hidden
    window = min(d.window_tokens, n + context)

    def layer(x: str) -> str:
        """Windowed self-attention, cross-attention over the target's cache, the MLP."""
        xn = net.norm("self.norm", x, h)
        h1 = net.out_proj("self.o", net.self_attention("self", xn, h, window, window), x)
        cn = net.norm("cross.norm", h1, h)
        q = net.linear("cross.q", [cn], h, h, act_elems=n * h)
        cross = net.attention("cross", q, None, None, n + context, context, cache="target")
        return net.mlp("mlp", net.out_proj("cross.o", cross, h1))

    def tail(x: str) -> None:
        """The target's (shared) LM head over the n tokens."""
        net.lm_head(x, n, m.vocab)

    x = net.act_input("hidden", n, h)
    return net.build("longspec", context, 1, identity, layer, tail, x)


def longspec_flightllm_graph(
    model: TargetModel, params: GraphParams, rows: int, window: int, target_keys: int,
    requests: int = 1,
) -> Graph:
    """A LongSpec draft pass in FlightLLM's layer types (an extension; FlightLLM has no drafter).

    One block over `rows` new tokens: RMSnorm, q/k (RoPE) and v (k and v at the target's KV
    width: GQA like the target), the KV append onto the sliding-window cache (window - rows
    positions), self-attention over `window` keys, o + residual; RMSnorm, the drafter's own
    q, cross-attention over the target's cached K/V (`target_keys` keys, read in place: no
    append), its own o + residual; the MLP; the shared LM head. Its linears are dense,
    without biases, at the recipe's precision. `requests`: a batch, each request with these
    rows, its own window cache and its own target cache.
    """
    h, hd, inter = model.hidden, model.head_dim, model.intermediate
    kvw = model.kv_heads * hd
    dense = Linear()
    g = GraphBuilder(f"flightllm longspec draft {model.id} rows={rows} window={window}")
    b = Layers(g, model, params, rows, requests)
    n1 = b.rmsnorm("self.norm", b.x)
    q = b.rope("self.q", b.linear("self.q_proj", n1, h, h, dense))
    k = b.rope("self.k", b.linear("self.k_proj", n1, h, kvw, dense))
    v = b.linear("self.v_proj", n1, h, kvw, dense)
    k_all, v_all, after = b.kv_append("self", k, v, window)
    att = b.attention("self", q, k_all, v_all, window, -1, after)
    x1 = b.eltwise("self.residual", b.linear("self.o_proj", att, h, h, dense), b.x, "add")
    n2 = b.rmsnorm("cross.norm", x1)
    cq = b.linear("cross.q_proj", n2, h, h, dense)
    caches = (model.kv_heads * requests, target_keys, hd)
    tk = g.input("target.k_cache", caches, b.kv, "kv_cache")
    tv = g.input("target.v_cache", caches, b.kv, "kv_cache")
    cross = b.attention("cross", cq, tk, tv, target_keys, -1)
    x2 = b.eltwise("cross.residual", b.linear("cross.o_proj", cross, h, h, dense), x1, "add")
    n3 = b.rmsnorm("mlp.norm", x2)
    act_out = b.silu("mlp.silu", b.linear("mlp.gate_proj", n3, h, inter, dense), inter)
    up = b.linear("mlp.up_proj", n3, h, inter, dense)
    gated = b.eltwise("mlp.gated", up, act_out, "mul")
    x3 = b.eltwise("mlp.residual", b.linear("mlp.down_proj", gated, inter, h, dense), x2, "add")
    b.linear("lm_head", x3, h, model.vocab, dense)
    return g.build()
