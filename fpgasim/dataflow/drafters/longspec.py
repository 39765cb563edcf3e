"""LongSpec: a one-layer drafter with a sliding-window self-attention and cross-attention
over the target's KV cache; a static tree drafted level by level (docs/accounting.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import LongSpecDrafter
from fpgasim.dataflow.draft_passes import level_passes
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.drafters.network import (
    CrossAttention,
    DraftNetwork,
    LmHead,
    Mlp,
    SelfAttention,
)
from fpgasim.dataflow.passes import PassSpec
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

    def network(self, spec: PassSpec, drafter: LongSpecDrafter) -> DraftNetwork:
        """One layer over the n new hidden states: self-attention over its sliding window
        (its own cache: window_tokens positions), cross-attention over the target's cache
        (its K/V are the target's), the MLP; the target's (shared) LM head over the n tokens
        (docs/accounting.md, LongSpec draft pass)."""
        layer = (SelfAttention("self", drafter.window_tokens), CrossAttention("cross"), Mlp("mlp"))
        return DraftNetwork(self.kind, spec.tokens, "hidden", 1, (), layer, LmHead(spec.tokens))
