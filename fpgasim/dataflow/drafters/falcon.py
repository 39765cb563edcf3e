"""Falcon: a semi-autoregressive drafter (LSTM + one decoder layer with a relaxed causal
mask) proposing k tree levels per pass (docs/falcon.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.board import Board
from fpgasim.config.design import Linear
from fpgasim.config.schema import (
    FalconDrafter,
    TargetModel,
)
from fpgasim.dataflow.draft_passes import block_parents
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.drafts import DraftGraph, decode_keys
from fpgasim.dataflow.lowerings.flightllm.graph import GraphParams, Layers
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net, PassSpec, identity
from fpgasim.dataflow.token_tree import TokenTree


class Falcon:
    """The Falcon drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("falcon")
    schema: ClassVar[type[FalconDrafter]] = FalconDrafter

    def draft_passes(
        self, drafter: FalconDrafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """`falcon_passes` over the static tree's level widths, k = tokens_per_pass levels
        per pass."""
        return falcon_passes(drafter.tokens_per_pass, tree.static_shape(), accepted, context)

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: FalconDrafter
    ) -> PassOps:
        """`falcon_pass`: LSTM layers, then one decoder layer with the relaxed causal mask
        (docs/falcon.md)."""
        return falcon_pass(model, drafter, spec.tokens, spec.context, board)

    def weight_count(self, model: TargetModel, drafter: FalconDrafter) -> int:
        """The LSTM layers (4 gates over [input, state]; the first input is 2h wide), one
        decoder layer and the MLP; the LM head is the target's."""
        h, kv = model.hidden, model.kv_heads * model.head_dim
        lstm = 0
        d_in = 2 * h
        for _ in range(drafter.lstm_layers):
            lstm += (d_in + h) * 4 * h
            d_in = h
        return lstm + 2 * h * h + 2 * h * kv + 3 * h * model.intermediate

    def kv_tokens(self, drafter: FalconDrafter, context: int, verify_len: int) -> int:
        """Its own one-layer cache over the whole context."""
        return context + verify_len

    def flightllm_graph(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: FalconDrafter
    ) -> DraftGraph:
        """Its pass on FlightLLM's compiler: n rows over its own cache of L + n keys (padded),
        the LM head over max(n, k) rows."""
        rows, keys = spec.tokens, decode_keys(spec.tokens, spec.context, board)
        head_rows = max(rows, drafter.tokens_per_pass)
        dims = (rows, keys, drafter.lstm_layers, head_rows)
        return DraftGraph(falcon_flightllm_graph, dims, f"falcon rows={rows} keys={keys}")


def falcon_pass(m: TargetModel, d: FalconDrafter, n: int, context: int, board: Board) -> PassOps:
    """One Falcon SAR draft pass over n tokens (the k-block just proposed) emitting the next one.

    LSTM layers over concat(embedding, feature) (layer 1: 2h -> h, then h -> h; four gates,
    batched over the n tokens), one decoder layer with the relaxed causal mask over its own KV
    cache of the context, the MLP, and the shared LM head over max(n, k) positions (each
    position of a k-block predicts one token of the next block). docs/falcon.md has the
    element-by-element accounting.
    """
    net = Net(f"falcon n={n} L={context}", m, n, board)
    h = m.hidden
    k = d.tokens_per_pass

    def layer(x: str) -> str:
        """The LSTM layers, then the decoder layer over its own cache and the MLP."""
        d_in = 2 * h
        for i in range(d.lstm_layers):
            # gates = [x, h_prev] @ W (4h outputs); sigmoid/tanh and the cell update on the SFU
            state = net.act_input(f"lstm{i}.state", n, h)
            x = net.linear(
                f"lstm{i}",
                [x, state],
                d_in + h,
                4 * h,
                act_elems=n * (d_in + h) + n * h,
                sfu_elems=n * 4 * h + 3 * n * h,
                out=f"lstm{i}.h",
            )
            d_in = h
        xn = net.norm("norm", x, h)
        attn = net.self_attention("", xn, h, n + context, context)
        return net.mlp("mlp", net.out_proj("o", attn, x))

    def tail(x: str) -> None:
        """The target's LM head over max(n, k) rows."""
        # position j of a k-block predicts the token k places on (the next block): one
        # LM-head row per position, and at least k rows so that a pass always emits a block
        net.lm_head(x, max(n, k), m.vocab)

    x = net.act_input("embedding_feature", n, 2 * h)
    return net.build("falcon", context, 1, identity, layer, tail, x)


