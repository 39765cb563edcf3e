"""LongSpec: a one-layer drafter with a sliding-window self-attention and cross-attention
over the target's KV cache; a static tree drafted level by level (docs/accounting.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import Board, LongSpecDrafter, TargetModel
from fpgasim.dataflow.draft_passes import DraftTree, level_passes
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net, PassSpec, identity


class LongSpec:
    """The LongSpec drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("longspec")
    schema: ClassVar[type[LongSpecDrafter]] = LongSpecDrafter

    def draft_passes(
        self, drafter: LongSpecDrafter, tree: DraftTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """One pass over the accepted tokens, then one per level but the last (its width)."""
        return level_passes(self.kind, tree, accepted, context)

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: LongSpecDrafter
    ) -> PassOps:
        return longspec_pass(model, drafter, spec.tokens, spec.context, board)

    def weight_count(self, model: TargetModel, drafter: LongSpecDrafter) -> int:
        """Windowed self-attention (q, o: h x h; k, v: h x kv), cross-attention q and o (its
        K/V are the target's cache), the MLP; the LM head is the target's."""
        h, kv = model.hidden, model.kv_heads * model.head_dim
        return 2 * h * h + 2 * h * kv + 2 * h * h + 3 * h * model.intermediate

    def kv_tokens(self, drafter: LongSpecDrafter, context: int, verify_len: int) -> int:
        """Its sliding window (cross-attention reads the target's cache)."""
        return min(drafter.window_tokens, context + verify_len)


def longspec_pass(
    m: TargetModel, d: LongSpecDrafter, n: int, context: int, board: Board
) -> PassOps:
    """One LongSpec draft pass: windowed self-attention, cross-attention over the target KV, MLP."""
    net = Net(f"longspec n={n} L={context}", m, n, board)
    h = m.hidden
    window = min(d.window_tokens, n + context)

    def layer(x: str) -> str:
        xn = net.norm("self.norm", x, h)
        h1 = net.out_proj("self.o", net.self_attention("self", xn, h, window, window), x)
        cn = net.norm("cross.norm", h1, h)
        q = net.linear("cross.q", [cn], h, h, act_elems=n * h)
        cross = net.attention("cross", q, None, None, n + context, context, cache="target")
        return net.mlp("mlp", net.out_proj("cross.o", cross, h1))

    def tail(x: str) -> None:
        net.lm_head(x, n, m.vocab)

    x = net.act_input("hidden", n, h)
    return net.build("longspec", context, 1, identity, layer, tail, x)

