"""EAGLE-3: a one-layer drafter over the target's fused hidden states that grows a dynamic
tree, top-k nodes per level to a depth (docs/accounting.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.board import Board
from fpgasim.config.design import Linear
from fpgasim.config.schema import (
    Eagle3Drafter,
    TargetModel,
)
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.drafts import DraftGraph, decode_keys
from fpgasim.dataflow.lowerings.flightllm.graph import GraphParams, Layers
from fpgasim.dataflow.ops import Op, PassOps
from fpgasim.dataflow.passes import Net, PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError


class Eagle3:
    """The EAGLE-3 drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("eagle3")
    schema: ClassVar[type[Eagle3Drafter]] = Eagle3Drafter

    def draft_passes(
        self, drafter: Eagle3Drafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """A first pass (with fc) over the accepted tokens, then `depth` passes of top-k."""
        if not tree.is_dynamic:
            raise InputError("depth/top_k", tree.describe(), "EAGLE-3 needs depth and top-k")
        return [PassSpec(self.kind, accepted, context, first=True)] + [
            PassSpec(self.kind, tree.top_k, context) for _ in range(tree.draft_depth)
        ]

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Eagle3Drafter
    ) -> PassOps:
        """`eagle3_pass`: fc on the first pass only, one layer over its own cache
        (docs/accounting.md, EAGLE-3 draft pass)."""
        return eagle3_pass(model, drafter, spec.tokens, spec.context, board, spec.first)

    def weight_count(self, model: TargetModel, drafter: Eagle3Drafter) -> int:
        """fc (fused_layers h -> h), one layer whose q/k/v read the wide concat, o, the MLP
        and its own LM head (draft_vocab, else the target's vocabulary)."""
        h, kv = model.hidden, model.kv_heads * model.head_dim
        wide = drafter.input_multiple * h
        head = (drafter.draft_vocab or model.vocab) * h
        mlp = 3 * h * model.intermediate
        return drafter.fused_layers * h * h + wide * (h + 2 * kv) + h * h + mlp + head

    def kv_tokens(self, drafter: Eagle3Drafter, context: int, verify_len: int) -> int:
        """Its own one-layer cache over the whole context."""
        return context + verify_len

    def flightllm_graph(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Eagle3Drafter
    ) -> DraftGraph:
        """Its pass on FlightLLM's compiler: n rows over its own cache of L + n keys (padded),
        fc on the first pass, an LM head of draft_vocab (a multiple of the compiler's block)."""
        rows, keys = spec.tokens, decode_keys(spec.tokens, spec.context, board)
        vocab = drafter.draft_vocab or model.vocab
        block = board.compiler.block
        if vocab % block:
            raise ConfigError("drafter eagle3", "draft_vocab", vocab,
                              f"a multiple of {block} (FlightLLM's blocks)")
        dims = (rows, keys, spec.first, drafter.fused_layers, drafter.input_multiple, vocab)
        label = f"eagle3 rows={rows} keys={keys}{' first' if spec.first else ''}"
        return DraftGraph(eagle3_flightllm_graph, dims, label)


def eagle3_pass(
    m: TargetModel, d: Eagle3Drafter, n: int, context: int, board: Board, first: bool
) -> PassOps:
    """One EAGLE-3 draft pass (fc on the first pass), its own KV cache over the context."""
    net = Net(f"eagle3 n={n} L={context}{' first' if first else ''}", m, n, board)
    h = m.hidden
    wide = d.input_multiple * h
    embed = net.act_input("embeddings", n, wide - h)

    def head(x: str) -> str:
        """fc fusing the target's hidden states, on the first pass only (else x unchanged)."""
        if not first:
            return x
        fused = d.fused_layers * h
        return net.linear("fc", [x], fused, h, act_elems=n * fused, out="feature")

    def layer(x: str) -> str:
        """Norm over concat(embedding, feature), attention over its own cache, o, the MLP."""
        xn = net.g.tensor(f"{net.prefix}norm.out", (n, wide), net.act_dtype, "hbm")
        op = Op(
            "norm",
            "norm",
            n,
            act_elems=n * wide,
            store_elems=n * wide,
            sfu_elems=n * wide * net.norm_passes,
        )
        net.add(op, [embed, x], [xn])  # norm over concat(embedding, feature)
        q_factor = 2 if d.q_charged_twice else 1  # the study charges q's MACs twice
        attn = net.self_attention("", xn, wide, n + context, context, q_factor)
        return net.mlp("mlp", net.out_proj("o", attn, x))

    def tail(x: str) -> None:
        """Its own LM head, no final norm (draft_vocab, else the target's vocabulary)."""
        net.lm_head(x, n, d.draft_vocab or m.vocab)

    if first:
        x = net.act_input("target_features", n, d.fused_layers * h)
    else:
        x = net.act_input("feature", n, h)
    return net.build("eagle3", context, 1, head, layer, tail, x)


def eagle3_flightllm_graph(
    model: TargetModel, params: GraphParams, rows: int, keys: int, first: bool,
    fused_layers: int, input_multiple: int, vocab: int, requests: int = 1,
) -> Graph:
    """An EAGLE-3 draft pass in FlightLLM's layer types (an extension; FlightLLM has no drafter).

    First pass only: fc fuses `fused_layers` target hidden states (fused_layers h -> h). Then
    one decoder layer whose norm and q/k/v read the token embedding concatenated with the
    feature (`input_multiple` h wide, assembled in HBM), over the drafter's own KV cache of
    keys - rows positions plus the `rows` new ones; the residual is the feature; the LM head
    (`vocab` outputs) without a final norm. The study charges q's MACs twice; here q is
    compiled once, as the network runs it. `requests`: a batch, each request with these
    rows and its own cache.
    """
    h = model.hidden
    dense = Linear()
    g = GraphBuilder(f"flightllm eagle3 draft {model.id} rows={rows} keys={keys}")
    b = Layers(g, model, params, rows, requests)
    if first:
        fused = g.input("target_features", (b.rows, fused_layers * h), b.act, "hbm")
        feature = b.linear("fc", fused, fused_layers * h, h, dense)
    else:
        feature = b.x
    wide = g.input("embedding_feature", (b.rows, input_multiple * h), b.act, "hbm")
    b.residual = feature
    x = b.draft_decoder(wide, input_multiple * h, keys)
    b.linear("lm_head", x, h, vocab, dense)
    return g.build()