def falcon_passes(k: int, shape: tuple[int, ...], accepted: int, context: int) -> list[PassSpec]:
    """Falcon's semi-autoregressive schedule: ceil(depth/k) passes with the relaxed mask.

    The first pass runs over the `accepted` tokens (a chain, block-causal in k-blocks) and
    proposes levels 1..k; each further pass runs over the k-block just proposed (levels
    jk+1..jk+k, their widths summed) and proposes the next k levels. A pass's tree_parents
    realise its block round robin (node j of a level hangs under node j mod w of the level
    above, as TokenTree.from_shape); the block's first level are roots (their ancestors
    sit in the drafter's KV cache). mask_block = k: a token sees its ancestors and the rest
    of its own k-block (the relaxed causal mask).
    """
    chain = tuple(range(-1, accepted - 1))
    passes = [PassSpec("falcon", accepted, context, tree_parents=chain, mask_block=k)]
    for start in range(0, len(shape) - k, k):
        block = shape[start : start + k]
        if 0 in block or shape[start + k] == 0:
            break
        parents = block_parents(block)
        passes.append(PassSpec("falcon", sum(block), context, tree_parents=parents, mask_block=k))
    return passes


def falcon_flightllm_graph(
    model: TargetModel, params: GraphParams, rows: int, keys: int, lstm_layers: int,
    head_rows: int, requests: int = 1,
) -> Graph:
    """A Falcon SAR draft pass in FlightLLM's layer types (an extension).

    Each LSTM layer: one linear over [input, previous state] (2h + h -> 4h in layer 1,
    h + h -> 4h after; the concatenation assembled in HBM) fused with a SiLU over its 4h
    gate outputs (the stand-in for sigmoid and tanh: FlightLLM's MISC unit has neither,
    and SiLU runs at the same 16 elements/cycle), then the cell update as three stand-alone
    eltwise layers over h (f * c, + i * g, o * tanh(c)). Then one decoder layer over the
    drafter's own KV cache (residual: the LSTM output) and the shared LM head over
    `head_rows` rows (max(rows, k): each position of a k-block predicts one token).
    `requests`: a batch, each request with these rows and its own cache.
    """
    h = model.hidden
    dense = Linear()
    g = GraphBuilder(f"flightllm falcon draft {model.id} rows={rows} keys={keys}")
    b = Layers(g, model, params, rows, requests)
    x = ""
    for i in range(lstm_layers):
        d_in = 2 * h if i == 0 else h
        src = g.input(f"lstm{i}.in", (b.rows, d_in + h), b.act, "hbm")
        gates = b.silu(f"lstm{i}.gates", b.linear(f"lstm{i}.proj", src, d_in + h, 4 * h, dense),
                       4 * h)
        cell = g.input(f"lstm{i}.cell", (b.rows, h), b.act, "hbm")
        forget = b.eltwise(f"lstm{i}.forget", cell, gates, "mul")
        new_cell = b.eltwise(f"lstm{i}.cell_update", forget, gates, "add")
        x = b.eltwise(f"lstm{i}.out", new_cell, gates, "mul")
    b.residual = x
    x = b.draft_decoder(x, h, keys)
    if head_rows != rows:
        x = g.input("lm_head.rows", (head_rows * requests, h), b.act, "hbm")
    b.linear("lm_head", x, h, model.vocab, dense)
    return g.build()
