"""Falcon: a semi-autoregressive drafter (LSTM + one decoder layer with a relaxed causal
mask) proposing k tree levels per pass (docs/falcon.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import FalconDrafter
from fpgasim.dataflow.draft_passes import block_parents
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.drafters.network import Decoder, DraftNetwork, LmHead, Lstm
from fpgasim.dataflow.passes import PassSpec
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

    def network(self, spec: PassSpec, drafter: FalconDrafter) -> DraftNetwork:
        """One SAR draft pass over n tokens (the k-block just proposed): the LSTM layers over
        concat(embedding, feature) (2h wide), one decoder layer over its own cache of the
        context (the relaxed causal mask is the spec's), the MLP, and the target's LM head
        over max(n, k) rows: position j of a k-block predicts the token k places on, and a
        pass always emits a block (docs/falcon.md has the element-by-element accounting)."""
        n, k = spec.tokens, drafter.tokens_per_pass
        layer = (Lstm(drafter.lstm_layers), Decoder())
        return DraftNetwork(self.kind, n, "embedding_feature", 2, (), layer, LmHead(max(n, k)))


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
