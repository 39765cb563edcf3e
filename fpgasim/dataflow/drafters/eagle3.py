"""EAGLE-3: a one-layer drafter over the target's fused hidden states that grows a dynamic
tree, top-k nodes per level to a depth (docs/accounting.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import Board, Eagle3Drafter, TargetModel
from fpgasim.dataflow.draft_passes import DraftTree
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.ops import Op, PassOps
from fpgasim.dataflow.passes import Net, PassSpec
from fpgasim.errors import InputError


class Eagle3:
    """The EAGLE-3 drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("eagle3")
    schema: ClassVar[type[Eagle3Drafter]] = Eagle3Drafter

    def draft_passes(
        self, drafter: Eagle3Drafter, tree: DraftTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """A first pass (with fc) over the accepted tokens, then `depth` passes of top-k."""
        if tree.depth is None or tree.top_k is None:
            raise InputError("depth/top_k", tree.describe(), "EAGLE-3 needs depth and top-k")
        return [PassSpec(self.kind, accepted, context, first=True)] + [
            PassSpec(self.kind, tree.top_k, context) for _ in range(tree.depth)
        ]

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Eagle3Drafter
    ) -> PassOps:
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


def eagle3_pass(
    m: TargetModel, d: Eagle3Drafter, n: int, context: int, board: Board, first: bool
) -> PassOps:
    """One EAGLE-3 draft pass (fc on the first pass), its own KV cache over the context."""
    net = Net(f"eagle3 n={n} L={context}{' first' if first else ''}", m, n, board)
    h = m.hidden
    wide = d.input_multiple * h
    embed = net.act_input("embeddings", n, wide - h)

    def head(x: str) -> str:
        if not first:
            return x
        fused = d.fused_layers * h
        return net.linear("fc", [x], fused, h, act_elems=n * fused, out="feature")

    def layer(x: str) -> str:
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
        net.lm_head(x, n, d.draft_vocab or m.vocab)

    if first:
        x = net.act_input("target_features", n, d.fused_layers * h)
    else:
        x = net.act_input("feature", n, h)
    return net.build("eagle3", context, 1, head, layer, tail, x)

